// The sections of the MCP hub (`mcp.servers`) and server (`mcp.serve`), declared once.
#include "gateway/config/field_kinds.hpp"

namespace gateway::config {

// The field kinds, and through them the schema's own (field_kinds uses schema).
using namespace field_kinds;

const fields<mcp_server_config>& mcp_server_fields() {
    using S = mcp_server_config;
    // What applies to one transport only is left out of the other's lines.
    static const fields<S> all{
        {"name", "1-24 letters, digits, _ -: part of its tools' names",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             s.name = r.scalar(n, "name");
             if (s.name.empty() || s.name.size() > 24 ||
                 s.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_-") != std::string::npos ||
                 s.name.find("__") != std::string::npos)
                 r.fail(n, std::string(section) +
                               ": `name` must be 1-24 letters, digits, `_` or `-` (no `__`): "
                               "it becomes part of tool names");
         },
         [](const S& s) { return quoted(s.name); }},
        choice_field<S, mcp_transport>(
            "transport", &S::transport,
            {{"stdio", mcp_transport::stdio}, {"http", mcp_transport::http}},
            "stdio (the gateway starts it) | http"),
        {"command", "stdio: the program",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.command = r.scalar(n, "command");
         },
         [](const S& s) { return s.command.empty() ? std::string() : quoted(s.command); }},
        {"args", "stdio: its arguments",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.args = r.string_list(n, "args");
         },
         [](const S& s) {
             return s.transport == mcp_transport::stdio ? flow_list(s.args) : std::string();
         }},
        masked_map_field("env", &S::env, "stdio: added to its environment"),
        {"url", "http: the server's endpoint",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.url = r.scalar(n, "url");
         },
         [](const S& s) {
             return s.url.empty() ? std::string() : quoted(mask_url_password(s.url));
         },
         true},
        masked_map_field("headers", &S::headers, "http: sent with every request"),
        {"tools", "{allow: [globs], deny: [globs]}",
         [](const yaml_reader& r, const YAML::Node& t, std::string_view section, S& s) {
             r.check_keys(t, std::string(section) + ".tools", {"allow", "deny"});
             if (auto n = t["allow"]) s.allow = r.string_list(n, "allow");
             if (auto n = t["deny"]) s.deny = r.string_list(n, "deny");
         },
         [](const S& s) {
             return "{allow: " + flow_list(s.allow) + ", deny: " + flow_list(s.deny) + "}";
         }},
        {"approval", "ask | always | never",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.approval = read_approval(r, n, "approval");
         },
         [](const S& s) { return std::string(approval_name(s.approval)); }},
        duration_field("connect_timeout", &S::connect_timeout, "starting and initializing it",
                       true),
        duration_field("call_timeout", &S::call_timeout, "one tools/call", true),
        size_field("max_output_bytes", &S::max_output_bytes, "what a result may give the model",
                   256),
    };
    return all;
}

const fields<mcp_serve_config>& mcp_serve_fields() {
    using S = mcp_serve_config;
    static const fields<S> all{
        bool_field("serve", &S::serve, "the workflows as an MCP server at /mcp"),
        text_field("model", &S::model, "the chats' model; required with serve: true"),
        {"workspace", "their workspace; empty: the first of context.workspaces",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.workspace = r.path(n, "workspace");
             if (!s.workspace.empty() && s.workspace.front() != '/')
                 r.fail(n, "`mcp.workspace` must be an absolute path");
         },
         [](const S& s) { return quoted(s.workspace); }},
        text_field("system_prompt", &S::system_prompt, "empty: context.default_prompt"),
        choice_field<S, edit_mode>("edits", &S::edits,
                                   {{"approve", edit_mode::approve}, {"review", edit_mode::review}},
                                   "approve (elicitation) | review", "mcp.edits"),
        list_field("allowed_hosts", &S::allowed_hosts, "Host/Origin names besides server's"),
    };
    return all;
}

}  // namespace gateway::config
