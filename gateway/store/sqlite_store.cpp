#include "gateway/store/sqlite_store.hpp"

#include "gateway/store/sqlite_database.hpp"

namespace gateway::store {

config::parsed<std::unique_ptr<sqlite_store>> sqlite_store::open(const std::string& path) {
    using result = config::parsed<std::unique_ptr<sqlite_store>>;
    auto writer = sqlite_database::open(path, sqlite_database::access::read_write);
    if (!writer) return result::fail(writer.error);
    // Opened after the migrations: the reader sees the current schema.
    auto reader = sqlite_database::open(path, sqlite_database::access::read_only);
    if (!reader) return result::fail(reader.error);
    // One process drives every run: its owner is "", and no lease ever expires into a claim.
    return {std::unique_ptr<sqlite_store>(new sqlite_store(
                std::move(*writer.value), std::move(*reader.value), "", config::duration{0})),
            {}};
}

}  // namespace gateway::store
