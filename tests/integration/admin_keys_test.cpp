// /admin/keys through the real gateway: a key's name follows the configuration file's rule, and
// no two live keys share one (declared keys included), since a name labels a key's metric series
// and its rows on the operator's pages.
#include "tests/integration/harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>

namespace integration_admin_keys_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

const std::string admin = "Authorization: Bearer admin-key-0123456789\r\n";

struct admin_gateway {
    fake_upstream fake;
    std::optional<running_gateway> gw;

    admin_gateway() {
        auto c = make_config(fake);
        c.admin.api_key = "admin-key-0123456789";
        config::virtual_key declared;
        declared.id = "cfg-ops";
        declared.name = "ops";
        declared.digest = config::key_digest("sk-declared-ops-0123456789");
        c.admin.keys.push_back(declared);
        gw.emplace(c);
    }
    response call(std::string_view method, std::string_view path, const json::value& body) {
        client c(gw->port());
        return c.request(make_request(method, path, json::serialize(body),
                                      admin + "Content-Type: application/json\r\n"));
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(admin_keys)

BOOST_AUTO_TEST_CASE(a_name_the_configuration_refuses_is_refused_here_too) {
    admin_gateway g;
    for (const std::string& name : std::initializer_list<std::string>{
             "<img src=x onerror=alert(1)>", "line\r\nbreak", "evil\u202Egnp.exe", "two words", "",
             std::string(65, 'a'), "caf\u00e9"}) {
        auto r = g.call("POST", "/admin/keys", json::object{{"name", name}});
        BOOST_TEST(r.status == 400u, name << ": " << r.body);
        BOOST_TEST(r.body.find("letters, digits") != std::string::npos, r.body);
    }
    auto ok = g.call("POST", "/admin/keys", json::object{{"name", "team-a.prod_1"}});
    BOOST_TEST_REQUIRE(ok.status == 201u, ok.body);
    // A rename is held to the same rule.
    auto id = std::string(json::parse(ok.body).at("id").as_string());
    auto renamed = g.call("PATCH", "/admin/keys/" + id, json::object{{"name", "<b>x</b>"}});
    BOOST_TEST(renamed.status == 400u, renamed.body);
}

BOOST_AUTO_TEST_CASE(a_name_another_key_has_is_refused) {
    admin_gateway g;
    auto first = g.call("POST", "/admin/keys", json::object{{"name", "team-a"}});
    BOOST_TEST_REQUIRE(first.status == 201u, first.body);
    auto again = g.call("POST", "/admin/keys", json::object{{"name", "team-a"}});
    BOOST_TEST(again.status == 409u, again.body);
    BOOST_TEST(again.body.find("team-a") != std::string::npos, again.body);
    // A declared key's name too.
    auto declared = g.call("POST", "/admin/keys", json::object{{"name", "ops"}});
    BOOST_TEST(declared.status == 409u, declared.body);
    // And a rename onto another key's name; renaming a key to its own name is no change.
    auto second = g.call("POST", "/admin/keys", json::object{{"name", "team-b"}});
    BOOST_TEST_REQUIRE(second.status == 201u, second.body);
    auto id = std::string(json::parse(second.body).at("id").as_string());
    BOOST_TEST(g.call("PATCH", "/admin/keys/" + id, json::object{{"name", "team-a"}}).status ==
               409u);
    BOOST_TEST(g.call("PATCH", "/admin/keys/" + id, json::object{{"name", "team-b"}}).status ==
               200u);
    client c(g.gw->port());
    auto list = json::parse(c.request(make_request("GET", "/admin/keys", "", admin)).body);
    BOOST_TEST(list.at("data").as_array().size() == 3u);  // ops, team-a, team-b
    // Once revoked, its name is free again.
    client d(g.gw->port());
    auto first_id = std::string(json::parse(first.body).at("id").as_string());
    BOOST_TEST(d.request(make_request("DELETE", "/admin/keys/" + first_id, "", admin)).status ==
               200u);
    BOOST_TEST(g.call("POST", "/admin/keys", json::object{{"name", "team-a"}}).status == 201u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_admin_keys_test
