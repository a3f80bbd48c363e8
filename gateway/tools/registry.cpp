#include "gateway/tools/registry.hpp"

#include "gateway/tools/append_file.hpp"
#include "gateway/tools/create_file.hpp"
#include "gateway/tools/delete_file.hpp"
#include "gateway/tools/doc_edit.hpp"
#include "gateway/tools/edit_document.hpp"
#include "gateway/tools/edit_file.hpp"
#include "gateway/tools/edit_lines.hpp"
#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/find_definition.hpp"
#include "gateway/tools/find_files.hpp"
#include "gateway/tools/find_importers.hpp"
#include "gateway/tools/get_document_info.hpp"
#include "gateway/tools/json_schema.hpp"
#include "gateway/tools/list_files.hpp"
#include "gateway/tools/read_document.hpp"
#include "gateway/tools/read_file.hpp"
#include "gateway/tools/replace_in_file.hpp"
#include "gateway/tools/search_document.hpp"
#include "gateway/tools/search_files.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <stdexcept>

namespace gateway::tools {

namespace {

const tool_source::entry* find_in(const std::vector<tool_source::entry>& entries,
                                  std::string_view name) {
    for (const auto& e : entries)
        if (e.implementation->spec().name == name) return &e;
    return nullptr;
}

}  // namespace

struct registry::entry {
    std::unique_ptr<tool> implementation;
    boost::json::value schema;
    std::unique_ptr<json_schema> compiled;
};

registry::registry(const tool_source* extra) : extra_(extra) {
    std::vector<std::unique_ptr<tool>> table;
    // Search & Discovery
    table.push_back(std::make_unique<list_files_tool>());
    table.push_back(std::make_unique<find_files_tool>());
    table.push_back(std::make_unique<search_files_tool>());
    table.push_back(std::make_unique<find_definition_tool>());
    table.push_back(std::make_unique<find_importers_tool>());
    // File Reading
    table.push_back(std::make_unique<read_file_tool>());
    // File Writing
    table.push_back(std::make_unique<create_file_tool>());
    table.push_back(std::make_unique<edit_file_tool>());
    table.push_back(std::make_unique<append_file_tool>());
    table.push_back(std::make_unique<replace_in_file_tool>());
    table.push_back(std::make_unique<edit_lines_tool>());
    table.push_back(std::make_unique<doc_edit_tool>());
    // File Management
    table.push_back(std::make_unique<delete_file_tool>());
    // Document
    table.push_back(std::make_unique<read_document_tool>());
    table.push_back(std::make_unique<search_document_tool>());
    table.push_back(std::make_unique<edit_document_tool>());
    table.push_back(std::make_unique<get_document_info_tool>());

    for (auto& t : table) {
        auto e = std::make_unique<entry>();
        boost::system::error_code ec;
        e->schema = boost::json::parse(t->spec().schema, ec);
        if (ec) throw std::logic_error("tool " + std::string(t->spec().name) + ": bad schema");
        std::string error;
        e->compiled = json_schema::compile(e->schema, error);
        if (!e->compiled)
            throw std::logic_error("tool " + std::string(t->spec().name) + ": " + error);
        e->implementation = std::move(t);
        entries_.push_back(std::move(e));
    }
}

registry::~registry() = default;

const registry& registry::standard() {
    static const registry instance;
    return instance;
}

std::vector<tool_source::entry> registry::all() const {
    std::vector<tool_source::entry> out;
    out.reserve(entries_.size());
    for (const auto& e : entries_)
        out.push_back({e->implementation.get(), &e->schema, e->compiled.get()});
    if (!extra_) return out;
    for (const auto& e : extra_->current())
        if (!find_in(out, e.implementation->spec().name)) out.push_back(e);
    return out;
}

const tool* registry::find(std::string_view name) const {
    for (const auto& e : entries_)
        if (e->implementation->spec().name == name) return e->implementation.get();
    if (!extra_) return nullptr;
    auto offered = extra_->current();
    const auto* found = find_in(offered, name);
    return found ? found->implementation : nullptr;
}

std::vector<const tool*> registry::for_role(role r) const {
    std::vector<const tool*> out;
    auto granted = permissions_of(r);
    for (const auto& e : all())
        if ((e.implementation->spec().permissions & ~granted) == 0) out.push_back(e.implementation);
    return out;
}

const boost::json::value& registry::schema(std::string_view name) const {
    static const boost::json::value none;
    for (const auto& e : entries_)
        if (e->implementation->spec().name == name) return e->schema;
    if (!extra_) return none;
    auto offered = extra_->current();
    const auto* found = find_in(offered, name);
    return found ? *found->schema : none;
}

std::string registry::catalogue(role r) const {
    std::string out;
    auto tools = for_role(r);
    // The categories in their fixed order, then the extra tools' groups as they come.
    std::vector<std::string_view> groups;
    for (auto group : {category::search, category::reading, category::writing, category::management,
                       category::document})
        groups.push_back(category_title(group));
    for (const auto* t : tools)
        if (std::find(groups.begin(), groups.end(), t->group_title()) == groups.end())
            groups.push_back(t->group_title());
    for (auto group : groups) {
        bool header = false;
        for (const auto* t : tools) {
            const auto& spec = t->spec();
            if (t->group_title() != group) continue;
            if (!header) {
                out += "### ";
                out += group;
                out += "\n\n";
                header = true;
            }
            out += "- `";
            out += spec.name;
            out += "`: ";
            out += spec.description;
            if (spec.needs_approval) out += " (needs the user's approval)";
            out += "\n  Parameters: ";
            out += boost::json::serialize(schema(spec.name));
            out += "\n";
        }
        if (header) out += "\n";
    }
    return out;
}

std::string registry::validate(std::string_view name, const boost::json::value& parameters) const {
    for (const auto& e : entries_) {
        if (e->implementation->spec().name != name) continue;
        return e->compiled->validate(parameters);
    }
    if (!extra_) return "unknown tool";
    auto offered = extra_->current();
    const auto* found = find_in(offered, name);
    if (!found) return "unknown tool";
    return found->compiled ? found->compiled->validate(parameters) : std::string();
}

std::optional<tool_result> registry::refusal(std::string_view name,
                                             const boost::json::value& parameters, role r) const {
    const tool* t = find(name);
    if (!t) {
        std::string names;
        for (const auto* candidate : for_role(r)) {
            if (!names.empty()) names += ", ";
            names += candidate->spec().name;
        }
        return tool_result::failure(code::unknown_tool, "There is no tool named " + quoted(name) +
                                                            ". Valid tools: " + names + ".");
    }
    if ((t->spec().permissions & ~permissions_of(r)) != 0)
        return tool_result::failure(
            code::permission_denied,
            "Tool " + quoted(name) + " changes files, and this chat may only read them.");
    if (!parameters.is_object())
        return tool_result::failure(code::invalid_parameters, "The parameters of " + quoted(name) +
                                                                  " must be a JSON object.");
    if (auto problem = validate(name, parameters); !problem.empty())
        return tool_result::failure(code::invalid_parameters,
                                    "Invalid parameters for " + quoted(name) + " at " + problem);
    return std::nullopt;
}

tool_result registry::execute(std::string_view name, const boost::json::value& parameters,
                              tool_context& context, mode how, role r) const {
    if (auto refused = refusal(name, parameters, r)) return std::move(*refused);
    return find(name)->run(parameters.as_object(), context, how);
}

}  // namespace gateway::tools
