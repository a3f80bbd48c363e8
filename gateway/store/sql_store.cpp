// sql_store: its threads, and chats with their messages and document.
#include "gateway/store/sql_store.hpp"

#include "gateway/store/record_rows.hpp"

#include <algorithm>
#include <limits>

namespace gateway::store {

namespace {

// Every query is a literal (its address keys each connection's statement cache), written once
// for both databases: `$1` parameters, {ord} and {lock} as sql_driver.hpp's dialect table says.
constexpr const char* select_chat = "SELECT " CHAT_COLUMNS " FROM chats WHERE id = $1";
constexpr const char* select_chats = "SELECT " CHAT_COLUMNS " FROM chats ORDER BY created_at, id";
constexpr const char* update_chat_sql =
    "UPDATE chats SET edits = COALESCE($2, edits), title = COALESCE($3, title) WHERE id = $1";
constexpr const char* delete_chat_sql = "DELETE FROM chats WHERE id = $1";

constexpr const char* select_message_page = "SELECT " MESSAGE_COLUMNS
                                            " FROM messages WHERE chat_id = $1 AND id < $2 "
                                            "ORDER BY id DESC LIMIT $3";
constexpr const char* select_message_sizes =
    "SELECT id, octet_length(content) FROM messages WHERE chat_id = $1 ORDER BY id DESC";
constexpr const char* select_messages_from =
    "SELECT " MESSAGE_COLUMNS " FROM messages WHERE chat_id = $1 AND id >= $2 ORDER BY id";

constexpr const char* select_document =
    "SELECT chat_id, name, content, version, updated_at FROM documents WHERE chat_id = $1";
constexpr const char* select_document_version =
    "SELECT version FROM documents WHERE chat_id = $1{lock}";
constexpr const char* upsert_document =
    "INSERT INTO documents (chat_id, name, content, version, updated_at) "
    "VALUES ($1, $2, $3, 1, $4) ON CONFLICT (chat_id) DO UPDATE SET name = $2, content = $3, "
    "version = documents.version + 1, updated_at = $4 RETURNING version";

}  // namespace

sql_store::sql_store(std::unique_ptr<sql_connection> writer, std::unique_ptr<sql_connection> reader,
                     std::string owner, config::duration lease)
    : owner_(std::move(owner)), lease_(lease) {
    writer_.start(std::move(writer), "store-write");
    reader_.start(std::move(reader), "store-read");
}

sql_store::~sql_store() {
    writer_.stop();
    reader_.stop();
}

int sql_store::schema_version() {
    // Used at start and in tests: a direct read on the writer's connection before it is busy.
    return writer_.database().schema_version();
}

std::int64_t sql_store::lease_end() const {
    // Renewed every quarter of the timeout (see run_registry), a lease outlives three missed
    // renewals; a dead replica's runs are claimed within the timeout.
    return now_ms() + lease_.count() * 3 / 4;
}

net::awaitable<void> sql_store::insert_chat(chat_record chat) {
    write_batch batch;
    batch.chats.push_back(std::move(chat));
    co_await commit(std::move(batch));
}

net::awaitable<std::optional<chat_record>> sql_store::chat(std::string id) {
    return read_one(select_chat, chat_from, std::move(id));
}

net::awaitable<std::vector<chat_record>> sql_store::chats() {
    return read_all(select_chats, chat_from);
}

net::awaitable<bool> sql_store::delete_chat(std::string id) {
    return write_changes(delete_chat_sql, std::move(id));
}

net::awaitable<message_page> sql_store::messages(std::string chat_id, std::int64_t before_id,
                                                 std::size_t limit) {
    auto work = [chat_id = std::move(chat_id), before_id, limit](sql_connection& db) {
        message_page page;
        auto before = before_id > 0 ? before_id : std::numeric_limits<std::int64_t>::max();
        page.messages = all_rows(
            db.query(select_message_page, {chat_id, before, static_cast<std::int64_t>(limit) + 1}),
            message_from);
        page.older = page.messages.size() > limit;
        if (page.older) page.messages.pop_back();
        std::reverse(page.messages.begin(), page.messages.end());
        return page;
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<recent_history> sql_store::recent_messages(std::string chat_id,
                                                          std::size_t max_bytes) {
    auto work = [chat_id = std::move(chat_id), max_bytes](sql_connection& db) {
        history_budget budget(max_bytes);
        auto sizes = db.query(select_message_sizes, {chat_id});
        for (std::size_t i = 0; i < sizes.size(); ++i)
            budget.add(sizes.integer(i, 0), static_cast<std::size_t>(sizes.integer(i, 1)));
        recent_history history;
        history.left_out = budget.left_out();
        history.messages =
            all_rows(db.query(select_messages_from, {chat_id, budget.first_kept()}), message_from);
        return history;
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<bool> sql_store::update_chat(std::string chat_id, chat_changes changes) {
    std::optional<std::string> edits;
    if (changes.edits) edits = std::string(edit_mode_name(*changes.edits));
    return write_changes(update_chat_sql, std::move(chat_id), std::move(edits), changes.title);
}

net::awaitable<std::optional<document_record>> sql_store::document(std::string chat_id) {
    return read_one(select_document, document_from, std::move(chat_id));
}

net::awaitable<document_write> sql_store::put_document(std::string chat_id, std::string name,
                                                       std::string content,
                                                       std::optional<std::int64_t> base) {
    auto work = [chat_id = std::move(chat_id), name = std::move(name), content = std::move(content),
                 base](sql_connection& db) {
        document_write result;
        db.transaction([&] {
            auto current = db.query(select_document_version, {chat_id});
            std::int64_t version = current.empty() ? 0 : current.integer(0, 0);
            if (base && *base != version) {
                result = {version, true};
                return;
            }
            auto written = db.query(upsert_document, {chat_id, name, content, now_ms()});
            result = {written.integer(0, 0), false};
        });
        return result;
    };
    auto result = co_await write(std::move(work));
    co_return result;
}

}  // namespace gateway::store
