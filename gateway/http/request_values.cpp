#include "gateway/http/request_values.hpp"

#include <boost/json/parse.hpp>
#include <boost/url/parse_query.hpp>

namespace gateway::http {

namespace json = boost::json;

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
    auto q = target.find('?');
    if (q == std::string_view::npos) return {};
    auto params = boost::urls::parse_query(target.substr(q + 1));
    if (!params) return {};
    for (auto param : *params)
        if (param.has_value && param.key.decode() == name) return param.value.decode();
    return {};
}

}  // namespace gateway::http
