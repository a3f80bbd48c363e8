// What the agent loop sends: the run's conversation as a JSON-protocol request (the system
// prompt with the protocol, results as user turns) or a native one (the adapter's tool
// encoding), trimmed to the upstream's context budget. (The loop itself: agent_loop.cpp.)
#include "gateway/agent/agent_loop.hpp"

#include "gateway/agent/tool_call_parser.hpp"
#include "gateway/tools/tool.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

namespace gateway::agent {

namespace json = boost::json;

namespace {

// How the context budget (in tokens) is turned into bytes of request: a deliberately rough
// estimate, since no tokenizer is at hand.
constexpr std::size_t bytes_per_token = 4;

// response_format for a json_schema upstream: one branch per tool the role may use, each pinning
// the tool's name and its parameter schema, and one branch for the final answer.
json::object response_format(const tools::registry& tools, tools::role role) {
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
    return {{"type", "json_schema"},
            {"json_schema",
             {{"name", "agent_reply"}, {"strict", false}, {"schema", {{"oneOf", branches}}}}}};
}

// A native turn's message as the JSON protocol says it (the upstream's mode changed since it
// was stored): the first call as our call object, a result as our result message.
chat_message as_text(const chat_message& m) {
    if (m.role != "assistant_calls" && m.role != "tool") return m;
    json::error_code ec;
    auto v = json::parse(m.content, ec);
    const auto* o = ec ? nullptr : v.if_object();
    if (!o) return {"user", m.content};
    auto text = [&](std::string_view key) {
        const auto* t = o->if_contains(key);
        return t && t->is_string() ? std::string(t->as_string()) : std::string();
    };
    if (m.role == "tool") return {"user", "Result of `" + text("name") + "`:\n" + text("content")};
    const auto* calls = o->if_contains("calls");
    if (calls && calls->is_array() && !calls->as_array().empty()) {
        const auto& c = calls->as_array()[0].as_object();
        const auto* args = c.if_contains("arguments");
        return {"assistant",
                call_text(c.at("name").as_string(),
                          args && args->is_object() ? args->as_object() : json::object{}, false)};
    }
    return {"assistant", text("text")};
}

std::string message_json(const chat_message& m) {
    auto said = as_text(m);
    return json::serialize(json::object{{"role", said.role}, {"content", said.content}});
}

// A stored conversation message in the conversation model, for a native request.
providers::message native_message(const chat_message& m) {
    namespace pv = providers;
    if (m.role == "user") return {pv::role::user, {pv::part::of_text(m.content)}};
    if (m.role == "assistant") return {pv::role::assistant, {pv::part::of_text(m.content)}};
    json::error_code ec;
    auto v = json::parse(m.content, ec);
    const auto* o = ec ? nullptr : v.if_object();
    auto text = [&](std::string_view key) {
        const auto* t = o ? o->if_contains(key) : nullptr;
        return t && t->is_string() ? std::string(t->as_string()) : std::string();
    };
    if (m.role == "tool") {
        const auto* error = o ? o->if_contains("is_error") : nullptr;
        return {pv::role::tool,
                {pv::part::of_result({text("call_id"), text("name"), text("content"),
                                      error && error->is_bool() && error->as_bool()})}};
    }
    pv::message out{pv::role::assistant, {}};
    if (auto said = text("text"); !said.empty()) out.parts.push_back(pv::part::of_text(said));
    if (const auto* calls = o ? o->if_contains("calls") : nullptr; calls && calls->is_array())
        for (const auto& cv : calls->as_array()) {
            const auto& c = cv.as_object();
            pv::tool_call call;
            call.id = std::string(c.at("id").as_string());
            call.name = std::string(c.at("name").as_string());
            if (const auto* a = c.if_contains("arguments"); a && a->is_object())
                call.arguments = a->as_object();
            if (const auto* meta = c.if_contains("provider_meta"); meta && meta->is_object())
                call.provider_meta = meta->as_object();
            out.parts.push_back(pv::part::of_call(std::move(call)));
        }
    return out;
}

}  // namespace

agent_loop::request agent_loop::build_native_request(live_run& run) {
    request out;
    auto& s = run.state;
    auto from = std::max(s.segment_start, s.first_sent);
    std::size_t bytes = run.system_prompt.size();
    for (std::size_t i = from; i < run.conversation.size(); ++i)
        bytes += run.conversation[i].content.size() + 16;
    if (trim_history(run, bytes, out.trimmed)) from = std::max(s.segment_start, s.first_sent);
    auto& r = out.native;
    r.model = run.chat.model;
    r.system = run.system_prompt;
    for (std::size_t i = from; i < run.conversation.size(); ++i)
        r.messages.push_back(native_message(run.conversation[i]));
    for (const auto& m : s.failed) r.messages.push_back(native_message(m));
    for (const auto* t : tools_.for_role(run.role)) {
        const auto& spec = t->spec();
        auto schema = tools_.schema(spec.name);
        r.tools.push_back({std::string(spec.name), std::string(spec.description),
                           schema.is_object() ? schema.as_object() : json::object{}});
    }
    // At the step cap the model is asked for its answer: it may not call tools any more.
    if (s.final_request) r.choice = providers::tool_choice::none;
    return out;
}

agent_loop::request agent_loop::build_request(live_run& run) {
    request out;
    auto& prefix = run.serialized;
    auto extend = [&] {
        // A new segment, or older turns left out: the prefix starts elsewhere now.
        auto from = std::max(run.state.segment_start, run.state.first_sent);
        if (run.serialized_from != from || prefix.empty()) {
            prefix = message_json({"system", run.system_prompt});
            run.serialized_from = from;
            run.serialized_messages = from;
        }
        for (; run.serialized_messages < run.conversation.size(); ++run.serialized_messages) {
            prefix += ',';
            prefix += message_json(run.conversation[run.serialized_messages]);
        }
    };
    extend();
    if (trim_history(run, prefix.size(), out.trimmed)) extend();
    auto& body = out.body;
    body = "{\"model\":" + json::serialize(json::value(run.chat.model));
    body += ",\"messages\":[";
    body += prefix;
    for (const auto& m : run.state.failed) {
        body += ',';
        body += message_json(m);
    }
    body += ']';
    if (model_.upstream_for(run.chat.model).json_schema) {
        body += ",\"response_format\":";
        body += json::serialize(response_format(tools_, run.role));
    }
    body += '}';
    return out;
}

// Keeps a chat run's request within its upstream's context budget: the chat's earlier turns
// (before turn_start) are left out, oldest first, until the system prompt, what is left of them
// and the current turn fit; the current turn is never cut. `trimmed` is set when more was left
// out than announced so far, counting what the run never loaded. True when the request's
// messages changed.
bool agent_loop::trim_history(live_run& run, std::size_t request_bytes,
                              std::optional<json::object>& trimmed) {
    auto& s = run.state;
    if (!s.turn_start) return false;  // workflow segments hold their current turn only
    const auto& upstream = model_.upstream_for(run.chat.model);
    auto budget = upstream.context_budget * bytes_per_token;
    auto turn_start = *s.turn_start;
    auto first = s.first_sent;
    bool changed = false;
    if (budget > 0 && request_bytes > budget && first < turn_start) {
        auto excess = request_bytes - budget;
        while (first < turn_start && excess > 0) {
            auto size = message_json(run.conversation[first]).size() + 1;
            excess = excess > size ? excess - size : 0;
            ++first;
        }
        // The kept history starts with a user turn, as every provider expects.
        while (first < turn_start && run.conversation[first].role == "assistant") ++first;
        s.first_sent = first;
        changed = true;
    }
    auto left_out = s.left_out + first;
    if (left_out > s.trim_reported) {
        s.trim_reported = left_out;
        trimmed = json::object{{"left_out_messages", left_out},
                               {"kept_messages", turn_start - first},
                               {"budget_tokens", upstream.context_budget}};
    }
    return changed;
}

}  // namespace gateway::agent
