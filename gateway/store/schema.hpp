#pragma once

#include "gateway/store/sql_driver.hpp"

namespace gateway::store {

// The store's schema, one versioned migrations list for SQLite and PostgreSQL (schema.cpp).

// The schema version this build migrates to.
int latest_schema_version();

// Brings `db` to the latest version, in one transaction (under the schema's lock, so replicas
// starting together migrate once). Throws store_error when the database is newer than this build.
void migrate(sql_connection& db);

}  // namespace gateway::store
