// Workflow files -> workflows. Includes yaml-cpp for the definitions only.
#include "gateway/workflows/workflow.hpp"
#include "gateway/ids.hpp"

#include "gateway/tools/registry.hpp"
#include "gateway/workflows/template.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace gateway::workflows {

namespace json = boost::json;

namespace {

int line_of(const YAML::Node& n) {
    return n.Mark().line + 1;
}

// YAML as JSON: quoted scalars stay strings; plain ones become null, booleans or numbers when
// they read as such (YAML 1.2 core schema).
json::value to_json(const YAML::Node& n) {
    switch (n.Type()) {
        case YAML::NodeType::Sequence: {
            json::array out;
            for (const auto& item : n) out.push_back(to_json(item));
            return out;
        }
        case YAML::NodeType::Map: {
            json::object out;
            for (const auto& entry : n) out[entry.first.Scalar()] = to_json(entry.second);
            return out;
        }
        case YAML::NodeType::Scalar: {
            const auto& s = n.Scalar();
            if (n.Tag() == "!") return json::value(s);  // quoted
            if (s == "null" || s == "~" || s.empty()) return nullptr;
            if (s == "true" || s == "True") return true;
            if (s == "false" || s == "False") return false;
            std::int64_t i = 0;
            if (auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
                ec == std::errc{} && end == s.data() + s.size())
                return i;
            double d = 0;
            if (auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
                ec == std::errc{} && end == s.data() + s.size())
                return d;
            return json::value(s);
        }
        default:
            return nullptr;
    }
}

// Every template string inside a JSON value.
void strings_of(const json::value& v, std::vector<std::string>& out) {
    if (v.is_string()) out.emplace_back(v.as_string());
    if (v.is_array())
        for (const auto& item : v.as_array()) strings_of(item, out);
    if (v.is_object())
        for (const auto& [key, item] : v.as_object()) strings_of(item, out);
}

// A problem at a line of the workflow file.
struct located {
    int line = 0;
    std::string what;
};

// Reads a step's keys into `s`, counting in `kinds` how many of tool, prompt and agent it has;
// the first problem, if any.
std::optional<located> read_step_keys(const YAML::Node& node, step& s, int& kinds) {
    for (const auto& entry : node) {
        auto key = entry.first.Scalar();
        const auto& value = entry.second;
        int at = line_of(entry.first);
        auto text = [&](std::string& field) -> std::string {
            if (!value.IsScalar()) return "`" + key + "` must be text";
            field = value.Scalar();
            return {};
        };
        std::string error;
        if (key == "id") {
            error = text(s.id);
        } else if (key == "when") {
            error = text(s.when);
        } else if (key == "tool") {
            ++kinds;
            s.what = step::kind::tool;
            error = text(s.tool);
        } else if (key == "parameters") {
            s.parameters = to_json(value);
            if (!s.parameters.is_object()) error = "`parameters` must be a mapping";
        } else if (key == "prompt") {
            ++kinds;
            s.what = step::kind::prompt;
            error = text(s.text);
        } else if (key == "agent") {
            ++kinds;
            s.what = step::kind::agent;
            if (!value.IsMap()) {
                error = "`agent` is a mapping with instruction, role and max_steps";
            } else {
                for (const auto& a : value) {
                    auto akey = a.first.Scalar();
                    if (akey == "instruction" && a.second.IsScalar()) {
                        s.text = a.second.Scalar();
                    } else if (akey == "role" && a.second.IsScalar()) {
                        s.role = a.second.Scalar();
                    } else if (akey == "max_steps" && a.second.IsScalar()) {
                        auto n = to_json(a.second);
                        if (!n.is_int64() || n.as_int64() < 1 || n.as_int64() > 100)
                            return located{line_of(a.first),
                                           "step `" + s.id + "`: `max_steps` must be 1 to 100"};
                        s.max_steps = static_cast<unsigned>(n.as_int64());
                    } else {
                        return located{line_of(a.first),
                                       "step `" + s.id + "`: unknown or malformed `agent." + akey +
                                           "` (expected instruction, role, max_steps)"};
                    }
                }
                if (s.text.empty()) error = "`agent` needs an `instruction`";
                if (s.role != "reader" && s.role != "editor")
                    error = "`agent.role` must be `reader` or `editor`";
            }
        } else {
            error = "unknown key `" + key +
                    "` (expected id, when, and one of tool + parameters, prompt, agent)";
        }
        if (!error.empty())
            return located{at, (s.id.empty() ? "step" : "step `" + s.id + "`") + ": " + error};
    }
    return std::nullopt;
}

// Checks a step read whole: its id, its one kind, its tool, and what its templates refer to
// (declared parameters, earlier steps); a tool step without parameters gets an empty object.
std::optional<located> check_step(step& s, int kinds, const tools::registry& tools,
                                  const std::set<std::string>& declared,
                                  const std::map<std::string, step::kind>& earlier) {
    int line = s.line;
    auto named = s.id.empty() ? std::string("a step") : "step `" + s.id + "`";
    if (!valid_id(s.id))
        return located{line, named + ": needs an `id` of letters, digits, `-` and `_`"};
    if (earlier.count(s.id)) return located{line, "step id `" + s.id + "` is used twice"};
    if (kinds != 1)
        return located{line, named + ": needs exactly one of `tool`, `prompt` or `agent`"};
    if (s.what == step::kind::tool) {
        if (!tools.find(s.tool)) {
            std::string names;
            for (const auto* t : tools.for_role(tools::role::editor))
                names += (names.empty() ? "" : ", ") + std::string(t->spec().name);
            return located{line, named + ": unknown tool `" + s.tool + "` (tools: " + names + ")"};
        }
        if (s.parameters.is_null()) s.parameters = json::object();
    } else if (!s.parameters.is_null()) {
        return located{line, named + ": `parameters` belongs to `tool` steps"};
    }
    if (s.what == step::kind::prompt && s.text.empty())
        return located{line, named + ": `prompt` needs its text"};

    std::vector<std::string> templates{s.text, s.when};
    strings_of(s.parameters, templates);
    for (const auto& t : templates) {
        auto refs = references(t);
        if (!refs) return located{line, named + ": " + refs.error};
        for (const auto& r : *refs.value) {
            if (r.is_param && !declared.count(r.name))
                return located{line, named + ": `{{" + r.text + "}}` names no declared parameter"};
            if (r.is_param) continue;
            auto it = earlier.find(r.name);
            if (it == earlier.end())
                return located{line, named + ": `{{" + r.text + "}}` refers to `" + r.name +
                                         "`, which is not an earlier step"};
            if (r.data && it->second != step::kind::tool)
                return located{line, named + ": `{{" + r.text +
                                         "}}`: only tool steps have "
                                         "`data`; use steps." +
                                         r.name + ".output"};
        }
    }
    return std::nullopt;
}

}  // namespace

config::parsed<workflow> parse_workflow(const std::string& yaml, const std::string& source,
                                        const tools::registry& tools) {
    using result = config::parsed<workflow>;
    auto fail_at = [&](int line, const std::string& what) {
        return result::fail(source + ":" + std::to_string(line) + ": " + what);
    };
    YAML::Node root;
    try {
        root = YAML::Load(yaml);
    } catch (const YAML::Exception& e) {
        return fail_at(e.mark.line + 1, "invalid YAML: " + e.msg);
    }
    if (!root.IsMap())
        return fail_at(1,
                       "a workflow file is a mapping with id, name, description, category, "
                       "parameters and steps");
    workflow out;
    out.source = source;
    YAML::Node steps_node;
    for (const auto& entry : root) {
        auto key = entry.first.Scalar();
        int line = line_of(entry.first);
        const auto& value = entry.second;
        if (key == "id" || key == "name" || key == "description" || key == "category") {
            if (!value.IsScalar()) return fail_at(line, "`" + key + "` must be text");
            auto& field = key == "id"            ? out.id
                          : key == "name"        ? out.name
                          : key == "description" ? out.description
                                                 : out.category;
            field = value.Scalar();
        } else if (key == "parameters") {
            auto schema = to_json(value);
            if (!schema.is_object())
                return fail_at(line, "`parameters` must be a JSON Schema (type: object)");
            out.parameters = std::move(schema.as_object());
            auto* type = out.parameters.if_contains("type");
            if (!type || *type != json::value("object"))
                return fail_at(line, "`parameters` must have `type: object`");
            auto* properties = out.parameters.if_contains("properties");
            if (properties && !properties->is_object())
                return fail_at(line, "`parameters.properties` must be a mapping");
            std::string error;
            auto compiled = tools::json_schema::compile(out.parameters, error);
            if (!compiled)
                return fail_at(line, "`parameters` is not a usable JSON Schema: " + error);
            out.schema = std::move(compiled);
        } else if (key == "steps") {
            steps_node = value;
        } else {
            return fail_at(line, "unknown key `" + key +
                                     "` (expected id, name, description, category, parameters, "
                                     "steps)");
        }
    }
    for (auto [key, value] : {std::pair{"id", &out.id},
                              {"name", &out.name},
                              {"description", &out.description},
                              {"category", &out.category}})
        if (value->empty()) return fail_at(1, "missing `" + std::string(key) + "`");
    if (!valid_id(out.id))
        return fail_at(1, "id `" + out.id + "` may only hold letters, digits, `-` and `_`");
    if (!out.schema) {
        out.parameters = json::object{{"type", "object"}, {"properties", json::object()}};
        std::string error;
        out.schema = tools::json_schema::compile(out.parameters, error);
    }
    if (!steps_node || !steps_node.IsSequence() || steps_node.size() == 0)
        return fail_at(steps_node ? line_of(steps_node) : 1, "`steps` must be a non-empty list");

    std::set<std::string> declared;
    if (auto* properties = out.parameters.if_contains("properties"))
        for (const auto& [name, schema] : properties->as_object()) declared.insert(name);
    std::map<std::string, step::kind> earlier;
    for (const auto& node : steps_node) {
        int line = line_of(node);
        if (!node.IsMap()) return fail_at(line, "each step is a mapping with an `id`");
        step s;
        s.line = line;
        int kinds = 0;
        auto problem = read_step_keys(node, s, kinds);
        if (!problem) problem = check_step(s, kinds, tools, declared, earlier);
        if (problem) return fail_at(problem->line, problem->what);
        earlier[s.id] = s.what;
        out.steps.push_back(std::move(s));
    }
    return {std::move(out), {}};
}

json::object with_defaults(const workflow& w, json::object parameters) {
    if (auto* properties = w.parameters.if_contains("properties"))
        for (const auto& [name, schema] : properties->as_object())
            if (auto* d = schema.is_object() ? schema.as_object().if_contains("default") : nullptr;
                d && !parameters.contains(name))
                parameters[name] = *d;
    return parameters;
}

config::parsed<std::vector<workflow>> load_folder(const std::string& folder,
                                                  const tools::registry& tools) {
    using result = config::parsed<std::vector<workflow>>;
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec))
        return result::fail(folder + ": not a folder of workflows");
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
        auto ext = entry.path().extension();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml"))
            files.push_back(entry.path());
    }
    if (ec) return result::fail(folder + ": " + ec.message());
    std::sort(files.begin(), files.end());
    std::vector<workflow> out;
    std::map<std::string, std::string> seen;
    for (const auto& file : files) {
        std::ifstream in(file);
        std::stringstream text;
        text << in.rdbuf();
        if (!in) return result::fail(file.string() + ": cannot be read");
        auto parsed = parse_workflow(text.str(), file.string(), tools);
        if (!parsed) return result::fail(parsed.error);
        auto& w = *parsed.value;
        if (auto it = seen.find(w.id); it != seen.end())
            return result::fail(file.string() + ":1: id `" + w.id + "` is also used by " +
                                it->second);
        seen[w.id] = file.string();
        out.push_back(std::move(w));
    }
    return {std::move(out), {}};
}

}  // namespace gateway::workflows
