#include "gateway/config/config.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

namespace config_sections_guardrails_test {

using namespace gateway::config;
using namespace std::chrono_literals;

namespace {

std::string with_guardrails(const std::string& lines) {
    return "upstreams:\n  - name: a\n    base_url: http://127.0.0.1:9/v1\nguardrails:\n" + lines;
}

std::string error_of(const std::string& lines) {
    auto loaded = load_string(with_guardrails(lines), "test.yaml");
    BOOST_TEST(!loaded);
    return loaded.error;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(guardrails_config)

BOOST_AUTO_TEST_CASE(guardrails_are_read_with_their_defaults) {
    auto loaded = load_string(with_guardrails(R"(  - name: secrets
    detect: [secrets, pii]
  - name: policy
    regex: {name: ticket, pattern: "TICKET-[0-9]+"}
    webhook: {url: http://127.0.0.1:7000/check, timeout: 250ms, fail: closed}
    on: [request, response, tool_result]
    action: block
    keys: ["team-a", "ci-*"]
    routes: ["gpt-*"]
)"),
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& g = loaded.value->guardrails;
    BOOST_TEST_REQUIRE(g.size() == 2u);
    BOOST_TEST(g[0].name == "secrets");
    BOOST_TEST((g[0].detect == std::vector<std::string>{"secrets", "pii"}));
    BOOST_TEST((g[0].on == std::vector{guardrail_stage::request}));
    BOOST_TEST((g[0].action == guardrail_action::mask));
    BOOST_TEST((g[0].keys == std::vector<std::string>{"*"}));
    BOOST_TEST(g[0].routes.empty());
    BOOST_TEST(!g[0].webhook.has_value());
    BOOST_TEST_REQUIRE(g[1].regex.size() == 1u);
    BOOST_TEST(g[1].regex[0].name == "ticket");
    BOOST_TEST(g[1].regex[0].pattern == "TICKET-[0-9]+");
    BOOST_TEST_REQUIRE(g[1].webhook.has_value());
    BOOST_TEST(g[1].webhook->endpoint.port == 7000);
    BOOST_TEST(g[1].webhook->timeout == 250ms);
    BOOST_TEST(!g[1].webhook->fail_open);
    BOOST_TEST(g[1].on.size() == 3u);
    BOOST_TEST((g[1].action == guardrail_action::block));
    BOOST_TEST(g[1].routes == std::vector<std::string>{"gpt-*"});
}

BOOST_AUTO_TEST_CASE(check_config_prints_guardrails_that_load_back) {
    auto loaded = load_string(with_guardrails(R"(  - name: policy
    detect: [pii]
    regex: [{name: ticket, pattern: "TICKET-[0-9]+"}, {name: code, pattern: "(?i)falcon"}]
    webhook: {url: "http://127.0.0.1:7000/check"}
    on: [response]
    action: log
)"),
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    auto text = to_yaml(*loaded.value);
    BOOST_TEST(text.find("guardrails:\n  - name: \"policy\"\n    detect: [\"pii\"]\n") !=
               std::string::npos);
    BOOST_TEST(text.find("regex: [{name: \"ticket\", pattern: \"TICKET-[0-9]+\"}, {name: "
                         "\"code\", pattern: \"(?i)falcon\"}]") != std::string::npos);
    BOOST_TEST(text.find("webhook: {url: \"http://127.0.0.1:7000/check\", timeout: 500ms, "
                         "fail: open}") != std::string::npos);
    BOOST_TEST(text.find("on: [\"response\"]") != std::string::npos);
    BOOST_TEST(text.find("action: log") != std::string::npos);
    // The printed configuration loads back as it was.
    auto again = load_string(to_yaml(*loaded.value), "effective.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(again), again.error);
    BOOST_TEST(again.value->guardrails.at(0).regex.size() == 2u);
    BOOST_TEST(differing_sections(*loaded.value, *again.value).empty());
    auto none = load_string(with_guardrails("  []\n"), "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(none), none.error);
    BOOST_TEST(to_yaml(*none.value).find("guardrails: []\n") != std::string::npos);
}

// The model check is opt-in: absent unless given, its prompt the built-in one unless given, and
// printed so that it loads back.
BOOST_AUTO_TEST_CASE(a_model_check_is_read_and_printed) {
    auto loaded = load_string(with_guardrails(R"(  - name: moderation
    model_check: {model: gpt-4o-mini, timeout: 3s, fail: closed}
    on: [request, tool_result]
  - name: custom
    model_check: {model: moderator, prompt: "Answer block for talk of the merger, else allow."}
)"),
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& g = loaded.value->guardrails;
    BOOST_TEST_REQUIRE(g[0].model_check.has_value());
    BOOST_TEST(g[0].model_check->model == "gpt-4o-mini");
    BOOST_TEST(g[0].model_check->prompt.empty());
    BOOST_TEST(g[0].model_check->timeout == 3s);
    BOOST_TEST(!g[0].model_check->fail_open);
    BOOST_TEST(!g[0].webhook.has_value());
    BOOST_TEST(g[1].model_check->prompt == "Answer block for talk of the merger, else allow.");
    BOOST_TEST(g[1].model_check->timeout == 10s);
    BOOST_TEST(g[1].model_check->fail_open);
    auto text = to_yaml(*loaded.value);
    BOOST_TEST(text.find("model_check: {model: \"gpt-4o-mini\", timeout: 3s, fail: closed}") !=
                   std::string::npos,
               text);
    auto again = load_string(text, "effective.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(again), again.error);
    BOOST_TEST(differing_sections(*loaded.value, *again.value).empty());
    auto none = load_string(with_guardrails("  - name: g\n    detect: [pii]\n"), "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(none), none.error);
    BOOST_TEST(!none.value->guardrails[0].model_check.has_value());
    BOOST_TEST(to_yaml(*none.value).find("model_check") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(broken_guardrails_are_refused_precisely) {
    BOOST_TEST(error_of("  - name: g\n    detect: [secrets, passwords]\n") ==
               "test.yaml:6: guardrails[0].detect: unknown detector set `passwords` (known: "
               "secrets, pii)");
    auto bad_regex = error_of("  - name: g\n    regex: {name: ticket, pattern: \"TICKET-([\"}\n");
    BOOST_TEST(bad_regex.starts_with("test.yaml:6: guardrails[0].regex: rule `ticket`: `pattern` "),
               bad_regex);
    BOOST_TEST(error_of("  - name: g\n    regex: [{name: any, pattern: \".*\"}]\n") ==
               "test.yaml:6: guardrails[0].regex[0]: rule `any`: `pattern` it matches the empty "
               "string");
    BOOST_TEST(error_of("  - name: g\n    regex: [{name: \"a b\", pattern: x}]\n")
                   .find("`name` must be 1-64 letters") != std::string::npos);
    BOOST_TEST(error_of("  - name: g\n    detect: [pii]\n    action: redact\n") ==
               "test.yaml:7: `action`: `redact` must be mask, block or log");
    BOOST_TEST(error_of("  - name: g\n    detect: [pii]\n    on: [prompt]\n") ==
               "test.yaml:7: `on`: `prompt` must be request, response or tool_result");
    BOOST_TEST(error_of("  - name: g\n    detect: [pii]\n    on: []\n")
                   .find("`guardrails[0].on` must be a non-empty list") != std::string::npos);
    BOOST_TEST(error_of("  - name: empty\n    action: block\n") ==
               "test.yaml:5: guardrails[0]: `empty` checks nothing: give it `detect`, `regex`, "
               "`webhook` or `model_check`");
    BOOST_TEST(error_of("  - name: g\n    model_check: {timeout: 1s}\n")
                   .find("guardrails[0].model_check: `model` is required") != std::string::npos);
    BOOST_TEST(error_of("  - name: g\n    model_check: gpt-4o-mini\n")
                   .find("`guardrails[0].model_check` must be a map") != std::string::npos);
    BOOST_TEST(error_of("  - name: g\n    model_check: {model: m, fail: maybe}\n")
                   .find("`fail`: `maybe` must be open or closed") != std::string::npos);
    BOOST_TEST(error_of("  - name: g\n    model_check: {model: m, answer: yes}\n")
                   .find("unknown key `answer`") != std::string::npos);
    BOOST_TEST(error_of("  - name: g\n    webhook: {url: http://127.0.0.1:7000}\n"
                        "    model_check: {model: m}\n") ==
               "test.yaml:5: guardrails[0]: `g` asks one outside check: `webhook` or "
               "`model_check`, not both");
    BOOST_TEST(error_of("  - detect: [pii]\n") == "test.yaml:5: guardrails[0]: `name` is required");
    BOOST_TEST(error_of("  - name: g\n    detect: [pii]\n  - name: g\n    detect: [secrets]\n") ==
               "test.yaml:7: duplicate guardrail name `g`");
    BOOST_TEST(error_of("  - name: g\n    regex: {name: jwt, pattern: x}\n    detect: [secrets]\n")
                   .find("rule `jwt` is named twice") != std::string::npos);
    BOOST_TEST(error_of("  - name: g\n    webhook: {url: \"http://u:p@127.0.0.1:7000\"}\n")
                   .find("must not contain credentials") != std::string::npos);
    BOOST_TEST(error_of("  - name: g\n    webhook: {timeout: 1s}\n")
                   .find("guardrails[0].webhook: `url` is required") != std::string::npos);
    BOOST_TEST(error_of("  - name: g\n    webhook: {url: http://127.0.0.1:7000, fail: maybe}\n")
                   .find("`fail`: `maybe` must be open or closed") != std::string::npos);
    BOOST_TEST(
        error_of("  - name: g\n    detect: [pii]\n    mode: strict\n").find("unknown key `mode`") !=
        std::string::npos);
    BOOST_TEST(error_of("  name: g\n").find("`guardrails` must be a list") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace config_sections_guardrails_test
