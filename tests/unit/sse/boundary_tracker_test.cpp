#include "gateway/sse/boundary_tracker.hpp"

#include <boost/test/unit_test.hpp>

namespace sse_boundary_tracker_test {

using gateway::sse::boundary_tracker;

namespace {

bool at_boundary_after(std::initializer_list<std::string_view> pieces) {
    boundary_tracker t;
    for (auto p : pieces) t.feed(p);
    return t.at_boundary();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sse_boundary_tracker)

BOOST_AUTO_TEST_CASE(boundaries) {
    BOOST_TEST(at_boundary_after({}));
    BOOST_TEST(at_boundary_after({"data: x\n\n"}));
    BOOST_TEST(at_boundary_after({"data: x\r\n\r\n"}));
    BOOST_TEST(at_boundary_after({"data: x\r\r"}));
    BOOST_TEST(at_boundary_after({"data: x\n", "\n"}));
    BOOST_TEST(at_boundary_after({"data: x\r", "\n\r", "\n"}));
    BOOST_TEST(at_boundary_after({": comment\n"}));  // comments dispatch nothing
    BOOST_TEST(at_boundary_after({"data: x\n\n: ping\n"}));
    BOOST_TEST(!at_boundary_after({"data: x"}));    // mid-line
    BOOST_TEST(!at_boundary_after({"data: x\n"}));  // field waiting for dispatch
    BOOST_TEST(!at_boundary_after({"event: a\r\n"}));
    BOOST_TEST(!at_boundary_after({": comm"}));  // mid comment line
    BOOST_TEST(!at_boundary_after({"data: x\n\ndata: y\n"}));
}

BOOST_AUTO_TEST_CASE(agrees_at_every_split_of_a_transcript) {
    std::string text = "event: a\r\ndata: 1\r\n\r\ndata: 2\n\n: hi\ndata: 3\r\r";
    // Reference: at a boundary exactly after these prefix lengths.
    std::vector<bool> expected(text.size() + 1, false);
    for (std::size_t n : {0u, 20u, 21u, 30u, 35u, 44u}) expected[n] = true;
    for (std::size_t n = 0; n <= text.size(); ++n) {
        boundary_tracker bytewise;
        for (std::size_t i = 0; i < n; ++i) bytewise.feed(text.substr(i, 1));
        boundary_tracker whole;
        whole.feed(text.substr(0, n));
        BOOST_TEST(bytewise.at_boundary() == whole.at_boundary(), "prefix " << n);
        BOOST_TEST(whole.at_boundary() == expected[n], "prefix " << n);
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace sse_boundary_tracker_test
