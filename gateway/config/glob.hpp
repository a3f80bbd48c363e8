#pragma once

#include <string_view>

namespace gateway::config {

// Shell-style glob, as the configuration writes model names (`upstreams[].models`, a virtual
// key's `models`): `*` any run, `?` one character, `[abc]`, `[a-z]`, `[!x]`. Case-sensitive.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace gateway::config
