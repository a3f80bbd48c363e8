#pragma once

#include "gateway/tools/tool.hpp"

namespace gateway::tools {

// `find_definition`: Finds where a symbol is defined, from the workspace symbol index. The
// parameters, limits and error codes are in its spec and in docs/tools.md.
class find_definition_tool final : public tool {
public:
    const tool_spec& spec() const override;
    tool_result run(const boost::json::object& parameters, tool_context& context,
                    mode how) const override;
};

}  // namespace gateway::tools
