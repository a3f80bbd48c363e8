#include "gateway/agent/enhanced_prompt.hpp"

#include "gateway/prompts/prompt_library.hpp"
#include "gateway/tools/registry.hpp"

namespace gateway::agent {

namespace {

constexpr std::string_view protocol = R"(## How to reply

Every reply is exactly one of two things:

1. **A final answer**: plain text for the user, with no JSON object in it. Send it when the task is
   done, or when you need the user to decide something.
2. **One tool call**: exactly one JSON object and nothing else, no prose and no code fence:

{"tool": "read_file", "parameters": {"path": "README.md"}, "terminate": false}

- `tool` is one of the tool names above, and `parameters` must match that tool's schema.
- `terminate: false`: the tool runs, you receive its result, and you continue.
- `terminate: true`: the tool runs and the task ends with its result as the final output. Use it
  only when that result is everything the user needs.
- One call per reply. Wait for each result before the next call.
- Tools that change files or the document may need the user's approval. If the user denies an
  operation, you are told why; adapt instead of repeating it.
)";

constexpr std::string_view guidance = R"(## Working guidance

- Read before you edit: look at the current text of a file (read_file, search_files) before
  changing it, and use the exact text you read.
- Prefer small, exact edits (doc_edit str_replace, edit_lines, replace_in_file) over rewriting
  whole files.
- Paths are relative to the workspace root.
- When you are done, say briefly what you changed and where.
- For diagrams, use mermaid code blocks.
)";

constexpr std::string_view native_protocol = R"(## How to work

You have tools, given to you through the tool-calling interface. Call them to look before you
act and to make changes; several independent calls may go in one turn, and they run in order.
When the task is done, or you need the user to decide something, reply with plain text and no
tool call: that is your final answer. Tools that change files or the document may need the
user's approval; if the user denies an operation you are told why, so adapt instead of
repeating it.
)";

}  // namespace

std::string native_prompt(const prompts::prompt& base) {
    std::string out = base.body;
    while (out.ends_with('\n')) out.pop_back();
    out += "\n\n";
    out += native_protocol;
    out += '\n';
    out += guidance;
    return out;
}

std::string enhanced_prompt(const prompts::prompt& base, const tools::registry& tools,
                            tools::role role) {
    std::string out = base.body;
    while (out.ends_with('\n')) out.pop_back();
    out +=
        "\n\n## Tools\n\nYou can use these tools. Each is listed with its parameters as JSON "
        "Schema.\n\n";
    out += tools.catalogue(role);
    out += protocol;
    out += '\n';
    out += guidance;
    return out;
}

}  // namespace gateway::agent
