#pragma once

#include "gateway/tools/tool.hpp"

namespace gateway::tools {

// `edit_document`: Replaces the first occurrence of a text in the chat's open document. The
// parameters, limits and error codes are in its spec and in docs/tools.md.
class edit_document_tool final : public tool {
public:
    const tool_spec& spec() const override;
    tool_result run(const boost::json::object& parameters, tool_context& context,
                    mode how) const override;
};

}  // namespace gateway::tools
