#include "gateway/http/credentials.hpp"

#include "gateway/http/request_values.hpp"
#include "gateway/secret_names.hpp"

#include <boost/beast/core/string.hpp>

namespace gateway::http {

namespace {

namespace bhttp = boost::beast::http;

// Calls `visit(name_text, whole_pair)` for each `name=value` (or bare `name`) of the query.
template <class Visit>
void for_each_parameter(std::string_view query, Visit visit) {
    while (!query.empty()) {
        auto amp = query.find('&');
        auto pair = query.substr(0, amp);
        visit(pair.substr(0, pair.find('=')), pair);
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
}

// Whether a parameter's name, percent-decoded, is `key` ("key", "%6Bey", "KEY" is not).
bool names_key(std::string_view name) {
    if (name == "key") return true;
    return name.find('%') != std::string_view::npos && percent_decoded(name) == "key";
}

}  // namespace

presented_key presented_key_of(const bhttp::request_header<>& head) {
    std::string_view auth = head[bhttp::field::authorization];
    if (auth.size() > 7 && boost::beast::iequals(auth.substr(0, 7), "bearer ")) {
        auto token = auth.substr(7);
        while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
        if (!token.empty()) return {std::string(token), key_place::bearer};
    }
    if (auto k = head["x-api-key"]; !k.empty()) return {std::string(k), key_place::x_api_key};
    if (auto k = head["x-goog-api-key"]; !k.empty())
        return {std::string(k), key_place::x_goog_api_key};
    std::string_view target = head.target();
    if (has_query_key(target))
        if (auto k = query_value(target, "key"); !k.empty())
            return {std::move(k), key_place::query};
    return {};
}

bool has_query_key(std::string_view target) {
    auto q = target.find('?');
    if (q == std::string_view::npos) return false;
    bool found = false;
    for_each_parameter(target.substr(q + 1), [&](std::string_view name, std::string_view) {
        found = found || names_key(name);
    });
    return found;
}

std::string without_query_key(std::string_view target) {
    auto q = target.find('?');
    if (q == std::string_view::npos || !has_query_key(target)) return std::string(target);
    std::string out(target.substr(0, q));
    bool first = true;
    for_each_parameter(target.substr(q + 1), [&](std::string_view name, std::string_view pair) {
        if (names_key(name)) return;
        out += first ? '?' : '&';
        out += pair;
        first = false;
    });
    return out;
}

}  // namespace gateway::http
