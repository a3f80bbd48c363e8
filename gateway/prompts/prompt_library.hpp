#pragma once

#include "gateway/config/config.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gateway::prompts {

// A base system prompt from prompts/*.md.
struct prompt {
    std::string id;
    std::string title;
    std::string description;
    std::string body;    // the Markdown after the front matter
    std::string source;  // the file it came from
};

// Parses one prompt file: YAML front matter between `---` lines with exactly the keys `id`
// (letters, digits, `-` and `_`), `title` and `description`, then the Markdown body. Errors name
// the file and line: "prompts/coding.md:3: unknown key `tittle` …".
config::parsed<prompt> parse_prompt(std::string_view text, const std::string& source);

// Every `*.md` file in `folder`, in file-name order; duplicate ids are an error.
config::parsed<std::vector<prompt>> load_folder(const std::string& folder);

}  // namespace gateway::prompts
