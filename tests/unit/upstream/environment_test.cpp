#include "gateway/upstream/environment.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>

#include <unistd.h>

namespace upstream_environment_test {

BOOST_AUTO_TEST_SUITE(upstream_environment)

// The process's environment as the credential chains read it: a set variable's value (an empty
// one too), nullopt for one that is unset.
BOOST_AUTO_TEST_CASE(the_process_environment_reads_set_and_unset_variables) {
    auto name = "CONTEXTGATE_ENVIRONMENT_TEST_" + std::to_string(::getpid());
    auto env = gateway::upstream::process_environment();
    ::unsetenv(name.c_str());
    BOOST_TEST(!env(name).has_value());
    ::setenv(name.c_str(), "a value", 1);
    BOOST_TEST(env(name).value_or("<unset>") == "a value");
    ::setenv(name.c_str(), "", 1);
    BOOST_TEST(env(name).value_or("<unset>") == "");
    ::unsetenv(name.c_str());
    BOOST_TEST(!env(name).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_environment_test
