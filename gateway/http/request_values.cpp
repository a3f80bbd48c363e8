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

namespace {

// Edit distance with transpositions (optimal string alignment): `smrat` is one edit from
// `smart`, as a typo is. Names are short.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                                d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

}  // namespace

std::vector<std::string_view> nearest_names(std::string_view name,
                                            const std::vector<std::string_view>& known,
                                            std::size_t most) {
    // Near enough: at most a third of the letters differ.
    std::vector<std::pair<std::size_t, std::string_view>> near;
    for (auto candidate : known) {
        auto d = edit_distance(name, candidate);
        if (d * 3 > std::max(candidate.size(), name.size())) continue;
        bool again = std::any_of(near.begin(), near.end(),
                                 [&](const auto& n) { return n.second == candidate; });
        if (!again) near.emplace_back(d, candidate);
    }
    std::stable_sort(near.begin(), near.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i < near.size() && i < most; ++i) out.push_back(near[i].second);
    return out;
}

std::string_view nearest_name(std::string_view name,
                              std::initializer_list<std::string_view> known) {
    auto nearest = nearest_names(name, std::vector<std::string_view>(known), 1);
    return nearest.empty() ? std::string_view{} : nearest.front();
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
