#pragma once

#include "gateway/store/records.hpp"
#include "gateway/store/sql_driver.hpp"
#include "gateway/store/state_store.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// A query's rows as records, for the SQL store's files: one reader per record, each beside the
// column list (*_COLUMNS) that queries select for it, in the order it reads them.
namespace gateway::store {

// Every row through `reader`; the first one, if any.
template <class Reader>
auto all_rows(const sql_rows& rows, Reader reader) {
    std::vector<decltype(reader(rows[0]))> out;
    out.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) out.push_back(reader(rows[i]));
    return out;
}

template <class Reader>
auto one_row(const sql_rows& rows, Reader reader) -> std::optional<decltype(reader(rows[0]))> {
    if (rows.empty()) return std::nullopt;
    return reader(rows[0]);
}

// A one-column row's text.
inline std::string first_text(const sql_row& r) {
    return r.text(0);
}

// A status column read through `parse` (record_status.hpp). A name that is none of the status's
// is a corrupt row (or one a newer build wrote): store_error, never a guess.
template <class Status>
Status status_column(const sql_row& r, int column, std::string_view what,
                     std::optional<Status> (*parse)(std::string_view)) {
    auto name = r.text(column);
    if (auto status = parse(name)) return *status;
    throw store_error("a stored " + std::string(what) + " has the status `" + name +
                      "`, which is none this build knows");
}

#define CHAT_COLUMNS \
    "id, created_at, system_prompt, model, workspace, role, edits, title, owner_user"
inline chat_record chat_from(const sql_row& r) {
    // An edit mode this build does not know (a newer one's) reads as the safe one: approve.
    return {r.text(0),
            r.integer(1),
            r.text(2),
            r.text(3),
            r.text(4),
            r.text(5),
            parse_edit_mode(r.text(6)).value_or(edit_mode::approve),
            r.text(7),
            r.text(8)};
}

#define MESSAGE_COLUMNS "id, chat_id, run_id, role, content, created_at"
inline message_record message_from(const sql_row& r) {
    return {r.integer(0), r.text(1), r.text(2), r.text(3), r.text(4), r.integer(5)};
}

#define CALL_COLUMNS "id, run_id, step, tool, parameters, status, result, created_at, preview"
inline tool_call_record tool_call_from(const sql_row& r) {
    return {r.text(0), r.text(1),    static_cast<int>(r.integer(2)),
            r.text(3), r.text(4),    status_column(r, 5, "tool call", parse_tool_call_status),
            r.text(6), r.integer(7), r.text(8)};
}

#define SESSION_COLUMNS                                                                           \
    "id, chat_id, kind, path, name, status, base_existed, base_snapshot, ai_exists, ai_version, " \
    "revision, edit_count, created_at, updated_at, resolved_at"
inline edit_session_record edit_session_from(const sql_row& r) {
    return {r.text(0),         r.text(1),
            r.text(2),         r.text(3),
            r.text(4),         status_column(r, 5, "edit session", parse_edit_session_status),
            r.integer(6) != 0, r.text(7),
            r.integer(8) != 0, r.text(9),
            r.integer(10),     r.integer(11),
            r.integer(12),     r.integer(13),
            r.integer(14)};
}

#define EDIT_COLUMNS                                                                  \
    "id, session_id, seq, tool, command, parameters, run_id, call_id, diff, result, " \
    "created_at"
inline session_edit_record session_edit_from(const sql_row& r) {
    return {r.text(0), r.text(1), r.integer(2), r.text(3), r.text(4),    r.text(5),
            r.text(6), r.text(7), r.text(8),    r.text(9), r.integer(10)};
}

inline run_status run_status_from(const sql_row& r) {
    return status_column(r, 0, "run", parse_run_status);
}

// A run not final (is_final in record_status.hpp), as a query's condition: the statuses a restart
// resumes. The schema's partial indexes (schema.cpp) are written with the same condition.
#define UNFINISHED_RUN "status IN ('running', 'awaiting_approval')"

#define RUN_COLUMNS \
    "id, chat_id, status, step, max_steps, output, error, state, created_at, updated_at"
inline run_record run_from(const sql_row& r) {
    return {r.text(0),
            r.text(1),
            status_column(r, 2, "run", parse_run_status),
            static_cast<int>(r.integer(3)),
            static_cast<int>(r.integer(4)),
            r.text(5),
            r.text(6),
            r.text(7),
            r.integer(8),
            r.integer(9)};
}

// A usage report's row: what it is per (day, key, model, upstream), then its sums.
inline usage_row usage_from(const sql_row& r) {
    usage_row u;
    u.day = r.text(0);
    u.key_id = r.text(1);
    u.model = r.text(2);
    u.upstream = r.text(3);
    u.requests = r.integer(4);
    u.input_tokens = r.integer(5);
    u.output_tokens = r.integer(6);
    u.cache_read_tokens = r.integer(7);
    u.cache_write_tokens = r.integer(8);
    u.reasoning_tokens = r.integer(9);
    u.usd_nano = r.integer(10);
    u.unpriced_requests = r.integer(11);
    u.estimated_requests = r.integer(12);
    u.cache_hits = r.integer(13);
    u.saved_usd_nano = r.integer(14);
    return u;
}

// Columns as the queries of documents, approvals, write backups, a run's conversation and its
// events select them.
inline document_record document_from(const sql_row& r) {
    return {r.text(0), r.text(1), r.text(2), r.integer(3), r.integer(4)};
}

inline approval_record approval_from(const sql_row& r) {
    return {r.text(0), r.text(1), r.text(2), r.text(3), r.text(4), r.text(5), r.integer(6)};
}

inline backup_record backup_from(const sql_row& r) {
    return {r.text(0), r.text(1), r.text(2),    r.integer(3) != 0,
            r.text(4), r.text(5), r.integer(6), r.integer(7)};
}

inline run_message_record run_message_from(const sql_row& r) {
    return {r.text(0), r.integer(1), r.text(2), r.text(3), r.integer(4)};
}

}  // namespace gateway::store
