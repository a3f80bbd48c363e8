// What the agent loop sends: the run's conversation said in the JSON protocol (json_protocol.hpp)
// or as it is for native tool calling (the adapter's tool encoding), trimmed to the upstream's
// context budget. (The loop itself: agent_loop.cpp.)
#include "gateway/agent/agent_loop.hpp"

#include "gateway/agent/json_protocol.hpp"
#include "gateway/tools/tool.hpp"

namespace gateway::agent {

namespace json = boost::json;

namespace {

// How the context budget (in tokens) is turned into bytes of request: a deliberately rough
// estimate, since no tokenizer is at hand.
constexpr std::size_t bytes_per_token = 4;

}  // namespace

agent_loop::request agent_loop::build_request(live_run& run) {
    request out;
    auto& s = run.state;
    const auto& upstream = model_.upstream_for(run.chat.model);
    bool native = upstream.tool_calling == config::tool_calling_mode::native;
    auto from = std::max(s.segment_start, s.first_sent);
    std::size_t bytes = run.system_prompt.size();
    for (std::size_t i = from; i < run.conversation.size(); ++i)
        bytes += approx_bytes(run.conversation[i]);
    if (trim_history(run, bytes, out.trimmed)) from = std::max(s.segment_start, s.first_sent);
    auto& r = out.model;
    r.model = run.chat.model;
    r.system = run.system_prompt;
    r.messages.reserve(run.conversation.size() - from + s.failed.size());
    auto add = [&](const message& m) { r.messages.push_back(native ? m : protocol_message(m)); };
    for (std::size_t i = from; i < run.conversation.size(); ++i) add(run.conversation[i]);
    for (const auto& m : s.failed) add(m);
    if (!native) {
        if (upstream.json_schema) r.format = protocol_format(tools_, run.role);
        return out;
    }
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
            auto size = approx_bytes(run.conversation[first]);
            excess = excess > size ? excess - size : 0;
            ++first;
        }
        // The kept history starts with a user turn, as every provider expects.
        while (first < turn_start && run.conversation[first].who != providers::role::user) ++first;
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
