#pragma once

#include "gateway/store/pg_database.hpp"

// pg_store's schema: its versioned migrations, applied at open.
namespace gateway::store {

// The PostgreSQL schema version this build migrates to.
int latest_pg_schema_version();

// Brings the schema to the latest version; replicas starting together take turns (the advisory
// lock is held until the transaction ends). Throws store_error, also for a newer schema.
void migrate_pg(pg_database& db);

}  // namespace gateway::store
