#include "gateway/passthrough/client.hpp"

#include "gateway/error.hpp"

#include <boost/test/unit_test.hpp>

namespace passthrough_client_test {

BOOST_AUTO_TEST_SUITE(passthrough_client)

// The answer a request stopped by the end of the drain gets says why and what to do.
BOOST_AUTO_TEST_CASE(a_request_stopped_by_the_drain_is_told_to_come_again) {
    auto stopped = gateway::passthrough::stopped_by_shutdown();
    BOOST_TEST((stopped.ec == gateway::errc::shutting_down));
    BOOST_TEST(stopped.detail.find("send it again") != std::string::npos);
    auto [status, body] = gateway::to_error_response(stopped.ec, stopped.detail);
    BOOST_TEST(status == 503u);
    BOOST_TEST(body.find("\"code\":\"shutting_down\"") != std::string::npos, body);
}

// A request's state leaves its handler's list of requests in flight when it ends.
BOOST_AUTO_TEST_CASE(a_request_leaves_the_list_in_flight_when_it_ends) {
    boost::intrusive::list<gateway::passthrough::exchange_state,
                           boost::intrusive::constant_time_size<false>>
        in_flight;
    {
        gateway::passthrough::exchange_state first, second;
        in_flight.push_front(first);
        in_flight.push_front(second);
        BOOST_TEST(!in_flight.empty());
    }
    BOOST_TEST(in_flight.empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace passthrough_client_test
