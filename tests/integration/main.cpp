#define BOOST_TEST_MODULE contextgate integration tests
#include <boost/test/unit_test.hpp>
