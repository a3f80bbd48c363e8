#pragma once

#include <string>

namespace gateway::testing {

// The test cluster's URL (CONTEXTGATE_TEST_PG_URL_FILE names the file tests/support/postgres.sh
// wrote), or "" when the tests run without one; and a URL whose connections use a new, empty
// schema of it.
std::string postgres_test_url();
std::string fresh_postgres_schema();

}  // namespace gateway::testing
