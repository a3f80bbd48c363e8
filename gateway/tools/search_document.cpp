#include "gateway/tools/search_document.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/text_document.hpp"

#include <re2/re2.h>

namespace gateway::tools {

const tool_spec& search_document_tool::spec() const {
    static const tool_spec s{
        "search_document",
        "Search the open document for a text (case-insensitive) or RE2 regular expression; each "
        "match with one line of context either side, at most 20 matches.",
        category::document,
        R"({"type":"object","properties":{
            "query":{"type":"string","minLength":1},
            "is_regex":{"type":"boolean","default":false}},
            "required":["query"],"additionalProperties":false})",
        read_files,
        false};
    return s;
}

tool_result search_document_tool::run(const boost::json::object& p, tool_context& context,
                                      mode) const {
    if (!context.document) return no_document();
    auto query = string_param(p, "query");
    RE2::Options options;
    options.set_log_errors(false);
    options.set_case_sensitive(false);
    if (!bool_param(p, "is_regex", false)) options.set_literal(true);
    RE2 re(query, options);
    if (!re.ok())
        return tool_result::failure(
            code::invalid_regex, "Invalid regular expression " + quoted(query) + ": " + re.error());
    text_document doc(context.document->content);
    std::size_t total = 0;
    auto cap = static_cast<std::size_t>(context.limits.document_search_cap);
    std::string body;
    boost::json::array matches;
    for (std::size_t n = 1; n <= doc.line_count(); ++n) {
        auto line = doc.line(n);
        if (!RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), re)) continue;
        if (++total > cap) continue;
        if (!body.empty()) body += "--\n";
        body += doc.numbered(n > 1 ? n - 1 : 1, n + 1);
        matches.push_back(boost::json::object{{"line", n}, {"text", std::string(line)}});
    }
    std::string text;
    if (total == 0) {
        text = "No matches for " + quoted(query) + " in \"" + context.document->name + "\".";
    } else {
        text = "Found " + std::to_string(total) + (total == 1 ? " match" : " matches") + " in \"" +
               context.document->name + "\"";
        if (total > cap) text += ", showing the first " + std::to_string(cap);
        text += ":\n" + body;
        if (total > cap) text += "Use a more specific query to see the others.\n";
    }
    return tool_result::success(
        cap_text(std::move(text), context.limits.max_result_chars, "Use a more specific query."),
        {{"matches", std::move(matches)}, {"total", total}});
}

}  // namespace gateway::tools
