#include "gateway/mcp/remote_tool.hpp"

#include "gateway/mcp/hub.hpp"

#include <boost/json/serialize.hpp>

namespace gateway::mcp {

namespace json = boost::json;

namespace {

constexpr std::size_t max_description = 1024;

bool hint(const json::object& definition, std::string_view key) {
    const auto* a = definition.if_contains("annotations");
    const auto* annotations = a ? a->if_object() : nullptr;
    const auto* v = annotations ? annotations->if_contains(key) : nullptr;
    return v && v->is_bool() && v->as_bool();
}

// One line for the catalogue.
std::string one_line(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (out.size() >= max_description) break;
        char put = c == '\n' || c == '\r' || c == '\t' ? ' ' : c;
        if (put == ' ' && (out.empty() || out.back() == ' ')) continue;
        out += put;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

}  // namespace

remote_tool::remote_tool(hub& owner, const config::mcp_server_config& server, std::string exposed,
                         const json::object& definition)
    : hub_(owner),
      server_(server.name),
      name_(std::move(exposed)),
      group_("MCP server `" + server.name + "`"),
      definition_(definition) {
    if (const auto* n = definition.if_contains("name"); n && n->is_string())
        original_ = n->as_string();
    std::string text;
    for (auto key : {"description", "title"})
        if (const auto* d = definition.if_contains(key); d && d->is_string() && text.empty())
            text = d->as_string();
    description_ = one_line(
        text.empty() ? "Tool `" + original_ + "` of MCP server `" + server.name + "`." : text);
    description_ += " (MCP server `" + server.name + "`, tool `" + original_ + "`)";
    if (const auto* s = definition.if_contains("inputSchema"); s && s->is_object())
        schema_ = *s;
    else
        schema_ = json::object{{"type", "object"}};
    compiled_ = tools::json_schema::compile(schema_, schema_problem_);
    read_only_ = hint(definition, "readOnlyHint");
    destructive_ = hint(definition, "destructiveHint") && !read_only_;
    policy_ = policy(server.approval);
    spec_.name = name_;
    spec_.description = description_;
    spec_.group = tools::category::search;  // unused: group_title() names the group
    spec_.schema = {};
    spec_.permissions = read_only_ ? tools::read_files : tools::write_files;
    spec_.needs_approval = policy_ == config::approval_policy::ask;
}

config::approval_policy remote_tool::policy(config::approval_policy base) const {
    if (base == config::approval_policy::always && destructive_)
        return config::approval_policy::ask;
    return base;
}

tools::tool_result remote_tool::preview(const json::object& parameters) const {
    return tools::tool_result::success(
        "Calls `" + original_ + "` on the MCP server `" + server_ + "` with " +
            json::serialize(parameters) + ".",
        {{"server", server_}, {"tool", original_}, {"arguments", parameters}});
}

tools::tool_result remote_tool::run(const json::object& parameters, tools::tool_context& context,
                                    tools::mode how) const {
    (void)context;
    if (how == tools::mode::preview) return preview(parameters);
    return hub_.call_blocking(name_, parameters);
}

}  // namespace gateway::mcp
