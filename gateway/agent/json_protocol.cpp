#include "gateway/agent/json_protocol.hpp"

#include "gateway/agent/tool_call_parser.hpp"
#include "gateway/tools/tool.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace gateway::agent {

namespace json = boost::json;
namespace pv = providers;

message protocol_message(const message& m) {
    if (m.who == pv::role::tool) {
        std::string said;
        for (const auto& p : m.parts) {
            if (p.what != pv::part::kind::tool_result) continue;
            if (!said.empty()) said += "\n\n";
            if (!p.result.is_error) said += "Result of `" + p.result.name + "`:\n";
            said += p.result.content;
        }
        return user_text(std::move(said));
    }
    auto calls = m.calls();
    if (m.who == pv::role::assistant && !calls.empty()) {
        const auto& c = *calls.front();
        return assistant_text(call_text(c.name, c.arguments, terminates(c)));
    }
    return message::of_text(m.who, m.text());
}

pv::json_format protocol_format(const tools::registry& tools, tools::role role) {
    json::array branches;
    for (const auto* t : tools.for_role(role)) {
        auto name = t->spec().name;
        branches.push_back(
            json::object{{"type", "object"},
                         {"properties",
                          {{"tool", {{"const", name}}},
                           {"parameters", tools.schema(name)},
                           {"terminate", {{"type", "boolean"}}}}},
                         {"required", json::array{"tool", "parameters", "terminate"}},
                         {"additionalProperties", false}});
    }
    branches.push_back(json::object{{"type", "object"},
                                    {"properties", {{"answer", {{"type", "string"}}}}},
                                    {"required", json::array{"answer"}},
                                    {"additionalProperties", false}});
    return {"agent_reply", {{"oneOf", std::move(branches)}}, false};
}

std::optional<std::string> schema_answer(std::string_view content) {
    json::error_code ec;
    auto value = json::parse(content, ec);
    if (ec || !value.is_object()) return std::nullopt;
    const auto& o = value.as_object();
    auto* answer = o.if_contains("answer");
    if (!answer || !answer->is_string() || o.contains("tool")) return std::nullopt;
    return std::string(answer->as_string());
}

std::string protocol_text(const pv::reply& r) {
    auto text = r.content.text();
    auto calls = r.content.calls();
    if (text.empty() && !calls.empty())
        return json::serialize(
            json::object{{"tool", calls[0]->name}, {"parameters", calls[0]->arguments}});
    return text;
}

}  // namespace gateway::agent
