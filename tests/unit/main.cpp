#define BOOST_TEST_MODULE contextgate unit tests
#include <boost/test/unit_test.hpp>
