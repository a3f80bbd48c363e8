// Chats belong to the signed-in user who made them: a member sees and acts on their own, a team
// admin on their own and their team members', an admin and the admin key on all. Another's chat,
// its runs, events, approvals and edit sessions are 404, as if they were not there.
#include "tests/integration/context_fixture.hpp"

#include "gateway/clock.hpp"
#include "gateway/config/config.hpp"
#include "gateway/io/offload.hpp"
#include "gateway/store/sqlite_store.hpp"

#include <map>
#include <set>

namespace integration_chat_owners_test {

using namespace gateway::testing;
namespace config = gateway::config;
namespace store = gateway::store;

namespace {

const std::string admin_key = "admin-key-0123456789";

struct person {
    std::string id;
    std::string headers;  // the session's cookie and CSRF token
};

// mary and mark in team red, red's team admin tom, blue's team admin tina and the admin alice,
// signed in before the gateway starts (their users and sessions straight into its store), on a
// gateway where people sign in and no context API key is configured.
std::map<std::string, person> sign_people_in(config::gateway_config& c) {
    c.admin.api_key = admin_key;
    c.auth.oidc.issuer = "http://127.0.0.1:9/idp";
    c.auth.oidc.client_id = "contextgate";
    c.auth.oidc.redirect_url = "http://127.0.0.1:9/auth/callback";
    auto opened = store::sqlite_store::open(c.context.data_dir + "/contextgate.db");
    BOOST_TEST_REQUIRE(static_cast<bool>(opened), opened.error);
    auto& db = **opened.value;
    auto now = gateway::now_ms();
    std::map<std::string, person> people;
    for (auto [name, role, team] : {std::tuple{"mary", "member", "red"},
                                    {"mark", "member", "red"},
                                    {"tom", "team_admin", "red"},
                                    {"tina", "team_admin", "blue"},
                                    {"alice", "admin", ""}}) {
        std::string n = name;
        store::user_sign_in who{
            "https://idp.test", "sub-" + n, n + "@example.com", n, role, team, "member"};
        auto user = gateway::io::run_blocking(db.sign_in_user(who));
        auto cookie = "session-" + n + "-0123456789abcdef";
        auto csrf = "csrf-" + n;
        gateway::io::run_blocking(db.start_user_session(
            {config::key_digest(cookie), user.id, csrf, now, now, now + 3'600'000}));
        people[n] = {user.id, "Cookie: contextgate_session=" + cookie +
                                  "\r\nX-CSRF-Token: " + csrf + "\r\n"};
    }
    return people;
}

std::set<std::string> chat_ids(context_fixture& f) {
    auto [r, j] = f.send("GET", "/context/chats");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    std::set<std::string> out;
    for (const auto& c : j.at("data").as_array()) out.insert(std::string(c.at("id").as_string()));
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(chat_owners)

BOOST_AUTO_TEST_CASE(another_members_chat_is_not_there_for_a_member) {
    std::map<std::string, person> people;
    context_fixture f([&](config::gateway_config& c) { people = sign_people_in(c); });
    auto as = [&](const std::string& who) {
        f.auth_header = who == "admin key" ? "Authorization: Bearer " + admin_key + "\r\n"
                                           : people.at(who).headers;
    };
    as("mary");
    f.fake.script(
        {{call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         {"Fixed."}});
    auto marys = f.create_chat();
    auto run = f.start(marys, "fix the typo");
    auto approval = f.wait_for(run, "approval.required");
    auto call_id = std::string(approval.data.at("call_id").as_string());
    as("mark");
    auto theirs = f.create_chat();

    // mark, in mary's team: none of hers is there, whatever he asks.
    BOOST_TEST((chat_ids(f) == std::set<std::string>{theirs}));
    auto chat_path = "/context/chats/" + marys;
    auto run_path = "/context/runs/" + run;
    for (auto [method, path] : {std::pair<std::string, std::string>{"GET", chat_path},
                                {"GET", chat_path + "/messages"},
                                {"GET", chat_path + "/document"},
                                {"GET", chat_path + "/sessions"},
                                {"GET", run_path},
                                {"GET", run_path + "/events"},
                                {"GET", run_path + "/calls/" + call_id},
                                {"POST", run_path + "/cancel"},
                                {"DELETE", chat_path}}) {
        auto [r, j] = f.send(method, path);
        BOOST_TEST(r.status == 404u, method << " " << path << ": " << r.body);
    }
    auto [message, _] =
        f.send("POST", chat_path + "/messages", json::object{{"content", "and another"}});
    BOOST_TEST(message.status == 404u, message.body);
    BOOST_TEST(message.body.find("No chat " + marys) != std::string::npos, message.body);
    auto [patched, _2] = f.send("PATCH", chat_path, json::object{{"title", "mine now"}});
    BOOST_TEST(patched.status == 404u, patched.body);
    auto [document, _3] =
        f.send("PUT", chat_path + "/document", json::object{{"name", "n"}, {"content", "c"}});
    BOOST_TEST(document.status == 404u, document.body);
    auto [workflow, _4] = f.send("POST", "/context/workflows/explain_file/runs",
                                 json::object{{"chat_id", marys}, {"input", "README.md"}});
    BOOST_TEST(workflow.status == 404u, workflow.body);
    BOOST_TEST(f.approve(run, call_id).status == 404u);

    // Red's team admin sees both of his members' chats and follows their runs; mark's refused
    // approval did not take.
    as("tom");
    BOOST_TEST((chat_ids(f) == std::set<std::string>{marys, theirs}));
    BOOST_TEST(f.run_state(run).at("status").as_string() == "awaiting_approval");
    BOOST_TEST(f.send("GET", chat_path).first.status == 200u);
    // Blue's does not.
    as("tina");
    BOOST_TEST(chat_ids(f).empty());
    BOOST_TEST(f.send("GET", chat_path).first.status == 404u);
    BOOST_TEST(f.send("GET", run_path).first.status == 404u);
    // The admins see every chat.
    for (const char* who : {"alice", "admin key"}) {
        as(who);
        BOOST_TEST((chat_ids(f) == std::set<std::string>{marys, theirs}), who);
    }
    // mary still acts on her own: her approval ends the run, its events hers to read.
    as("mary");
    auto decided = f.approve(run, call_id);
    BOOST_TEST(decided.status == 200u, decided.body);
    BOOST_TEST(f.events(run).back().type == "run.completed");
    BOOST_TEST((chat_ids(f) == std::set<std::string>{marys}));
}

// A chat made with a key is nobody's: signed-in members do not see it, the keys' holders do.
BOOST_AUTO_TEST_CASE(a_chat_made_with_a_key_is_for_the_keys_holders) {
    std::map<std::string, person> people;
    context_fixture f([&](config::gateway_config& c) {
        people = sign_people_in(c);
        c.context.api_keys = {"context-key-0123456789"};
    });
    f.auth_header = "Authorization: Bearer context-key-0123456789\r\n";
    auto keys = f.create_chat();
    f.auth_header = people.at("mary").headers;
    auto marys = f.create_chat();
    BOOST_TEST((chat_ids(f) == std::set<std::string>{marys}));
    BOOST_TEST(f.send("GET", "/context/chats/" + keys).first.status == 404u);
    f.auth_header = "Authorization: Bearer context-key-0123456789\r\n";
    BOOST_TEST((chat_ids(f) == std::set<std::string>{keys, marys}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_chat_owners_test
