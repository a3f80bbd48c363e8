#include "gateway/record_status.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

namespace record_status_test {

using namespace gateway;

BOOST_AUTO_TEST_SUITE(record_status_suite)

// Each status's name reads back as that status, the names are the ones the API and the stored
// rows have always used, and any other text (a case changed, a blank, another record's status)
// is refused.
BOOST_AUTO_TEST_CASE(run_statuses_round_trip_by_name) {
    const std::pair<run_status, std::string> all[] = {
        {run_status::running, "running"},
        {run_status::awaiting_approval, "awaiting_approval"},
        {run_status::completed, "completed"},
        {run_status::failed, "failed"},
        {run_status::cancelled, "cancelled"}};
    for (const auto& [status, name] : all) {
        BOOST_TEST(status_name(status) == name);
        BOOST_TEST((parse_run_status(name) == status));
    }
    for (auto other : {"", "Running", "running ", "done", "open", "succeeded"})
        BOOST_TEST(!parse_run_status(other), other);
}

BOOST_AUTO_TEST_CASE(tool_call_statuses_round_trip_by_name) {
    const std::pair<tool_call_status, std::string> all[] = {
        {tool_call_status::pending, "pending"},
        {tool_call_status::awaiting_approval, "awaiting_approval"},
        {tool_call_status::approved, "approved"},
        {tool_call_status::rejected, "rejected"},
        {tool_call_status::executing, "executing"},
        {tool_call_status::done, "done"},
        {tool_call_status::failed, "failed"},
        {tool_call_status::cancelled, "cancelled"},
        {tool_call_status::expired, "expired"}};
    for (const auto& [status, name] : all) {
        BOOST_TEST(status_name(status) == name);
        BOOST_TEST((parse_tool_call_status(name) == status));
    }
    for (auto other : {"", "DONE", "running", "completed", "open"})
        BOOST_TEST(!parse_tool_call_status(other), other);
}

BOOST_AUTO_TEST_CASE(edit_session_statuses_round_trip_by_name) {
    const std::pair<edit_session_status, std::string> all[] = {
        {edit_session_status::open, "open"},
        {edit_session_status::accepted, "accepted"},
        {edit_session_status::rejected, "rejected"}};
    for (const auto& [status, name] : all) {
        BOOST_TEST(status_name(status) == name);
        BOOST_TEST((parse_edit_session_status(name) == status));
    }
    for (auto other : {"", "Open", "closed", "done", "pending"})
        BOOST_TEST(!parse_edit_session_status(other), other);
}

BOOST_AUTO_TEST_CASE(completed_failed_and_cancelled_runs_are_final) {
    BOOST_TEST(!is_final(run_status::running));
    BOOST_TEST(!is_final(run_status::awaiting_approval));
    BOOST_TEST(is_final(run_status::completed));
    BOOST_TEST(is_final(run_status::failed));
    BOOST_TEST(is_final(run_status::cancelled));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace record_status_test
