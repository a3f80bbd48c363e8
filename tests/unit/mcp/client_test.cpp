#include "gateway/mcp/client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <functional>

namespace mcp_client_test {

namespace json = boost::json;
namespace net = boost::asio;
using namespace gateway::mcp;
using namespace std::chrono_literals;

namespace {

// A server in memory: `answer` decides what it sends back for each message the client sends
// (nothing, one or more messages), delivered later on the executor as a transport would.
struct memory_transport : transport {
    net::any_io_executor executor;
    std::function<std::vector<json::object>(const json::object&)> answer;
    std::vector<json::object>* sent;
    transport_events events;
    std::string version;

    net::awaitable<std::string> open(transport_events e) override {
        events = std::move(e);
        co_return std::string();
    }
    void send(json::object message) override {
        sent->push_back(message);
        for (auto& reply : answer(message))
            net::post(executor, [this, reply] {
                if (events.message) events.message(reply);
            });
    }
    void initialized(std::string v) override { version = std::move(v); }
    void close() override { events = {}; }
};

bool is(const json::value& v, std::string_view text) {
    return v.is_string() && v.as_string() == text;
}

json::object result_for(const json::object& request, json::value result) {
    return {{"jsonrpc", "2.0"}, {"id", request.at("id")}, {"result", std::move(result)}};
}

// Answers initialize with `version`; then `rest` decides.
std::function<std::vector<json::object>(const json::object&)> server(
    std::string version, std::function<std::vector<json::object>(const json::object&)> rest) {
    return [version, rest](const json::object& m) -> std::vector<json::object> {
        auto* method = m.if_contains("method");
        if (method && is(*method, "initialize"))
            return {result_for(m, json::object{{"protocolVersion", version},
                                               {"capabilities", json::object{}},
                                               {"serverInfo", {{"name", "mem"}}}})};
        return rest(m);
    };
}

template <class T>
T run(net::io_context& io, net::awaitable<T> work) {
    auto done = net::co_spawn(io, std::move(work), net::use_future);
    io.restart();
    io.run();
    return done.get();
}

struct fixture {
    net::io_context io;
    std::vector<json::object> sent;
    memory_transport* mem = nullptr;
    std::shared_ptr<client> c;

    void make(std::function<std::vector<json::object>(const json::object&)> answer) {
        auto t = std::make_unique<memory_transport>();
        t->executor = io.get_executor();
        t->answer = std::move(answer);
        t->sent = &sent;
        mem = t.get();
        c = std::make_shared<client>(io.get_executor(), "mem", std::move(t));
    }
};

const json::object* find_sent(const std::vector<json::object>& sent, std::string_view method) {
    for (const auto& m : sent)
        if (auto* v = m.if_contains("method"); v && is(*v, method)) return &m;
    return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mcp_client)

BOOST_FIXTURE_TEST_CASE(initializes_with_the_newest_version_and_accepts_an_older_one, fixture) {
    make(server("2025-06-18", [](const json::object&) { return std::vector<json::object>{}; }));
    auto error = run(io, c->connect(1s));
    BOOST_TEST(error == "");
    BOOST_TEST(c->protocol_version() == "2025-06-18");
    BOOST_TEST(mem->version == "2025-06-18");
    const auto* init = find_sent(sent, "initialize");
    BOOST_TEST_REQUIRE(init);
    BOOST_TEST(init->at("params").at("protocolVersion").as_string() == protocol_versions[0]);
    BOOST_TEST(find_sent(sent, "notifications/initialized"));
}

BOOST_FIXTURE_TEST_CASE(a_version_it_does_not_speak_is_refused, fixture) {
    make(server("1999-01-01", [](const json::object&) { return std::vector<json::object>{}; }));
    auto error = run(io, c->connect(1s));
    BOOST_TEST(error.find("`1999-01-01`, which contextgate does not") != std::string::npos);
    BOOST_TEST(!find_sent(sent, "notifications/initialized"));
    BOOST_TEST(!c->open());
}

BOOST_FIXTURE_TEST_CASE(tools_are_listed_across_pages, fixture) {
    make(server("2025-11-25", [](const json::object& m) -> std::vector<json::object> {
        if (!is(m.at("method"), "tools/list")) return {};
        auto* params = m.if_contains("params");
        bool second = params && params->as_object().contains("cursor");
        json::object page{{"tools", json::array{json::object{{"name", second ? "b" : "a"}}}}};
        if (!second) page["nextCursor"] = "page-2";
        return {result_for(m, page)};
    }));
    BOOST_TEST(run(io, c->connect(1s)) == "");
    auto listed = run(io, c->list_tools(1s));
    BOOST_TEST(listed.error == "");
    BOOST_TEST_REQUIRE(listed.tools.size() == 2u);
    BOOST_TEST(listed.tools[1].at("name").as_string() == "b");
}

BOOST_FIXTURE_TEST_CASE(a_late_answer_is_a_timeout_and_the_call_is_cancelled, fixture) {
    make(server("2025-11-25", [](const json::object&) { return std::vector<json::object>{}; }));
    BOOST_TEST(run(io, c->connect(1s)) == "");
    auto o = run(io, c->request("tools/call", {{"name", "slow"}}, 50ms));
    BOOST_TEST((o.what == outcome::kind::timeout));
    const auto* call = find_sent(sent, "tools/call");
    const auto* cancelled = find_sent(sent, "notifications/cancelled");
    BOOST_TEST_REQUIRE(call);
    BOOST_TEST_REQUIRE(cancelled);
    BOOST_TEST(cancelled->at("params").at("requestId") == call->at("id"));
    // The session is still usable.
    BOOST_TEST(c->open());
}

BOOST_FIXTURE_TEST_CASE(errors_pings_and_unknown_requests, fixture) {
    make(server("2025-11-25", [](const json::object& m) -> std::vector<json::object> {
        if (!m.contains("id") || !m.contains("method")) return {};
        // Before answering, the server pings us and asks for something we do not offer.
        return {json::object{{"jsonrpc", "2.0"}, {"id", "p1"}, {"method", "ping"}},
                json::object{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "sampling/createMessage"}},
                json::object{{"jsonrpc", "2.0"},
                             {"id", m.at("id")},
                             {"error", {{"code", -32602}, {"message", "bad arguments"}}}}};
    }));
    BOOST_TEST(run(io, c->connect(1s)) == "");
    auto o = run(io, c->request("tools/call", {{"name", "x"}}, 1s));
    BOOST_TEST((o.what == outcome::kind::rpc_error));
    BOOST_TEST(o.message == "bad arguments");
    BOOST_TEST(o.code == -32602);
    bool pong = false, refused = false;
    for (const auto& m : sent) {
        if (m.contains("result") && is(m.at("id"), "p1")) pong = true;
        if (m.contains("error") && m.at("id") == json::value(7))
            refused = m.at("error").at("code").as_int64() == -32601;
    }
    BOOST_TEST(pong);
    BOOST_TEST(refused);
}

BOOST_FIXTURE_TEST_CASE(a_connection_that_ends_fails_what_waits, fixture) {
    make(server("2025-11-25", [](const json::object&) { return std::vector<json::object>{}; }));
    BOOST_TEST(run(io, c->connect(1s)) == "");
    std::string told;
    c->on_closed = [&](std::string why) { told = why; };
    auto work = [](std::shared_ptr<client> c, memory_transport* mem) -> net::awaitable<outcome> {
        // As the real transports do: the events are taken out before they are told.
        net::post(mem->executor, [mem] {
            auto events = std::move(mem->events);
            events.closed("the server exited with status 1");
        });
        std::string method = "tools/call";  // a named local: GCC 12 and literals in co_await
        json::object params{{"name", "x"}};
        auto o = co_await c->request(std::move(method), std::move(params), 5s);
        co_return o;
    };
    auto o = run(io, work(c, mem));
    BOOST_TEST((o.what == outcome::kind::failed));
    BOOST_TEST(o.message == "the server exited with status 1");
    BOOST_TEST(told == "the server exited with status 1");
}

BOOST_FIXTURE_TEST_CASE(a_changed_tool_list_is_told, fixture) {
    // The server announces a change right after the client says it is initialized.
    make(server("2025-11-25", [](const json::object& m) -> std::vector<json::object> {
        if (!is(m.at("method"), "notifications/initialized")) return {};
        return {json::object{{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}}};
    }));
    int told = 0;
    c->on_tools_changed = [&] { ++told; };
    BOOST_TEST(run(io, c->connect(1s)) == "");
    io.restart();
    io.run();  // delivers what the server sent after initialization
    BOOST_TEST(told == 1);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace mcp_client_test
