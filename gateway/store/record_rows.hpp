#pragma once

#include "gateway/store/records.hpp"

// One row of a query's result as a record, for both stores: `Row` reads a column by its 0-based
// index with text(column) and integer(column) (sqlite's statement, pg_rows' pg_row). The column
// orders are those of the stores' *_COLUMNS lists, the same in both.
namespace gateway::store {

template <class Row>
chat_record chat_from(Row& r) {
    return {r.text(0), r.integer(1), r.text(2), r.text(3),
            r.text(4), r.text(5),    r.text(6), r.text(7)};
}

template <class Row>
message_record message_from(Row& r) {
    return {r.integer(0), r.text(1), r.text(2), r.text(3), r.text(4), r.integer(5)};
}

template <class Row>
tool_call_record tool_call_from(Row& r) {
    return {r.text(0), r.text(1),    static_cast<int>(r.integer(2)),
            r.text(3), r.text(4),    r.text(5),
            r.text(6), r.integer(7), r.text(8)};
}

template <class Row>
edit_session_record edit_session_from(Row& r) {
    return {r.text(0),     r.text(1),         r.text(2),     r.text(3),         r.text(4),
            r.text(5),     r.integer(6) != 0, r.text(7),     r.integer(8) != 0, r.text(9),
            r.integer(10), r.integer(11),     r.integer(12), r.integer(13),     r.integer(14)};
}

template <class Row>
session_edit_record session_edit_from(Row& r) {
    return {r.text(0), r.text(1), r.integer(2), r.text(3), r.text(4),    r.text(5),
            r.text(6), r.text(7), r.text(8),    r.text(9), r.integer(10)};
}

template <class Row>
run_record run_from(Row& r) {
    return {r.text(0),
            r.text(1),
            r.text(2),
            static_cast<int>(r.integer(3)),
            static_cast<int>(r.integer(4)),
            r.text(5),
            r.text(6),
            r.text(7),
            r.integer(8),
            r.integer(9)};
}

template <class Row>
key_record key_from(Row& r) {
    key_record k;
    k.id = r.text(0);
    k.name = r.text(1);
    k.digest = r.text(2);
    k.models = r.text(3);
    k.rpm = r.integer(4);
    k.tpm = r.integer(5);
    k.max_parallel = r.integer(6);
    k.budget_tokens = r.integer(7);
    k.budget_period = r.text(8);
    k.expires_at = r.integer(9);
    k.created_at = r.integer(10);
    k.revoked_at = r.integer(11);
    return k;
}

template <class Row>
usage_row usage_from(Row& r) {
    usage_row u;
    u.day = r.text(0);
    u.key_id = r.text(1);
    u.model = r.text(2);
    u.requests = r.integer(3);
    u.input_tokens = r.integer(4);
    u.output_tokens = r.integer(5);
    return u;
}

}  // namespace gateway::store
