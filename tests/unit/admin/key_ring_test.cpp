#include "gateway/admin/key_ring.hpp"

#include "gateway/admin/gatekeeper.hpp"
#include "gateway/config/config.hpp"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

namespace admin_key_ring_test {

using namespace gateway::admin;

BOOST_AUTO_TEST_SUITE(virtual_key_ring)

BOOST_AUTO_TEST_CASE(a_change_or_removal_is_seen_by_the_next_lookup_despite_the_cache) {
    virtual_key declared;
    declared.id = "cfg-a";
    declared.name = "a";
    declared.digest = gateway::config::key_digest("sk-a-0123456789abcdef");
    declared.rpm = 1;
    key_ring ring({declared});
    BOOST_TEST(ring.enforced());
    BOOST_TEST_REQUIRE(ring.by_secret("sk-a-0123456789abcdef"));
    BOOST_TEST(ring.by_secret("sk-a-0123456789abcdef")->rpm == 1u);  // now cached
    auto changed = *ring.by_id("cfg-a");
    changed.rpm = 5;
    BOOST_TEST(ring.put(changed));
    BOOST_TEST(ring.by_secret("sk-a-0123456789abcdef")->rpm == 5u);
    BOOST_TEST(ring.remove("cfg-a"));
    BOOST_TEST(!ring.by_secret("sk-a-0123456789abcdef"));
    BOOST_TEST(ring.enforced());  // keys stay required once there were any
    BOOST_TEST(!ring.by_secret("unknown-secret-0000"));
    // Another ring in the same thread does not see this one's cached keys.
    key_ring other({});
    BOOST_TEST(!other.enforced());
    BOOST_TEST(!other.by_secret("sk-a-0123456789abcdef"));
}

BOOST_AUTO_TEST_CASE(two_keys_cannot_share_a_secret) {
    key_ring ring({});
    virtual_key a;
    a.id = "key_a";
    a.digest = gateway::config::key_digest("same-secret-0123456789");
    auto b = a;
    b.id = "key_b";
    BOOST_TEST(ring.put(a));
    BOOST_TEST(!ring.put(b));
}

// /admin/keys gives no two live keys one name; what the store holds is adopted as it is.
BOOST_AUTO_TEST_CASE(a_named_put_refuses_a_name_another_key_has) {
    virtual_key declared;
    declared.id = "cfg-ops";
    declared.name = "ops";
    declared.digest = gateway::config::key_digest("sk-ops-0123456789abcdef");
    key_ring ring({declared});
    virtual_key k;
    k.id = "key_1";
    k.name = "ops";
    k.digest = gateway::config::key_digest("sk-one-0123456789");
    BOOST_TEST((ring.put_named(k) == key_ring::named_put::name_taken));
    BOOST_TEST(!ring.by_id("key_1"));
    k.name = "team";
    BOOST_TEST((ring.put_named(k) == key_ring::named_put::done));
    BOOST_TEST((ring.put_named(k) == key_ring::named_put::done));  // its own name: no clash
    auto other = k;
    other.id = "key_2";
    other.digest = gateway::config::key_digest("sk-two-0123456789");
    BOOST_TEST((ring.put_named(other) == key_ring::named_put::name_taken));
    BOOST_TEST(ring.put(other));  // adopted from the store: names as they are
    BOOST_TEST(ring.remove("key_1"));
    BOOST_TEST((ring.put_named(k) == key_ring::named_put::refused));  // revoked for good
}

// A PATCH that read the key before a DELETE and writes after it must not bring the key back.
BOOST_AUTO_TEST_CASE(a_removed_key_is_never_put_back) {
    key_ring ring({});
    virtual_key k;
    k.id = "key_r";
    k.digest = gateway::config::key_digest("sk-revoked-0123456789");
    BOOST_TEST_REQUIRE(ring.put(k));
    auto read_by_patch = *ring.by_id("key_r");
    BOOST_TEST(ring.remove("key_r"));
    read_by_patch.rpm = 9;
    BOOST_TEST(!ring.put(read_by_patch));
    BOOST_TEST(!ring.by_id("key_r"));
    BOOST_TEST(!ring.by_secret("sk-revoked-0123456789"));
    BOOST_TEST(!ring.remove("key_r"));  // the DELETE of a DELETE: nothing there
}

BOOST_AUTO_TEST_CASE(a_reload_declares_the_files_keys_and_keeps_those_made_by_the_api) {
    auto key = [](std::string name, std::string secret, unsigned rpm = 0) {
        virtual_key k;
        k.id = "cfg-" + name;
        k.name = std::move(name);
        k.digest = gateway::config::key_digest(secret);
        k.rpm = rpm;
        return k;
    };
    key_ring ring({key("a", "sk-a-0123456789abcdef"), key("b", "sk-b-0123456789abcdef")});
    virtual_key made = key("api", "sk-api-0123456789abcd");
    made.id = "key_0123456789abcdef";
    BOOST_TEST_REQUIRE(ring.put(made));
    BOOST_TEST_REQUIRE(ring.by_secret("sk-b-0123456789abcdef"));  // cached in this thread

    // b leaves the file, a changes, c arrives, and d has the API key's secret.
    auto refused =
        ring.declare({key("a", "sk-a-0123456789abcdef", 7), key("c", "sk-c-0123456789abcdef"),
                      key("d", "sk-api-0123456789abcd")});
    BOOST_TEST(refused == std::vector<std::string>{"d"});
    BOOST_TEST(!ring.by_secret("sk-b-0123456789abcdef"));
    BOOST_TEST(ring.by_secret("sk-a-0123456789abcdef")->rpm == 7u);
    BOOST_TEST(ring.by_secret("sk-a-0123456789abcdef")->declared);
    BOOST_TEST(ring.by_secret("sk-c-0123456789abcdef"));
    BOOST_TEST(ring.by_secret("sk-api-0123456789abcd")->id == "key_0123456789abcdef");
    // A key a reload took away may be declared again by the next one.
    ring.declare({key("b", "sk-b-0123456789abcdef")});
    BOOST_TEST(ring.by_secret("sk-b-0123456789abcdef"));
    BOOST_TEST(!ring.by_secret("sk-a-0123456789abcdef"));
}

BOOST_AUTO_TEST_CASE(secrets_and_estimates) {
    auto secret = new_secret();
    BOOST_TEST(secret.size() == 6u + 43u);
    BOOST_TEST(secret.starts_with("sk-cg-"));
    BOOST_TEST(new_secret() != secret);
    BOOST_TEST(new_key_id().size() == 4u + 16u);
    BOOST_TEST(estimate_tokens(R"({"model":"m"})") == 4u);  // 14 bytes
    BOOST_TEST(estimate_tokens(R"({"model":"m","max_tokens":100})") == 8u + 100u);
    BOOST_TEST(estimate_tokens(R"({"max_completion_tokens":7,"max_tokens":100})") == 11u + 7u);
    BOOST_TEST(estimate_tokens(R"({"generationConfig":{"maxOutputTokens":50}})") == 11u + 50u);
    BOOST_TEST(estimate_tokens("not json, max_tokens") == 5u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace admin_key_ring_test
