#pragma once

// The Context API test fixture: one gateway with its store in a temporary folder, a temporary
// workspace, and the scripted fake model; helpers to call the API and read a run's events.
#include "tests/integration/harness.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace gateway::testing {

namespace json = boost::json;
namespace fs = std::filesystem;

struct sse_event {
    std::int64_t id = 0;
    std::string type;
    json::object data;
};

inline std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void write_text(const fs::path& p, std::string_view text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

inline bool is_final(std::string_view type) {
    return type == "run.completed" || type == "run.failed" || type == "run.cancelled";
}

// A call in the agent protocol, as the model would write it.
inline std::string call(std::string_view tool, json::object parameters, bool terminate = false) {
    return json::serialize(json::object{
        {"tool", tool}, {"parameters", std::move(parameters)}, {"terminate", terminate}});
}

// One gateway with the context API over a temporary workspace, and its scripted model.
struct context_fixture {
    explicit context_fixture(
        const std::function<void(gateway::config::gateway_config&)>& adjust = {})
        : workspace(temporary_folder()) {
        write_text(workspace / "README.md", "# Demo\n\nThis is teh readme.\n");
        write_text(workspace / "src/app.py", "def main():\n    print('hi')\n");
        config = make_config(fake);
        config.context.workspaces = {workspace.string()};
        if (adjust) adjust(config);
        gateway.emplace(config);
    }

    // The gateway the helpers talk to: this fixture's, or another replica sharing its store.
    std::uint16_t port() const { return talk_to ? talk_to : gateway->port(); }

    // A request with a JSON body; the reply's JSON (null when the body is not JSON).
    std::pair<response, json::value> send(std::string_view method, std::string_view path,
                                          const json::value& body = nullptr,
                                          std::string_view headers = {}) {
        client c(port());
        auto text = body.is_null() ? std::string() : json::serialize(body);
        std::string fields(headers);
        if (!text.empty() && fields.find("Content-Type") == std::string::npos)
            fields += "Content-Type: application/json\r\n";
        auto r = c.request(make_request(method, path, text, fields + auth_header));
        json::error_code ec;
        auto parsed = json::parse(r.body, ec);
        return {r, ec ? json::value(nullptr) : parsed};
    }

    std::string create_chat(json::object extra = {}) {
        json::object body{{"model", "fake-model"}, {"workspace", workspace.string()}};
        for (auto& [k, v] : extra) body[k] = v;
        auto [r, j] = send("POST", "/context/chats", body);
        BOOST_TEST_REQUIRE(r.status == 201u, r.body);
        return std::string(j.at("id").as_string());
    }

    std::string start(const std::string& chat, std::string_view content) {
        auto [r, j] = send("POST", "/context/chats/" + chat + "/messages",
                           json::object{{"content", content}});
        BOOST_TEST_REQUIRE(r.status == 202u, r.body);
        return std::string(j.at("run_id").as_string());
    }

    // Reads the run's event stream from after `last_id` until `until` says stop (or the run
    // ends). Every read is bounded by the client's timeout.
    std::vector<sse_event> events(const std::string& run,
                                  const std::function<bool(const sse_event&)>& until = {},
                                  std::int64_t last_id = 0) {
        client c(port(), 10s);
        std::string headers = auth_header;
        if (last_id > 0) headers += "Last-Event-ID: " + std::to_string(last_id) + "\r\n";
        c.send(make_request("GET", "/context/runs/" + run + "/events", {}, headers));
        response r;
        std::vector<sse_event> out;
        if (!c.read_header(r) || r.status != 200u) {
            BOOST_TEST(false, "event stream refused: " << r.status);
            return out;
        }
        std::string buffer;
        while (auto piece = c.read_piece(r)) {
            buffer += *piece;
            for (auto end = buffer.find("\n\n"); end != std::string::npos;
                 end = buffer.find("\n\n")) {
                auto frame = buffer.substr(0, end);
                buffer.erase(0, end + 2);
                if (frame.starts_with(":")) continue;
                sse_event e;
                std::istringstream lines(frame);
                for (std::string line; std::getline(lines, line);) {
                    if (line.starts_with("id: ")) e.id = std::stoll(line.substr(4));
                    if (line.starts_with("event: ")) e.type = line.substr(7);
                    if (line.starts_with("data: "))
                        e.data = json::parse(line.substr(6)).as_object();
                }
                out.push_back(e);
                if ((until && until(e)) || is_final(e.type)) return out;
            }
        }
        return out;
    }

    sse_event wait_for(const std::string& run, std::string_view type) {
        auto all = events(run, [&](const sse_event& e) { return e.type == type; });
        BOOST_TEST_REQUIRE(!all.empty());
        BOOST_TEST_REQUIRE(all.back().type == type,
                           "expected " << type << ", the stream ended with " << all.back().type
                                       << ": " << json::serialize(all.back().data));
        return all.back();
    }

    json::object run_state(const std::string& run) {
        auto [r, j] = send("GET", "/context/runs/" + run);
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        return j.as_object();
    }

    response approve(const std::string& run, const std::string& call_id,
                     json::object body = {{"decision", "approve"}}) {
        return send("POST", "/context/runs/" + run + "/approvals/" + call_id, body).first;
    }

    // The messages of the n-th chat completion the model received.
    json::array model_messages(std::size_t n) {
        auto bodies = fake.scripted_requests();
        BOOST_TEST_REQUIRE(bodies.size() > n);
        return json::parse(bodies[n]).at("messages").as_array();
    }

    fake_upstream fake;
    fs::path workspace;
    gateway::config::gateway_config config;
    std::optional<running_gateway> gateway;
    std::string auth_header;
    std::uint16_t talk_to = 0;  // 0: this fixture's gateway
};

inline std::vector<std::string> types_of(const std::vector<sse_event>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.type);
    return out;
}

inline std::string last_content(const json::array& messages) {
    return std::string(messages.back().at("content").as_string());
}

inline bool mentions(const json::array& messages, std::string_view text) {
    for (const auto& m : messages)
        if (std::string_view(m.at("content").as_string()).find(text) != std::string_view::npos)
            return true;
    return false;
}

}  // namespace gateway::testing
