#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::tools {

class workspace;

// The catalogue's groups, in the order the catalogue lists them.
enum class category { search, reading, writing, management, document };
std::string_view category_title(category c);

// What a tool may touch. A role grants a set of these; `reader` grants read_files only.
enum permission : unsigned { read_files = 1, write_files = 2, delete_files = 4 };

enum class role { reader, editor };
// "reader" / "editor"; nullopt for anything else.
std::optional<role> parse_role(std::string_view name);
unsigned permissions_of(role r);

// What a tool declares about itself. `schema` is a JSON Schema (draft 7) for its parameters.
struct tool_spec {
    std::string_view name;
    std::string_view description;  // one line, for the catalogue
    category group;
    std::string_view schema;  // JSON text, parsed once by the registry
    unsigned permissions;
    bool needs_approval;  // the default policy: writes yes, reads no
};

// The document open in the chat's frontend (not a workspace file). Document tools read and edit
// it in place; the caller pushes the new content back to the frontend.
struct open_document {
    std::string name;
    std::string content;
    // The frontend's selection as byte offsets into `content`, when it has one.
    std::optional<std::size_t> selection_start;
    std::optional<std::size_t> selection_end;
};

// Bounds on what a tool reads, writes and returns. The defaults suit a model's context window.
struct tool_limits {
    std::size_t max_read_bytes = 200 * 1024;        // read_file without a range
    std::size_t max_file_bytes = 16 * 1024 * 1024;  // any file read for editing or ranges
    std::size_t max_write_bytes = 4 * 1024 * 1024;
    std::size_t max_search_file_bytes = 2 * 1024 * 1024;  // larger files are skipped by search
    std::size_t max_result_chars = 40 * 1024;  // text for the model, then a truncation marker
    int list_cap = 200;
    int find_cap = 100;
    int search_cap = 50;
    int document_search_cap = 20;
};

// Review mode: the agent's edits that are recorded as suggestions instead of written (see
// sessions/). While a file has an open edit session the tools read its AI version here instead
// of the disk (`files`: normalized path -> content, nullopt when the agent deleted it). When
// `record` is set a write lands here, not on disk, and its path is added to `changed` for the
// caller to record in the file's session.
struct pending_edits {
    std::map<std::string, std::optional<std::string>, std::less<>> files;
    bool record = false;
    std::vector<std::string> changed;

    // The pending content of `path` (normalized), or null when the disk has the say.
    const std::optional<std::string>* find(std::string_view path) const {
        auto it = files.find(path);
        return it == files.end() ? nullptr : &it->second;
    }
    void put(const std::string& path, std::optional<std::string> content) {
        files[path] = std::move(content);
        changed.push_back(path);
    }
};

// Everything a tool may use. `files` is null when the chat has no workspace, `document` when no
// document is open; tools that need either report NO_WORKSPACE / NO_DOCUMENT.
struct tool_context {
    workspace* files = nullptr;
    open_document* document = nullptr;
    pending_edits* pending = nullptr;  // review mode only
    tool_limits limits;
};

// A run's outcome. `ok` with an empty `error_code`, or a stable code (NO_MATCH,
// PATH_OUTSIDE_WORKSPACE, …) that callers and tests branch on. `text` is what the model reads;
// `data` is structured output for the API (a unified diff under "diff", match lists, …).
struct tool_result {
    bool ok = true;
    std::string error_code;
    std::string text;
    boost::json::object data;

    static tool_result success(std::string text, boost::json::object data = {});
    static tool_result failure(std::string code, std::string text);
};

// Execute for real, or compute what would happen without changing anything (the approval step
// shows a write's preview diff).
enum class mode { execute, preview };

// A tool: its declaration and one operation. Implementations are stateless and thread-safe; all
// state lives in the context. `parameters` have been validated against the schema already.
class tool {
public:
    virtual ~tool() = default;
    virtual const tool_spec& spec() const = 0;
    virtual tool_result run(const boost::json::object& parameters, tool_context& context,
                            mode how) const = 0;
    // Whether this call changes anything and so needs approval by default; doc_edit's `view`
    // does not. Defaults to the spec's declaration.
    virtual bool needs_approval_for(const boost::json::object& parameters) const {
        (void)parameters;
        return spec().needs_approval;
    }
    // Whether this call works on the chat's document (the caller loads it): the document
    // tools do, and doc_edit when it names the document instead of a path.
    virtual bool uses_document(const boost::json::object& parameters) const {
        (void)parameters;
        return spec().group == category::document;
    }
    // The catalogue heading it is listed under: its category's title; an MCP server's tools
    // have one heading per server.
    virtual std::string_view group_title() const { return category_title(spec().group); }
    // Whether it answers over the network (an MCP server's tool): the agent awaits it instead of
    // giving it one of the tool threads, and it is never recorded as a workspace edit.
    virtual bool remote() const { return false; }
};

// Parameter accessors for validated objects: the schema guaranteed the type when present.
std::string string_param(const boost::json::object& p, std::string_view key,
                         std::string_view fallback = {});
std::optional<std::string> optional_string_param(const boost::json::object& p,
                                                 std::string_view key);
std::optional<long long> optional_int_param(const boost::json::object& p, std::string_view key);
bool bool_param(const boost::json::object& p, std::string_view key, bool fallback);

// Appended piece by piece (GCC 12's -Wrestrict misfires on `"`" + std::string(s)`).
std::string quoted(std::string_view text);

// `text` cut to `limit` bytes at a line boundary when possible, with a marker saying what was
// left out and how to see it.
std::string cap_text(std::string text, std::size_t limit, std::string_view how_to_narrow);

// Results that need a workspace or a document say so the same way everywhere.
tool_result no_workspace();
tool_result no_document();

}  // namespace gateway::tools
