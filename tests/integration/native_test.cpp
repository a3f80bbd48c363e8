// The agent loop with native tool calling on each provider: the gateway in-process against the
// fake upstream, which speaks OpenAI tool_calls, Anthropic tool_use, Gemini functionCall and
// Bedrock Converse's toolUse (verifying the gateway's SigV4 signatures) and refuses a request that
// breaks its provider's rules (a tool_use without its tool_result, roles that do not alternate, a
// missing thought signature).
#include "tests/integration/context_fixture.hpp"
#include "tests/support/fake_providers.hpp"

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

namespace integration_native_test {

using namespace gateway::testing;
namespace config = gateway::config;
namespace bdata = boost::unit_test::data;

namespace {

const char* const provider_names[] = {"openai", "anthropic", "gemini", "bedrock"};

std::function<void(config::gateway_config&)> speaking(std::string provider, fake_upstream& fake) {
    return [provider, &fake](config::gateway_config& c) {
        auto& up = c.upstreams[0];
        auto root = "http://127.0.0.1:" + std::to_string(fake.port());
        up.tool_calling = config::tool_calling_mode::native;
        up.api_key = "k";
        up.model_map = {{"fake-model", "upstream-model"}};
        if (provider == "anthropic") {
            up.provider = config::provider_kind::anthropic;
            up.base_url = root;
        } else if (provider == "gemini") {
            up.provider = config::provider_kind::gemini;
            up.base_url = root + "/v1beta";
        } else if (provider == "bedrock") {
            // Signed with the keys the fake Bedrock verifies.
            up.provider = config::provider_kind::bedrock;
            up.base_url = root;
            up.region = "us-east-1";
            up.api_key.clear();
            up.aws.access_key_id = fake_providers::fake_aws_key_id;
            up.aws.secret_access_key = fake_providers::fake_aws_secret;
        }
        up.endpoint = *config::parse_base_url(up.base_url).value;
    };
}

// A fixture whose fake is created first, so the config can name its port.
struct native_fixture {
    explicit native_fixture(const std::string& provider,
                            std::function<void(config::gateway_config&)> more = {})
        : f([&](config::gateway_config& c) {
              speaking(provider, f.fake)(c);
              if (more) more(c);
          }) {}
    context_fixture f;
};

scripted_reply native_call(std::string tool, std::string arguments) {
    scripted_reply r;
    r.calls = {{std::move(tool), std::move(arguments)}};
    return r;
}

// The next event of `type` after event `after`.
sse_event next_of(context_fixture& f, const std::string& run, std::string_view type,
                  std::int64_t after) {
    auto all = f.events(
        run, [&](const sse_event& e) { return e.type == type; }, after);
    BOOST_TEST_REQUIRE(!all.empty());
    BOOST_TEST_REQUIRE(all.back().type == type, json::serialize(all.back().data));
    return all.back();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(native_tool_calling)

BOOST_DATA_TEST_CASE(a_run_reads_then_makes_two_calls_in_one_turn_one_approved_one_rejected,
                     bdata::make(provider_names), provider) {
    native_fixture n(provider);
    auto& f = n.f;
    f.fake.script({
        {"Let me look first.", "stop", 200, "", 0, {{"read_file", R"({"path":"README.md"})"}}},
        {"",
         "stop",
         200,
         "",
         0,
         {{"create_file", R"({"path":"a.txt","content":"A"})"},
          {"create_file", R"({"path":"b.txt","content":"B"})"}}},
        {"Created a.txt; b.txt was declined."},
    });
    auto run = f.start(f.create_chat(), "make two files");
    auto first = f.wait_for(run, "approval.required");
    BOOST_TEST(first.data.at("parameters").at("path") == "a.txt");
    BOOST_TEST(f.approve(run, std::string(first.data.at("call_id").as_string())).status == 200u);
    auto second = next_of(f, run, "approval.required", first.id);
    BOOST_TEST(second.data.at("parameters").at("path") == "b.txt");
    auto r = f.approve(run, std::string(second.data.at("call_id").as_string()),
                       {{"decision", "reject"}, {"feedback", "not b"}});
    BOOST_TEST(r.status == 200u, r.body);
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed", json::serialize(all.back().data));
    BOOST_TEST(f.run_state(run).at("output").as_string() == "Created a.txt; b.txt was declined.");
    BOOST_TEST(read_text(f.workspace / "a.txt") == "A");
    BOOST_TEST(!fs::exists(f.workspace / "b.txt"));
    // Each call announced with its status phrase, step and limit.
    std::vector<std::string> statuses;
    for (const auto& e : all)
        if (e.type == "tool.call") {
            statuses.push_back(std::string(e.data.at("status").as_string()));
            BOOST_TEST(e.data.contains("max_steps"));
        }
    std::vector<std::string> expected{"Reading README.md", "Creating a.txt", "Creating b.txt"};
    BOOST_TEST(statuses == expected, boost::test_tools::per_element());
    // Text streams as it comes: the words that came with the first calls were withdrawn, the
    // final answer streamed and then came whole.
    std::string streamed;
    int resets = 0;
    for (const auto& e : all) {
        if (e.type == "message.delta") streamed += e.data.at("text").as_string();
        if (e.type == "message.reset") {
            ++resets;
            streamed.clear();
        }
    }
    BOOST_TEST(resets == 1);
    BOOST_TEST(streamed == "Created a.txt; b.txt was declined.");
    // Three model turns; the fake accepted each (it refuses what its provider refuses).
    auto bodies = f.fake.scripted_requests();
    BOOST_TEST_REQUIRE(bodies.size() == 3u);
    auto last = json::parse(bodies[2]).as_object();
    auto wire = json::serialize(last);
    BOOST_TEST(wire.find("not b") != std::string::npos);  // the rejection reached the model
    // The chat's model went out under the upstream's name (model_map).
    BOOST_TEST(f.fake.requests().back().raw.find("upstream-model") != std::string::npos);
    if (std::string(provider) == "anthropic") {
        // Both results of the parallel turn in one user message, results first.
        auto& messages = last["messages"].as_array();
        auto& results = messages.back().as_object()["content"].as_array();
        BOOST_TEST(results.size() == 2u);
        BOOST_TEST(results[1].as_object()["is_error"] == json::value(true));
        BOOST_TEST(last.contains("tools"));
    }
    if (std::string(provider) == "gemini") {
        BOOST_TEST(wire.find("fake-sig-") != std::string::npos);  // signatures echoed
        BOOST_TEST(!last.contains("additionalProperties"));
    }
    if (std::string(provider) == "openai") {
        BOOST_TEST(last.contains("tools"));
        BOOST_TEST(wire.find("\"role\":\"tool\"") != std::string::npos);
    }
}

BOOST_DATA_TEST_CASE(an_unknown_tool_is_answered_with_its_error_and_the_run_goes_on,
                     bdata::make(provider_names), provider) {
    native_fixture n(provider);
    auto& f = n.f;
    f.fake.script({
        {"", "stop", 200, "", 0, {{"format_disk", "{}"}}},
        {"I cannot do that here."},
    });
    auto run = f.start(f.create_chat(), "format the disk");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    bool unknown = false;
    for (const auto& e : all)
        if (e.type == "tool.result") unknown = e.data.at("error_code") == "UNKNOWN_TOOL";
    BOOST_TEST(unknown);
}

// `tool_calling: json` on Anthropic and Gemini: the JSON protocol's calls are the model's text,
// sent in the provider's own dialect (they used to be posted to /chat/completions there: 404).
BOOST_DATA_TEST_CASE(the_json_protocol_runs_on_every_provider, bdata::make(provider_names),
                     provider) {
    native_fixture n(provider, [](config::gateway_config& c) {
        c.upstreams[0].tool_calling = config::tool_calling_mode::json;
    });
    auto& f = n.f;
    f.fake.script({{call("read_file", {{"path", "README.md"}})}, {"It says: This is teh readme."}});
    auto run = f.start(f.create_chat(), "what does the readme say?");
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed", json::serialize(all.back().data));
    BOOST_TEST(f.run_state(run).at("output").as_string() == "It says: This is teh readme.");
    auto asked = f.fake.requests();
    BOOST_TEST_REQUIRE(asked.size() == 2u);
    std::string expected = provider == "openai"      ? "/v1/chat/completions"
                           : provider == "anthropic" ? "/v1/messages"
                           : provider == "bedrock"   ? "/model/upstream-model/converse"
                                                     : "/v1beta/models/upstream-model:";
    BOOST_TEST(asked[1].target.starts_with(expected), asked[1].target);
    // The tool's result went back as the protocol's user turn, in the provider's dialect.
    BOOST_TEST(asked[1].body.find("This is teh readme.") != std::string::npos);
}

// Some servers and proxies ignore `stream: true` and answer one application/json reply: read as
// what it is (its Content-Type), on every provider, a run with a call and an answer completes.
BOOST_DATA_TEST_CASE(a_whole_json_reply_to_a_streamed_request_is_read_as_one_reply,
                     bdata::make(provider_names), provider) {
    native_fixture n(provider);
    auto& f = n.f;
    auto read = native_call("read_file", R"({"path":"README.md"})");
    read.whole = true;
    scripted_reply answer;
    answer.content = "It says: This is teh readme.";
    answer.whole = true;
    f.fake.script({read, answer});
    auto run = f.start(f.create_chat(), "what does the readme say?");
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed", json::serialize(all.back().data));
    BOOST_TEST(f.run_state(run).at("output").as_string() == "It says: This is teh readme.");
    BOOST_TEST(f.fake.scripted_requests().size() == 2u);
    // The gateway did ask for a stream.
    auto asked = f.fake.requests().back();  // requests() is a copy
    BOOST_TEST((asked.body.find("\"stream\":true") != std::string::npos ||
                asked.target.find(":streamGenerateContent") != std::string::npos ||
                asked.target.ends_with("/converse-stream")),
               asked.target);
}

BOOST_AUTO_TEST_CASE(a_json_protocol_call_in_a_native_reply_is_salvaged) {
    native_fixture n("anthropic");
    auto& f = n.f;
    f.fake.script({{call("read_file", {{"path", "README.md"}})}, {"It says teh."}});
    auto run = f.start(f.create_chat(), "read it");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    auto types = types_of(all);
    BOOST_TEST(std::count(types.begin(), types.end(), "model.salvaged") == 1);
    BOOST_TEST(std::count(types.begin(), types.end(), "tool.result") == 1);
}

BOOST_AUTO_TEST_CASE(the_second_call_of_a_turn_survives_a_restart) {
    native_fixture n("gemini");
    auto& f = n.f;
    f.fake.script({
        {"",
         "stop",
         200,
         "",
         0,
         {{"create_file", R"({"path":"a.txt","content":"A"})"},
          {"create_file", R"({"path":"b.txt","content":"B"})"}}},
        {"Both made."},
    });
    auto run = f.start(f.create_chat(), "make two files");
    auto first = f.wait_for(run, "approval.required");
    BOOST_TEST(f.approve(run, std::string(first.data.at("call_id").as_string())).status == 200u);
    auto second = next_of(f, run, "approval.required", first.id);
    f.gateway.reset();  // stopped: the run stays as stored, its second call queued no more
    f.gateway.emplace(f.config);
    BOOST_TEST(f.approve(run, std::string(second.data.at("call_id").as_string())).status == 200u);
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed", json::serialize(all.back().data));
    BOOST_TEST(read_text(f.workspace / "b.txt") == "B");
    // Both results went back to Gemini in one turn, after the restart.
    auto last = json::parse(f.fake.scripted_requests().back()).as_object();
    auto& contents = last["contents"].as_array();
    BOOST_TEST(contents.back().as_object()["parts"].as_array().size() == 2u);
}

BOOST_DATA_TEST_CASE(at_the_step_cap_tools_are_switched_off_for_the_final_answer,
                     bdata::make(provider_names), provider) {
    native_fixture n(provider, [](auto& c) { c.context.max_steps = 2; });
    auto& f = n.f;
    f.fake.script({native_call("read_file", R"({"path":"README.md"})"),
                   native_call("read_file", R"({"path":"src/app.py"})"),
                   {"I read both files."}});
    auto run = f.start(f.create_chat(), "look around");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed", json::serialize(all.back().data));
    auto bodies = f.fake.scripted_requests();
    BOOST_TEST_REQUIRE(bodies.size() == 3u);
    auto last = json::parse(bodies[2]).as_object();
    auto wire = json::serialize(last);
    BOOST_TEST(wire.find("limit of 2 tool steps") != std::string::npos);
    if (std::string(provider) == "anthropic")
        BOOST_TEST(json::serialize(last["tool_choice"]) == R"({"type":"none"})");
    if (std::string(provider) == "gemini")
        BOOST_TEST(json::serialize(last["toolConfig"]) ==
                   R"({"functionCallingConfig":{"mode":"NONE"}})");
    if (std::string(provider) == "openai") BOOST_TEST(last["tool_choice"] == "none");
}

BOOST_DATA_TEST_CASE(a_provider_429_is_retried_and_its_message_read, bdata::make(provider_names),
                     provider) {
    native_fixture n(provider);
    auto& f = n.f;
    f.fake.script({{"slow down", "stop", 429, "0", 0}, {"Fine."}});
    auto run = f.start(f.create_chat(), "hello");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    std::string told;
    for (const auto& e : all)
        if (e.type == "model.retry") told = e.data.at("message").as_string();
    // Bedrock's message names its error type (x-amzn-ErrorType).
    std::string said = provider == "bedrock" ? "answered 429: ThrottlingException: slow down"
                                             : "answered 429: slow down";
    BOOST_TEST(told.find(said) != std::string::npos, told);
}

BOOST_DATA_TEST_CASE(the_wall_time_cap_cuts_a_slow_streamed_call, bdata::make(provider_names),
                     provider) {
    native_fixture n(provider, [](auto& c) { c.context.max_wall_time = 300ms; });
    auto& f = n.f;
    f.fake.script({{"too late", "stop", 200, "", 5000}});
    auto started = clock::now();
    auto run = f.start(f.create_chat(), "hello");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.failed");
    BOOST_TEST(std::string(all.back().data.at("error").as_string()).find("wall-time") !=
               std::string::npos);
    BOOST_TEST((clock::now() - started < 4s));
}

BOOST_DATA_TEST_CASE(identical_native_calls_are_stopped, bdata::make(provider_names), provider) {
    native_fixture n(provider, [](auto& c) {
        c.context.identical_call_warn = 2;
        c.context.identical_call_stop = 3;
    });
    auto& f = n.f;
    auto same = native_call("read_file", R"({"path":"README.md"})");
    f.fake.script({same, same, same});
    auto run = f.start(f.create_chat(), "read");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.failed");
    BOOST_TEST(std::string(all.back().data.at("error").as_string()).find("3 times in a row") !=
               std::string::npos);
    // The warning reached the model with the second result.
    BOOST_TEST(f.fake.scripted_requests().back().find("Note: this is call number 2") !=
               std::string::npos);
}

BOOST_DATA_TEST_CASE(cancel_mid_call_closes_the_upstream_request, bdata::make(provider_names),
                     provider) {
    native_fixture n(provider);
    auto& f = n.f;
    f.fake.script({{"slow", "stop", 200, "", 10000}});
    auto run = f.start(f.create_chat(), "hello");
    BOOST_TEST_REQUIRE(f.fake.wait_requests(1, 5s));
    auto started = clock::now();
    auto [r, j] = f.send("POST", "/context/runs/" + run + "/cancel");
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST((clock::now() - started < 3s));
    BOOST_TEST(f.fake.wait_connections_open(0, 5s));
    BOOST_TEST(f.events(run).back().type == "run.cancelled");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_native_test
