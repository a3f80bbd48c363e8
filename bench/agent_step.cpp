// The agent loop's own time per step: the real gateway and the scripted fake model in this
// process, a 50 KB conversation, the editor's full catalogue. A run of STEPS tool calls
// (read_file) and a final answer is timed from the message to run.completed; the same number of
// model round trips with the same request size, sent straight to the fake, is the baseline. The
// difference per step is what the gateway adds: parsing the reply, validating, running the tool,
// storing state and events in SQLite, streaming them, and building the next request.
//
//   agent_step [STEPS=20] [ROUNDS=7] [CONVERSATION_KB=50]
#include "gateway/app/server.hpp"
#include "gateway/observability/log.hpp"
#include "tests/support/fake_upstream.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace net = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// One blocking HTTP/1.1 connection.
class connection {
public:
    explicit connection(std::uint16_t port) : socket_(io_) {
        socket_.connect({net::ip::make_address("127.0.0.1"), port});
    }
    http::response<http::string_body> call(http::verb verb, const std::string& target,
                                           const std::string& body) {
        http::request<http::string_body> req{verb, target, 11};
        req.set(http::field::host, "127.0.0.1");
        req.set(http::field::content_type, "application/json");
        req.body() = body;
        req.prepare_payload();
        http::write(socket_, req);
        http::response<http::string_body> res;
        http::read(socket_, buffer_, res);
        return res;
    }
    // Reads an SSE response until `event: run.completed` (or the end) and returns its bytes.
    std::string stream_until_done(const std::string& target) {
        http::request<http::string_body> req{http::verb::get, target, 11};
        req.set(http::field::host, "127.0.0.1");
        http::write(socket_, req);
        http::response_parser<http::string_body> parser;
        parser.body_limit(boost::none);
        http::read_header(socket_, buffer_, parser);
        while (!parser.is_done()) {
            boost::system::error_code ec;
            http::read_some(socket_, buffer_, parser, ec);
            if (ec) break;
            const auto& body = parser.get().body();
            if (body.find("event: run.") != std::string::npos &&
                (body.find("event: run.completed") != std::string::npos ||
                 body.find("event: run.failed") != std::string::npos))
                break;
        }
        return parser.get().body();
    }

private:
    net::io_context io_;
    tcp::socket socket_;
    boost::beast::flat_buffer buffer_;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int steps = argc > 1 ? std::atoi(argv[1]) : 20;
    int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
    std::size_t conversation_kb = argc > 3 ? std::atoi(argv[3]) : 50;

    auto scratch = std::filesystem::temp_directory_path() / "contextgate-agent-bench";
    std::filesystem::remove_all(scratch);
    std::filesystem::create_directories(scratch / "workspace");
    std::ofstream(scratch / "workspace" / "notes.md") << "# Notes\n\nOne line of notes.\n";

    gateway::testing::fake_upstream fake;
    gateway::config::gateway_config config;
    config.source = "bench";
    config.server.listen = {"127.0.0.1", 0};
    config.server.workers = 1;
    config.logging.access_log = false;
    config.logging.level = gateway::config::log_level::warn;
    gateway::config::upstream_config up;
    up.name = "fake";
    up.base_url = fake.base_url();
    up.endpoint = *gateway::config::parse_base_url(up.base_url).value;
    config.upstreams.push_back(up);
    config.context.data_dir = (scratch / "data").string();
    config.context.prompts_dir = CONTEXTGATE_SOURCE_DIR "/prompts";
    config.context.workspaces = {(scratch / "workspace").string()};
    config.context.max_steps = steps + 1;
    config.context.identical_call_warn = 1000;
    config.context.identical_call_stop = 1000;
    gateway::observability::set_level(gateway::config::log_level::warn);
    gateway::app::server server(config);
    if (auto error = server.start(); !error.empty()) {
        std::cerr << error << "\n";
        return 1;
    }

    std::string call =
        R"({"tool": "read_file", "parameters": {"path": "notes.md"}, "terminate": false})";
    std::string user(conversation_kb * 1024, 'x');
    for (std::size_t i = 80; i < user.size(); i += 81) user[i] = '\n';

    std::vector<double> through_gateway, direct, per_step;
    std::size_t request_bytes = 0;
    for (int round = 0; round < rounds; ++round) {
        // Through the gateway: one run of `steps` calls and a final answer.
        std::vector<gateway::testing::scripted_reply> script(steps, {call});
        script.push_back({"Done."});
        fake.script(script);
        connection c(server.port());
        auto chat = json::parse(
            c.call(http::verb::post, "/context/chats",
                   json::serialize(json::object{{"model", "bench"},
                                                {"workspace", (scratch / "workspace").string()}}))
                .body());
        auto chat_id = std::string(chat.at("id").as_string());
        auto t0 = clock_type::now();
        auto started =
            json::parse(c.call(http::verb::post, "/context/chats/" + chat_id + "/messages",
                               json::serialize(json::object{{"content", user}}))
                            .body());
        auto run_id = std::string(started.at("run_id").as_string());
        connection events(server.port());
        auto transcript = events.stream_until_done("/context/runs/" + run_id + "/events");
        auto t1 = clock_type::now();
        if (transcript.find("event: run.completed") == std::string::npos) {
            std::cerr << "the run did not complete:\n"
                      << transcript.substr(transcript.size() - 600) << "\n";
            return 1;
        }
        auto bodies = fake.scripted_requests();
        request_bytes = bodies.back().size();

        // Direct: the same number of model round trips with a request of the same size.
        std::vector<gateway::testing::scripted_reply> direct_script(steps + 1, {call});
        fake.script(direct_script);
        connection d(fake.port());
        auto t2 = clock_type::now();
        for (int i = 0; i <= steps; ++i)
            d.call(http::verb::post, "/v1/chat/completions", bodies.back());
        auto t3 = clock_type::now();

        double gw = std::chrono::duration<double, std::milli>(t1 - t0).count();
        double dir = std::chrono::duration<double, std::milli>(t3 - t2).count();
        through_gateway.push_back(gw);
        direct.push_back(dir);
        per_step.push_back((gw - dir) / (steps + 1));
    }
    server.stop();
    server.wait();
    std::filesystem::remove_all(scratch);

    std::printf(
        "agent loop: %d tool steps + final answer, %zu KB conversation (%zu B requests), "
        "17-tool catalogue, %d rounds (medians)\n",
        steps, conversation_kb, request_bytes, rounds);
    std::printf("  %-38s %10.2f ms\n", "whole run through the gateway", median(through_gateway));
    std::printf("  %-38s %10.2f ms\n", "same model round trips, direct", median(direct));
    std::printf("  %-38s %10.3f ms   (target <= 1 ms)\n", "gateway time per step",
                median(per_step));
    std::printf("  %-38s %10.2fx\n", "ratio gateway / direct",
                median(through_gateway) / median(direct));
    return 0;
}
