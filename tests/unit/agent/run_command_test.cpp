#include "gateway/agent/run_command.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

namespace agent_run_command_test {

namespace json = boost::json;
using namespace gateway;
using namespace gateway::agent;

namespace {

run_command round_trip(const run_command& command) {
    auto text = json::serialize(json::value_from(command));
    auto back = json::try_value_to<run_command>(json::parse(text));
    BOOST_TEST_REQUIRE(!back.has_error(), text);
    return *back;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_commands)

BOOST_AUTO_TEST_CASE(every_command_survives_the_wire) {
    decide_command d{"call_7", {}};
    d.choice.approve = true;
    d.choice.whole_run = true;
    d.choice.feedback = "fine";
    d.choice.parameters = json::object{{"path", "a.txt"}};
    auto decided = std::get<decide_command>(round_trip(d));
    BOOST_TEST(decided.call_id == "call_7");
    BOOST_TEST(decided.choice.approve);
    BOOST_TEST(decided.choice.whole_run);
    BOOST_TEST(decided.choice.feedback == "fine");
    BOOST_TEST(json::serialize(*decided.choice.parameters) == R"({"path":"a.txt"})");

    BOOST_TEST(std::holds_alternative<cancel_command>(round_trip(cancel_command{})));

    auto announced = std::get<announce_command>(
        round_trip(announce_command{"session.resolved", json::object{{"accepted", 2}}}));
    BOOST_TEST(announced.type == "session.resolved");
    BOOST_TEST(announced.data.at("accepted").as_int64() == 2);
    BOOST_TEST(kind_of(announced) == "announce");
}

BOOST_AUTO_TEST_CASE(what_is_not_a_command_is_refused_not_defaulted) {
    for (auto text : {R"({"kind": "undo-everything"})", R"({"call_id": "c"})", R"([1, 2])",
                      R"({"kind": "decide", "approve": true})", R"({"kind": "announce"})"})
        BOOST_TEST(json::try_value_to<run_command>(json::parse(text)).has_error(), text);
}

BOOST_AUTO_TEST_CASE(answers_carry_the_refusal_and_its_code) {
    BOOST_TEST(!answer_of(answer_json(std::nullopt)).has_value());
    auto refused = answer_of(answer_json(refusal{errc::run_ended, "Run r has already ended."}));
    BOOST_TEST_REQUIRE(refused.has_value());
    BOOST_TEST((refused->code == errc::run_ended));
    BOOST_TEST(refused->message == "Run r has already ended.");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_run_command_test
