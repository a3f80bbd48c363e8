#include "gateway/admin/usage_report.hpp"

#include "gateway/admin/key_ring.hpp"
#include "gateway/admin/usage_ledger.hpp"
#include "gateway/config/config.hpp"
#include "gateway/http/request_values.hpp"

#include <boost/json/serialize.hpp>

#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace gateway::admin {

namespace {

constexpr std::string_view group_rule =
    "`group_by` must be a comma-separated list of day, key, model, upstream and team (absent: "
    "key,model)";

// Whole nano-dollars as an exact decimal: 5615000 is "0.005615", 0 is "0".
std::string usd_text(std::int64_t nano) {
    std::string out = std::to_string(nano / 1'000'000'000);
    auto fraction = nano % 1'000'000'000;
    if (fraction == 0) return out;
    auto digits = std::to_string(fraction);
    digits.insert(0, 9 - digits.size(), '0');
    digits.erase(digits.find_last_not_of('0') + 1);
    return out + "." + digits;
}

// One field of a report's row: a number (its digits), a text, or null (a key id no key has).
struct field {
    enum class kind { number, text, null };
    std::string_view name;
    kind what;
    std::string value;
};

// A row's fields in the report's order: the dimensions the query is per, then every figure.
// With an empty row, the names alone (the CSV header).
std::vector<field> fields_of(const store::usage_row& r, const usage_request& asked,
                             const key_ring& keys) {
    const auto& q = asked.query;
    using kind = field::kind;
    std::vector<field> out;
    auto text = [&](std::string_view name, std::string value) {
        out.push_back({name, kind::text, std::move(value)});
    };
    auto count = [&](std::string_view name, std::int64_t n) {
        out.push_back({name, kind::number, std::to_string(n)});
    };
    if (q.by_day) text("day", r.day);
    if (q.by_key) {
        text("key_id", r.key_id);
        auto key = keys.by_id(r.key_id);
        out.push_back(key ? field{"key_name", kind::text, key->name}
                          : field{"key_name", kind::null, {}});
    }
    if (q.by_model) text("model", r.model);
    if (q.by_upstream) text("upstream", r.upstream);
    if (asked.by_team) text("team", r.team);
    count("requests", r.requests);
    count("input_tokens", r.input_tokens);
    count("output_tokens", r.output_tokens);
    count("total_tokens", r.input_tokens + r.output_tokens);
    count("cache_read_tokens", r.cache_read_tokens);
    count("cache_write_tokens", r.cache_write_tokens);
    count("reasoning_tokens", r.reasoning_tokens);
    out.push_back({"usd", kind::number, usd_text(r.usd_nano)});
    count("unpriced_requests", r.unpriced_requests);
    count("estimated_requests", r.estimated_requests);
    count("cache_hits", r.cache_hits);
    out.push_back({"saved_usd", kind::number, usd_text(r.saved_usd_nano)});
    return out;
}

// A CSV field (RFC 4180): quoted, its quotes doubled, when it holds a comma, a quote or a line
// break. Model names come from clients: one that a spreadsheet would take for a formula (it begins
// with = + - @, a tab or a carriage return) is written after a ' (OWASP's advice on CSV
// injection), so opening the export runs nothing. No figure the report writes is negative.
void append_csv(std::string& out, std::string_view value) {
    bool formula =
        !value.empty() && std::string_view("=+-@\t\r").find(value[0]) != std::string_view::npos;
    if (!formula && value.find_first_of(",\"\r\n") == std::string_view::npos) {
        out += value;
        return;
    }
    out += '"';
    if (formula) out += '\'';
    for (char c : value) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

std::string csv_of(const std::vector<store::usage_row>& rows, const usage_request& q,
                   const key_ring& keys) {
    std::string out;
    auto line = [&](const std::vector<field>& fields, bool names) {
        for (std::size_t i = 0; i < fields.size(); ++i) {
            if (i) out += ',';
            append_csv(out, names ? fields[i].name : std::string_view(fields[i].value));
        }
        out += "\r\n";
    };
    line(fields_of({}, q, keys), true);
    for (const auto& r : rows) line(fields_of(r, q, keys), false);
    return out;
}

// Written by hand, not through json::value: `usd` and `saved_usd` are exact decimals, where a
// double would be written as 5.615E-3.
std::string json_of(const std::vector<store::usage_row>& rows, const usage_request& q,
                    const key_ring& keys) {
    std::string out = R"({"object":"list","data":[)";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        out += i ? ",{" : "{";
        auto fields = fields_of(rows[i], q, keys);
        for (std::size_t f = 0; f < fields.size(); ++f) {
            if (f) out += ',';
            out += boost::json::serialize(fields[f].name);
            out += ':';
            switch (fields[f].what) {
                case field::kind::number:
                    out += fields[f].value;
                    break;
                case field::kind::text:
                    out += boost::json::serialize(fields[f].value);
                    break;
                case field::kind::null:
                    out += "null";
                    break;
            }
        }
        out += '}';
    }
    return out + "]}";
}

}  // namespace

std::string usage_request_of(std::string_view target, usage_request& out) {
    auto& q = out.query;
    q.key_id = http::query_value(target, "key");
    q.model = http::query_value(target, "model");
    q.upstream = http::query_value(target, "upstream");
    out.team = http::query_value(target, "team");
    for (auto [name, into] :
         {std::pair<const char*, std::string*>{"from", &q.from_day}, {"to", &q.to_day}}) {
        auto text = http::query_value(target, name);
        if (text.empty()) continue;
        auto at = config::parse_time(text);
        if (!at) return std::string("`") + name + "` must be a day such as 2026-11-01";
        *into = utc_day(*at);
    }
    if (auto group = http::query_value(target, "group_by"); !group.empty()) {
        q.by_day = q.by_key = q.by_model = q.by_upstream = out.by_team = false;
        std::string_view rest = group;
        for (;;) {
            auto comma = rest.find(',');
            auto name = rest.substr(0, comma);
            if (name == "day")
                q.by_day = true;
            else if (name == "key")
                q.by_key = true;
            else if (name == "model")
                q.by_model = true;
            else if (name == "upstream")
                q.by_upstream = true;
            else if (name == "team")
                out.by_team = true;
            else
                return std::string(group_rule) + "; `" + std::string(name) + "` is none of them";
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
    auto format = http::query_value(target, "format");
    if (!format.empty() && format != "json" && format != "csv")
        return "`format` must be json or csv (absent: json)";
    out.csv = format == "csv";
    return {};
}

std::vector<store::usage_row> regroup(const std::vector<store::usage_row>& rows,
                                      const usage_request& asked) {
    const auto& q = asked.query;
    std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>,
             store::usage_row>
        groups;
    for (const auto& r : rows) {
        store::usage_row key_of;
        if (q.by_day) key_of.day = r.day;
        if (q.by_key) key_of.key_id = r.key_id;
        if (q.by_model) key_of.model = r.model;
        if (q.by_upstream) key_of.upstream = r.upstream;
        if (asked.by_team) key_of.team = r.team;
        auto& g = groups
                      .try_emplace(std::tuple{key_of.day, key_of.key_id, key_of.model,
                                              key_of.upstream, key_of.team},
                                   key_of)
                      .first->second;
        g.requests += r.requests;
        g.input_tokens += r.input_tokens;
        g.output_tokens += r.output_tokens;
        g.cache_read_tokens += r.cache_read_tokens;
        g.cache_write_tokens += r.cache_write_tokens;
        g.reasoning_tokens += r.reasoning_tokens;
        g.usd_nano += r.usd_nano;
        g.unpriced_requests += r.unpriced_requests;
        g.estimated_requests += r.estimated_requests;
        g.cache_hits += r.cache_hits;
        g.saved_usd_nano += r.saved_usd_nano;
    }
    std::vector<store::usage_row> out;
    for (auto& [k, row] : groups) out.push_back(std::move(row));
    return out;
}

http::reply usage_reply(const std::vector<store::usage_row>& rows, const usage_request& asked,
                        const key_ring& keys, std::int64_t now_ms) {
    const auto& q = asked.query;
    http::reply r;
    if (!asked.csv) {
        r.body = json_of(rows, asked, keys);
        return r;
    }
    r.content_type = "text/csv; charset=utf-8";
    r.body = csv_of(rows, asked, keys);
    // The days are digits and dashes (usage_request_of made them): safe in the header.
    auto from = q.from_day == store::usage_query{}.from_day ? std::string("all") : q.from_day;
    auto to = q.to_day == store::usage_query{}.to_day ? utc_day(now_ms) : q.to_day;
    r.header("Content-Disposition", "attachment; filename=\"usage-" + from + "-" + to + ".csv\"");
    return r;
}

}  // namespace gateway::admin
