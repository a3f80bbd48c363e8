#pragma once

#include "gateway/tools/tool.hpp"

namespace gateway::tools {

// `replace_in_file`: Replaces every literal or RE2 match in a file. The parameters, limits and
// error codes are in its spec and in docs/tools.md.
class replace_in_file_tool final : public tool {
public:
    const tool_spec& spec() const override;
    tool_result run(const boost::json::object& parameters, tool_context& context,
                    mode how) const override;
};

}  // namespace gateway::tools
