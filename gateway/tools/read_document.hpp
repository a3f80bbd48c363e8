#pragma once

#include "gateway/tools/tool.hpp"

namespace gateway::tools {

// `read_document`: Reads the chat's open document as numbered lines. The parameters, limits and
// error codes are in its spec and in docs/tools.md.
class read_document_tool final : public tool {
public:
    const tool_spec& spec() const override;
    tool_result run(const boost::json::object& parameters, tool_context& context,
                    mode how) const override;
};

}  // namespace gateway::tools
