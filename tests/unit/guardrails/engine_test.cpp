#include "gateway/guardrails/engine.hpp"

#include "gateway/observability/metrics.hpp"

#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace guardrails_engine_test {

using namespace gateway;
using namespace gateway::guardrails;
using config::guardrail_action;
using config::guardrail_stage;

namespace {

config::guardrail_config rail(std::string name, std::vector<std::string> detect,
                              guardrail_action action) {
    config::guardrail_config g;
    g.name = std::move(name);
    g.detect = std::move(detect);
    g.action = action;
    return g;
}

// An address and a card: PII that every test text carries.
const std::string text = "write to ops@contextgate.dev, card 4111 1111 1111 1111";

}  // namespace

BOOST_AUTO_TEST_SUITE(guardrail_engine)

BOOST_AUTO_TEST_CASE(no_guardrails_is_empty_and_passes) {
    engine none;
    BOOST_TEST(none.empty());
    auto chosen = none.select(guardrail_stage::request, {"k", "t", "gpt-4o"});
    BOOST_TEST(chosen.empty());
    auto out = none.check(guardrail_stage::request, text, {});
    BOOST_TEST((out.result == verdict::pass));
    BOOST_TEST(out.hits.empty());
    BOOST_TEST(out.text.empty());
}

BOOST_AUTO_TEST_CASE(mask_replaces_each_hit) {
    engine rails({rail("pii", {"pii"}, guardrail_action::mask)});
    auto out = rails.check(guardrail_stage::request, text, {});
    BOOST_TEST((out.result == verdict::masked));
    BOOST_TEST(out.text == "write to [REDACTED:email], card [REDACTED:payment_card]");
    BOOST_TEST_REQUIRE(out.hits.size() == 2u);
    BOOST_TEST(out.hits[0].guardrail == "pii");
    BOOST_TEST(out.hits[0].rule == "email");
    BOOST_TEST(!out.blocked_by.has_value());
}

BOOST_AUTO_TEST_CASE(block_wins_over_mask_and_names_its_rule) {
    auto blocking = rail("cards", {}, guardrail_action::block);
    blocking.regex = {{"card_word", "[Cc]ard"}};
    engine rails({rail("pii", {"pii"}, guardrail_action::mask), blocking});
    auto out = rails.check(guardrail_stage::request, text, {});
    BOOST_TEST((out.result == verdict::blocked));
    BOOST_TEST_REQUIRE(out.blocked_by.has_value());
    BOOST_TEST(out.blocked_by->guardrail == "cards");
    BOOST_TEST(out.blocked_by->rule == "card_word");
    BOOST_TEST(out.text.empty());
    BOOST_TEST(out.hits.size() == 3u);
    // In text order, whatever guardrail found them.
    BOOST_TEST(out.hits[0].rule == "email");
    BOOST_TEST(out.hits[1].rule == "card_word");
}

BOOST_AUTO_TEST_CASE(log_only_hits_pass_unchanged) {
    engine rails({rail("audit", {"pii"}, guardrail_action::log)});
    auto out = rails.check(guardrail_stage::request, text, {});
    BOOST_TEST((out.result == verdict::pass));
    BOOST_TEST(out.text.empty());
    BOOST_TEST(out.hits.size() == 2u);
}

BOOST_AUTO_TEST_CASE(selection_by_stage_key_team_and_route) {
    auto g = rail("team-a", {"pii"}, guardrail_action::mask);
    g.on = {guardrail_stage::request, guardrail_stage::tool_result};
    g.keys = {"team-a", "ci-*"};
    g.routes = {"gpt-*"};
    engine rails({g});
    BOOST_TEST(!rails.select(guardrail_stage::request, {"ci-1", "", "gpt-4o"}).empty());
    BOOST_TEST(!rails.select(guardrail_stage::tool_result, {"k", "team-a", "gpt-4o"}).empty());
    BOOST_TEST(rails.select(guardrail_stage::response, {"ci-1", "", "gpt-4o"}).empty());
    BOOST_TEST(rails.select(guardrail_stage::request, {"other", "team-b", "gpt-4o"}).empty());
    BOOST_TEST(rails.select(guardrail_stage::request, {"ci-1", "", "claude-3"}).empty());
    BOOST_TEST(rails.select(guardrail_stage::request, {"", "", "gpt-4o"}).empty());
    // The default keys ["*"] take requests without a virtual key too.
    engine every({rail("all", {"pii"}, guardrail_action::mask)});
    BOOST_TEST(!every.select(guardrail_stage::request, {"", "", ""}).empty());
    BOOST_TEST(every.select(guardrail_stage::response, {"", "", ""}).empty());
    auto out = rails.check(guardrail_stage::request, text, {"other", "", "gpt-4o"});
    BOOST_TEST((out.result == verdict::pass));
}

BOOST_AUTO_TEST_CASE(selection_reports_detectors_webhooks_and_hold_back) {
    auto hook = rail("policy", {}, guardrail_action::block);
    hook.webhook = config::guardrail_webhook{};
    hook.webhook->url = "http://127.0.0.1:7000/check";
    engine only_hook({hook});
    auto chosen = only_hook.select(guardrail_stage::request, {});
    BOOST_TEST(!chosen.empty());
    BOOST_TEST(chosen.has_external_checks());
    BOOST_TEST(!chosen.has_detectors());
    BOOST_TEST(chosen.max_match_bytes() == 0u);
    BOOST_TEST((only_hook.check(chosen, text).result == verdict::pass));

    engine both({hook, rail("secrets", {"secrets"}, guardrail_action::mask)});
    chosen = both.select(guardrail_stage::request, {});
    BOOST_TEST(chosen.items().size() == 2u);
    BOOST_TEST(chosen.has_detectors());
    BOOST_TEST(chosen.max_match_bytes() == 4096u);
}

BOOST_AUTO_TEST_CASE(overlapping_masks_replace_once) {
    auto custom = rail("custom", {}, guardrail_action::mask);
    custom.regex = {{"domain", "contextgate\\.dev"}};
    engine rails({rail("pii", {"pii"}, guardrail_action::mask), custom});
    auto out = rails.check(guardrail_stage::request, "ops@contextgate.dev", {});
    BOOST_TEST(out.text == "[REDACTED:email]");
    BOOST_TEST(out.hits.size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_bad_rule_is_a_bug_here) {
    auto g = rail("broken", {"passwords"}, guardrail_action::mask);
    BOOST_CHECK_THROW(engine({g}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(record_counts_hits_by_name_never_text) {
    auto g = rail("pii-counted", {"pii"}, guardrail_action::mask);
    g.on = {guardrail_stage::tool_result};
    engine rails({g});
    auto out = rails.check(guardrail_stage::tool_result, text, {});
    record(out, guardrail_stage::tool_result);
    auto& family = observability::metrics().guardrail_hits;
    BOOST_TEST(family.with({"pii-counted", "email", "tool_result", "mask"}).value() == 1.0);
    BOOST_TEST(family.with({"pii-counted", "payment_card", "tool_result", "mask"}).value() == 1.0);
    auto page = observability::metrics().render();
    BOOST_TEST(page.find("contextgate_guardrail_hits_total{guardrail=\"pii-counted\"") !=
               std::string::npos);
    BOOST_TEST(page.find("ops@contextgate.dev") == std::string::npos);
    BOOST_TEST(config::guardrail_stage_name(guardrail_stage::tool_result) == "tool_result");
    BOOST_TEST(config::guardrail_action_name(guardrail_action::block) == "block");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace guardrails_engine_test
