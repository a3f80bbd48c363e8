#pragma once

#include <string>
#include <vector>

namespace gateway::app {

// `contextgate prices import FILE [--out PATH] [--date YYYY-MM-DD] [--providers LIST]` makes a
// price table for `pricing.file` from LiteLLM's model_prices_and_context_window.json
// (pricing/litellm_import.hpp): the table to PATH (written whole, then renamed into place) or
// to stdout, and what was left out of the map, and why, to stderr. `date` is the file's
// modification day (UTC) unless --date gives it. Exit status: 0 when a table was written, 1
// when FILE cannot be read, is not LiteLLM's map (the error names its line and column) or
// gives no price, 2 on usage errors. `args` excludes the leading "prices".
int run_prices_command(const std::vector<std::string>& args);

}  // namespace gateway::app
