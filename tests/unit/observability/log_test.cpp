// The log writer: every line is one line, whatever a client put into the values it shows, and
// secrets in query strings never reach it.
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"

#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace observability_log_test {

using namespace gateway::observability;

namespace {

// What the code under test writes to stderr while `write` runs.
template <class F>
std::string captured(F write) {
    std::fflush(stderr);
    char path[] = "/tmp/contextgate-log-XXXXXX";
    int file = ::mkstemp(path);
    int saved = ::dup(STDERR_FILENO);
    ::dup2(file, STDERR_FILENO);
    write();
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    ::close(file);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(path);
    return text.str();
}

// The lines a follower took, as one text.
std::string joined(const access_follower::batch& taken) {
    std::string out;
    for (const auto& line : taken.lines) out += line;
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(log_writer)

BOOST_AUTO_TEST_CASE(query_secrets_are_redacted_in_any_spelling) {
    BOOST_TEST(redacted_target("/v1beta/models/g:generateContent?key=AIzaSECRET&alt=sse") ==
               "/v1beta/models/g:generateContent?key=REDACTED&alt=sse");
    BOOST_TEST(redacted_target("/x?alt=sse&%6Bey=sk-cg-1&API_KEY=2&access_token=3&limit=4") ==
               "/x?alt=sse&%6Bey=REDACTED&API_KEY=REDACTED&access_token=REDACTED&limit=4");
    BOOST_TEST(redacted_target("/v1/models") == "/v1/models");
    BOOST_TEST(redacted_target("/v1/models?") == "/v1/models?");
    BOOST_TEST(redacted_target("/x?key") == "/x?key");  // no value, nothing to hide
}

BOOST_AUTO_TEST_CASE(any_name_like_a_credential_is_redacted) {
    BOOST_TEST(redacted_target("/v1/chat/completions?api-version=2024-10-21&api-key=s1&"
                               "subscription-key=s2&access-token=s3&auth=s4&jwt=s5&session=s6&"
                               "private_token=s7&X-Amz-Signature=s8&sig=s9&model=m") ==
               "/v1/chat/completions?api-version=2024-10-21&api-key=REDACTED&"
               "subscription-key=REDACTED&access-token=REDACTED&auth=REDACTED&jwt=REDACTED&"
               "session=REDACTED&private_token=REDACTED&X-Amz-Signature=REDACTED&sig=REDACTED&"
               "model=m");
    // The text and JSON access lines, and what /admin/log follows, all hide them.
    access_entry e;
    e.request_id = "r1";
    e.method = "GET";
    e.path = "/v1/models?subscription-key=hidden-1&Private_Token=hidden-2";
    e.status = 200;
    for (auto format : {gateway::config::log_format::text, gateway::config::log_format::json}) {
        set_format(format);
        set_level(gateway::config::log_level::info);
        auto line = captured([&] { log_access(e); });
        BOOST_TEST(line.find("hidden-") == std::string::npos, line);
        BOOST_TEST(line.find("subscription-key=REDACTED") != std::string::npos, line);
    }
    set_format(gateway::config::log_format::text);
    access_follower follower;
    feed_access(e);
    auto followed = joined(follower.take());
    BOOST_TEST(followed.find("subscription-key=REDACTED") != std::string::npos, followed);
    BOOST_TEST(followed.find("hidden-") == std::string::npos, followed);
}

BOOST_AUTO_TEST_CASE(an_access_line_is_one_line_and_hides_the_key) {
    set_format(gateway::config::log_format::text);
    set_level(gateway::config::log_level::info);
    access_entry e;
    e.request_id = "id 1";
    e.method = "POST";
    e.path = "/v1beta/models/g:generateContent?key=AIzaSECRET";
    e.status = 200;
    e.model = "m\n2026-11-25T00:00:00.000Z INFO POST /v1/forged 200 key=admin";
    e.upstream = "gemini";
    auto text = captured([&] { log_access(e); });
    BOOST_TEST(std::count(text.begin(), text.end(), '\n') == 1, text);
    BOOST_TEST(text.find("AIzaSECRET") == std::string::npos, text);
    BOOST_TEST(text.find("?key=REDACTED") != std::string::npos, text);
    BOOST_TEST(
        text.find(" model=m\\x0a2026-11-25T00:00:00.000Z\\x20INFO\\x20POST") != std::string::npos,
        text);
    BOOST_TEST(text.find(" id=id\\x201") != std::string::npos, text);

    auto message = captured([] { log_warn("upstream said: bad\r\nINFO forged"); });
    BOOST_TEST(std::count(message.begin(), message.end(), '\n') == 1, message);
    BOOST_TEST(message.find("bad\\x0d\\x0aINFO forged") != std::string::npos, message);

    set_format(gateway::config::log_format::json);
    auto json = captured([&] { log_access(e); });
    set_format(gateway::config::log_format::text);
    BOOST_TEST(std::count(json.begin(), json.end(), '\n') == 1, json);
    BOOST_TEST(json.find("AIzaSECRET") == std::string::npos, json);
}

// The cost settlement priced: `cost=` in text, a number (or unpriced) in JSON, and an estimate
// said so; no cost field for a request nothing priced.
BOOST_AUTO_TEST_CASE(an_access_line_shows_the_cost) {
    set_format(gateway::config::log_format::text);
    set_level(gateway::config::log_level::info);
    access_entry e;
    e.request_id = "r";
    e.method = "POST";
    e.path = "/v1/chat/completions";
    e.status = 200;
    BOOST_TEST(captured([&] { log_access(e); }).find("cost") == std::string::npos);
    e.cost = "0.000123";
    auto text = captured([&] { log_access(e); });
    BOOST_TEST(text.find(" cost=0.000123 ") != std::string::npos, text);
    BOOST_TEST(text.find("cost_estimated") == std::string::npos, text);
    e.cost_estimated = true;
    text = captured([&] { log_access(e); });
    BOOST_TEST(text.find(" cost=0.000123 cost_estimated=true ") != std::string::npos, text);
    set_format(gateway::config::log_format::json);
    auto json = captured([&] { log_access(e); });
    e.cost = "unpriced";
    e.cost_estimated = false;
    auto unpriced = captured([&] { log_access(e); });
    set_format(gateway::config::log_format::text);
    BOOST_TEST(json.find("\"cost_usd\":0.000123,\"cost_estimated\":true") != std::string::npos,
               json);
    BOOST_TEST(unpriced.find("\"cost_usd\":null,\"unpriced\":true") != std::string::npos, unpriced);
    BOOST_TEST(captured([&] { log_access(e); }).find(" cost=unpriced ") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(followed_access_lines_are_json_kept_only_while_followed) {
    access_entry e;
    e.request_id = "r-1";
    e.method = "POST";
    e.path = "/v1/chat/completions?key=secret-value";
    e.status = 200;
    e.cache = "hit";
    feed_access(e);  // nobody follows: not kept
    BOOST_TEST(!access_followed());
    {
        access_follower a;
        BOOST_TEST(access_followed());
        BOOST_TEST(a.take().lines.empty());  // from now on only
        e.request_id = "r-2";
        feed_access(e);
        access_follower b;  // joins after r-2
        e.request_id = "r-3";
        feed_access(e);
        auto seen = a.take();
        BOOST_TEST(!seen.dropped);
        BOOST_TEST_REQUIRE(seen.lines.size() == 2u);
        BOOST_TEST(seen.lines[0].find("\"request_id\":\"r-2\"") != std::string::npos);
        BOOST_TEST(seen.lines[1].find("\"cache\":\"hit\"") != std::string::npos);
        BOOST_TEST(seen.lines[1].find("secret-value") == std::string::npos);  // redacted as logged
        BOOST_TEST(a.take().lines.empty());
        BOOST_TEST(a.queued_bytes() == 0u);
        BOOST_TEST(b.take().lines.size() == 1u);
    }
    BOOST_TEST(!access_followed());
}

BOOST_AUTO_TEST_CASE(a_follower_that_does_not_take_is_dropped_at_its_bound) {
    access_entry e;
    e.request_id = "r-1";
    e.method = "GET";
    std::string path = "/v1/models/" + std::string(1000, 'm');  // e.path only views it
    e.path = path;
    e.status = 404;
    auto dropped_before = metrics().log_followers_dropped.with().value();
    access_follower idle;
    access_follower reading;
    // Many times the bound: the idle follower's queue never holds more than the bound.
    for (std::size_t fed = 0; fed < 4 * follow_queue_bytes; fed += path.size()) {
        feed_access(e);
        BOOST_TEST_REQUIRE(idle.queued_bytes() <= follow_queue_bytes);
        auto batch = reading.take();  // keeps up: never dropped
        BOOST_TEST_REQUIRE(!batch.dropped);
        BOOST_TEST_REQUIRE(batch.lines.size() == 1u);
    }
    auto last = idle.take();
    BOOST_TEST(last.dropped);
    BOOST_TEST(last.lines.empty());  // the lines it held went with it
    BOOST_TEST(idle.queued_bytes() == 0u);
    BOOST_TEST(metrics().log_followers_dropped.with().value() - dropped_before == 1.0);
    // Once dropped, nothing is queued for it any more; it says so at every take.
    feed_access(e);
    BOOST_TEST(idle.queued_bytes() == 0u);
    BOOST_TEST(idle.take().dropped);
    BOOST_TEST(reading.take().lines.size() == 1u);

    // One line longer than the bound still reaches a follower that keeps up.
    access_follower big;
    std::string long_path = "/v1/models/" + std::string(follow_queue_bytes + 10, 'x');
    e.path = long_path;
    feed_access(e);
    auto whole = big.take();
    BOOST_TEST(!whole.dropped);
    BOOST_TEST(whole.lines.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace observability_log_test
