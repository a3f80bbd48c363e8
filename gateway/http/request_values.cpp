#include "gateway/http/request_values.hpp"

#include "gateway/secret_names.hpp"

#include <boost/json/parse.hpp>

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
