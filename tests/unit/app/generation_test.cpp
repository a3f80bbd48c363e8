#include "gateway/app/generation.hpp"

#include "gateway/upstream/routes.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace app_generation_test {

using namespace gateway;

namespace {

config::gateway_config load(const std::string& yaml) {
    auto loaded = config::load_string(yaml, "test.yaml");
    BOOST_TEST_REQUIRE(loaded.error.empty(), loaded.error);
    return *loaded.value;
}

std::string file(const std::string& upstreams, const std::string& more = {}) {
    return "server: {listen: 127.0.0.1:0, workers: 2}\n"
           "upstreams:\n" +
           upstreams + more;
}

const std::string a = "  - {name: a, base_url: http://127.0.0.1:9/v1, models: [\"gpt-*\"]}\n";
const std::string b = "  - {name: b, base_url: http://127.0.0.1:8/v1, models: [\"*\"]}\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(generation)

BOOST_AUTO_TEST_CASE(sections_a_process_cannot_change_keep_their_running_values) {
    auto running = load(file(a));
    auto next = load(
        "server: {listen: 127.0.0.1:0, workers: 3}\n"
        "upstreams:\n" +
        a + b +
        "health: {cooldown: 9s}\n"
        "logging: {level: debug}\n"
        "admin: {api_key: admin-key-0123456789}\n");
    auto kept = app::keep_restart_sections(running, next);
    BOOST_TEST(kept == (std::vector<std::string>{"server", "logging", "admin.api_key"}),
               boost::test_tools::per_element());
    BOOST_TEST(next.server.workers == 2u);
    BOOST_TEST((next.logging.level == running.logging.level));
    BOOST_TEST(next.admin.api_key.empty());
    // What a reload changes is left as the file says.
    BOOST_TEST(next.upstreams.size() == 2u);
    BOOST_TEST(next.health.cooldown == std::chrono::milliseconds(9000));
    // Nothing differs: nothing is named.
    auto same = load(file(a));
    BOOST_TEST(app::keep_restart_sections(running, same).empty());
}

// Sign-in's client and its sessions are made at the start: a reload names auth and keeps it.
BOOST_AUTO_TEST_CASE(sign_in_settings_need_a_restart) {
    auto running = load(file(a));
    auto next = load(file(a) +
                     "auth:\n  oidc: {issuer: https://idp.example.com, client_id: cg, "
                     "redirect_url: https://gw.example.com/auth/callback}\n");
    auto kept = app::keep_restart_sections(running, next);
    BOOST_TEST(kept == (std::vector<std::string>{"auth"}), boost::test_tools::per_element());
    BOOST_TEST(next.auth.oidc.issuer.empty());
}

BOOST_AUTO_TEST_CASE(a_targets_health_and_the_cache_carry_over_by_name) {
    auto first =
        app::build_generation(load(file(a, "  - {name: c, base_url: http://127.0.0.1:7/v1}\n") +
                                   "cache: {max_bytes: 1MiB}\n"),
                              nullptr, "replica-test");
    BOOST_TEST_REQUIRE(first.error.empty(), first.error);
    auto& g1 = **first.value;
    BOOST_TEST(g1.number == 1u);
    BOOST_TEST(!g1.cache);  // nothing caches
    g1.routing->health().failed(0, "gpt-4o", upstream::clock::now());
    g1.routing->health().upstream_failed(0, upstream::clock::now(), "connect: refused");

    // a moves to index 1; b is new. a stays cooled under its name.
    auto second_text = file(b + a);
    second_text.replace(second_text.find("models: [\"*\"]}"), 14,
                        "models: [\"*\"], cache: {ttl: 1m}}");
    auto second = app::build_generation(load(second_text), &g1, "replica-test");
    BOOST_TEST_REQUIRE(second.error.empty(), second.error);
    auto& g2 = **second.value;
    BOOST_TEST(g2.number == 2u);
    auto carried = g2.routing->health().of(1, "gpt-4o");
    BOOST_TEST_REQUIRE(carried.has_value());
    BOOST_TEST((carried->now == upstream::health_board::state::cooled));
    BOOST_TEST(!g2.routing->health().of(0, "gpt-4o").has_value());
    auto record = g2.routing->health().upstream_of(1);
    BOOST_TEST_REQUIRE(record.has_value());
    BOOST_TEST(record->seen.last_error == "connect: refused");
    auto fresh = g2.routing->health().upstream_of(0);  // b: nothing judged
    BOOST_TEST((!fresh || !fresh->seen.judged));
    BOOST_TEST_REQUIRE(g2.cache);

    // The same cache settings keep the answers; other settings start a new cache.
    auto third = app::build_generation(load(second_text), &g2, "replica-test");
    BOOST_TEST_REQUIRE(third.error.empty(), third.error);
    BOOST_TEST((*third.value)->cache == g2.cache);
    auto fourth = app::build_generation(load(second_text + "cache: {max_bytes: 2MiB}\n"),
                                        third.value->get(), "replica-test");
    BOOST_TEST_REQUIRE(fourth.error.empty(), fourth.error);
    BOOST_TEST((*fourth.value)->cache);
    BOOST_TEST((*fourth.value)->cache != g2.cache);
}

BOOST_AUTO_TEST_CASE(an_upstream_whose_tls_file_holds_no_certificate_fails_the_build) {
    auto path = std::filesystem::temp_directory_path() / "contextgate-generation-test-ca.pem";
    std::ofstream(path) << "not a certificate\n";
    auto bad = load(
        file("  - {name: s, base_url: https://127.0.0.1:9/v1, ca_file: " + path.string() + "}\n"));
    auto built = app::build_generation(bad, nullptr, "replica-test");
    std::filesystem::remove(path);
    BOOST_TEST(!built);
    BOOST_TEST(built.error.find(path.filename().string()) != std::string::npos, built.error);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace app_generation_test
