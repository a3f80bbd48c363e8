#pragma once

#include "gateway/config/config.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::workflows {

// The workflow template language, small on purpose: `{{ params.NAME }}`,
// `{{ steps.ID.output }}` and `{{ steps.ID.data.FIELD[.FIELD…] }}`, nothing else — no
// expressions, filters or code. Spaces inside the braces are allowed; `{{` always opens a
// reference.
struct reference {
    std::string text;  // as written between the braces, trimmed
    bool is_param = false;
    std::string name;               // the parameter, or the step id
    bool data = false;              // steps.ID.data… rather than steps.ID.output
    std::vector<std::string> path;  // fields after params.NAME or steps.ID.data
};

// Every reference in `text`, or why it is not a template ("unclosed `{{`", "unknown name
// `stepz.x`: use params.NAME, steps.ID.output or steps.ID.data.FIELD").
config::parsed<std::vector<reference>> references(std::string_view text);

// What an earlier step produced.
struct step_output {
    std::string output;        // the text: a tool's result text, a prompt's or agent's answer
    boost::json::object data;  // a tool's structured result
    bool skipped = false;      // its `when` was false: references to it render empty
};
using step_outputs = std::map<std::string, step_output>;

// `text` with each reference replaced: strings as they are, other JSON values serialized, a
// missing parameter or field as "". A step that has not run is an error naming it.
config::parsed<std::string> render(std::string_view text, const boost::json::object& params,
                                   const step_outputs& steps);

// Renders every string inside `value` (tool parameters). A string that is exactly one reference
// takes the referenced JSON value itself, so numbers, booleans and arrays keep their type.
config::parsed<boost::json::value> render_value(const boost::json::value& value,
                                                const boost::json::object& params,
                                                const step_outputs& steps);

// A rendered `when:` is true unless it is empty, "false", "0", "no" or "null" (any case, trimmed).
bool truthy(std::string_view rendered);

}  // namespace gateway::workflows
