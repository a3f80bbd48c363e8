#include "gateway/agent/tool_call_parser.hpp"

#include "gateway/tools/registry.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>

#include <optional>
#include <vector>

namespace gateway::agent {

std::string_view failure_name(failure f) {
    switch (f) {
        case failure::none:
            return "NONE";
        case failure::no_json:
            return "NO_JSON";
        case failure::invalid_json:
            return "INVALID_JSON";
        case failure::multiple_calls:
            return "MULTIPLE_CALLS";
        case failure::unknown_tool:
            return "UNKNOWN_TOOL";
        case failure::schema_violation:
            return "SCHEMA_VIOLATION";
        case failure::truncated:
            return "TRUNCATED";
    }
    return "UNKNOWN";
}

namespace {

constexpr std::string_view format_reminder =
    "Reply with plain text for a final answer, or with exactly one JSON object "
    "{\"tool\": \"<name>\", \"parameters\": {...}, \"terminate\": false} and nothing else.";

parsed_reply malformed(failure reason, std::string message) {
    parsed_reply out;
    out.what = parsed_reply::kind::malformed;
    out.reason = reason;
    out.message = std::move(message);
    out.message += ' ';
    out.message += format_reminder;
    return out;
}

// A top-level {...} span found by brace matching that skips strings and escapes.
struct span {
    std::size_t begin;
    std::size_t end;  // one past the closing brace; npos when the text ends first
};

std::vector<span> object_spans(std::string_view text) {
    std::vector<span> spans;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] != '{') {
            ++i;
            continue;
        }
        std::size_t begin = i, depth = 0;
        bool in_string = false, closed = false;
        for (; i < text.size(); ++i) {
            char c = text[i];
            if (in_string) {
                if (c == '\\')
                    ++i;
                else if (c == '"')
                    in_string = false;
            } else if (c == '"') {
                in_string = true;
            } else if (c == '{') {
                ++depth;
            } else if (c == '}' && --depth == 0) {
                closed = true;
                ++i;
                break;
            }
        }
        spans.push_back({begin, closed ? i : std::string_view::npos});
        if (!closed) break;
    }
    return spans;
}

bool mentions_call(std::string_view text) {
    return text.find("\"tool\"") != std::string_view::npos ||
           text.find("\"name\"") != std::string_view::npos ||
           text.find("\"parameters\"") != std::string_view::npos ||
           text.find("\"arguments\"") != std::string_view::npos;
}

// A call attempted without JSON: `read_file(path="x")`, a ```json fence with no object, or the
// protocol's keys with no braces around them.
bool attempted_call(std::string_view text, const std::vector<const tools::tool*>& available) {
    // A fence that holds an object is code in an answer (a config example); an empty one is not.
    if (auto fence = text.find("```json");
        fence != std::string_view::npos && text.find('{', fence) == std::string_view::npos)
        return true;
    if (mentions_call(text)) return true;
    for (const auto* t : available) {
        auto name = t->spec().name;
        for (auto pos = text.find(name); pos != std::string_view::npos;
             pos = text.find(name, pos + 1)) {
            auto after = pos + name.size();
            while (after < text.size() && text[after] == ' ') ++after;
            if (after < text.size() && text[after] == '(') return true;
        }
    }
    return false;
}

// A call written as a Python literal: {'tool': 'read_file', 'parameters': {...}}.
bool python_literal_call(std::string_view text) {
    for (std::string_view key : {"'tool'", "'parameters'", "'arguments'"}) {
        auto at = text.find(key);
        if (at == std::string_view::npos) continue;
        auto after = text.find_first_not_of(' ', at + key.size());
        if (after != std::string_view::npos && text[after] == ':') return true;
    }
    return false;
}

// Whether a JSON object in a reply is meant as a call: it has parameters (or arguments), or its
// `tool` or `name` is one of the tools. Anything else (an example in an answer:
// {"name": "Alice", "age": 3}) is part of the answer.
bool call_like(const boost::json::object& o, const std::vector<const tools::tool*>& available) {
    if (o.contains("parameters") || o.contains("arguments")) return true;
    for (std::string_view key : {"tool", "name"}) {
        const auto* name = o.if_contains(key);
        if (!name || !name->is_string()) continue;
        for (const auto* t : available)
            if (t->spec().name == name->as_string()) return true;
    }
    return false;
}

// The calls an object holds in the shapes of native function calling, which models trained for
// it write as text: an OpenAI function object {"type": "function", "function": {"name",
// "arguments"}} (or {"function": {…}}, or the legacy {"function_call": {…}}), or a "tool_calls"
// array of them. Each becomes the flat {"name", "arguments"} the parser reads (arguments given
// as a JSON string are decoded there). Only when every call names a known tool: an object that
// names none stays prose. Empty when `o` is no such shape.
std::vector<boost::json::object> function_shapes(const boost::json::object& o,
                                                 const std::vector<const tools::tool*>& available) {
    auto known = [&](const boost::json::value* name) {
        if (!name || !name->is_string()) return false;
        for (const auto* t : available)
            if (t->spec().name == name->as_string()) return true;
        return false;
    };
    // One function object, flattened; nullopt when it is not one naming a known tool.
    auto flatten = [&](const boost::json::object& call) -> std::optional<boost::json::object> {
        const boost::json::value* fn = nullptr;
        for (std::string_view key : {"function", "function_call"})
            if (const auto* v = call.if_contains(key); v && v->is_object()) fn = v;
        if (!fn || !known(fn->as_object().if_contains("name"))) return std::nullopt;
        boost::json::object flat{{"name", fn->as_object().at("name")}};
        if (const auto* args = fn->as_object().if_contains("arguments")) flat["arguments"] = *args;
        if (const auto* terminate = call.if_contains("terminate")) flat["terminate"] = *terminate;
        return flat;
    };
    std::vector<boost::json::object> out;
    if (const auto* list = o.if_contains("tool_calls"); list && list->is_array()) {
        for (const auto& item : list->as_array()) {
            auto flat = item.is_object() ? flatten(item.as_object()) : std::nullopt;
            if (!flat) return {};
            out.push_back(std::move(*flat));
        }
        return out;
    }
    if (auto flat = flatten(o)) out.push_back(std::move(*flat));
    return out;
}

// What follows the model's reasoning: the text after the last </think>. A reply still inside
// <think> has nothing that counts.
std::optional<std::string_view> after_thinking(std::string_view text) {
    auto close = text.rfind("</think>");
    if (close != std::string_view::npos) return text.substr(close + 8);
    auto open = text.find("<think>");
    if (open != std::string_view::npos && text.find_first_not_of(" \t\r\n") == open)
        return std::nullopt;
    return text;
}

std::string excerpt(std::string_view text, std::size_t at) {
    auto from = at > 30 ? at - 30 : 0;
    std::string out(text.substr(from, 60));
    for (auto& c : out)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return out;
}

// 1-based line and column of `offset` in `text`.
std::string position(std::string_view text, std::size_t offset) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

boost::json::value parse_json(std::string_view text, boost::system::error_code& ec,
                              std::size_t& error_offset) {
    boost::json::parse_options options;
    options.max_depth = 64;
    boost::json::stream_parser parser({}, options);
    std::size_t used = parser.write_some(text.data(), text.size(), ec);
    if (!ec) parser.finish(ec);
    error_offset = used;
    if (ec) return nullptr;
    return parser.release();
}

std::string valid_names(const std::vector<const tools::tool*>& available) {
    std::string names;
    for (const auto* t : available) {
        if (!names.empty()) names += ", ";
        names += t->spec().name;
    }
    return names;
}

}  // namespace

parsed_reply parse_reply(std::string_view whole, std::string_view finish_reason,
                         const tools::registry& tools, tools::role role) {
    auto available = tools.for_role(role);
    // Reasoning is never searched for calls: only what follows it counts.
    auto answer_part = after_thinking(whole);
    if (!answer_part && finish_reason != "length")
        return malformed(failure::no_json,
                         "Your reply ends inside <think> with no answer after it. Close your "
                         "thinking with </think>, then give the final answer or one tool call.");
    auto text = answer_part.value_or(whole);
    while (!text.empty() && (text.front() == '\n' || text.front() == '\r' || text.front() == ' '))
        text.remove_prefix(1);
    if (finish_reason == "length")
        return malformed(failure::truncated,
                         "Your reply was cut off because it reached the output length limit. Do "
                         "less in one call: write a smaller part of the content per call (for "
                         "example edit one section, or use append_file for the rest), and do not "
                         "resend the same long reply.");

    // Candidate objects: balanced spans that mention the protocol's keys. Other braces (code in
    // a final answer, say) are not calls.
    std::vector<boost::json::object> calls;
    bool examples = false;  // objects that are part of the answer, not calls
    for (const auto& s : object_spans(text)) {
        if (s.end == std::string_view::npos) {
            auto rest = text.substr(s.begin);
            if (!mentions_call(rest)) break;
            return malformed(failure::invalid_json,
                             "Your JSON object starts at " + position(text, s.begin) +
                                 " but never closes (a missing `}` or an unterminated string): `" +
                                 excerpt(text, s.begin) + "`.");
        }
        auto candidate = text.substr(s.begin, s.end - s.begin);
        if (!mentions_call(candidate)) continue;
        boost::system::error_code ec;
        std::size_t offset = 0;
        auto value = parse_json(candidate, ec, offset);
        if (ec)
            return malformed(failure::invalid_json,
                             "Your tool call is not valid JSON: " + ec.message() + " at " +
                                 position(text, s.begin + offset) + ", near `" +
                                 excerpt(text, s.begin + offset) +
                                 "`. Use double quotes for keys and strings, escape newlines in "
                                 "strings as \\n, and no trailing commas.");
        if (!value.is_object()) continue;
        if (auto native = function_shapes(value.as_object(), available); !native.empty()) {
            for (auto& c : native) calls.push_back(std::move(c));
            continue;
        }
        if (call_like(value.as_object(), available))
            calls.push_back(std::move(value.as_object()));
        else
            examples = true;
    }
    if (calls.empty()) {
        if (python_literal_call(text))
            return malformed(
                failure::invalid_json,
                "Your tool call is written with single quotes, like a Python "
                "literal. JSON needs double quotes for keys and strings: "
                "{\"tool\": \"read_file\", \"parameters\": {\"path\": \"README.md\"}}.");
        if (!examples && attempted_call(text, available))
            return malformed(failure::no_json,
                             "Your reply looks like a tool call, but it contains no JSON object.");
        parsed_reply answer;
        answer.answer = std::string(text);
        return answer;
    }
    if (calls.size() > 1)
        return malformed(failure::multiple_calls,
                         "Your reply contains " + std::to_string(calls.size()) +
                             " tool calls; send exactly one per reply and wait for its result.");

    auto& object = calls.front();
    const auto* name = object.if_contains("tool");
    if (!name) name = object.if_contains("name");
    if (!name || !name->is_string())
        return malformed(failure::schema_violation,
                         "Your tool call needs a string field \"tool\" naming the tool.");
    tool_call call;
    call.tool = std::string(name->as_string());
    const tools::tool* chosen = nullptr;
    for (const auto* t : available)
        if (t->spec().name == call.tool) chosen = t;
    if (!chosen)
        return malformed(failure::unknown_tool, "There is no tool named \"" + call.tool +
                                                    "\". Valid tools: " + valid_names(available) +
                                                    ".");

    const auto* parameters = object.if_contains("parameters");
    if (!parameters) parameters = object.if_contains("arguments");
    boost::json::value reparsed;
    if (parameters && parameters->is_string()) {  // parameters sent as a JSON string
        boost::system::error_code ec;
        std::size_t offset = 0;
        std::string_view inner = parameters->as_string();
        reparsed = parse_json(inner, ec, offset);
        if (ec)
            return malformed(failure::invalid_json,
                             "The \"parameters\" string is not valid JSON: " + ec.message() +
                                 " near `" + excerpt(inner, offset) +
                                 "`. Send parameters as a JSON object.");
        parameters = &reparsed;
    }
    if (parameters && !parameters->is_object())
        return malformed(failure::schema_violation,
                         "\"parameters\" of " + call.tool + " must be a JSON object.");
    if (parameters) call.parameters = parameters->as_object();
    if (const auto* terminate = object.if_contains("terminate")) {
        if (!terminate->is_bool())
            return malformed(failure::schema_violation,
                             "\"terminate\" must be true or false (a JSON boolean).");
        call.terminate = terminate->as_bool();
    }
    auto problem = tools.validate(call.tool, call.parameters);
    if (!problem.empty())
        return malformed(failure::schema_violation,
                         "The parameters of " + call.tool + " are invalid at " + problem +
                             ". Its schema: " + boost::json::serialize(tools.schema(call.tool)) +
                             ".");
    parsed_reply out;
    out.what = parsed_reply::kind::call;
    out.call = std::move(call);
    return out;
}

std::string call_text(std::string_view tool, const boost::json::object& parameters,
                      bool terminate) {
    return boost::json::serialize(
        boost::json::object{{"tool", tool}, {"parameters", parameters}, {"terminate", terminate}});
}

}  // namespace gateway::agent
