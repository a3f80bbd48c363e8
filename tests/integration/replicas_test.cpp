// Replicas sharing one PostgreSQL store: runs watched, approved and cancelled through any
// replica, one live run per chat across them, runs handed over when their replica stops, and
// the store's leases and requests themselves. Runs only with the test cluster (ctest's
// integration_postgres); the SIGKILL takeover is in tests/e2e/replicas.test.mjs.
#include "gateway/io/offload.hpp"
#include "gateway/store/pg_store.hpp"
#include "gateway/store/schema.hpp"
#include "tests/integration/context_fixture.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

namespace integration_replicas_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace store = gateway::store;
using namespace std::chrono_literals;

namespace {

struct with_postgres {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result on(!postgres_test_url().empty());
        on.message() << "no test PostgreSQL (CONTEXTGATE_TEST_PG_URL_FILE); ctest runs these as "
                        "integration_postgres";
        return on;
    }
};

// Sequence numbers 1, 2, 3… with no gap and no repeat.
void check_consecutive(const std::vector<sse_event>& events) {
    for (std::size_t i = 0; i < events.size(); ++i)
        BOOST_TEST(events[i].id == static_cast<std::int64_t>(i + 1),
                   "event " << i << " (" << events[i].type << ") has id " << events[i].id);
}

// A PostgreSQL store on a new, empty schema of the test cluster.
std::unique_ptr<store::pg_store> open_fresh_store() {
    gateway::config::store_config config;
    config.type = gateway::config::store_type::postgres;
    config.dsn = fresh_postgres_schema();
    auto opened = store::pg_store::open(config);
    BOOST_TEST_REQUIRE(bool(opened), opened.error);
    return std::move(*opened.value);
}

// Two gateways on one store: the fixture's (A) and B.
struct two_replicas : context_fixture {
    two_replicas() : b(config) {}
    void use_a() { talk_to = 0; }
    void use_b() { talk_to = b.port(); }
    running_gateway b;
};

std::string fix_typo_script(context_fixture& f) {
    f.fake.script(
        {{call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         {"Fixed."}});
    return f.create_chat();
}

template <class T>
T wait(boost::asio::awaitable<T> work) {
    return gateway::io::run_blocking(std::move(work));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(replicas, *boost::unit_test::precondition(with_postgres()))

BOOST_AUTO_TEST_CASE(a_run_started_on_one_replica_is_watched_and_approved_on_another) {
    two_replicas f;
    auto chat = fix_typo_script(f);
    auto run = f.start(chat, "fix the typo");  // on A
    f.use_b();
    auto approval = f.wait_for(run, "approval.required");  // A's events, read through B
    auto decided = f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST(decided.status == 200u, decided.body);
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(!all.empty());
    BOOST_TEST(all.back().type == "run.completed");
    check_consecutive(all);
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is the readme.\n");
    // Last-Event-ID resumes on either replica with exactly what followed.
    for (auto replica : {0, 1}) {
        replica ? f.use_b() : f.use_a();
        auto rest = f.events(run, {}, approval.id);
        BOOST_TEST_REQUIRE(!rest.empty());
        BOOST_TEST(rest.front().id == approval.id + 1);
        BOOST_TEST(rest.size() == all.size() - static_cast<std::size_t>(approval.id));
    }
    f.use_b();
    // A stale decision is refused by B as the store tells it.
    auto again = f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST(again.status == 409u, again.body);
}

// Read-your-writes across replicas: a decision B answered (the run lives on A) is what the next
// read of the run shows, on B and on A.
BOOST_AUTO_TEST_CASE(a_decision_answered_by_one_replica_is_what_the_next_read_shows) {
    two_replicas f;
    constexpr int calls = 6;
    std::vector<scripted_reply> script;
    for (int i = 0; i < calls; ++i)
        script.push_back(
            {call("append_file", {{"path", "notes.txt"}, {"content", std::to_string(i)}})});
    script.push_back({"Done."});
    f.fake.script(script);
    auto run = f.start(f.create_chat(), "take notes");  // on A
    std::int64_t seen = 0;
    for (int i = 0; i < calls; ++i) {
        f.use_b();
        auto asked = f.events(
            run, [](const sse_event& e) { return e.type == "approval.required"; }, seen);
        BOOST_TEST_REQUIRE(asked.back().type == "approval.required");
        seen = asked.back().id;
        auto call_id = std::string(asked.back().data.at("call_id").as_string());
        auto decided = f.approve(run, call_id);
        BOOST_TEST_REQUIRE(decided.status == 200u, decided.body);
        for (auto replica : {1, 0}) {
            replica ? f.use_b() : f.use_a();
            auto state = f.run_state(run);
            const auto& pending = state.at("pending_approval");
            BOOST_TEST((pending.is_null() || pending.at("id").as_string() != call_id),
                       "call " << i << " still pending on " << (replica ? "B" : "A") << ": "
                               << json::serialize(state));
        }
    }
    f.use_b();
    BOOST_TEST(f.events(run).back().type == "run.completed");
}

BOOST_AUTO_TEST_CASE(one_live_run_per_chat_holds_across_replicas) {
    two_replicas f;
    auto chat = fix_typo_script(f);
    auto run = f.start(chat, "fix the typo");  // on A
    f.wait_for(run, "approval.required");
    f.use_b();  // B has no run of this chat in memory: the database refuses the second one
    auto [r, j] = f.send("POST", "/context/chats/" + chat + "/messages",
                         json::object{{"content", "and another thing"}});
    BOOST_TEST(r.status == 409u, r.body);
    BOOST_TEST(r.body.find("run_in_progress") != std::string::npos, r.body);
}

BOOST_AUTO_TEST_CASE(a_cancel_posted_to_another_replica_stops_the_run) {
    two_replicas f;
    auto chat = fix_typo_script(f);
    auto run = f.start(chat, "fix the typo");
    f.wait_for(run, "approval.required");
    f.use_b();
    auto [r, j] = f.send("POST", "/context/runs/" + run + "/cancel");
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(j.at("status").as_string() == "cancelled", r.body);
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.cancelled");
    check_consecutive(all);
}

BOOST_AUTO_TEST_CASE(a_replica_that_stops_hands_its_runs_to_another) {
    two_replicas f;
    auto chat = fix_typo_script(f);
    auto run = f.start(chat, "fix the typo");
    auto approval = f.wait_for(run, "approval.required");
    f.gateway.reset();  // A stops: its run stays resumable, its lease given up
    f.use_b();
    // B claims it at its next look (a quarter of the lease timeout) and answers for it.
    auto decided = f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST(decided.status == 200u, decided.body);
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    check_consecutive(all);
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is the readme.\n");
}

BOOST_AUTO_TEST_CASE(leases_fence_writes_and_expire_to_the_next_claimer) {
    gateway::config::store_config config;
    config.type = gateway::config::store_type::postgres;
    config.dsn = fresh_postgres_schema();
    config.lease_timeout = 1s;
    auto a = store::pg_store::open(config);
    BOOST_TEST_REQUIRE(bool(a), a.error);
    auto b = store::pg_store::open(config);
    BOOST_TEST_REQUIRE(bool(b), b.error);
    auto& A = **a.value;
    auto& B = **b.value;
    BOOST_TEST(A.schema_version() == store::latest_schema_version());
    BOOST_TEST(A.replica_id() != B.replica_id());

    wait(A.insert_chat({"c1", 1, "coding", "m", "/w", "editor"}));
    store::write_batch start;
    start.runs.push_back({"r1", "c1", gateway::run_status::running, 0, 10, "", "", "{}", 0, 0});
    wait(A.commit(start));
    BOOST_TEST(wait(B.claim_runs()).empty());  // A holds it
    // One unfinished run per chat, whoever asks.
    store::write_batch second;
    second.runs.push_back({"r2", "c1", gateway::run_status::running, 0, 10, "", "", "{}", 0, 0});
    BOOST_CHECK_THROW(wait(B.commit(second)), store::live_run_exists);
    BOOST_TEST(wait(A.renew_leases()) == std::vector<std::string>{"r1"});

    // A stops renewing: once the lease ran out (3/4 of the timeout), B claims the run.
    std::vector<store::run_record> claimed;
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (claimed.empty() && std::chrono::steady_clock::now() < deadline) {
        claimed = wait(B.claim_runs());
        if (claimed.empty()) std::this_thread::sleep_for(50ms);
    }
    BOOST_TEST_REQUIRE(claimed.size() == 1u);
    BOOST_TEST(claimed[0].id == "r1");
    // A's next write of the run is refused, and nothing of that batch is kept.
    store::write_batch late;
    late.runs.push_back(
        {"r1", "c1", gateway::run_status::completed, 1, 10, "late", "", "{}", 0, 0});
    late.events.push_back({"r1", 1, "run.completed", "{}", 0});
    BOOST_CHECK_THROW(wait(A.commit(late)), store::lease_lost);
    BOOST_TEST(wait(A.last_event("r1")) == 0);
    BOOST_TEST(wait(A.renew_leases()).empty());
    BOOST_TEST(wait(B.renew_leases()) == std::vector<std::string>{"r1"});
    // Given up, a lease is claimable at once.
    wait(B.release_leases());
    BOOST_TEST(wait(A.claim_runs()).size() == 1u);
}

BOOST_AUTO_TEST_CASE(requests_are_answered_taken_or_withdrawn) {
    auto owned = open_fresh_store();
    auto& s = *owned;
    auto first = wait(s.post_request({0, "r1", "decide", R"({"approve":true})"}));
    auto second = wait(s.post_request({0, "r1", "cancel", "{}"}));
    wait(s.post_request({0, "r2", "cancel", "{}"}));
    auto pending = wait(s.pending_requests("r1"));
    BOOST_TEST_REQUIRE(pending.size() == 2u);
    BOOST_TEST(pending[0].id == first);
    BOOST_TEST(pending[0].kind == "decide");
    BOOST_TEST(pending[1].id == second);
    BOOST_TEST(!wait(s.take_answer(first)).has_value());  // not answered yet
    wait(s.answer_request(first, "{}"));
    BOOST_TEST(wait(s.pending_requests("r1")).size() == 1u);
    BOOST_TEST(!wait(s.withdraw_request(first)));  // answered: not withdrawn
    BOOST_TEST(wait(s.take_answer(first)).value_or("") == "{}");
    BOOST_TEST(!wait(s.take_answer(first)).has_value());  // taken once
    BOOST_TEST(wait(s.withdraw_request(second)));
    BOOST_TEST(wait(s.pending_requests("r1")).empty());
}

// PostgreSQL's text cannot hold a NUL and libpq would cut the value there: refused instead, as the
// SQLite store does (tests/unit/store), so a chat never silently names another model.
BOOST_AUTO_TEST_CASE(a_text_holding_a_nul_is_refused_not_cut) {
    auto owned = open_fresh_store();
    auto& s = *owned;
    std::string cut("scrip\0ted", 9);
    BOOST_CHECK_THROW(wait(s.insert_chat({"c1", 1, "coding", cut, "/w", "editor"})),
                      store::text_holds_nul);
    BOOST_TEST(!wait(s.chat("c1")).has_value());
    wait(s.insert_chat({"c2", 1, "coding", "scripted", "/w", "editor"}));
    BOOST_TEST(wait(s.chat("c2"))->model == "scripted");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_replicas_test
