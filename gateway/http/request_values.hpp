#pragma once

#include <boost/json/object.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// What the gateway's own APIs (/context, /admin) read from a request: its JSON body and its
// query parameters. Pure functions.
namespace gateway::http {

// Whether any string of `v`, key or value, holds a NUL character: the stores refuse such text
// (store::check_stored_text), so an API says so before anything is written.
bool holds_nul(const boost::json::value& v);

// The request body as a JSON object (an empty body is {}), or nullopt and `error` (not JSON,
// not an object, or a string holding a NUL character, which no store keeps).
// With `members`: a member the API does not know is refused by name (with the nearest known
// one, when a typo is likely), so that `workspce` is not silently ignored.
std::optional<boost::json::object> body_object(std::string_view body, std::string& error);
std::optional<boost::json::object> body_object(std::string_view body, std::string& error,
                                               std::initializer_list<std::string_view> members);
// The member of `known` nearest to `name` by edit distance, when it is near enough to be the
// one meant (at most a third of its letters differ); "" otherwise.
std::string_view nearest_name(std::string_view name, std::initializer_list<std::string_view> known);
// The members of `known` near enough to `name` in the same sense, nearest first, at most `most`
// (each once).
std::vector<std::string_view> nearest_names(std::string_view name,
                                            const std::vector<std::string_view>& known,
                                            std::size_t most);
// A string member, "" when absent or null; `error` is set when present with another type.
std::string string_member(const boost::json::object& o, std::string_view key, std::string& error);
// The value of the query parameter `name` in a request target, percent-decoded (`+` is kept:
// a model name may hold one); "" when absent.
std::string query_value(std::string_view target, std::string_view name);

}  // namespace gateway::http
