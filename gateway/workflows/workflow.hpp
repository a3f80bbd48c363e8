#pragma once

#include "gateway/config/config.hpp"
#include "gateway/tools/json_schema.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <string>
#include <vector>

namespace gateway::tools {
class registry;
}

namespace gateway::workflows {

// One step of a workflow: a tool call, a single model completion, or a whole agent run.
struct step {
    enum class kind { tool, prompt, agent };
    std::string id;
    kind what = kind::tool;
    std::string tool;               // kind::tool
    boost::json::value parameters;  // kind::tool: templated JSON (strings are templates)
    std::string text;               // kind::prompt: the prompt; kind::agent: the instruction
    std::string role = "editor";    // kind::agent
    unsigned max_steps = 0;         // kind::agent: 0 = the gateway's max_steps
    std::string when;               // a template; the step runs when it renders truthy
    int line = 0;                   // where it is defined, for messages
};

// A user-invoked workflow from workflows/*.yaml (one per file).
struct workflow {
    std::string id;
    std::string name;
    std::string description;
    std::string category;
    boost::json::object parameters;  // a JSON Schema of type object: the form a frontend renders
    std::shared_ptr<const tools::json_schema> schema;  // `parameters`, compiled
    std::vector<step> steps;
    std::string source;  // the file
};

// Parses and checks one workflow file: known keys only, an id of letters, digits, `-` and `_`,
// a parameter schema that compiles (type object), steps with unique ids and exactly one of
// `tool`, `prompt` or `agent`, tools that exist, templates that parse and refer only to declared
// parameters and to earlier steps. Errors read "workflows/x.yaml:12: step `fix`: …".
config::parsed<workflow> parse_workflow(const std::string& yaml, const std::string& source,
                                        const tools::registry& tools);

// `parameters` with each missing top-level property that declares a `default` filled in.
boost::json::object with_defaults(const workflow& w, boost::json::object parameters);

// Every `*.yaml` / `*.yml` file in `folder`, in file-name order; duplicate ids are an error.
config::parsed<std::vector<workflow>> load_folder(const std::string& folder,
                                                  const tools::registry& tools);

}  // namespace gateway::workflows
