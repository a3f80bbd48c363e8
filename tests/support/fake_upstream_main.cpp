// contextgate-fake-upstream: the test fake as a process, for benchmarks, demos and the e2e tests.
// Prints "listening on PORT" on stdout once it accepts connections; stops on SIGINT/SIGTERM.
#include "tests/support/fake_upstream.hpp"

#include <boost/json/parse.hpp>

#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

namespace json = boost::json;

// The replies of a --script file; prints the reason and returns nullopt when it is unusable.
std::optional<std::vector<gateway::testing::scripted_reply>> read_script(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    boost::system::error_code ec;
    auto value = json::parse(text.str(), ec);
    if (!in || ec || !value.is_array()) {
        std::cerr << path << ": not a JSON array of replies\n";
        return std::nullopt;
    }
    std::vector<gateway::testing::scripted_reply> replies;
    for (const auto& item : value.as_array()) {
        gateway::testing::scripted_reply reply;
        if (item.is_string()) {
            reply.content = item.as_string();
        } else if (item.is_object()) {
            const auto& o = item.as_object();
            if (auto* v = o.if_contains("content"); v && v->is_string())
                reply.content = v->as_string();
            if (auto* v = o.if_contains("finish_reason"); v && v->is_string())
                reply.finish_reason = v->as_string();
            if (auto* v = o.if_contains("status"); v && v->is_int64())
                reply.status = static_cast<unsigned>(v->as_int64());
            if (auto* v = o.if_contains("retry_after"); v && v->is_string())
                reply.retry_after = v->as_string();
            if (auto* v = o.if_contains("delay_ms"); v && v->is_int64())
                reply.delay_ms = v->as_int64();
            if (auto* v = o.if_contains("expect"); v && v->is_string())
                reply.expect = v->as_string();
            if (auto* v = o.if_contains("calls"); v && v->is_array())
                for (const auto& c : v->as_array()) {
                    const auto* call = c.if_object();
                    if (!call || !call->contains("name") || !call->at("name").is_string()) {
                        std::cerr << path << ": each call is {\"name\", \"arguments\"}\n";
                        return std::nullopt;
                    }
                    gateway::testing::scripted_call sc;
                    sc.name = call->at("name").as_string();
                    if (auto* a = call->if_contains("arguments"); a && a->is_string())
                        sc.arguments = a->as_string();
                    reply.calls.push_back(std::move(sc));
                }
        } else {
            std::cerr << path << ": each reply is a string or an object\n";
            return std::nullopt;
        }
        replies.push_back(std::move(reply));
    }
    return replies;
}

int main(int argc, char** argv) {
    gateway::testing::fake_options options;
    std::string script_file;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--port" && i + 1 < argc) {
            options.port = static_cast<std::uint16_t>(std::stoi(argv[++i]));
        } else if (arg == "--threads" && i + 1 < argc) {
            options.threads = static_cast<unsigned>(std::stoi(argv[++i]));
        } else if (arg == "--script" && i + 1 < argc) {
            script_file = argv[++i];
        } else if (arg == "--tls" && i + 2 < argc) {
            options.cert_file = argv[++i];
            options.key_file = argv[++i];
        } else if (arg == "--vertex-token" && i + 1 < argc) {
            // Vertex AI's requests must carry this access token.
            options.vertex_tokens = [token = std::string(argv[++i])](std::string_view t) {
                return t == token ? std::string() : std::string("not the token it was given");
            };
        } else {
            std::cerr
                << "usage: contextgate-fake-upstream [--port N] [--threads N] "
                   "[--tls CERT KEY] [--script FILE] [--vertex-token T]\n"
                   "  --script FILE: a JSON array of model replies for the agent loop, each a\n"
                   "  string or {\"content\", \"finish_reason\", \"status\", \"retry_after\",\n"
                   "  \"delay_ms\", \"expect\", \"calls\": [{\"name\", \"arguments\"}]}, answered "
                   "in order to non-streaming chat completions, from the first again once used "
                   "up\n";
            return 2;
        }
    }
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    // Blocked before the server threads start, so only sigwait below receives them.
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    gateway::testing::fake_upstream fake(options);
    if (!script_file.empty()) {
        auto replies = read_script(script_file);
        if (!replies) return 2;
        fake.script(std::move(*replies));
        fake.loop_script();
    }
    std::cout << "listening on " << fake.port() << std::endl;
    int received = 0;
    sigwait(&signals, &received);
    fake.stop();
    return 0;
}
