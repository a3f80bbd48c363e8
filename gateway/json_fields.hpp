#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

// Reading optional members of JSON objects that came from outside (a model, a client, another
// replica, an MCP server): a missing member and one of the wrong type read the same, and a number
// is range-checked before it is converted.
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

// The integer `d` is, when it is finite, integral (2.0, 1e3) and within [min, max]; nullopt
// otherwise (1.5, 1e300, infinity: Boost.JSON reads 1e309 as one). Never a conversion that does
// not fit, which is undefined behaviour.
inline std::optional<std::int64_t> integer_of(
    double d, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
    std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    // [-2^63, 2^63) holds exactly the doubles that convert to int64.
    if (!std::isfinite(d) || d != std::trunc(d) || d < -0x1p63 || d >= 0x1p63) return std::nullopt;
    auto n = static_cast<std::int64_t>(d);
    if (n < min || n > max) return std::nullopt;
    return n;
}

// The integer `v` points to, read as integer_of(double) reads one: an int64, a uint64 or a double
// within [min, max]. nullopt when it is missing, not a number, or out of range.
inline std::optional<std::int64_t> integer_of(
    const boost::json::value* v, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
    std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    if (!v) return std::nullopt;
    if (v->is_double()) return integer_of(v->get_double(), min, max);
    if (v->is_uint64() &&
        v->get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return std::nullopt;
    if (!v->is_int64() && !v->is_uint64()) return std::nullopt;
    auto n = v->is_int64() ? v->get_int64() : static_cast<std::int64_t>(v->get_uint64());
    if (n < min || n > max) return std::nullopt;
    return n;
}

}  // namespace gateway
