#pragma once

#include "gateway/tools/registry.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

namespace tools_test {

// A chat with an open document and no workspace.
struct open_document_chat {
    gateway::tools::open_document document{
        "essay.md", "# Title\n\nThe quick brown fox.\nIt jumps.\n\nThe end.\n", {}, {}};
    gateway::tools::tool_context context;
    open_document_chat() { context.document = &document; }
    gateway::tools::tool_result run(const std::string& name, const std::string& parameters,
                                    gateway::tools::mode how = gateway::tools::mode::execute) {
        return gateway::tools::registry::standard().execute(name, boost::json::parse(parameters),
                                                            context, how);
    }
};

}  // namespace tools_test
