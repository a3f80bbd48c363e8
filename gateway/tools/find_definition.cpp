#include "gateway/tools/find_definition.hpp"

#include "gateway/tools/symbol_index.hpp"
#include "gateway/tools/workspace.hpp"

namespace gateway::tools {

const tool_spec& find_definition_tool::spec() const {
    static const tool_spec s{
        "find_definition",
        "Find where a function, class, variable or import is defined (exact name), from the "
        "workspace symbol index (Universal Ctags, or regular expressions without it).",
        category::search,
        R"({"type":"object","properties":{
            "symbol":{"type":"string","minLength":1,"description":"exact name, e.g. DatabaseService"},
            "type":{"type":"string","enum":["function","class","variable","import"]}},
            "required":["symbol"],"additionalProperties":false})",
        read_files,
        false};
    return s;
}

tool_result find_definition_tool::run(const boost::json::object& p, tool_context& context,
                                      mode) const {
    if (!context.files) return no_workspace();
    auto name = string_param(p, "symbol");
    auto type = string_param(p, "type");
    auto lookup = context.files->symbols().find(name, type);
    auto cap = static_cast<std::size_t>(context.limits.find_cap);
    boost::json::array found;
    std::string text;
    if (lookup.found.empty()) {
        text = "No definition of " + quoted(name) + (type.empty() ? "" : " of type " + type) +
               " found. Check the spelling (names are exact and case-sensitive), or use "
               "search_files to look for it.";
    } else {
        text = "Found " + std::to_string(lookup.found.size()) +
               (lookup.found.size() == 1 ? " definition" : " definitions") + " of " + quoted(name) +
               ":\n";
        for (std::size_t i = 0; i < lookup.found.size() && i < cap; ++i) {
            const auto& s = lookup.found[i];
            text += s.path + ":" + std::to_string(s.line) + ": [" + s.kind + "] " + s.text + "\n";
            found.push_back(boost::json::object{{"path", s.path},
                                                {"line", s.line},
                                                {"kind", s.kind},
                                                {"type", s.type},
                                                {"text", s.text}});
        }
        if (lookup.found.size() > cap)
            text += "... " + std::to_string(lookup.found.size() - cap) +
                    " more; pass `type` to narrow.\n";
    }
    return tool_result::success(std::move(text),
                                {{"definitions", std::move(found)}, {"engine", lookup.engine}});
}

}  // namespace gateway::tools
