// The gateway under attack, in raw bytes: a real gateway in-process on loopback and a raw
// upstream that records exactly what reaches it. Each case is one way in that a production
// gateway must refuse (and did not, before the hardening issue): request smuggling, trailer
// fields, dot segments, Host and target rules, bodies and routes before authentication.
#include "tests/integration/context_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

namespace integration_adversarial_test {

using namespace gateway::testing;

namespace {

std::string error_code_of(const response& r) {
    json::error_code ec;
    auto v = json::parse(r.body, ec);
    if (ec || !v.is_object() || !v.as_object().contains("error")) return {};
    return std::string(v.at("error").at("code").as_string());
}

// Sends `raw` on a fresh connection: the one response, and whether the gateway then closed.
std::pair<response, bool> exchange_once(std::uint16_t port, const std::string& raw) {
    client c(port, 5s);
    auto r = c.request(raw);
    bool closed = c.closed_by_peer();
    return {r, closed};
}

// Sends `raw` on a fresh connection and reads the one response, whether or not the gateway keeps
// the connection open after it.
response exchange(std::uint16_t port, const std::string& raw) {
    client c(port, 5s);
    return c.request(raw);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(adversarial)

BOOST_AUTO_TEST_CASE(transfer_encoding_not_ending_in_chunked_never_smuggles_a_second_request) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    // The body is a complete second request; read as "no body", it would be served next.
    const std::string smuggled = "GET /context/workflows HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    for (std::string te : {"xchunked", "chunked, identity", "gzip", "identity", "chunked\t;x"}) {
        auto [r, closed] = exchange_once(
            gw.port(),
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: " + te +
                "\r\n\r\n" + smuggled);
        BOOST_TEST(r.status == 400u, te);
        BOOST_TEST(error_code_of(r) == "bad_request", te);
        BOOST_TEST(r.header("Connection") == "close", te);
        BOOST_TEST(closed, te << ": the connection stayed open after the refusal");
    }
    auto [r501, closed501] = exchange_once(
        gw.port(),
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, "
        "chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" +
            smuggled);
    BOOST_TEST(r501.status == 501u);
    BOOST_TEST(closed501);
    BOOST_TEST(fake.requests().empty(), "a request reached the upstream");
}

BOOST_AUTO_TEST_CASE(trailer_fields_never_become_headers) {
    fake_upstream fake;
    auto config = make_config(fake);
    running_gateway gw(config);
    client c(gw.port());
    auto r = c.request(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nx-fake-mode: echo\r\n"
        "Transfer-Encoding: chunked\r\nTrailer: Authorization, X-Forwarded-For\r\n\r\n"
        "b\r\n{\"model\":1}\r\n0\r\nAuthorization: Bearer trailer-secret\r\n"
        "X-Forwarded-For: 6.6.6.6\r\n\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto requests = fake.requests();
    BOOST_TEST_REQUIRE(requests.size() == 1u);
    const auto& raw = requests[0].raw;
    BOOST_TEST(raw.find("trailer-secret") == std::string::npos, raw);
    BOOST_TEST(raw.find("6.6.6.6") == std::string::npos, raw);
    BOOST_TEST(raw.find("Authorization") == std::string::npos, raw);
    BOOST_TEST(raw.ends_with("\r\n\r\n{\"model\":1}"), raw);
}

BOOST_AUTO_TEST_CASE(a_key_sent_only_in_a_trailer_authenticates_nothing) {
    context_fixture f([](auto& c) { c.context.api_keys = {"trailer-key-0123456789"}; });
    client c(f.port());
    auto r = c.request(
        "POST /context/chats HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        "e\r\n{\"model\":\"m\"} \r\n0\r\nAuthorization: Bearer trailer-key-0123456789\r\n\r\n");
    BOOST_TEST(r.status == 401u, r.body);
}

BOOST_AUTO_TEST_CASE(dot_segments_never_leave_the_upstream_base_path) {
    fake_upstream fake;
    auto config = make_config({"http://127.0.0.1:" + std::to_string(fake.port()) + "/tenant-a/v1"});
    config.upstreams[0].api_key = "sk-gateway-secret";
    running_gateway gw(config);
    for (std::string target :
         {"/v1/../../admin/keys", "/v1/%2e%2e/%2e%2e/admin/keys", "/v1/%2E%2E/admin",
          "/v1/.%2e/admin", "/v1/..%2f..%2fadmin/keys", "/v1/..%5c..%5cadmin", "/v1/..\\admin",
          "/v1/models/../../../admin", "http://g/v1/../../admin/keys"}) {
        auto [r, closed] =
            exchange_once(gw.port(), "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        BOOST_TEST(r.status == 400u, target << " answered " << r.status << " " << r.body);
        BOOST_TEST(closed, target);
    }
    BOOST_TEST(fake.requests().empty(), "a request reached the upstream");

    // Dot segments that stay inside /v1/ are resolved, so the upstream never sees one.
    client c(gw.port());
    auto r = c.request(
        make_request("GET", "/v1/files/./x/../models?after=../y", {}, "x-fake-mode: echo\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.body.starts_with("GET /tenant-a/v1/files/models?after=../y HTTP/1.1\r\n"), r.body);
}

BOOST_AUTO_TEST_CASE(host_rules_and_target_forms) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    const std::string body = R"({"model":"m"})";
    auto with = [&](std::string head) {
        return head + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    };
    for (std::string bad :
         {with("POST /v1/chat/completions HTTP/1.1\r\n"),
          with("POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nHost: b\r\n"),
          with("POST /v1/chat/completions HTTP/1.1\r\nHost: \r\n"),
          with("POST /v1/chat/completions#frag HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
          with("POST /v1/chat/compl\xc3\xa9tions HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
          with("POST /v1/chat/completions%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
          with("OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
          with("POST http://user@g/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")}) {
        auto [r, closed] = exchange_once(gw.port(), bad);
        BOOST_TEST(r.status == 400u, bad.substr(0, 60) << " answered " << r.status);
        BOOST_TEST(closed);
    }
    BOOST_TEST(fake.requests().empty());

    // Absolute-form (RFC 9112 §3.2.2) is accepted and forwarded in origin-form with our Host.
    client c(gw.port());
    auto r =
        c.request(with("POST http://10.9.8.7:8080/v1/chat/completions?x=1 "
                       "HTTP/1.1\r\nHost: 10.9.8.7:8080\r\nx-fake-mode: echo\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.body.starts_with("POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: 127.0.0.1:" +
                                  std::to_string(fake.port()) + "\r\n"),
               r.body);
    // HTTP/1.0 may leave Host out.
    client old(gw.port());
    auto r10 = old.request(with("POST /v1/chat/completions HTTP/1.0\r\nx-fake-mode: echo\r\n"));
    BOOST_TEST(r10.status == 200u, r10.body);
}

BOOST_AUTO_TEST_CASE(unauthenticated_bodies_are_never_read) {
    context_fixture f([](auto& c) {
        c.context.api_keys = {"body-key-0123456789"};
        c.server.body_timeout = 30s;  // longer than the client waits: a read would time out
    });
    client c(f.port(), 3s);
    // A large declared body, never sent: the 401 must come from the head alone.
    c.send(
        "POST /context/chats HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 30000000\r\n\r\n");
    auto started = clock::now();
    auto r = c.read_response();
    BOOST_TEST(r.status == 401u);
    BOOST_TEST(r.header("Connection") == "close");
    BOOST_TEST((clock::now() - started < 2s));
    BOOST_TEST(c.closed_by_peer());
    // Expect: 100-continue gets the 401 instead of the go-ahead.
    client e(f.port(), 3s);
    e.send(
        "POST /context/chats HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
        "Content-Length: 100\r\n\r\n");
    auto r2 = e.read_response();
    BOOST_TEST(r2.status == 401u);
}

BOOST_AUTO_TEST_CASE(routes_are_not_revealed_before_the_key_is_checked) {
    context_fixture f([](auto& c) { c.context.api_keys = {"route-key-0123456789"}; });
    for (auto [method, path] : std::vector<std::pair<std::string, std::string>>{
             {"GET", "/context/no-such-thing"},
             {"PUT", "/context/chats"},
             {"DELETE", "/context/workflows"},
             {"GET", "/context"},
             {"POST", "/v1/system-prompts"},
             {"GET", "/v1/system-prompts/nope/enhanced"}}) {
        auto [r, j] = f.send(method, path);
        BOOST_TEST(r.status == 401u, method << " " << path << " answered " << r.status);
    }
    f.auth_header = "Authorization: Bearer route-key-0123456789\r\n";
    BOOST_TEST(f.send("GET", "/context/no-such-thing").first.status == 404u);
    BOOST_TEST(f.send("PUT", "/context/chats").first.status == 405u);
    BOOST_TEST(f.send("POST", "/v1/system-prompts").first.status == 405u);
}

BOOST_AUTO_TEST_CASE(a_workspace_swapped_for_a_link_is_refused_at_the_next_run) {
    context_fixture f;
    auto outside = fs::path(temporary_folder());
    write_text(outside / "secret.txt", "the secret");
    write_text(f.workspace / "proj/notes.md", "notes");
    write_text(f.workspace / "deep/a/b/notes.md", "notes");
    f.fake.script({{call("read_file", {{"path", "notes.md"}})}, {"Read it."}});
    auto chat = f.create_chat({{"workspace", (f.workspace / "proj").string()}});
    auto deep = f.create_chat({{"workspace", (f.workspace / "deep/a/b").string()}});
    auto first = f.start(chat, "read notes.md");
    BOOST_TEST(f.events(first).back().type == "run.completed");

    // The chat's folder, then a parent of another chat's folder, become links to elsewhere.
    fs::rename(f.workspace / "proj", f.workspace / "proj.old");
    fs::create_directory_symlink(outside, f.workspace / "proj");
    fs::rename(f.workspace / "deep/a", f.workspace / "deep/a.old");
    fs::create_directories(outside / "b");
    fs::create_directory_symlink(outside, f.workspace / "deep/a");
    auto asked = f.fake.scripted_requests().size();
    for (const auto& id : {chat, deep}) {
        auto run = f.start(id, "read secret.txt");
        auto end = f.events(run).back();
        BOOST_TEST(end.type == "run.failed");
        auto error = std::string(end.data.at("error").as_string());
        BOOST_TEST(error.find("symbolic link") != std::string::npos, error);
    }
    BOOST_TEST(f.fake.scripted_requests().size() == asked, "the model was asked");
}

BOOST_AUTO_TEST_CASE(workspaces_that_are_no_folder_or_hold_a_nul_are_400) {
    context_fixture f;
    write_text(f.workspace / "file.txt", "x");
    BOOST_TEST_REQUIRE(::mkfifo((f.workspace / "fifo").c_str(), 0600) == 0);
    fs::create_directory_symlink(f.workspace / "src", f.workspace / "link");
    for (const auto& [path, says] : std::vector<std::pair<std::string, std::string>>{
             {(f.workspace / "file.txt").string(), "not a folder"},
             {(f.workspace / "fifo").string(), "not a folder"},
             {(f.workspace / "link").string(), "symbolic link"},
             {(f.workspace / "missing").string(), "does not exist"},
             {f.workspace.string() + std::string("/src\0/etc", 10), "NUL"},
             {f.workspace.string() + std::string(1, '\0') + "junk", "NUL"}}) {
        auto [r, j] =
            f.send("POST", "/context/chats", json::object{{"model", "m"}, {"workspace", path}});
        BOOST_TEST(r.status == 400u, path << " answered " << r.status);
        BOOST_TEST(r.body.find(says) != std::string::npos, r.body);
    }
    // The path a chat keeps is its plain spelling.
    auto [ok, j] =
        f.send("POST", "/context/chats",
               json::object{{"model", "m"}, {"workspace", f.workspace.string() + "/./src//"}});
    BOOST_TEST_REQUIRE(ok.status == 201u, ok.body);
    BOOST_TEST(j.at("workspace").as_string() == (f.workspace / "src").string());
}

BOOST_AUTO_TEST_CASE(large_contents_reach_events_as_excerpts_and_are_kept_once_whole) {
    context_fixture f([](auto& c) { c.context.event_excerpt_bytes = 4096; });
    std::string big;
    while (big.size() < 300 * 1024)
        big += "line " + std::to_string(big.size()) + " of a big file\n";
    f.fake.script({{call("create_file", {{"path", "big.txt"}, {"content", big}})}, {"Created."}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "create big.txt");
    auto approval = f.wait_for(run, "approval.required");
    auto call_id = std::string(approval.data.at("call_id").as_string());
    auto full = std::string(approval.data.at("full").as_string());
    BOOST_TEST(full == "/context/runs/" + run + "/calls/" + call_id);
    auto truncated = approval.data.at("truncated").as_array();
    for (auto pointer : {"/parameters/content", "/preview"})
        BOOST_TEST((std::find(truncated.begin(), truncated.end(), json::value(pointer)) !=
                    truncated.end()),
                   pointer);
    BOOST_TEST(approval.data.at("parameters").at("content").as_string().size() <= 4096u);
    BOOST_TEST(approval.data.at("preview").as_string().size() <= 4096u);
    // The whole call, once.
    auto [r, whole] = f.send("GET", full);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body.substr(0, 200));
    BOOST_TEST(whole.at("parameters").at("content").as_string() == big);
    BOOST_TEST(std::string(whole.at("preview").as_string()).find("+line 0 of a big file") !=
               std::string::npos);
    BOOST_TEST(f.approve(run, call_id).status == 200u);
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    for (const auto& e : all) {
        BOOST_TEST(json::serialize(e.data).size() < 3 * 4096u + 2048u, e.type);
        if (e.type == "tool.result") BOOST_TEST(e.data.contains("full"));
    }
    BOOST_TEST(read_text(f.workspace / "big.txt") == big);
    // The run view carries excerpts of its calls too.
    auto state = f.run_state(run);
    auto calls = state.at("tool_calls").as_array();
    BOOST_TEST_REQUIRE(calls.size() == 1u);
    BOOST_TEST(calls[0].at("full").as_string() == full);
    BOOST_TEST(f.send("GET", "/context/runs/" + run + "/calls/call_nope").first.status == 404u);
}

BOOST_AUTO_TEST_CASE(event_streams_per_run_are_capped) {
    context_fixture f([](auto& c) { c.context.max_watchers_per_run = 2; });
    f.fake.script({{call("edit_file", {{"path", "README.md"}, {"content", "x"}})}, {"Done."}});
    auto run = f.start(f.create_chat(), "edit");
    f.wait_for(run, "approval.required");
    // Opens a stream on a fresh connection, retrying while the places of streams whose clients
    // just hung up are being given back (the gateway notices a hang-up by a read).
    auto open_stream = [&]() {
        auto deadline = clock::now() + 5s;
        while (true) {
            auto c = std::make_unique<client>(f.port());
            c->send(make_request("GET", "/context/runs/" + run + "/events"));
            response r;
            BOOST_TEST_REQUIRE(c->read_header(r));
            if (r.status == 200u || clock::now() > deadline) {
                BOOST_TEST(r.status == 200u);
                return c;
            }
        }
    };
    {
        auto a = open_stream();
        auto b = open_stream();
        client third(f.port());
        third.send(make_request("GET", "/context/runs/" + run + "/events"));
        auto r = third.read_response();
        BOOST_TEST(r.status == 429u);
        BOOST_TEST(error_code_of(r) == "too_many_streams");
    }
    // The places are given back when the clients hang up.
    auto again = open_stream();
    auto and_again = open_stream();
}

BOOST_AUTO_TEST_CASE(replay_in_pages_has_no_gap_and_no_duplicate) {
    context_fixture f([](auto& c) { c.context.max_steps = 60; });
    std::vector<scripted_reply> script;
    for (int i = 0; i < 48; ++i)
        script.push_back({call("list_files", {{"path", i % 2 ? "." : "src"}})});
    script.push_back({"Listed."});
    f.fake.script(script);
    auto run = f.start(f.create_chat(), "list a lot");
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed");
    BOOST_TEST(all.size() > 64u * 2);  // more than two pages
    for (std::size_t i = 0; i < all.size(); ++i) BOOST_TEST(all[i].id == std::int64_t(i + 1));
    auto resumed = f.events(run, {}, 70);
    BOOST_TEST_REQUIRE(resumed.size() == all.size() - 70);
    BOOST_TEST(resumed.front().id == 71);
}

BOOST_AUTO_TEST_CASE(an_oversized_message_is_413) {
    context_fixture f([](auto& c) { c.context.max_message_bytes = 1000; });
    auto chat = f.create_chat();
    auto [r, j] = f.send("POST", "/context/chats/" + chat + "/messages",
                         json::object{{"content", std::string(1001, 'a')}});
    BOOST_TEST(r.status == 413u);
    BOOST_TEST(j.at("error").at("code").as_string() == "message_too_large");
    auto [w, wj] = f.send("POST", "/context/workflows/explain_file/runs",
                          json::object{{"chat_id", chat}, {"input", std::string(1001, 'a')}});
    BOOST_TEST(w.status == 413u, w.body);
    f.fake.script({{"ok"}});
    auto [ok, oj] = f.send("POST", "/context/chats/" + chat + "/messages",
                           json::object{{"content", std::string(1000, 'a')}});
    BOOST_TEST(ok.status == 202u, ok.body);
}

BOOST_AUTO_TEST_CASE(model_requests_stay_within_the_context_budget) {
    context_fixture probe;
    auto [pr, prompt] = probe.send("GET", "/v1/system-prompts/coding/enhanced");
    auto system_bytes = prompt.at("content").as_string().size();
    // Room for the system prompt, the current turn and about two earlier 3000-byte turns.
    std::size_t budget_tokens = (system_bytes + 9000) / 4;
    context_fixture f([&](auto& c) { c.upstreams[0].context_budget = budget_tokens; });
    auto chat = f.create_chat();
    for (int i = 0; i < 4; ++i) {
        f.fake.script({{"answer " + std::to_string(i)}});
        auto run = f.start(chat, "turn " + std::to_string(i) + " " + std::string(3000, 'a' + i));
        BOOST_TEST_REQUIRE(f.events(run).back().type == "run.completed");
    }
    // A run whose tool result grows the request past the budget mid-run.
    write_text(f.workspace / "grow.txt", std::string(4000, 'g'));
    f.fake.script({{call("read_file", {{"path", "grow.txt"}})}, {"Read."}});
    auto run = f.start(chat, "now read grow.txt");
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed");
    std::vector<sse_event> trimmed;
    for (const auto& e : all)
        if (e.type == "context.trimmed") trimmed.push_back(e);
    BOOST_TEST_REQUIRE(trimmed.size() == 2u);  // at the start, and again after the big result
    BOOST_TEST(trimmed[1].data.at("left_out_messages").as_int64() >
               trimmed[0].data.at("left_out_messages").as_int64());
    BOOST_TEST(trimmed[0].data.at("budget_tokens").as_int64() == std::int64_t(budget_tokens));
    auto requests = f.fake.scripted_requests();
    auto first = json::parse(requests[requests.size() - 2]).at("messages").as_array();
    auto second = json::parse(requests.back()).at("messages").as_array();
    for (const auto* messages : {&first, &second}) {
        // Never the system prompt or the current turn; the kept history starts with a user turn.
        BOOST_TEST(messages->at(0).at("role").as_string() == "system");
        BOOST_TEST(mentions(*messages, "now read grow.txt"));
        BOOST_TEST(!mentions(*messages, "turn 0 "));
        BOOST_TEST(messages->at(1).at("role").as_string() == "user");
        BOOST_TEST(json::serialize(*messages).size() <= budget_tokens * 4 + 200);
    }
    BOOST_TEST(mentions(first, "turn 3 "));
    BOOST_TEST(mentions(second, std::string(4000, 'g')));
    BOOST_TEST(second.size() < first.size() + 2);  // older turns made room for call and result
}

BOOST_AUTO_TEST_CASE(chat_messages_come_in_pages) {
    context_fixture f;
    auto chat = f.create_chat();
    for (int i = 0; i < 5; ++i) {
        f.fake.script({{"answer " + std::to_string(i)}});
        auto run = f.start(chat, "question " + std::to_string(i));
        BOOST_TEST_REQUIRE(f.events(run).back().type == "run.completed");
    }
    auto [r, page] = f.send("GET", "/context/chats/" + chat + "?limit=4");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto messages = page.at("messages").as_array();
    BOOST_TEST_REQUIRE(messages.size() == 4u);
    BOOST_TEST(messages[0].at("content").as_string() == "question 3");
    BOOST_TEST(messages[3].at("content").as_string() == "answer 4");
    BOOST_TEST(page.at("has_more").as_bool());
    BOOST_TEST(page.at("runs").as_array().size() == 2u);  // the runs of this page only
    std::vector<std::string> seen;
    auto before = page.at("next_before").as_int64();
    while (true) {
        auto [rr, more] = f.send(
            "GET", "/context/chats/" + chat + "/messages?limit=3&before=" + std::to_string(before));
        BOOST_TEST_REQUIRE(rr.status == 200u, rr.body);
        auto data = more.at("data").as_array();
        for (auto it = data.rbegin(); it != data.rend(); ++it)
            seen.emplace_back(it->at("content").as_string());
        if (!more.at("has_more").as_bool()) break;
        before = more.at("next_before").as_int64();
    }
    std::vector<std::string> expected{"answer 2",   "question 2", "answer 1",
                                      "question 1", "answer 0",   "question 0"};
    BOOST_TEST(seen == expected, boost::test_tools::per_element());
    BOOST_TEST(f.send("GET", "/context/chats/" + chat + "?limit=0").first.status == 400u);
    BOOST_TEST(f.send("GET", "/context/chats/" + chat + "?before=x").first.status == 400u);
}

// DNS rebinding: a page whose name now resolves to 127.0.0.1 sends that name as Host. Every route
// refuses it before anything runs (no chat listed, no run started, no upstream called); the
// gateway's own address, localhost and configured names are served.
BOOST_AUTO_TEST_CASE(a_rebound_name_reaches_no_route) {
    context_fixture f([](auto& c) { c.server.allowed_hosts = {"gateway.example.com"}; });
    auto chat = f.create_chat();
    for (std::string target :
         std::vector<std::string>{"/context/chats", "/context/chats/" + chat, "/v1/models",
                                  "/console/", "/v1/system-prompts", "/metrics"}) {
        auto r = exchange(f.port(),
                          "GET " + target + " HTTP/1.1\r\nHost: rebound.evil.example:8080\r\n\r\n");
        BOOST_TEST(r.status == 403u, target << " answered " << r.status);
        BOOST_TEST(r.body.find("server.allowed_hosts") != std::string::npos, r.body);
    }
    const std::string start = R"({"content":"read everything"})";
    auto run =
        exchange(f.port(), "POST /context/chats/" + chat +
                               "/messages HTTP/1.1\r\nHost: rebound.evil.example\r\nContent-Type: "
                               "application/json\r\nContent-Length: " +
                               std::to_string(start.size()) + "\r\n\r\n" + start);
    BOOST_TEST(run.status == 403u);
    BOOST_TEST(f.fake.requests().empty());
    for (std::string host : {"127.0.0.1:1", "localhost:8080", "gateway.example.com",
                             "GATEWAY.example.com:443", "[::1]:8080"}) {
        auto r = exchange(f.port(), "GET /context/chats HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
        BOOST_TEST(r.status == 200u, host << " answered " << r.status);
    }
}

// A page on another site posting straight to 127.0.0.1: the browser sends its Origin, and a
// body it may send without asking (text/plain, a form). Both are refused before the body is read.
BOOST_AUTO_TEST_CASE(cross_site_requests_and_non_json_bodies_change_nothing) {
    context_fixture f;
    const std::string body = R"({"model":"m","workspace":")" + f.workspace.string() + R"("})";
    auto foreign = exchange(
        f.port(),
        make_request("POST", "/context/chats", body,
                     "Origin: https://evil.example.com\r\nContent-Type: application/json\r\n"));
    BOOST_TEST(foreign.status == 403u, foreign.body);
    BOOST_TEST(error_code_of(foreign) == "forbidden");
    for (std::string type : {"text/plain", "application/x-www-form-urlencoded",
                             "multipart/form-data; boundary=x", ""}) {
        std::string fields = type.empty() ? "" : "Content-Type: " + type + "\r\n";
        auto r = exchange(f.port(), make_request("POST", "/context/chats", body, fields));
        BOOST_TEST(r.status == 415u, type << " answered " << r.status);
        BOOST_TEST(error_code_of(r) == "unsupported_media_type");
    }
    auto [listed, jl] = f.send("GET", "/context/chats");
    BOOST_TEST(jl.at("data").as_array().empty(), listed.body);
    // The gateway's own console (same origin) and a frontend on this machine are served.
    const std::vector<std::string> origins{"http://127.0.0.1:" + std::to_string(f.port()),
                                           "http://localhost:5173"};
    for (const auto& origin : origins) {
        auto r = exchange(
            f.port(), make_request("POST", "/context/chats", body,
                                   "Origin: " + origin + "\r\nContent-Type: application/json\r\n"));
        BOOST_TEST(r.status == 201u, origin << " answered " << r.status);
    }
    // The /v1 face is guarded the same way: a cross-site page cannot spend the upstream key.
    auto spend = exchange(
        f.port(), make_request("POST", "/v1/chat/completions", R"({"model":"m"})",
                               "Origin: https://evil.example.com\r\nContent-Type: text/plain\r\n"));
    BOOST_TEST(spend.status == 403u);
    BOOST_TEST(f.fake.requests().empty());
}

// A model name becomes a metric label, a usage row and a log field: one longer than any model's
// is refused at the edge, on every path that names a model, before any upstream is asked.
BOOST_AUTO_TEST_CASE(a_model_name_longer_than_any_models_is_refused_at_the_edge) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    std::string name(300, 'm');
    auto body = R"({"model":")" + name + R"(","messages":[]})";
    for (auto raw :
         {make_request("POST", "/v1/chat/completions", body, "Content-Type: application/json\r\n"),
          make_request("POST", "/v1beta/models/" + name + ":generateContent", "{}")}) {
        auto r = exchange(gw.port(), raw);
        BOOST_TEST(r.status == 400u, r.body);
        BOOST_TEST(r.body.find("longer than 256 bytes") != std::string::npos, r.body);
    }
    BOOST_TEST(fake.requests().empty());
    // 256 bytes is a name like any other.
    std::string longest(256, 'm');
    auto ok = exchange(gw.port(), make_request("POST", "/v1/chat/completions",
                                               R"({"model":")" + longest + R"(","messages":[]})"));
    BOOST_TEST(ok.status == 200u, ok.body);
}

namespace {

gateway::config::virtual_key limited_key(std::string name, const std::string& secret) {
    gateway::config::virtual_key k;
    k.id = "cfg-" + name;
    k.name = std::move(name);
    k.digest = gateway::config::key_digest(secret);
    return k;
}

}  // namespace

// A key limited to one model reached others where the gateway could not read the model: a
// multipart body, a byte order mark, a batch, a tuned model, a body without one. Each is now read
// or refused; listings stay open.
BOOST_AUTO_TEST_CASE(a_keys_model_list_holds_wherever_the_model_is_written) {
    fake_upstream fake;
    auto config = make_config(fake);
    auto gemini = config.upstreams[0];  // the fake answers Gemini's paths too
    gemini.name = "gemini";
    gemini.provider = gateway::config::provider_kind::gemini;
    gemini.models = {"gemini-*"};
    config.upstreams.push_back(gemini);
    auto one = limited_key("one", "sk-one-model-0123456789");
    one.models = {"gpt-4o-mini"};
    config.admin.keys = {one};
    running_gateway gw(config);
    const std::string key = "Authorization: Bearer sk-one-model-0123456789\r\n";
    auto form = [](std::string model) {
        return "--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\n" + model +
               "\r\n--XyZ--\r\n";
    };
    const std::string multipart =
        key + "Content-Type: multipart/form-data; boundary=XyZ\r\nx-fake-mode: echo\r\n";
    const std::string json = key + "Content-Type: application/json\r\n";
    struct attempt {
        std::string raw;
        unsigned status;
    };
    std::vector<attempt> attempts{
        {make_request("POST", "/v1/audio/transcriptions", form("o3"), multipart), 403},
        {make_request("POST", "/v1/chat/completions", "\xEF\xBB\xBF{\"model\":\"o3\"}", json), 403},
        {make_request("POST", "/v1/messages/batches",
                      R"({"requests":[{"custom_id":"a","params":{"model":"gpt-4o-mini"}},)"
                      R"({"custom_id":"b","params":{"model":"o3"}}]})",
                      json),
         403},
        {make_request("POST", "/v1beta/tunedModels/mine:generateContent", "{}", json), 403},
        {make_request("POST", "/v1/batches", R"({"input_file_id":"file-1"})", json), 403},
        {make_request("POST", "/v1/audio/transcriptions", form("gpt-4o-mini"), multipart), 200},
        {make_request("POST", "/v1/chat/completions", R"({"model":"gpt-4o-mini"})", json), 200},
        {make_request("GET", "/v1/models", "", key), 200},
    };
    for (const auto& a : attempts) {
        auto r = exchange(gw.port(), a.raw);
        BOOST_TEST(r.status == a.status, a.raw.substr(0, 50) << " answered " << r.status);
        if (a.status == 403) BOOST_TEST(error_code_of(r) == "model_not_allowed");
    }
    // The listing asks the Gemini upstream for its models too (the gateway's own ask).
    std::size_t reached = 0;
    for (const auto& q : fake.requests())
        reached += q.target.find("pageSize=") == std::string::npos;
    BOOST_TEST(reached == 3u);
}

// Gemini's path `models/{model}:{method}` is split at its last colon: a key limited to `llama3`
// let `llama3:70b:generateContent` through (the upstream heard `llama3:70b`, the ledger
// `llama3`). The key's list, the upstream and the ledger now all read `llama3:70b`.
BOOST_AUTO_TEST_CASE(a_second_colon_in_geminis_path_is_part_of_the_model_name) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.admin.api_key = "admin-key-0123456789abcdef";
    auto small = limited_key("small", "sk-small-model-0123456789");
    small.models = {"llama3"};
    auto large = limited_key("large", "sk-large-model-0123456789");
    large.models = {"llama3:70b"};
    config.admin.keys = {small, large};
    running_gateway gw(config);
    const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
    auto ask = [&](std::string_view secret, std::string target) {
        return exchange(gw.port(), make_request("POST", std::move(target), body,
                                                "x-goog-api-key: " + std::string(secret) +
                                                    "\r\nContent-Type: application/json\r\n"));
    };
    for (auto target : {"/v1beta/models/llama3:70b:generateContent",
                        "/v1beta/models/llama3:70b:streamGenerateContent?alt=sse",
                        "/v1/models/llama3:70b:generateContent"}) {
        auto refused = ask("sk-small-model-0123456789", target);
        BOOST_TEST(refused.status == 403u, target << ": " << refused.body);
    }
    BOOST_TEST(fake.requests().empty());

    auto allowed = ask("sk-large-model-0123456789", "/v1beta/models/llama3:70b:generateContent");
    BOOST_TEST_REQUIRE(allowed.status == 200u, allowed.body);
    BOOST_TEST_REQUIRE(fake.requests().size() == 1u);
    auto heard = json::parse(fake.requests()[0].body);
    BOOST_TEST(heard.at("model") == "llama3:70b");  // translated for the OpenAI-compatible fake

    // The ledger names the model the upstream heard.
    auto deadline = clock::now() + 10s;
    json::array rows;
    while (rows.empty() && clock::now() < deadline) {
        client c(gw.port());
        auto r = c.request(make_request("GET", "/admin/usage?key=cfg-large", "",
                                        "Authorization: Bearer admin-key-0123456789abcdef\r\n"));
        rows = json::parse(r.body).at("data").as_array();
    }
    BOOST_TEST_REQUIRE(rows.size() == 1u);
    BOOST_TEST(rows[0].at("model") == "llama3:70b");
}

// The WebSocket tunnel's frames name models and report usage the gateway never reads: a key with
// a model list, token limits or a budget cannot open one; a key without them can.
BOOST_AUTO_TEST_CASE(the_websocket_tunnel_is_refused_to_keys_it_would_escape) {
    fake_upstream fake;
    auto config = make_config(fake);
    auto models = limited_key("models", "sk-models-0123456789");
    models.models = {"gpt-4o-mini"};
    auto budget = limited_key("budget", "sk-budget-0123456789");
    budget.budget_tokens = 100;
    auto open = limited_key("open", "sk-open-0123456789");
    open.rpm = 100;
    config.admin.keys = {models, budget, open};
    running_gateway gw(config);
    auto upgrade = [&](std::string secret) {
        client c(gw.port());
        c.send(
            "GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
            "Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer " +
            secret + "\r\n\r\n");
        response r;
        BOOST_TEST_REQUIRE(c.read_header(r));
        return r.status;
    };
    BOOST_TEST(upgrade("sk-models-0123456789") == 403u);
    BOOST_TEST(upgrade("sk-budget-0123456789") == 403u);
    BOOST_TEST(upgrade("sk-open-0123456789") == 101u);
}

// A stream that reports no usage was charged only its size estimate and recorded as 0 tokens; one
// the client closed before its usage event was charged almost nothing. Both are now charged at
// least what the client received (content bytes / 4), and the ledger records it.
BOOST_AUTO_TEST_CASE(streams_without_usage_or_cut_before_it_are_charged_what_was_delivered) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.admin.api_key = "admin-key-0123456789abcdef";
    auto metered = limited_key("metered", "sk-metered-0123456789");
    metered.budget_tokens = 1'000'000;
    config.admin.keys = {metered};
    running_gateway gw(config);
    const std::string key =
        "Authorization: Bearer sk-metered-0123456789\r\nContent-Type: application/json\r\n";
    const std::string body =
        R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]})";
    auto usage = [&] {
        client c(gw.port());
        auto r = c.request(make_request("GET", "/admin/usage?key=cfg-metered", "",
                                        "Authorization: Bearer admin-key-0123456789abcdef\r\n"));
        auto rows = json::parse(r.body).at("data").as_array();
        std::array<std::int64_t, 3> totals{};  // requests, input, output
        for (const auto& row : rows) {
            totals[0] += row.at("requests").as_int64();
            totals[1] += row.at("input_tokens").as_int64();
            totals[2] += row.at("output_tokens").as_int64();
        }
        return totals;
    };
    {
        client c(gw.port());
        auto r = c.request(make_request("POST", "/v1/chat/completions", body, key));
        BOOST_TEST_REQUIRE(r.status == 200u);
        BOOST_TEST(r.body.find("usage") == std::string::npos);  // the upstream reported none
    }
    // The ledger records the request once its answer is settled, just after the client has it.
    auto deadline = clock::now() + 10s;
    auto whole = usage();
    while (whole[0] < 1 && clock::now() < deadline) whole = usage();
    BOOST_TEST_REQUIRE(whole[0] == 1);
    BOOST_TEST(whole[1] >= static_cast<std::int64_t>(body.size() / 4));
    BOOST_TEST(whole[2] >= 11);  // "Hello from the fake upstream! ✓ ünïcödé": 45 bytes

    {
        // Three events ("", "Hello", " from"), then the upstream stalls and the client leaves.
        client c(gw.port());
        c.send(make_request("POST", "/v1/chat/completions", body,
                            key + "x-fake-stall-after: 3\r\nx-fake-stall-ms: 5000\r\n"));
        response r;
        BOOST_TEST_REQUIRE(c.read_header(r));
        std::string seen;
        while (seen.find(" from") == std::string::npos)
            if (auto piece = c.read_piece(r))
                seen += *piece;
            else
                break;
        BOOST_TEST_REQUIRE(seen.find(" from") != std::string::npos);
        c.close();
    }
    deadline = clock::now() + 10s;
    auto cut = usage();
    while (cut[0] < 2 && clock::now() < deadline) cut = usage();
    BOOST_TEST_REQUIRE(cut[0] == 2);
    BOOST_TEST(cut[2] - whole[2] >= 3);  // 10 content bytes delivered
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_adversarial_test
