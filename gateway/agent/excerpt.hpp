#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace gateway::agent {

// Cuts every string inside `value` that is longer than `limit` bytes to its first `limit` bytes
// (never in the middle of a UTF-8 sequence) and returns the JSON pointers (RFC 6901) of the
// strings it cut, in document order; empty when nothing was that long. Events and list views
// carry such excerpts, so what every watcher and every page holds stays bounded; the whole text
// is kept once, in the resource the excerpt names.
std::vector<std::string> cut_long_strings(boost::json::value& value, std::size_t limit);

// The first `limit` bytes of `text`, shortened to end on a UTF-8 character boundary.
std::string_view utf8_prefix(std::string_view text, std::size_t limit);

}  // namespace gateway::agent
