#pragma once

#include "gateway/config/config.hpp"
#include "gateway/tools/json_schema.hpp"
#include "gateway/tools/tool.hpp"

#include <boost/json/value.hpp>

#include <memory>
#include <string>

namespace gateway::mcp {

class hub;

// One tool of an MCP server as the catalogue holds it: its exposed name
// (`mcp__<server>__<tool>`), description, input schema (compiled when valijson can) and the
// annotations that matter for approvals. Running it calls the server through the hub; a
// preview only says what would be called. Immutable; the hub keeps it alive as long as itself.
class remote_tool : public tools::tool {
public:
    // `definition`: one entry of the server's tools/list answer; `server` gives its group, and
    // its `approval`, made stricter by the tool's annotations, is the tool's policy().
    remote_tool(hub& owner, const config::mcp_server_config& server, std::string exposed,
                const boost::json::object& definition);

    const tools::tool_spec& spec() const override { return spec_; }
    tools::tool_result run(const boost::json::object& parameters, tools::tool_context& context,
                           tools::mode how) const override;
    std::string_view group_title() const override { return group_; }
    bool remote() const override { return true; }

    const std::string& server() const { return server_; }
    const std::string& original_name() const { return original_; }
    const boost::json::value& schema() const { return schema_; }
    const tools::json_schema* compiled() const { return compiled_.get(); }
    const std::string& schema_problem() const { return schema_problem_; }
    // The definition it was made from, to tell whether a new listing changed it.
    const boost::json::object& definition() const { return definition_; }
    bool read_only() const { return read_only_; }
    bool destructive() const { return destructive_; }

    // `base` made stricter, never looser, by the annotations: a tool that declares itself
    // destructive is asked about even where the policy says `always`.
    config::approval_policy policy(config::approval_policy base) const;
    // The server's configured policy after the annotations.
    config::approval_policy policy() const { return policy_; }

    // What a preview (the approval step) shows.
    tools::tool_result preview(const boost::json::object& parameters) const;

private:
    hub& hub_;
    std::string server_, original_, name_, description_, group_, schema_problem_;
    boost::json::object definition_;
    boost::json::value schema_;
    std::unique_ptr<tools::json_schema> compiled_;
    bool read_only_ = false, destructive_ = false;
    config::approval_policy policy_;
    tools::tool_spec spec_;
};

}  // namespace gateway::mcp
