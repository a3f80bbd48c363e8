#pragma once

#include "gateway/config/config.hpp"
#include "gateway/store/sql_store.hpp"

#include <memory>
#include <string>

namespace gateway::store {

// The embedded store: one SQLite file in WAL mode, migrated at open (the writer's read-write
// connection) and read through a read-only connection of its own; WAL lets the reader see every
// transaction committed before the read began. One process uses it (the data folder's lock).
class sqlite_store final : public sql_store {
public:
    // Opens or creates the database at `path`, migrates it and starts the threads.
    static config::parsed<std::unique_ptr<sqlite_store>> open(const std::string& path);

private:
    using sql_store::sql_store;
};

}  // namespace gateway::store
