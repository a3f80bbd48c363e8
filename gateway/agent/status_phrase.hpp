#pragma once

#include <boost/json/object.hpp>

#include <string>
#include <string_view>

namespace gateway::agent {

// A short phrase for a status line while a call runs: "Reading notes.md", "Searching for
// “teh”", "Editing README.md", "Running list_files" for a tool it has no phrase for. Long
// parameter values are cut.
std::string status_phrase(std::string_view tool, const boost::json::object& parameters);

}  // namespace gateway::agent
