#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

// Reading optional members of JSON objects that came from outside (a model, a client, another
// replica, an MCP server): a missing member and one of the wrong type read the same.
namespace gateway {

// The string member `key` of `o`, or "" when it is missing or not a string.
inline std::string string_of(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The string `v` points to, or "" when it is null or not a string.
inline std::string string_of(const boost::json::value* v) {
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The boolean member `key` of `o`; false when it is missing or not a boolean.
inline bool flag_of(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_bool() && v->get_bool();
}

}  // namespace gateway
