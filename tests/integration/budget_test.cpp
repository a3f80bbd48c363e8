// USD budgets per virtual key (docs/operations.md "Budgets") through the real gateway against the
// fake upstream, which reports the usage the x-fake-usage header gives: reservations that hold
// under 100 concurrent requests (in memory, and across two gateways sharing Redis), the refusal of
// a model without a price, the 429 past a budget and when each period resets, a restart that keeps
// what was spent, and the alerts posted once per threshold to a webhook on 127.0.0.1.
#include "tests/integration/harness.hpp"
#include "tests/integration/redis_server.hpp"

#include "gateway/clock.hpp"
#include "gateway/observability/log.hpp"

#include <boost/asio/connect.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace integration_budget_test {

using namespace gateway::testing;
namespace config = gateway::config;
namespace json = boost::json;
namespace observability = gateway::observability;
namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;
using period = config::budget_period;

namespace {

const std::string admin_header = "Authorization: Bearer admin-key-0123456789\r\n";

// budget-* models cost $1,000 per 1M tokens in and out: a token is $0.001, 1,000,000 nano-dollars.
constexpr std::uint64_t nano_per_token = 1'000'000;

std::string chat_body(std::string_view model) {
    return R"({"model":")" + std::string(model) +
           R"(","max_tokens":15,"messages":[{"role":"user","content":"hi"}]})";
}

// What the gateway reserves for chat_body(model): its bytes / 4 in, its max_tokens out.
std::uint64_t reservation(std::string_view model = "budget-model") {
    return ((chat_body(model).size() + 3) / 4 + 15) * nano_per_token;
}

config::virtual_key usd_key(const std::string& name, std::uint64_t budget_nano, period p) {
    config::virtual_key k;
    k.id = "cfg-" + name;
    k.name = name;
    k.digest = config::key_digest("sk-budget-" + name + "-0123456789");
    k.budget_usd_nano = budget_nano;
    k.budget_period = p;
    return k;
}

std::string secret_of(const std::string& name) {
    return "sk-budget-" + name + "-0123456789";
}

config::gateway_config budget_config(const fake_upstream& fake,
                                     std::vector<config::virtual_key> keys) {
    auto c = make_config(fake);
    c.admin.api_key = "admin-key-0123456789";
    c.admin.keys = std::move(keys);
    config::price_entry p;
    p.model = "budget-*";
    p.rates.input = 1000.0;
    p.rates.output = 1000.0;
    c.pricing.overrides.push_back(p);
    return c;
}

// A chat request with `name`'s key; the fake reports `in` and `out` tokens.
response chat(std::uint16_t port, const std::string& name, int in = 10, int out = 10,
              std::string_view model = "budget-model", std::string extra = {}) {
    client c(port);
    auto usage = "x-fake-usage: {\"prompt_tokens\":" + std::to_string(in) +
                 ",\"completion_tokens\":" + std::to_string(out) +
                 ",\"total_tokens\":" + std::to_string(in + out) + "}\r\n";
    return c.request(make_request("POST", "/v1/chat/completions", chat_body(model),
                                  "Authorization: Bearer " + secret_of(name) +
                                      "\r\nContent-Type: application/json\r\n" + usage + extra));
}

// Settlement runs just after the answer went out and before the access line is written: a test
// that needs a request settled waits for its line.
class settled_requests {
public:
    void wait(std::size_t n) {
        auto until = std::chrono::steady_clock::now() + 10s;
        while (seen_ < n && std::chrono::steady_clock::now() < until) {
            for (const auto& line : follower_.take().lines)
                if (line.find("/v1/chat/completions") != std::string::npos) ++seen_;
            if (seen_ < n) std::this_thread::sleep_for(2ms);
        }
        BOOST_TEST_REQUIRE(seen_ >= n);
    }
    // One request sent and waited for.
    response chat(std::uint16_t port, const std::string& name, int in = 10, int out = 10) {
        auto r = integration_budget_test::chat(port, name, in, out);
        wait(seen_ + 1);
        return r;
    }

private:
    observability::access_follower follower_;
    std::size_t seen_ = 0;
};

std::string error_message(const response& r) {
    return std::string(json::parse(r.body).at("error").at("message").as_string());
}
std::string error_code(const response& r) {
    return std::string(json::parse(r.body).at("error").at("code").as_string());
}

// A webhook on 127.0.0.1: keeps each POST's body and answers `status`.
class webhook_receiver {
public:
    explicit webhook_receiver(unsigned status = 204)
        : status_(status), acceptor_(io_, {net::ip::make_address("127.0.0.1"), 0}) {
        thread_ = std::thread([this] { serve(); });
    }
    ~webhook_receiver() {
        stopping_ = true;
        // The blocking accept ends with one more connection.
        net::ip::tcp::socket wake(io_);
        boost::system::error_code ec;
        wake.connect(acceptor_.local_endpoint(), ec);
        thread_.join();
    }
    std::string url() const {
        return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + "/hook";
    }
    std::vector<json::object> events() const {
        std::lock_guard lock(mutex_);
        std::vector<json::object> out;
        for (const auto& b : bodies_) out.push_back(json::parse(b).as_object());
        return out;
    }

private:
    void serve() {
        for (;;) {
            net::ip::tcp::socket s(io_);
            boost::system::error_code ec;
            acceptor_.accept(s, ec);
            if (stopping_ || ec) return;
            boost::beast::flat_buffer buffer;
            bhttp::request<bhttp::string_body> req;
            bhttp::read(s, buffer, req, ec);
            if (ec) continue;
            {
                std::lock_guard lock(mutex_);
                if (req.target() == "/hook") bodies_.push_back(req.body());
            }
            bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status_), 11};
            res.keep_alive(false);
            res.prepare_payload();
            bhttp::write(s, res, ec);
        }
    }

    unsigned status_;
    net::io_context io_;
    net::ip::tcp::acceptor acceptor_;
    std::atomic<bool> stopping_{false};
    mutable std::mutex mutex_;
    std::vector<std::string> bodies_;
    std::thread thread_;
};

void send_alerts_to(config::gateway_config& c, const webhook_receiver& hook,
                    std::vector<unsigned> thresholds) {
    c.admin.budget_alerts.webhook = hook.url();
    c.admin.budget_alerts.endpoint = *config::parse_base_url(hook.url()).value;
    c.admin.budget_alerts.thresholds = std::move(thresholds);
}

// The thresholds the events name, in the order they came.
std::vector<unsigned> thresholds_of(const std::vector<json::object>& events) {
    std::vector<unsigned> out;
    for (const auto& e : events)
        out.push_back(static_cast<unsigned>(e.at("threshold_percent").as_int64()));
    return out;
}

// `n` requests at once from `n` threads, spread over `ports`; how many were answered 200.
std::size_t at_once(const std::vector<std::uint16_t>& ports, const std::string& name,
                    std::size_t n) {
    std::atomic<std::size_t> ok{0};
    std::atomic<std::size_t> refused{0};
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            // Each answer takes 100 ms, so the requests are in flight together.
            auto r = chat(ports[i % ports.size()], name, 10, 10, "budget-model",
                          "x-fake-delay-ms: 100\r\n");
            if (r.status == 200) ++ok;
            if (r.status == 429) ++refused;
        });
    for (auto& t : threads) t.join();
    BOOST_TEST(ok + refused == n);
    return ok;
}

// The key's spend as /admin/keys shows it (from the usage store), in nano-dollars.
std::uint64_t listed_spend(std::uint16_t port, const std::string& id) {
    client c(port);
    auto r = c.request(make_request("GET", "/admin/keys/" + id, "", admin_header));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto view = json::parse(r.body);
    return static_cast<std::uint64_t>(
        std::llround(view.at("usage").at("spent_usd").to_number<double>() * 1e9));
}

// A request costs 20 tokens ($0.02); the reservation is about twice that. With $1.00, the 100
// requests at once can never reserve more than the budget: what they spent stays within it
// (the bound the docs give: one reservation), and all that was let in was counted.
void check_concurrent_spend(std::size_t ok, std::uint64_t spent) {
    constexpr std::uint64_t budget = 1'000'000'000;
    constexpr std::uint64_t cost = 20 * nano_per_token;
    BOOST_TEST(ok * cost <= budget + reservation());
    BOOST_TEST(ok * cost <= budget);
    // The first ones in reserve the budget whole before any answer comes back.
    BOOST_TEST(ok >= budget / reservation());
    BOOST_TEST(spent == ok * cost);
}

// The alerts posted when `ok` requests of $0.02 were spent of $1.00: one for each threshold t
// with ok * 2 >= t, and no other (the settles of the two workers or replicas may post them in
// either order).
void check_alerts(const webhook_receiver& hook, const std::vector<unsigned>& thresholds,
                  std::size_t ok) {
    auto got = thresholds_of(hook.events());
    std::sort(got.begin(), got.end());
    std::vector<unsigned> want;
    for (auto t : thresholds)
        if (ok * 2 >= t) want.push_back(t);
    BOOST_TEST(got == want, "after " << ok << " requests");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(budgets)

BOOST_AUTO_TEST_CASE(a_hundred_requests_at_once_never_reserve_past_the_budget) {
    fake_upstream fake;
    webhook_receiver hook;
    const std::vector<unsigned> thresholds{10, 50, 100};
    std::size_t ok = 0;
    {
        auto c = budget_config(fake, {usd_key("team", 1'000'000'000, period::month)});
        send_alerts_to(c, hook, thresholds);
        running_gateway gw(c);
        settled_requests settled;
        ok = at_once({gw.port()}, "team", 100);
        settled.wait(100);
        check_concurrent_spend(ok, listed_spend(gw.port(), "cfg-team"));
        // Once they settled, what is left is exact: one more is let in only if it fits.
        std::uint64_t left = 1'000'000'000 - ok * 20 * nano_per_token;
        auto next = chat(gw.port(), "team");
        BOOST_TEST((next.status == 200u) == (left >= reservation()), next.body);
    }
    // The gateway posts what is queued before it ends: every threshold reached, once.
    check_alerts(hook, thresholds, ok);
}

// Two gateways share the budget through Redis: each check-and-reserve is one script, so the
// hundred requests spread over both cannot reserve past it either, and an alert fires once for
// both replicas (from the spend the atomic settle returned).
BOOST_AUTO_TEST_CASE(two_gateways_sharing_redis_share_the_budget_and_alert_once) {
    redis_server redis;
    if (!redis.running()) {
        BOOST_TEST_MESSAGE("redis-server is not available: skipped");
        return;
    }
    fake_upstream fake;
    webhook_receiver hook;
    const std::vector<unsigned> thresholds{10, 50, 100};
    std::size_t ok = 0;
    {
        auto c = budget_config(fake, {usd_key("team", 1'000'000'000, period::month)});
        c.limits.backend = config::limits_backend::redis;
        c.limits.redis_url = "redis://127.0.0.1:" + std::to_string(redis.port());
        c.limits.redis_timeout = config::duration(2000);
        send_alerts_to(c, hook, thresholds);
        auto other = c;
        other.context.data_dir = temporary_folder();
        running_gateway a(c);
        running_gateway b(other);
        settled_requests settled;
        ok = at_once({a.port(), b.port()}, "team", 100);
        settled.wait(100);
        // Each replica's store holds its own requests: the two together are what was spent.
        check_concurrent_spend(
            ok, listed_spend(a.port(), "cfg-team") + listed_spend(b.port(), "cfg-team"));
    }
    check_alerts(hook, thresholds, ok);
}

BOOST_AUTO_TEST_CASE(a_model_without_a_price_is_refused_to_a_key_with_a_usd_budget_only) {
    fake_upstream fake;
    config::virtual_key open;
    open.id = "cfg-open";
    open.name = "open";
    open.digest = config::key_digest(secret_of("open"));
    auto c = budget_config(fake, {usd_key("team", 1'000'000'000, period::month), open});
    // A route with a priced and an unpriced target: it may reach either.
    config::route_config mixed;
    mixed.model = "mixed";
    mixed.targets.push_back({"up0", "budget-model", 1, 0});
    mixed.targets.push_back({"up0", "house-model", 1, 0});
    c.routes.push_back(mixed);
    running_gateway gw(c);

    auto refused = chat(gw.port(), "team", 10, 10, "house-model");
    BOOST_TEST_REQUIRE(refused.status == 403u, refused.body);
    BOOST_TEST(error_code(refused) == "model_not_priced");
    auto message = error_message(refused);
    BOOST_TEST(message.find("`house-model`") != std::string::npos, message);
    BOOST_TEST(message.find("pricing.overrides") != std::string::npos, message);
    auto route = chat(gw.port(), "team", 10, 10, "mixed");
    BOOST_TEST(route.status == 403u, route.body);
    BOOST_TEST(error_message(route).find("`house-model`") != std::string::npos, route.body);
    // Without a USD budget the same model goes through, unpriced.
    BOOST_TEST(chat(gw.port(), "open", 10, 10, "house-model").status == 200u);
    BOOST_TEST(chat(gw.port(), "team").status == 200u);
}

BOOST_AUTO_TEST_CASE(past_the_budget_the_answer_names_it_the_spend_and_the_reset) {
    fake_upstream fake;
    running_gateway gw(budget_config(fake, {usd_key("daily", 50'000'000, period::day)}));
    settled_requests settled;
    BOOST_TEST_REQUIRE(settled.chat(gw.port(), "daily").status == 200u);  // $0.02 of $0.05
    auto before = gateway::now_ms();
    auto refused = chat(gw.port(), "daily");
    BOOST_TEST_REQUIRE(refused.status == 429u, refused.body);
    BOOST_TEST(error_code(refused) == "insufficient_quota");
    auto message = error_message(refused);
    auto midnight = (before / 86'400'000 + 1) * 86'400'000;
    BOOST_TEST(message ==
                   "Key `daily` has reached its budget of $0.05 per day: $0.02 spent, and "
                   "this request may cost up to $" +
                       config::usd_text(reservation()) + ". The budget resets at " +
                       config::format_time(midnight) + ".",
               message);
    auto wait = std::stoll(refused.header("retry-after"));
    BOOST_TEST(wait >= (midnight - gateway::now_ms()) / 1000);
    BOOST_TEST(wait <= (midnight - before) / 1000 + 1);
    BOOST_TEST(refused.header("x-ratelimit-limit-usd") == "0.05");
    BOOST_TEST(refused.header("x-ratelimit-remaining-usd") == "0.03");
    BOOST_TEST(!refused.header("x-ratelimit-reset-usd").empty());
}

// A budget too small for one request shows when each period ends: the next midnight, the next
// Monday, the first of the next month (UTC).
BOOST_AUTO_TEST_CASE(each_period_resets_when_it_ends) {
    fake_upstream fake;
    running_gateway gw(budget_config(
        fake, {usd_key("d", 1'000'000, period::day), usd_key("w", 1'000'000, period::week),
               usd_key("m", 1'000'000, period::month)}));
    auto now = gateway::now_ms();
    auto today = std::chrono::sys_days(std::chrono::days(now / 86'400'000));
    auto monday =
        today - (std::chrono::weekday(today) - std::chrono::Monday) + std::chrono::days(7);
    std::chrono::year_month_day date(today);
    auto first = std::chrono::sys_days(date.year() / date.month() / 1 + std::chrono::months(1));
    auto ms = [](std::chrono::sys_days d) { return d.time_since_epoch().count() * 86'400'000LL; };
    const std::vector<std::pair<std::string, std::int64_t>> ends{
        {"d", ms(today + std::chrono::days(1))}, {"w", ms(monday)}, {"m", ms(first)}};
    for (const auto& [name, end] : ends) {
        auto refused = chat(gw.port(), name);
        BOOST_TEST_REQUIRE(refused.status == 429u, refused.body);
        auto message = error_message(refused);
        BOOST_TEST(message.find("resets at " + config::format_time(end)) != std::string::npos,
                   message);
        auto period_name = name == "d" ? "day" : name == "w" ? "week" : "month";
        BOOST_TEST(message.find(std::string("$0.001 per ") + period_name) != std::string::npos,
                   message);
    }
}

BOOST_AUTO_TEST_CASE(a_restart_keeps_what_the_period_spent) {
    fake_upstream fake;
    auto c = budget_config(fake, {usd_key("kept", 50'000'000, period::month)});
    {
        running_gateway gw(c);
        settled_requests settled;
        BOOST_TEST_REQUIRE(settled.chat(gw.port(), "kept").status == 200u);  // $0.02
    }
    // The same data_dir: the store's usage seeds the new process's counts.
    running_gateway again(c);
    auto refused = chat(again.port(), "kept");
    BOOST_TEST_REQUIRE(refused.status == 429u, refused.body);
    BOOST_TEST(error_message(refused).find("$0.02 spent") != std::string::npos, refused.body);
}

// A key made through /admin/keys with a USD budget, whose period a PATCH changes: the new period
// starts from what the store recorded in it, not from nothing.
BOOST_AUTO_TEST_CASE(the_admin_api_takes_a_usd_budget_and_a_new_period_keeps_the_spend) {
    fake_upstream fake;
    running_gateway gw(budget_config(fake, {}));
    auto call = [&](std::string_view method, const std::string& path, const std::string& body) {
        client c(gw.port());
        return c.request(
            make_request(method, path, body, admin_header + "Content-Type: application/json\r\n"));
    };
    for (const auto* bad : {R"({"usd":-1})", R"({"usd":"1.0000000001"})", R"({"usd":2000000})",
                            R"({"usd":true})", R"({"period":"year"})"}) {
        auto r = call("POST", "/admin/keys", R"({"name":"bad","budget":)" + std::string(bad) + "}");
        BOOST_TEST(r.status == 400u, bad << ": " << r.body);
    }
    auto made =
        call("POST", "/admin/keys", R"({"name":"api","budget":{"usd":0.05,"period":"day"}})");
    BOOST_TEST_REQUIRE(made.status == 201u, made.body);
    auto view = json::parse(made.body);
    BOOST_TEST(view.at("budget").at("usd").to_number<double>() == 0.05);
    BOOST_TEST(view.at("budget").at("period").as_string() == "day");
    auto id = std::string(view.at("id").as_string());
    auto secret = std::string(view.at("key").as_string());
    settled_requests settled;
    auto spend = [&] {
        client c(gw.port());
        auto r = c.request(make_request(
            "POST", "/v1/chat/completions", chat_body("budget-model"),
            "Authorization: Bearer " + secret +
                "\r\nContent-Type: application/json\r\nx-fake-usage: "
                "{\"prompt_tokens\":10,\"completion_tokens\":10,\"total_tokens\":20}\r\n"));
        return r;
    };
    BOOST_TEST_REQUIRE(spend().status == 200u);  // $0.02
    settled.wait(1);
    auto month = call("PATCH", "/admin/keys/" + id, R"({"budget":{"period":"month"}})");
    BOOST_TEST_REQUIRE(month.status == 200u, month.body);
    auto changed = json::parse(month.body);
    BOOST_TEST(changed.at("budget").at("period").as_string() == "month");
    BOOST_TEST(changed.at("budget").at("usd").to_number<double>() == 0.05);
    BOOST_TEST(changed.at("usage").at("spent_usd").to_number<double>() == 0.02);
    auto refused = spend();
    BOOST_TEST_REQUIRE(refused.status == 429u, refused.body);
    BOOST_TEST(error_message(refused).find("$0.05 per month: $0.02 spent") != std::string::npos,
               refused.body);
}

// $0.10 with alerts at 50, 80 and 100 %: $0.03, $0.06 (50 %), then $0.05 more, which passes both
// 80 and 100 % at once (it cost more than its reservation). Each is posted once, in order.
BOOST_AUTO_TEST_CASE(alerts_are_posted_once_per_threshold) {
    fake_upstream fake;
    webhook_receiver hook;
    {
        auto c = budget_config(fake, {usd_key("alerted", 100'000'000, period::month)});
        send_alerts_to(c, hook, {50, 80, 100});
        running_gateway gw(c);
        settled_requests settled;
        BOOST_TEST(settled.chat(gw.port(), "alerted", 15, 15).status == 200u);
        BOOST_TEST(settled.chat(gw.port(), "alerted", 15, 15).status == 200u);
        BOOST_TEST(settled.chat(gw.port(), "alerted", 25, 25).status == 200u);
        BOOST_TEST(settled.chat(gw.port(), "alerted").status == 429u);
    }
    auto events = hook.events();
    BOOST_TEST_REQUIRE(events.size() == 3u);
    BOOST_TEST((thresholds_of(events) == std::vector<unsigned>{50, 80, 100}));
    const auto& last = events.back();
    BOOST_TEST(last.at("type").as_string() == "budget_threshold_crossed");
    BOOST_TEST(last.at("key_name").as_string() == "alerted");
    BOOST_TEST(last.at("period").as_string() == "month");
    BOOST_TEST(std::abs(last.at("spent_usd").to_number<double>() - 0.11) < 1e-12);
    BOOST_TEST(std::abs(last.at("budget_usd").to_number<double>() - 0.10) < 1e-12);
    BOOST_TEST(std::string(last.at("text").as_string()).find("$0.11 of its $0.10") !=
               std::string::npos);
}

// A team's budget alerts as a key's do, on the same webhook, naming the team: its two keys (with
// no budget of their own) spend $0.02 each of its $0.10, passing 20 % on the first and 40 % on the
// second request.
BOOST_AUTO_TEST_CASE(a_teams_budget_alerts_once_per_threshold_naming_the_team) {
    fake_upstream fake;
    webhook_receiver hook;
    {
        auto team_key = [](const std::string& name) {
            auto k = usd_key(name, 0, period::month);
            k.team = "red";
            return k;
        };
        auto c = budget_config(fake, {team_key("red-1"), team_key("red-2")});
        config::team_config red;
        red.name = "red";
        red.budget_usd_nano = 100'000'000;
        red.budget_period = period::week;
        c.teams.push_back(red);
        send_alerts_to(c, hook, {20, 40, 90});
        running_gateway gw(c);
        settled_requests settled;
        BOOST_TEST(settled.chat(gw.port(), "red-1").status == 200u);
        BOOST_TEST(settled.chat(gw.port(), "red-2").status == 200u);
    }
    auto events = hook.events();
    BOOST_TEST_REQUIRE(events.size() == 2u);
    BOOST_TEST((thresholds_of(events) == std::vector<unsigned>{20, 40}));
    const auto& last = events.back();
    BOOST_TEST(last.at("type").as_string() == "budget_threshold_crossed");
    BOOST_TEST(last.at("team").as_string() == "red");
    BOOST_TEST(!last.contains("key_id"));
    BOOST_TEST(last.at("period").as_string() == "week");
    BOOST_TEST(std::abs(last.at("spent_usd").to_number<double>() - 0.04) < 1e-12);
    BOOST_TEST(std::abs(last.at("budget_usd").to_number<double>() - 0.10) < 1e-12);
    BOOST_TEST(std::string(last.at("text").as_string()).find("Team `red` has spent $0.04") !=
                   std::string::npos,
               last.at("text").as_string());
}

// A webhook that fails is tried once more, then the alert is given up (and logged).
BOOST_AUTO_TEST_CASE(a_failing_webhook_is_tried_twice_then_given_up) {
    fake_upstream fake;
    webhook_receiver hook(500);
    {
        auto c = budget_config(fake, {usd_key("failing", 100'000'000, period::month)});
        send_alerts_to(c, hook, {10});
        running_gateway gw(c);
        settled_requests settled;
        BOOST_TEST(settled.chat(gw.port(), "failing").status == 200u);  // $0.02: 10 % passed
        auto until = std::chrono::steady_clock::now() + 10s;
        while (hook.events().size() < 2 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(5ms);
    }
    BOOST_TEST(hook.events().size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_budget_test
