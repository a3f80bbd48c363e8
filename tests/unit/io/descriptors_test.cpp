#include "gateway/io/descriptors.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace io_descriptors_test {

BOOST_AUTO_TEST_SUITE(descriptors)

BOOST_AUTO_TEST_CASE(the_table_is_grown_once_and_the_soft_limit_raised_to_the_hard_one) {
    rlimit before{};
    BOOST_REQUIRE_EQUAL(::getrlimit(RLIMIT_NOFILE, &before), 0);
    constexpr std::size_t wanted = 32768;  // beyond anything this test process opened before

    auto room = gateway::io::reserve_descriptors(wanted);

    rlimit after{};
    BOOST_REQUIRE_EQUAL(::getrlimit(RLIMIT_NOFILE, &after), 0);
    BOOST_TEST(after.rlim_cur == before.rlim_max);
    if (before.rlim_cur < before.rlim_max) BOOST_TEST(room.raised_from == before.rlim_cur);
    auto expected = std::min<std::size_t>(after.rlim_cur, wanted);
    BOOST_TEST(room.table >= expected);
    BOOST_TEST(gateway::io::descriptor_table_size() == room.table);

    // The room is kept: opening descriptors up to it no longer grows the table, and the
    // reservation left no descriptor open.
    int probe = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, static_cast<int>(expected / 2));
    BOOST_REQUIRE_GE(probe, 0);
    BOOST_TEST(gateway::io::descriptor_table_size() == room.table);
    ::close(probe);
    BOOST_TEST(::fcntl(static_cast<int>(expected - 1), F_GETFD) == -1);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace io_descriptors_test
