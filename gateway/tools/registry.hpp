#pragma once

#include "gateway/tools/tool.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::tools {

class json_schema;

// Tools from outside the table whose set changes while the gateway runs (MCP servers' tools).
// Thread-safe.
class tool_source {
public:
    struct entry {
        const tool* implementation;
        const boost::json::value* schema;
        const json_schema* compiled;  // null: the schema could not be compiled, not checked here
    };
    virtual ~tool_source() = default;
    // The tools offered now, in catalogue order. Every pointer stays valid as long as the source.
    virtual std::vector<entry> current() const = 0;
};

// The explicit table of tools: one line per tool in registry.cpp, in catalogue order. Each tool's
// JSON Schema is compiled once with valijson; execute() validates parameters before a tool sees
// them. Immutable after construction and thread-safe.
class registry {
public:
    // `extra`, when given, adds its tools after the table's (they never shadow one of ours).
    explicit registry(const tool_source* extra = nullptr);
    ~registry();
    registry(const registry&) = delete;
    registry& operator=(const registry&) = delete;

    // The seventeen standard tools, without any extra.
    static const registry& standard();

    const tool* find(std::string_view name) const;
    // The tools `r` may use, in table order (`reader`: those needing read_files only).
    std::vector<const tool*> for_role(role r) const;
    const boost::json::value& schema(std::string_view name) const;

    // The catalogue as the model reads it in the system prompt: grouped by category in a fixed
    // order (the extra tools after them, by their group titles), each tool with its description
    // and parameter schema. Deterministic for a given set of extra tools.
    std::string catalogue(role r) const;

    // "" when `parameters` satisfy the tool's schema, otherwise the failing path and reason, e.g.
    // "/start_line: value type not permitted (expected integer)".
    std::string validate(std::string_view name, const boost::json::value& parameters) const;

    // Why `name` may not run with `parameters` for role `r`: an unknown tool (UNKNOWN_TOOL with
    // the valid names), the role's permissions (PERMISSION_DENIED), the schema
    // (INVALID_PARAMETERS naming the path); nullopt when it may.
    std::optional<tool_result> refusal(std::string_view name, const boost::json::value& parameters,
                                       role r) const;

    // The checks of refusal(), then runs the tool.
    tool_result execute(std::string_view name, const boost::json::value& parameters,
                        tool_context& context, mode how, role r = role::editor) const;

private:
    struct entry;
    // The table's entries, then the extra tools offered now.
    std::vector<tool_source::entry> all() const;

    std::vector<std::unique_ptr<entry>> entries_;
    const tool_source* extra_;
};

}  // namespace gateway::tools
