#pragma once

#include "gateway/tools/tool.hpp"

namespace gateway::tools {

// `doc_edit`: An editor with view, str_replace, insert, append and create commands, on a workspace
// file (`path`) or on the chat's open document (`document`, its name). The parameters,
// limits and error codes are in its spec and in docs/tools.md.
class doc_edit_tool final : public tool {
public:
    const tool_spec& spec() const override;
    tool_result run(const boost::json::object& parameters, tool_context& context,
                    mode how) const override;
    bool needs_approval_for(const boost::json::object& parameters) const override;
    bool uses_document(const boost::json::object& parameters) const override;
};

}  // namespace gateway::tools
