#include "gateway/http/request_values.hpp"

#include "gateway/secret_names.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <vector>

namespace gateway::http {

namespace json = boost::json;

bool holds_nul(const json::value& v) {
    if (v.is_string()) return v.get_string().find('\0') != json::string::npos;
    if (v.is_array())
        for (const auto& e : v.get_array())
            if (holds_nul(e)) return true;
    if (v.is_object())
        for (const auto& [key, e] : v.get_object())
            if (key.find('\0') != std::string_view::npos || holds_nul(e)) return true;
    return false;
}

std::optional<json::object> body_object(std::string_view body, std::string& error) {
    if (body.empty()) return json::object();
    json::error_code ec;
    json::parse_options options;
    options.max_depth = 64;
    auto value = json::parse(body, ec, {}, options);
    if (ec) {
        error = "The body is not valid JSON: " + ec.message();
        return std::nullopt;
    }
    if (!value.is_object()) {
        error = "The body must be a JSON object.";
        return std::nullopt;
    }
    if (holds_nul(value)) {
        error = "The body holds a NUL character (\\u0000), which the gateway does not store.";
        return std::nullopt;
    }
    return std::move(value.as_object());
}

std::string_view nearest_name(std::string_view name,
                              std::initializer_list<std::string_view> known) {
    // Levenshtein distance, one row at a time; names are short.
    auto distance = [](std::string_view a, std::string_view b) {
        std::vector<std::size_t> row(b.size() + 1);
        for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i) {
            std::size_t diagonal = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j) {
                std::size_t above = row[j];
                row[j] = std::min(
                    {row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
                diagonal = above;
            }
        }
        return row[b.size()];
    };
    std::string_view best;
    std::size_t best_distance = 0;
    for (auto candidate : known) {
        auto d = distance(name, candidate);
        if (best.empty() || d < best_distance) {
            best = candidate;
            best_distance = d;
        }
    }
    if (best.empty() || best_distance * 3 > std::max(best.size(), name.size())) return {};
    return best;
}

std::optional<json::object> body_object(std::string_view body, std::string& error,
                                        std::initializer_list<std::string_view> members) {
    auto object = body_object(body, error);
    if (!object) return object;
    for (const auto& member : *object) {
        std::string_view name = member.key();
        if (std::find(members.begin(), members.end(), name) != members.end()) continue;
        error = "Unknown member `" + std::string(name) + "`";
        if (auto meant = nearest_name(name, members); !meant.empty())
            error += "; did you mean `" + std::string(meant) + "`?";
        else {
            error += "; the members are";
            std::string_view separator = " ";
            for (auto known : members) {
                error += std::string(separator) + "`" + std::string(known) + "`";
                separator = ", ";
            }
            error += ".";
        }
        return std::nullopt;
    }
    return object;
}

std::string string_member(const json::object& o, std::string_view key, std::string& error) {
    auto* v = o.if_contains(key);
    if (!v || v->is_null()) return {};
    if (!v->is_string()) {
        error = "`" + std::string(key) + "` must be a string.";
        return {};
    }
    return std::string(v->as_string());
}

std::string query_value(std::string_view target, std::string_view name) {
    // Split by hand: Boost.URL 1.81's parse_query() read past the end of a target that is not
    // followed by a NUL (as Beast's are), adding bytes to the last value.
    auto q = target.find('?');
    if (q == std::string_view::npos) return {};
    auto query = target.substr(q + 1);
    while (!query.empty()) {
        auto amp = query.find('&');
        auto pair = query.substr(0, amp);
        auto eq = pair.find('=');
        if (eq != std::string_view::npos && gateway::percent_decoded(pair.substr(0, eq)) == name)
            return gateway::percent_decoded(pair.substr(eq + 1));
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return {};
}

}  // namespace gateway::http
