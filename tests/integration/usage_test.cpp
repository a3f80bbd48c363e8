// GET /admin/usage in dollars (docs/operations.md "Usage and spend") through the real gateway
// against the fake upstream as OpenAI, Anthropic and Gemini: priced, unpriced, estimated and
// cache-hit requests in the ledger to the nano-dollar, each grouping, the CSV export read back,
// and the refusals of a bad report.
#include "tests/integration/harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace integration_usage_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;
using namespace std::chrono_literals;

namespace {

const std::string admin = "Authorization: Bearer admin-key-0123456789\r\n";
const std::string team = "sk-usage-team-0123456789";
const std::string ops = "sk-usage-ops-0123456789";

// The prices the test charges at (USD per 1M tokens), each upstream's own; a token costs the
// rate x 1000 nano-dollars.
config::price_entry price(std::string upstream, std::string model, double input, double output,
                          std::optional<double> cache_read = {},
                          std::optional<double> cache_write = {},
                          std::optional<double> reasoning = {}) {
    config::price_entry p;
    p.model = std::move(model);
    p.upstream = std::move(upstream);
    p.rates.input = input;
    p.rates.output = output;
    p.rates.cache_read = cache_read;
    p.rates.cache_write = cache_write;
    p.rates.reasoning = reasoning;
    return p;
}

// The fake as three upstreams (up0 OpenAI-compatible and caching its answers, up1 Anthropic,
// up2 Gemini), two declared keys (team, ops) and the prices above.
struct usage_gateway {
    fake_upstream fake;
    std::optional<running_gateway> gw;

    usage_gateway() {
        auto c = three_providers(fake, config::auth_mode::replace);
        c.upstreams[0].cache.ttl = 10min;
        c.admin.api_key = "admin-key-0123456789";
        for (auto [id, name, secret] :
             {std::tuple{"cfg-team", "team", team}, std::tuple{"cfg-ops", "ops", ops}}) {
            config::virtual_key k;
            k.id = id;
            k.name = name;
            k.digest = config::key_digest(secret);
            c.admin.keys.push_back(k);
        }
        c.pricing.overrides = {price("up0", "gpt-house", 2.00, 8.00, 0.50, {}, 12.00),
                               price("up0", "gpt-estimate", 2.00, 8.00),
                               price("up1", "claude-house", 3.00, 15.00, 0.30, 3.75),
                               price("up2", "gemini-house", 1.00, 4.00)};
        gw.emplace(c);
    }

    response chat(const std::string& key, const std::string& body, std::string headers = {}) {
        client c(gw->port());
        return c.request(make_request(
            "POST", "/v1/chat/completions", body,
            "Content-Type: application/json\r\nAuthorization: Bearer " + key + "\r\n" + headers));
    }
    response get(const std::string& target) {
        client c(gw->port());
        return c.request(make_request("GET", target, "", admin));
    }
    json::array rows(const std::string& query) {
        auto r = get("/admin/usage" + query);
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        return json::parse(r.body).at("data").as_array();
    }
    // The ledger counts a request just after its client has the answer: waits (up to 5 s) for
    // `n` requests in all.
    void recorded(std::int64_t n) {
        auto deadline = std::chrono::steady_clock::now() + 5s;
        std::int64_t seen = 0;
        while (std::chrono::steady_clock::now() < deadline) {
            auto all = rows("?group_by=day");
            seen = all.empty() ? 0 : all[0].at("requests").as_int64();
            if (seen >= n) break;
            std::this_thread::sleep_for(2ms);
        }
        BOOST_TEST_REQUIRE(seen == n);
    }
    // contextgate_cache_stores_total: answers the cache has stored.
    double stores() {
        auto text = get("/metrics").body;
        const std::string name = "contextgate_cache_stores_total ";
        auto at = text.find("\n" + name);
        return at == std::string::npos ? 0 : std::stod(text.substr(at + 1 + name.size()));
    }
};

std::string chat_body(const std::string& model, const std::string& content, bool stream = false) {
    return R"({"model":)" + json::serialize(json::value(model)) +
           (stream ? R"(,"stream":true)" : "") + R"(,"messages":[{"role":"user","content":")" +
           content + R"("}]})";
}

std::string usage_header(const std::string& usage) {
    return "x-fake-usage: " + usage + "\r\n";
}

// A report's money in nano-dollars (its exact decimal read back).
std::int64_t nano(const json::value& usd) {
    return std::llround(usd.to_number<double>() * 1e9);
}

const json::object& row_of(const json::array& rows, std::string_view member,
                           std::string_view value) {
    for (const auto& r : rows)
        if (r.at(member).as_string() == value) return r.as_object();
    BOOST_FAIL("no row with " << member << " " << value);
    return rows[0].as_object();
}

std::vector<std::string> names_of(const json::object& row) {
    std::vector<std::string> names;
    for (const auto& [name, value] : row) names.emplace_back(name);
    return names;
}

// RFC 4180 read back: fields split at commas outside quotes, "" inside quotes a quote.
std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
    std::vector<std::vector<std::string>> lines;
    std::vector<std::string> line;
    std::string field;
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            line.push_back(std::move(field));
            field.clear();
        } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
            line.push_back(std::move(field));
            field.clear();
            lines.push_back(std::move(line));
            line.clear();
            ++i;
        } else {
            field += c;
        }
    }
    BOOST_TEST(line.empty());  // every line ends with CRLF
    return lines;
}

// Whether a CSV field says what the JSON field does: the same text, empty for null, the same
// number (JSON reads the decimal back as a double, written differently).
bool same_field(const std::string& csv, const json::value& v) {
    if (v.is_null()) return csv.empty();
    if (v.is_string()) return csv == v.as_string();
    return !csv.empty() && std::stod(csv) == v.to_number<double>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(usage_and_spend)

BOOST_AUTO_TEST_CASE(the_ledger_counts_dollars_per_key_model_upstream_and_day) {
    usage_gateway g;
    // A cached answer on up0 (1000 x 2.00 + 100 x 8.00 = $0.0028), then the same request again,
    // answered from the cache: it costs nothing and saved $0.0028.
    const auto cached = chat_body("gpt-house", "cache me");
    const auto cached_usage = usage_header(R"({"prompt_tokens":1000,"completion_tokens":100})");
    auto stored_before = g.stores();
    auto first = g.chat(team, cached, cached_usage);
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(first.header("x-contextgate-cost-usd") == "0.0028");
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (g.stores() <= stored_before && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(2ms);
    auto hit = g.chat(team, cached, cached_usage);
    BOOST_TEST_REQUIRE(hit.header("x-contextgate-cache") == "hit");
    BOOST_TEST(hit.header("x-contextgate-cost-usd") == "0");

    // OpenAI's split: 1000 uncached x 2.00 + 1000 cached x 0.50 + 200 reasoning x 12.00 + 300
    // other output x 8.00 = $0.0073.
    auto priced = g.chat(team, chat_body("gpt-house", "priced"),
                         usage_header(R"({"prompt_tokens":2000,"completion_tokens":500,)"
                                      R"("prompt_tokens_details":{"cached_tokens":1000},)"
                                      R"("completion_tokens_details":{"reasoning_tokens":200}})"));
    BOOST_TEST_REQUIRE(priced.header("x-contextgate-cost-usd") == "0.0073");
    // Anthropic's (translated): 100 x 3.00 + 1000 read x 0.30 + 400 written x 3.75 + 50 x 15.00
    // = $0.00285.
    auto claude = g.chat(team, chat_body("claude-house", "priced"),
                         usage_header(R"({"input_tokens":100,"cache_read_input_tokens":1000,)"
                                      R"("cache_creation_input_tokens":400,"output_tokens":50})"));
    BOOST_TEST_REQUIRE(claude.header("x-contextgate-cost-usd") == "0.00285");
    // Gemini's, for the other key: 300 x 1.00 + (40 + 60 thoughts) x 4.00 = $0.0007.
    auto gemini = g.chat(ops, chat_body("gemini-house", "priced"),
                         usage_header(R"({"promptTokenCount":300,"candidatesTokenCount":40,)"
                                      R"("thoughtsTokenCount":60,"totalTokenCount":400})"));
    BOOST_TEST_REQUIRE(gemini.header("x-contextgate-cost-usd") == "0.0007");
    // No price: counted as unpriced, never as $0 (the name holds a comma and a quote).
    const std::string odd = "gpt-unpriced,\"x\"";
    auto unpriced = g.chat(team, chat_body(odd, "unpriced"));
    BOOST_TEST_REQUIRE(unpriced.header("x-contextgate-cost-usd") == "unpriced");
    // A stream that reports no usage: charged the estimate (request bytes / 4 in, content bytes
    // / 4 out, rounded up) at 2.00 and 8.00.
    const auto streamed = chat_body("gpt-estimate", "estimate", true);
    auto estimate = g.chat(team, streamed);
    BOOST_TEST_REQUIRE(estimate.status == 200u, estimate.body);
    auto text = read_chat_stream(estimate.body).text;
    const std::int64_t estimated_in = (static_cast<std::int64_t>(streamed.size()) + 3) / 4;
    const std::int64_t estimated_out = (static_cast<std::int64_t>(text.size()) + 3) / 4;
    const std::int64_t estimated_nano = estimated_in * 2000 + estimated_out * 8000;
    g.recorded(7);

    // Per key and model (the default).
    auto by_key_model = g.rows("");
    BOOST_TEST_REQUIRE(by_key_model.size() == 5u);
    const auto& ops_gemini = by_key_model[0].as_object();  // cfg-ops sorts first
    BOOST_TEST((names_of(ops_gemini) ==
                std::vector<std::string>{
                    "key_id", "key_name", "model", "requests", "input_tokens", "output_tokens",
                    "total_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
                    "usd", "unpriced_requests", "estimated_requests", "cache_hits", "saved_usd"}));
    BOOST_TEST(ops_gemini.at("key_id") == "cfg-ops");
    BOOST_TEST(ops_gemini.at("key_name") == "ops");
    BOOST_TEST(ops_gemini.at("model") == "gemini-house");
    BOOST_TEST(nano(ops_gemini.at("usd")) == 700'000);
    BOOST_TEST(ops_gemini.at("output_tokens") == 100);
    BOOST_TEST(ops_gemini.at("reasoning_tokens") == 60);
    const auto& house = row_of(by_key_model, "model", "gpt-house");
    BOOST_TEST(house.at("requests") == 3);  // the first, the hit, the split one
    BOOST_TEST(nano(house.at("usd")) == 2'800'000 + 7'300'000);
    BOOST_TEST(house.at("cache_hits") == 1);
    BOOST_TEST(nano(house.at("saved_usd")) == 2'800'000);
    BOOST_TEST(house.at("input_tokens") == 3000);  // the hit's tokens are not counted
    BOOST_TEST(house.at("cache_read_tokens") == 1000);
    BOOST_TEST(house.at("reasoning_tokens") == 200);
    BOOST_TEST(house.at("unpriced_requests") == 0);
    const auto& anthropic = row_of(by_key_model, "model", "claude-house");
    BOOST_TEST(nano(anthropic.at("usd")) == 2'850'000);
    BOOST_TEST(anthropic.at("input_tokens") == 1500);  // reads and writes are input
    BOOST_TEST(anthropic.at("cache_read_tokens") == 1000);
    BOOST_TEST(anthropic.at("cache_write_tokens") == 400);
    const auto& no_price = row_of(by_key_model, "model", odd);
    BOOST_TEST(no_price.at("unpriced_requests") == 1);
    BOOST_TEST(nano(no_price.at("usd")) == 0);
    BOOST_TEST(no_price.at("total_tokens") == 21);  // the fake's 9 in and 12 out
    const auto& guessed = row_of(by_key_model, "model", "gpt-estimate");
    BOOST_TEST(guessed.at("estimated_requests") == 1);
    BOOST_TEST(guessed.at("input_tokens") == estimated_in);
    BOOST_TEST(guessed.at("output_tokens") == estimated_out);
    BOOST_TEST(nano(guessed.at("usd")) == estimated_nano);

    // Per upstream: the hit under none, since no upstream answered it.
    auto by_upstream = g.rows("?group_by=upstream");
    BOOST_TEST_REQUIRE(by_upstream.size() == 4u);
    BOOST_TEST((names_of(by_upstream[0].as_object()).front() == "upstream"));
    BOOST_TEST(by_upstream[0].at("upstream") == "");
    BOOST_TEST(by_upstream[0].at("cache_hits") == 1);
    BOOST_TEST(nano(by_upstream[0].at("usd")) == 0);
    const auto& up0 = row_of(by_upstream, "upstream", "up0");
    BOOST_TEST(up0.at("requests") == 4);
    BOOST_TEST(nano(up0.at("usd")) == 2'800'000 + 7'300'000 + estimated_nano);
    BOOST_TEST(up0.at("unpriced_requests") == 1);
    BOOST_TEST(nano(row_of(by_upstream, "upstream", "up1").at("usd")) == 2'850'000);
    BOOST_TEST(nano(row_of(by_upstream, "upstream", "up2").at("usd")) == 700'000);

    // Per day: one row with everything.
    auto by_day = g.rows("?group_by=day");
    BOOST_TEST_REQUIRE(by_day.size() == 1u);
    BOOST_TEST(by_day[0].as_object().size() == 13u);  // the day and the figures, nothing else
    const std::int64_t total_nano = 2'800'000 + 7'300'000 + 2'850'000 + 700'000 + estimated_nano;
    BOOST_TEST(nano(by_day[0].at("usd")) == total_nano);
    BOOST_TEST(by_day[0].at("requests") == 7);
    BOOST_TEST(by_day[0].at("unpriced_requests") == 1);
    BOOST_TEST(by_day[0].at("estimated_requests") == 1);

    // Per key: the two keys.
    auto by_key = g.rows("?group_by=key");
    BOOST_TEST_REQUIRE(by_key.size() == 2u);
    BOOST_TEST(nano(by_key[1].at("usd")) == total_nano - 700'000);
    BOOST_TEST(by_key[1].at("key_name") == "team");

    // Every dimension, and the filters: one row per day, key, model and upstream written.
    auto each = g.rows("?group_by=day,key,model,upstream");
    BOOST_TEST(each.size() == 6u);  // gpt-house on up0 and on none
    for (const auto& r : each) BOOST_TEST(r.as_object().size() == 17u);
    auto on_up1 = g.rows("?upstream=up1&group_by=model");
    BOOST_TEST_REQUIRE(on_up1.size() == 1u);
    BOOST_TEST(on_up1[0].at("model") == "claude-house");
    BOOST_TEST(g.rows("?key=cfg-ops&model=gemini-house").size() == 1u);
    BOOST_TEST(g.rows("?from=2000-01-01&to=2000-01-02").empty());

    // CSV: the same report, read back field for field.
    auto csv = g.get("/admin/usage?format=csv&from=2000-01-01");
    BOOST_TEST_REQUIRE(csv.status == 200u, csv.body);
    BOOST_TEST(csv.header("content-type") == "text/csv; charset=utf-8");
    auto disposition = csv.header("content-disposition");
    BOOST_TEST(disposition.find("attachment; filename=\"usage-2000-01-01-") == 0u, disposition);
    auto lines = parse_csv(csv.body);
    BOOST_TEST_REQUIRE(lines.size() == by_key_model.size() + 1);
    BOOST_TEST(lines[0] == names_of(by_key_model[0].as_object()));
    for (std::size_t i = 0; i < by_key_model.size(); ++i) {
        const auto& row = by_key_model[i].as_object();
        BOOST_TEST_REQUIRE(lines[i + 1].size() == row.size());
        std::size_t f = 0;
        for (const auto& [name, value] : row) {
            const auto& field = lines[i + 1][f++];
            BOOST_TEST(same_field(field, value), name << ": " << field);
        }
    }
    BOOST_TEST(csv.body.find("\"gpt-unpriced,\"\"x\"\"\"") != std::string::npos, csv.body);
}

BOOST_AUTO_TEST_CASE(a_bad_report_is_refused_with_what_is_allowed) {
    usage_gateway g;
    for (std::string query : {"?group_by=week", "?group_by=day,,key", "?group_by=Key"}) {
        auto r = g.get("/admin/usage" + query);
        BOOST_TEST(r.status == 400u, query);
        BOOST_TEST(r.body.find("`group_by` must be a comma-separated list of day, key, model, "
                               "upstream and team") != std::string::npos,
                   r.body);
    }
    auto format = g.get("/admin/usage?format=xlsx");
    BOOST_TEST(format.status == 400u);
    BOOST_TEST(format.body.find("`format` must be json or csv") != std::string::npos, format.body);
    BOOST_TEST(g.get("/admin/usage?to=tomorrow").status == 400u);
    // Only with the admin key.
    client c(g.gw->port());
    BOOST_TEST(c.request(make_request("GET", "/admin/usage?format=csv")).status == 401u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_usage_test
