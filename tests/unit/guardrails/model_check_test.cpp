#include "gateway/guardrails/model_check.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

namespace guardrails_model_check_test {

using namespace gateway::guardrails;

BOOST_AUTO_TEST_SUITE(guardrails_model_check)

// The model's word is read strictly: anything but allow or block is no verdict, so that `fail`
// decides rather than a guess at what a chatty model meant.
BOOST_AUTO_TEST_CASE(only_allow_or_block_is_a_verdict) {
    BOOST_TEST((read_model_verdict("allow") == webhook_answer::action::allow));
    BOOST_TEST((read_model_verdict("BLOCK") == webhook_answer::action::block));
    BOOST_TEST((read_model_verdict("  Block.\n") == webhook_answer::action::block));
    BOOST_TEST((read_model_verdict("Allow.") == webhook_answer::action::allow));
    BOOST_TEST(!read_model_verdict(""));
    BOOST_TEST(!read_model_verdict("."));
    BOOST_TEST(!read_model_verdict("allowed"));
    BOOST_TEST(!read_model_verdict("block it"));
    BOOST_TEST(!read_model_verdict("I would allow this"));
    BOOST_TEST(!read_model_verdict("allow or block"));
    BOOST_TEST(!read_model_verdict("\"allow\""));
    BOOST_TEST(!read_model_verdict("allow.."));
    BOOST_TEST(!read_model_verdict("mask"));
}

// No model calls in this process: `fail` decides, and says why.
BOOST_AUTO_TEST_CASE(without_a_model_caller_fail_decides) {
    gateway::config::guardrail_config g;
    g.name = "moderation";
    g.model_check.emplace();
    g.model_check->model = "gpt-4o-mini";
    g.model_check->fail_open = false;
    boost::asio::io_context io;
    webhook_answer got;
    boost::asio::co_spawn(
        io, [&]() -> boost::asio::awaitable<void> { got = co_await ask_model(nullptr, g, "hi"); },
        boost::asio::detached);
    io.run();
    BOOST_TEST(!got.answered);
    BOOST_TEST((got.what == webhook_answer::action::block));
    BOOST_TEST(got.reason.find("`moderation`") != std::string::npos, got.reason);
    BOOST_TEST(got.reason.find("fail closed") != std::string::npos, got.reason);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace guardrails_model_check_test
