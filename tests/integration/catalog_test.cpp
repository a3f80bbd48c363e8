// The model catalogue (docs/routing.md, "Which model goes where") through the real gateway: what
// GET /v1/models lists in each client's dialect with each model's price, the upstreams' own lists
// asked and kept, a key's model list, and the 404 for a model no route and no upstream takes.
#include "tests/integration/context_fixture.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>

namespace integration_catalog_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

response get(std::uint16_t port, std::string_view target, std::string_view headers = {}) {
    client c(port);
    return c.request(make_request("GET", target, {}, headers));
}

response post(std::uint16_t port, std::string_view target, std::string_view body,
              std::string_view headers = {}) {
    client c(port);
    return c.request(
        make_request("POST", target, body,
                     std::string("Content-Type: application/json\r\n") + std::string(headers)));
}

// The ids an OpenAI-shaped listing holds, in order.
std::vector<std::string> ids_of(const response& r) {
    std::vector<std::string> ids;
    auto body = json::parse(r.body).as_object();
    for (const auto& m : body.at("data").as_array())
        ids.emplace_back(m.as_object().at("id").as_string());
    return ids;
}

std::size_t posts_received(const fake_upstream& fake) {
    std::size_t n = 0;
    for (const auto& r : fake.requests()) n += r.method == "POST";
    return n;
}

// Three providers on one fake (gpt-* asked with the client's key; claude-* and gemini-* with
// the gateway's), a route `smart` and a route by glob, which lists nothing.
config::gateway_config catalogued(const fake_upstream& fake) {
    auto c = three_providers(fake, config::auth_mode::replace);
    config::route_config smart;
    smart.model = "smart";
    smart.targets.push_back({"up1", "claude-sonnet-4-5", 1, 1});
    c.routes.push_back(smart);
    config::route_config globbed;
    globbed.model = "team-*";
    globbed.targets.push_back({"up0", "gpt-4o", 1, 0});
    c.routes.push_back(globbed);
    return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(model_catalog)

BOOST_AUTO_TEST_CASE(routes_declared_names_and_the_lists_globs_take_are_listed_once) {
    fake_upstream fake;
    running_gateway gw(catalogued(fake));
    auto r = get(gw.port(), "/v1/models", "Authorization: Bearer sk-client\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(json::parse(r.body).as_object().at("object") == json::value("list"));
    auto ids = ids_of(r);
    // The route first; then each upstream's: OpenAI's list (gpt-* takes two of its three),
    // Anthropic's two pages, Gemini's mapped name and the gemini-* of its list.
    std::vector<std::string> expected{
        "smart",           "gpt-4o-mini",      "gpt-4o",      "claude-sonnet-4-5",
        "claude-opus-4-1", "claude-haiku-4-5", "gemini-fast", "gemini-2.5-pro",
        "gemini-2.5-flash"};
    BOOST_TEST(ids == expected, boost::test_tools::per_element());
    auto listing = json::parse(r.body);
    for (const auto& m : listing.at("data").as_array())
        BOOST_TEST(m.as_object().at("object") == json::value("model"));

    // Asked with the gateway's own key each (Anthropic's second page after the first's last id),
    // OpenAI's with the client's.
    std::vector<std::string> lists;
    for (const auto& q : fake.requests()) {
        if (q.method != "GET") continue;
        lists.push_back(q.target);
        if (q.target.starts_with("/v1/models?"))
            BOOST_TEST(q.header("x-api-key") == "sk-ant-gateway");
        if (q.target.starts_with("/v1beta/models"))
            BOOST_TEST(q.header("x-goog-api-key") == "g-gateway");
        if (q.target == "/v1/models") BOOST_TEST(q.header("authorization") == "Bearer sk-client");
    }
    std::multiset<std::string> asked(lists.begin(), lists.end());
    BOOST_TEST(asked.count("/v1/models") == 1u);
    BOOST_TEST(asked.count("/v1/models?limit=1000") == 1u);
    BOOST_TEST(asked.count("/v1/models?limit=1000&after_id=claude-opus-4-1") == 1u);
    BOOST_TEST(asked.count("/v1beta/models?pageSize=1000") == 1u);
    BOOST_TEST(asked.count("/v1beta/models?pageSize=1000&pageToken=page-2") == 1u);
}

BOOST_AUTO_TEST_CASE(anthropic_and_gemini_clients_get_their_providers_shape) {
    fake_upstream fake;
    running_gateway gw(catalogued(fake));
    // Claude Code's model picker: Anthropic's headers and a limit.
    auto first = get(gw.port(), "/v1/models?limit=4",
                     "x-api-key: sk-ant-client\r\nanthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    auto page = json::parse(first.body).as_object();
    BOOST_TEST_REQUIRE(page.at("data").as_array().size() == 4u);
    auto model = page.at("data").as_array()[3].as_object();
    BOOST_TEST(model.at("type") == json::value("model"));
    BOOST_TEST(model.at("id") == json::value("claude-sonnet-4-5"));
    BOOST_TEST(model.at("display_name") == json::value("Fake claude-sonnet-4-5"));
    BOOST_TEST(model.at("created_at") == json::value("2025-09-29T00:00:00Z"));
    BOOST_TEST(page.at("has_more") == json::value(true));
    BOOST_TEST(page.at("first_id") == json::value("smart"));
    BOOST_TEST(page.at("last_id") == json::value("claude-sonnet-4-5"));
    auto rest = get(gw.port(), "/v1/models?limit=100&after_id=claude-sonnet-4-5",
                    "x-api-key: sk-ant-client\r\nanthropic-version: 2023-06-01\r\n");
    auto second = json::parse(rest.body).as_object();
    BOOST_TEST(second.at("data").as_array().size() == 5u);
    BOOST_TEST(second.at("has_more") == json::value(false));
    BOOST_TEST(second.at("last_id") == json::value("gemini-2.5-flash"));

    // Gemini's models.list, paged.
    auto gemini = get(gw.port(), "/v1beta/models?pageSize=8", "x-goog-api-key: g-client\r\n");
    BOOST_TEST_REQUIRE(gemini.status == 200u, gemini.body);
    auto listed = json::parse(gemini.body).as_object();
    BOOST_TEST_REQUIRE(listed.at("models").as_array().size() == 8u);
    BOOST_TEST(listed.at("models").as_array()[0].as_object().at("name") ==
               json::value("models/smart"));
    BOOST_TEST(listed.at("nextPageToken") == json::value("8"));
    auto last =
        get(gw.port(), "/v1beta/models?pageSize=8&pageToken=8", "x-goog-api-key: g-client\r\n");
    auto tail = json::parse(last.body).as_object();
    BOOST_TEST(tail.at("models").as_array().size() == 1u);
    BOOST_TEST(tail.at("models").as_array()[0].as_object().at("name") ==
               json::value("models/gemini-2.5-flash"));
    BOOST_TEST(!tail.contains("nextPageToken"));
}

// Each entry carries what a request for it is charged (the shipped table and the overrides, as
// its upstream serves it, after model_map), in every dialect; an unpriced model, and a route whose
// targets charge differently, carry none.
BOOST_AUTO_TEST_CASE(each_listed_model_carries_its_price_in_every_dialect) {
    fake_upstream fake;
    auto c = catalogued(fake);
    config::price_entry gpt_4o;  // only as up0 serves it
    gpt_4o.model = "gpt-4o";
    gpt_4o.upstream = "up0";
    gpt_4o.rates.input = 2.25;
    gpt_4o.rates.output = 9.0;
    c.pricing.overrides.push_back(gpt_4o);
    config::price_entry elsewhere = gpt_4o;  // another upstream's: not this one
    elsewhere.upstream = "up1";
    elsewhere.rates.input = 99.0;
    c.pricing.overrides.insert(c.pricing.overrides.begin(), elsewhere);
    config::route_config mixed;  // gpt-4o-mini and Claude Haiku: no one price
    mixed.model = "mixed";
    mixed.targets.push_back({"up0", "gpt-4o-mini", 1, 0});
    mixed.targets.push_back({"up1", "claude-haiku-4-5", 1, 1});
    c.routes.push_back(mixed);
    config::route_config twins;  // two names, one price (a name and a glob of the table)
    twins.model = "twins";
    twins.targets.push_back({"up0", "gpt-4o-mini", 1, 0});
    twins.targets.push_back({"up0", "gpt-4o-mini-2024-07-18", 1, 0});
    c.routes.push_back(twins);
    running_gateway gw(c);

    auto r = get(gw.port(), "/v1/models", "Authorization: Bearer sk-client\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    // Rates in their shortest decimal form, as the price table writes them.
    BOOST_TEST(
        r.body.find(R"("id":"gpt-4o-mini","object":"model","created":1700000000,)"
                    R"("owned_by":"fake","contextgate_price":{"unit":"usd_per_1m_tokens",)"
                    R"("input":0.15,"output":0.6,"cache_read":0.075}})") != std::string::npos,
        r.body);
    std::map<std::string, json::object> by_id;
    auto openai = json::parse(r.body);
    for (const auto& m : openai.at("data").as_array())
        by_id[std::string(m.at("id").as_string())] = m.as_object();
    auto price_of = [&](const std::string& id) -> const json::value* {
        BOOST_TEST_REQUIRE(by_id.count(id) == 1u, id);
        return by_id[id].if_contains("contextgate_price");
    };
    BOOST_TEST_REQUIRE(price_of("gpt-4o"));
    BOOST_TEST(*price_of("gpt-4o") ==
               json::parse(R"({"unit":"usd_per_1m_tokens","input":2.25,"output":9})"));
    // `smart` goes to Claude Sonnet 4.5 alone: its price, long-context tier included.
    BOOST_TEST_REQUIRE(price_of("smart"));
    const auto& smart = price_of("smart")->as_object();
    BOOST_TEST(smart.at("input").to_number<double>() == 3.0);
    BOOST_TEST(smart.at("cache_write_1h").to_number<double>() == 6.0);
    BOOST_TEST(smart.at("long_context").at("above").to_number<double>() == 200000.0);
    BOOST_TEST(smart.at("long_context").at("output").to_number<double>() == 22.5);
    BOOST_TEST(!price_of("mixed"));
    BOOST_TEST_REQUIRE(price_of("twins"));
    BOOST_TEST(price_of("twins")->at("input").to_number<double>() == 0.15);
    BOOST_TEST(!price_of("gemini-fast"));  // up2 hears gemini-3-flash, which has no price
    BOOST_TEST_REQUIRE(price_of("gemini-2.5-pro"));
    BOOST_TEST(price_of("gemini-2.5-pro")->at("output").to_number<double>() == 10.0);

    // Anthropic's and Gemini's shapes carry the same member.
    auto anthropic = get(gw.port(), "/v1/models?limit=100",
                         "x-api-key: sk-ant-client\r\nanthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(anthropic.status == 200u, anthropic.body);
    auto anthropic_page = json::parse(anthropic.body);
    for (const auto& m : anthropic_page.at("data").as_array())
        if (m.at("id") == json::value("claude-opus-4-1"))
            BOOST_TEST(m.at("contextgate_price").at("output").to_number<double>() == 75.0);
    auto gemini = get(gw.port(), "/v1beta/models?pageSize=100", "x-goog-api-key: g-client\r\n");
    BOOST_TEST_REQUIRE(gemini.status == 200u, gemini.body);
    std::size_t priced = 0;
    auto gemini_page = json::parse(gemini.body);
    for (const auto& m : gemini_page.at("models").as_array()) {
        if (m.at("name") == json::value("models/gemini-2.5-flash"))
            BOOST_TEST(m.at("contextgate_price").at("input").to_number<double>() == 0.3);
        priced += m.as_object().contains("contextgate_price");
    }
    BOOST_TEST(priced == by_id.size() - 2);  // all but mixed and gemini-fast
}

BOOST_AUTO_TEST_CASE(a_keys_model_list_cuts_the_listing_and_its_suggestions) {
    fake_upstream fake;
    auto c = catalogued(fake);
    config::virtual_key key;
    key.id = "cfg-claude";
    key.name = "claude-only";
    key.digest = config::key_digest("sk-claude-only-0123456789");
    key.models = {"claude-*", "smart"};
    c.admin.keys.push_back(key);
    running_gateway gw(c);
    auto r = get(gw.port(), "/v1/models", "Authorization: Bearer sk-claude-only-0123456789\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    std::vector<std::string> expected{"smart", "claude-sonnet-4-5", "claude-opus-4-1",
                                      "claude-haiku-4-5"};
    BOOST_TEST(ids_of(r) == expected, boost::test_tools::per_element());
    // Without a key: refused before anything is listed.
    BOOST_TEST(get(gw.port(), "/v1/models").status == 401u);
    // A misspelt model is suggested only what the key may use.
    auto missed = post(gw.port(), "/v1/chat/completions", R"({"model":"gemni-fast","messages":[]})",
                       "Authorization: Bearer sk-claude-only-0123456789\r\n");
    BOOST_TEST(missed.status == 404u, missed.body);
    BOOST_TEST(missed.body.find("gemini-fast") == std::string::npos, missed.body);
}

BOOST_AUTO_TEST_CASE(a_list_is_kept_for_its_ttl_and_a_failed_ask_keeps_the_last_one) {
    fake_upstream fake;
    auto c = make_config(fake);
    c.upstreams[0].models = {"gpt-*"};
    c.upstreams[0].api_key = "sk-gateway";  // asked with the gateway's key: kept
    running_gateway gw(c);
    auto first = get(gw.port(), "/v1/models", "Authorization: Bearer sk-client\r\n");
    auto second = get(gw.port(), "/v1/models", "Authorization: Bearer sk-other\r\n");
    std::vector<std::string> expected{"gpt-4o-mini", "gpt-4o"};
    BOOST_TEST(ids_of(first) == expected, boost::test_tools::per_element());
    BOOST_TEST(ids_of(second) == expected, boost::test_tools::per_element());
    BOOST_TEST(fake.model_lists_asked() == 1u);
    BOOST_TEST(fake.requests().front().header("authorization") == "Bearer sk-gateway");

    // A list older than its ttl is asked again behind the listing; an ask that fails keeps it.
    fake_upstream short_lived;
    auto d = make_config(short_lived);
    d.upstreams[0].models = {"gpt-*"};
    d.upstreams[0].api_key = "sk-gateway";
    d.upstreams[0].model_list_ttl = std::chrono::milliseconds(20);
    running_gateway again(d);
    BOOST_TEST(ids_of(get(again.port(), "/v1/models")) == expected,
               boost::test_tools::per_element());
    short_lived.fail_model_lists(true);
    // Each listing answers at once with what is kept; the asks behind them fail. Once a failed
    // ask has ended (a later one began), the list is still there.
    auto until = clock::now() + 10s;
    while (short_lived.model_lists_asked() < 3 && clock::now() < until) {
        auto r = get(again.port(), "/v1/models");
        BOOST_TEST_REQUIRE(ids_of(r) == expected, r.body);
    }
    BOOST_TEST_REQUIRE(short_lived.model_lists_asked() >= 3u);
    BOOST_TEST(ids_of(get(again.port(), "/v1/models")) == expected,
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_list_that_never_came_is_left_out) {
    fake_upstream fake;
    fake.fail_model_lists(true);
    auto c = make_config(fake);
    c.upstreams[0].models = {"gpt-4o", "o3-*"};
    c.upstreams[0].api_key = "sk-gateway";
    running_gateway gw(c);
    auto r = get(gw.port(), "/v1/models");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(ids_of(r) == std::vector<std::string>{"gpt-4o"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_unknown_model_is_a_404_in_the_clients_dialect_and_reaches_no_upstream) {
    fake_upstream fake;
    auto c = catalogued(fake);
    c.upstreams[0].models = {"gpt-4o", "gpt-4o-mini", "o3-*"};
    running_gateway gw(c);
    // The lists the globs take are known once asked: a listing first.
    BOOST_TEST_REQUIRE(get(gw.port(), "/v1/models").status == 200u);

    auto openai = post(gw.port(), "/v1/chat/completions",
                       R"({"model":"gtp-4o","messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST_REQUIRE(openai.status == 404u, openai.body);
    auto error = json::parse(openai.body).as_object().at("error").as_object();
    BOOST_TEST(error.at("type") == json::value("invalid_request_error"));
    BOOST_TEST(error.at("param") == json::value("model"));
    BOOST_TEST(error.at("code") == json::value("model_not_found"));
    auto message = std::string(error.at("message").as_string());
    BOOST_TEST(message.starts_with("The model `gtp-4o` does not exist"), message);
    BOOST_TEST(message.find("did you mean `gpt-4o`") != std::string::npos, message);

    auto anthropic = post(gw.port(), "/v1/messages",
                          R"({"model":"cluade-sonnet-4-5","max_tokens":8,"messages":[]})",
                          "x-api-key: sk-ant-client\r\nanthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(anthropic.status == 404u, anthropic.body);
    auto said = json::parse(anthropic.body).as_object();
    BOOST_TEST(said.at("type") == json::value("error"));
    BOOST_TEST(said.at("error").as_object().at("type") == json::value("not_found_error"));
    BOOST_TEST(std::string(said.at("error").as_object().at("message").as_string())
                       .find("`claude-sonnet-4-5`") != std::string::npos,
               anthropic.body);

    auto gemini = post(gw.port(), "/v1beta/models/gemni-2.5-pro:generateContent",
                       R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})",
                       "x-goog-api-key: g-client\r\n");
    BOOST_TEST_REQUIRE(gemini.status == 404u, gemini.body);
    auto status = json::parse(gemini.body).as_object().at("error").as_object();
    BOOST_TEST(status.at("code") == json::value(404));
    BOOST_TEST(status.at("status") == json::value("NOT_FOUND"));
    BOOST_TEST(
        std::string(status.at("message").as_string()).find("`gemini-2.5-pro`") != std::string::npos,
        gemini.body);

    // A name far from every known one says where the names are.
    auto far = post(gw.port(), "/v1/chat/completions", R"({"model":"llama-3-70b"})");
    BOOST_TEST(far.status == 404u);
    BOOST_TEST(far.body.find("GET /v1/models lists") != std::string::npos, far.body);
    BOOST_TEST(posts_received(fake) == 0u);
}

BOOST_AUTO_TEST_CASE(an_upstream_only_routes_reach_takes_no_unknown_model) {
    // It took every unknown model before: the first upstream was the default.
    fake_upstream fake;
    auto c = make_config(fake);
    c.upstreams[0].models.clear();
    config::route_config smart;
    smart.model = "smart";
    smart.targets.push_back({"up0", "fake-model", 1, 0});
    c.routes.push_back(smart);
    running_gateway gw(c);
    auto r = post(gw.port(), "/v1/chat/completions", R"({"model":"smrat","messages":[]})");
    BOOST_TEST(r.status == 404u, r.body);
    BOOST_TEST(r.body.find("did you mean `smart`") != std::string::npos, r.body);
    BOOST_TEST(posts_received(fake) == 0u);
    BOOST_TEST(
        post(gw.port(), "/v1/chat/completions", R"({"model":"smart","messages":[]})").status ==
        200u);
}

BOOST_AUTO_TEST_CASE(a_catch_all_upstream_takes_any_model_as_before) {
    fake_upstream fake;
    auto c = make_config(fake);  // models: ["*"]
    running_gateway gw(c);
    auto r = post(gw.port(), "/v1/chat/completions", R"({"model":"gtp-4o","messages":[]})");
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST_REQUIRE(posts_received(fake) == 1u);
    BOOST_TEST(fake.requests().back().body.find("gtp-4o") != std::string::npos);
    // Its own list is what it lists.
    auto listed = get(gw.port(), "/v1/models");
    std::vector<std::string> expected{"gpt-4o-mini", "gpt-4o", "fake-model"};
    BOOST_TEST(ids_of(listed) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_agent_run_with_an_unknown_model_fails_with_that_reason) {
    context_fixture f([](config::gateway_config& c) { c.upstreams[0].models = {"fake-*"}; });
    auto chat = f.create_chat(json::object{{"model", "gtp-4o"}});
    auto run = f.start(chat, "hi");
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(!all.empty());
    BOOST_TEST(all.back().type == "run.failed");
    auto error = json::serialize(all.back().data);
    BOOST_TEST(error.find("`gtp-4o` does not exist") != std::string::npos, error);
    BOOST_TEST(posts_received(f.fake) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_catalog_test
