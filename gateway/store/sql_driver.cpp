#include "gateway/store/sql_driver.hpp"

#include "gateway/store/state_store.hpp"

#include <cctype>
#include <charconv>

namespace gateway::store {

sql_param::sql_param(std::string_view text) : value_(text) {
    check_stored_text(text);  // the stores' one text rule (state_store.hpp)
}

std::int64_t sql_rows::integer(std::size_t row, int column) const {
    const auto& cell = cells_[at(row, column)];
    std::int64_t out = 0;
    std::from_chars(cell.data(), cell.data() + cell.size(), out);
    return out;
}

std::string expand_sql(std::string_view sql, const sql_dialect& dialect) {
    std::string out;
    out.reserve(sql.size() + 16);
    for (std::size_t i = 0; i < sql.size(); ++i) {
        char c = sql[i];
        if (c == '$' && dialect.question_mark_parameters && i + 1 < sql.size() &&
            std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
            out += '?';
        } else if (c == '{' && sql.substr(i).starts_with("{ord}")) {
            out += dialect.insertion_order;
            i += 4;
        } else if (c == '{' && sql.substr(i).starts_with("{lock}")) {
            out += dialect.row_lock;
            i += 5;
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace gateway::store
