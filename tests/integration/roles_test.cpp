// Every /admin and /context endpoint against every kind of caller: an admin, a team admin on
// their own team's object and on another team's, a member, a viewer, a context API key, nobody
// and an expired session, on a gateway where people sign in (auth.oidc). The endpoints are read
// from the route tables in gateway/app/server.cpp, so an endpoint added there without a row here
// fails the test.
#include "tests/integration/harness.hpp"

#include "gateway/clock.hpp"
#include "gateway/config/config.hpp"
#include "gateway/io/offload.hpp"
#include "gateway/store/sqlite_store.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace integration_roles_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;
namespace store = gateway::store;

namespace {

const std::string admin_key = "admin-key-0123456789";
const std::string admin_header = "Authorization: Bearer " + admin_key + "\r\n";
const std::string context_key = "context-key-0123456789";

// The callers, one column each in the table below.
enum column { admin, ta_own, ta_other, member, viewer, key, nobody, expired, columns };
constexpr const char* column_names[] = {
    "admin",  "team_admin (own team)", "team_admin (other team)", "member",
    "viewer", "context API key",       "no credentials",          "expired session"};

// A: allowed (the handler answers, whatever it says); F: 403; U: 401.
// clang-format off
const std::map<std::string, std::string> expected{
    //                                              admin ta_own ta_other member viewer key none expired
    {"POST /admin/keys",                            "AAFAFUUU"},
    {"GET /admin/keys",                             "AAAAAUUU"},
    {"GET /admin/keys/{id}",                        "AAFAAUUU"},
    {"PATCH /admin/keys/{id}",                      "AAFAFUUU"},
    {"DELETE /admin/keys/{id}",                     "AAFAFUUU"},
    {"GET /admin/usage",                            "AAAAAUUU"},
    {"GET /admin/health",                           "AFFFFUUU"},
    {"GET /admin/log",                              "AFFFFUUU"},
    {"POST /admin/reload",                          "AFFFFUUU"},
    {"GET /admin/teams",                            "AAAFFUUU"},
    {"POST /admin/teams",                           "AFFFFUUU"},
    {"PATCH /admin/teams/{name}",                   "AFFFFUUU"},
    {"DELETE /admin/teams/{name}",                  "AFFFFUUU"},
    {"GET /admin/users",                            "AAAFFUUU"},
    {"PATCH /admin/users/{id}",                     "AAFFFUUU"},
    {"GET /admin/audit",                            "AAAFFUUU"},
    {"GET /context/workspaces",                     "AAAAAAUU"},
    {"POST /context/chats",                         "AAAAFAUU"},
    {"GET /context/chats",                          "AAAAAAUU"},
    {"GET /context/chats/{id}",                     "AAAAAAUU"},
    {"GET /context/chats/{id}/messages",            "AAAAAAUU"},
    {"DELETE /context/chats/{id}",                  "AAAAFAUU"},
    {"PATCH /context/chats/{id}",                   "AAAAFAUU"},
    {"POST /context/chats/{id}/messages",           "AAAAFAUU"},
    {"PUT /context/chats/{id}/document",            "AAAAFAUU"},
    {"GET /context/chats/{id}/document",            "AAAAAAUU"},
    {"GET /context/chats/{id}/sessions",            "AAAAAAUU"},
    {"GET /context/sessions/{id}",                  "AAAAAAUU"},
    {"POST /context/sessions/{id}/accept",          "AAAAFAUU"},
    {"POST /context/sessions/{id}/reject",          "AAAAFAUU"},
    {"GET /context/runs/{id}",                      "AAAAAAUU"},
    {"GET /context/runs/{id}/calls/{call_id}",      "AAAAAAUU"},
    {"GET /context/runs/{id}/events",               "AAAAAAUU"},
    {"POST /context/runs/{id}/cancel",              "AAAAFAUU"},
    {"POST /context/runs/{id}/undo",                "AAAAFAUU"},
    {"POST /context/runs/{id}/approvals/{call_id}", "AAAAFAUU"},
    {"GET /context/workflows",                      "AAAAAAUU"},
    {"GET /context/workflows/categories",           "AAAAAAUU"},
    {"GET /context/workflows/{id}",                 "AAAAAAUU"},
    {"POST /context/workflows/{id}/runs",           "AAAAFAUU"},
    {"GET /context/mcp/servers",                    "AAAAAAUU"},
    {"POST /context/mcp/servers/{name}/refresh",    "AAAAFAUU"},
};
// clang-format on

// The /admin and /context routes of the route tables, "METHOD /path", read from the source.
std::set<std::string> routes_in_source() {
    std::ifstream file(CONTEXTGATE_SOURCE_DIR "/gateway/app/server.cpp");
    std::stringstream text;
    text << file.rdbuf();
    std::string source = text.str();
    std::regex row(R"re(\{"(GET|POST|PUT|PATCH|DELETE|HEAD)",\s+"(/(?:admin|context)[^"]*)")re");
    std::set<std::string> out;
    for (std::sregex_iterator it(source.begin(), source.end(), row), end; it != end; ++it)
        out.insert((*it)[1].str() + " " + (*it)[2].str());
    return out;
}

// People sign in on `c`: through a provider never asked here (the sessions are made in the store).
void signs_in(config::gateway_config& c) {
    c.auth.oidc.issuer = "http://127.0.0.1:9/idp";
    c.auth.oidc.client_id = "contextgate";
    c.auth.oidc.redirect_url = "http://127.0.0.1:9/auth/callback";
}

// A signed-in person: a user in the store and a session whose cookie the tests send.
struct person {
    std::string id;
    std::string cookie;
    std::string csrf;
};

struct roles_gateway {
    fake_upstream fake;
    std::optional<running_gateway> gw;
    std::map<column, person> people;
    std::string blue_member;
    int made = 0;

    // With a context API key and sign-in unless told otherwise.
    explicit roles_gateway(bool context_keys = true, bool sign_in = true) {
        auto c = make_config(fake);
        c.admin.api_key = admin_key;
        if (context_keys) c.context.api_keys = {context_key};
        if (sign_in) signs_in(c);
        for (const char* name : {"red", "blue"}) {
            config::team_config t;
            t.name = name;
            c.teams.push_back(t);
        }
        // The people sign in before the gateway starts: their users and sessions go straight
        // into its store.
        {
            auto opened = store::sqlite_store::open(c.context.data_dir + "/contextgate.db");
            BOOST_TEST_REQUIRE(static_cast<bool>(opened), opened.error);
            auto& db = **opened.value;
            auto now = gateway::now_ms();
            auto add = [&](const std::string& name, const std::string& role,
                           const std::string& team, std::int64_t expires_at) {
                store::user_sign_in who{"https://idp.test",
                                        "sub-" + name,
                                        name + "@example.com",
                                        name,
                                        role,
                                        team,
                                        "member"};
                auto user = gateway::io::run_blocking(db.sign_in_user(who));
                person p{user.id, "session-" + name + "-0123456789abcdef", "csrf-" + name};
                gateway::io::run_blocking(db.start_user_session(
                    {config::key_digest(p.cookie), user.id, p.csrf, now, now, expires_at}));
                return p;
            };
            auto later = now + 3'600'000;
            people[admin] = add("alice", "admin", "", later);
            people[ta_own] = add("tom", "team_admin", "red", later);
            people[ta_other] = people[ta_own];
            people[member] = add("mary", "member", "red", later);
            people[viewer] = add("victor", "viewer", "red", later);
            people[expired] = add("eve", "member", "red", now - 1);
            blue_member = add("bob", "member", "blue", later).id;
        }
        gw.emplace(c);
    }

    std::string credentials(column who, std::string_view method) const {
        if (who == nobody) return "";
        if (who == key) return "Authorization: Bearer " + context_key + "\r\n";
        const auto& p = people.at(who);
        std::string out = "Cookie: contextgate_session=" + p.cookie + "\r\n";
        if (method != "GET") out += "X-CSRF-Token: " + p.csrf + "\r\n";
        return out;
    }

    response as_admin_key(std::string_view method, std::string_view path, const json::value& body) {
        client c(gw->port());
        return c.request(make_request(method, path, json::serialize(body),
                                      admin_header + "Content-Type: application/json\r\n"));
    }

    // A new key owned by `owner` ({"team": ...} or {"user": ...}), made with the admin key.
    std::string new_key(json::object owner) {
        owner["name"] = "k" + std::to_string(++made);
        auto r = as_admin_key("POST", "/admin/keys", owner);
        BOOST_TEST_REQUIRE(r.status == 201u, r.body);
        return std::string(json::parse(r.body).at("id").as_string());
    }

    // The path and body `who` sends to `route`: objects of their own team (or their own), or
    // another team's for ta_other.
    std::pair<std::string, std::string> request_for(const std::string& method,
                                                    const std::string& route, column who) {
        bool other = who == ta_other;
        std::string path = route;
        auto fill = [&](std::string_view param, const std::string& value) {
            if (auto at = path.find(param); at != std::string::npos)
                path.replace(at, param.size(), value);
        };
        if (route.starts_with("/admin/keys/")) {
            json::object owner;
            if (who == member || who == viewer)
                owner["user"] = people.at(who).id;
            else
                owner["team"] = other ? "blue" : "red";
            fill("{id}", new_key(owner));
        }
        fill("{name}", route.starts_with("/admin/") ? (other ? "blue" : "red") : "nothing");
        fill("{id}", route.starts_with("/admin/users/") ? (other ? blue_member : people[member].id)
                                                        : "nothing");
        fill("{call_id}", "nothing");
        std::string body;
        if (method != "GET") body = "{}";
        if (method == "POST" && route == "/admin/keys") {
            json::object b{{"name", "made" + std::to_string(++made)}};
            if (who != member && who != viewer) b["team"] = other ? "blue" : "red";
            body = json::serialize(b);
        }
        if (route == "/admin/keys/{id}" && method == "PATCH") body = R"({"rpm":5})";
        if (route == "/admin/teams" && method == "POST")
            body = R"({"name":"t)" + std::to_string(++made) + "\"}";
        if (route == "/admin/users/{id}") body = R"({"role":"member"})";
        if (route == "/admin/reload") body = "";
        return {path, body};
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(roles)

BOOST_AUTO_TEST_CASE(every_endpoint_answers_each_caller_as_the_table_says) {
    auto routes = routes_in_source();
    BOOST_TEST_REQUIRE(routes.size() > 30u);
    for (const auto& r : routes)
        BOOST_TEST(expected.contains(r), r << " has no row in the role table: say who may call it");
    for (const auto& [r, _] : expected)
        BOOST_TEST(routes.contains(r), r << " is in the role table but in no route table");

    roles_gateway g;
    for (const auto& route : routes) {
        if (!expected.contains(route)) continue;
        auto space = route.find(' ');
        auto method = route.substr(0, space);
        auto pattern = route.substr(space + 1);
        const auto& row = expected.at(route);
        for (int col = 0; col < columns; ++col) {
            auto who = static_cast<column>(col);
            // The MCP hub's refresh never answers on a gateway with no MCP server (its io_context
            // does not run): only its refusals are asked here.
            if (pattern == "/context/mcp/servers/{name}/refresh" && row[col] == 'A') continue;
            auto [path, body] = g.request_for(method, pattern, who);
            std::string headers = g.credentials(who, method);
            if (!body.empty()) headers += "Content-Type: application/json\r\n";
            // Only the head: some answers are event streams that stay open.
            client c(g.gw->port());
            c.send(make_request(method, path, body, headers));
            response r;
            BOOST_TEST_REQUIRE(c.read_header(r), route << " as " << column_names[col]);
            auto got = r.status == 401 ? 'U' : r.status == 403 ? 'F' : 'A';
            BOOST_TEST(got == row[col], route << " as " << column_names[col] << ": " << r.status
                                              << ", expected " << row[col]);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_refusal_names_the_role) {
    roles_gateway g;
    client c(g.gw->port());
    auto r = c.request(make_request("GET", "/admin/health", "", g.credentials(member, "GET")));
    BOOST_TEST(r.status == 403u);
    BOOST_TEST(r.body.find("`member`") != std::string::npos, r.body);
    auto key = g.new_key({{"team", "blue"}});
    client d(g.gw->port());
    auto other =
        d.request(make_request("GET", "/admin/keys/" + key, "", g.credentials(ta_own, "GET")));
    BOOST_TEST(other.status == 403u);
    BOOST_TEST(other.body.find("team_admin") != std::string::npos, other.body);
    BOOST_TEST(other.body.find("red") != std::string::npos, other.body);
}

BOOST_AUTO_TEST_CASE(lists_hold_only_what_the_caller_may_see) {
    roles_gateway g;
    auto red = g.new_key({{"team", "red"}});
    auto blue = g.new_key({{"team", "blue"}});
    auto marys = g.new_key({{"user", g.people[member].id}});
    auto ids = [&](column who) {
        client c(g.gw->port());
        auto r = c.request(make_request("GET", "/admin/keys", "", g.credentials(who, "GET")));
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        std::set<std::string> out;
        auto listed = json::parse(r.body);
        for (const auto& k : listed.at("data").as_array())
            out.insert(std::string(k.at("id").as_string()));
        return out;
    };
    BOOST_TEST((ids(admin) == std::set<std::string>{red, blue, marys}));
    // A team admin sees their team's keys and their members' own.
    BOOST_TEST((ids(ta_own) == std::set<std::string>{red, marys}));
    BOOST_TEST((ids(member) == std::set<std::string>{marys}));
    BOOST_TEST(ids(viewer).empty());
    // A member's new key is their own, whatever they name.
    client c(g.gw->port());
    auto made = c.request(
        make_request("POST", "/admin/keys", R"({"name":"marys-2"})",
                     g.credentials(member, "POST") + "Content-Type: application/json\r\n"));
    BOOST_TEST_REQUIRE(made.status == 201u, made.body);
    BOOST_TEST(json::parse(made.body).at("user").as_string() == g.people[member].id);
    // A team admin may not make a member an admin.
    client d(g.gw->port());
    auto promoted = d.request(
        make_request("PATCH", "/admin/users/" + g.people[member].id, R"({"role":"admin"})",
                     g.credentials(ta_own, "PATCH") + "Content-Type: application/json\r\n"));
    BOOST_TEST(promoted.status == 403u, promoted.body);
}

// What `who` hears asking for a new chat.
unsigned new_chat_status(roles_gateway& g, column who) {
    client c(g.gw->port());
    auto headers = g.credentials(who, "POST") + "Content-Type: application/json\r\n";
    return c.request(make_request("POST", "/context/chats", R"({"model":"gpt-4o"})", headers))
        .status;
}

BOOST_AUTO_TEST_CASE(the_context_api_is_closed_to_nobody_once_people_sign_in) {
    // No context.api_keys: without sign-in this gateway would be open to whoever reaches it.
    roles_gateway g(false);
    BOOST_TEST(new_chat_status(g, nobody) == 401u);
    BOOST_TEST(new_chat_status(g, expired) == 401u);
    client c(g.gw->port());
    BOOST_TEST(c.request(make_request("GET", "/context/chats", "", "")).status == 401u);
    BOOST_TEST(new_chat_status(g, member) == 201u);
    BOOST_TEST(new_chat_status(g, viewer) == 403u);
    // The prompts a new chat picks from, under /v1, likewise.
    client p(g.gw->port());
    BOOST_TEST(p.request(make_request("GET", "/v1/system-prompts", "", "")).status == 401u);
    client q(g.gw->port());
    auto listed =
        q.request(make_request("GET", "/v1/system-prompts", "", g.credentials(viewer, "GET")));
    BOOST_TEST(listed.status == 200u, listed.body);
    // The operators' automation still may.
    auto made = g.as_admin_key("POST", "/context/chats", json::object{{"model", "gpt-4o"}});
    BOOST_TEST(made.status == 201u, made.body);
}

BOOST_AUTO_TEST_CASE(without_keys_or_sign_in_the_context_api_stays_open) {
    // A single user's gateway: nobody to tell apart.
    roles_gateway g(false, false);
    BOOST_TEST(new_chat_status(g, nobody) == 201u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_roles_test
