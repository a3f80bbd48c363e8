#include "gateway/context/views.hpp"

#include "gateway/agent/excerpt.hpp"
#include "gateway/agent/run_state.hpp"

#include <boost/json/parse.hpp>

#include <charconv>

namespace gateway::context {

namespace {

json::value json_or_string(const std::string& text) {
    if (text.empty()) return nullptr;
    json::error_code ec;
    auto value = json::parse(text, ec);
    return ec ? json::value(json::string(text)) : value;
}

json::value text_or_null(const std::string& text) {
    return text.empty() ? json::value(nullptr) : json::value(text);
}

}  // namespace

json::object chat_json(const store::chat_record& c) {
    return {{"id", c.id},
            {"object", "chat"},
            {"created_at", c.created_at},
            {"system_prompt", c.system_prompt},
            {"model", c.model},
            {"workspace", text_or_null(c.workspace)},
            {"role", c.role},
            {"edits", edit_mode_name(c.edits)},
            {"title", c.title}};
}

json::object message_json(const store::message_record& m) {
    return {{"id", m.id},
            {"role", m.role},
            {"content", m.content},
            {"run_id", m.run_id},
            {"created_at", m.created_at}};
}

json::object prompt_json(const prompts::prompt& p) {
    return {{"id", p.id},
            {"object", "system_prompt"},
            {"title", p.title},
            {"description", p.description}};
}

json::object workflow_json(const workflows::workflow& w) {
    return {{"id", w.id},
            {"object", "workflow"},
            {"name", w.name},
            {"description", w.description},
            {"category", w.category},
            {"parameters", w.parameters}};
}

json::object tool_call_json(const store::tool_call_record& t) {
    return {{"id", t.id},
            {"step", t.step},
            {"tool", t.tool},
            {"parameters", json_or_string(t.parameters)},
            {"status", status_name(t.status)},
            {"preview", text_or_null(t.preview)},
            {"result", json_or_string(t.result)},
            {"created_at", t.created_at}};
}

json::value excerpt_of(json::object item, std::size_t limit, const std::string& full) {
    json::value v(std::move(item));
    auto cut = agent::cut_long_strings(v, limit);
    if (!cut.empty()) {
        json::array pointers;
        for (auto& p : cut) pointers.emplace_back(p);
        v.as_object()["truncated"] = std::move(pointers);
        v.as_object()["full"] = full;
    }
    return v;
}

json::value run_json(const store::run_record& r, const std::vector<store::tool_call_record>& calls,
                     const std::optional<std::string>& input, std::size_t limit, bool whole) {
    json::array shown_calls;
    json::value pending = nullptr;
    auto run_url = "/context/runs/" + r.id;
    for (const auto& t : calls) {
        auto call = excerpt_of(tool_call_json(t), limit, run_url + "/calls/" + t.id);
        if (t.status == tool_call_status::awaiting_approval) pending = call;
        shown_calls.push_back(std::move(call));
    }
    json::object run{{"id", r.id},
                     {"object", "run"},
                     {"chat_id", r.chat_id},
                     {"status", status_name(r.status)},
                     {"step", r.step},
                     {"max_steps", r.max_steps},
                     {"output", text_or_null(r.output)},
                     {"error", text_or_null(r.error)},
                     {"created_at", r.created_at},
                     {"updated_at", r.updated_at}};
    // What its model calls used and cost, as its state last stored them (with the model.replied
    // events that announced them).
    auto used = agent::usage_of(r.state);
    run["usage"] = agent::tokens_json(used);
    run["model_calls"] = used.calls;
    run["cost_usd"] = agent::cost_usd_json(used);
    run["unpriced_calls"] = used.unpriced_calls;
    run["estimated_calls"] = used.estimated_calls;
    if (whole) run["input"] = input ? json::value(*input) : json::value(nullptr);
    auto shown = whole ? json::value(std::move(run)) : excerpt_of(std::move(run), limit, run_url);
    shown.as_object()["pending_approval"] = std::move(pending);
    shown.as_object()["tool_calls"] = std::move(shown_calls);
    return shown;
}

std::string page_of(std::string_view target, std::size_t& limit, std::int64_t& before) {
    limit = 50;
    before = 0;
    auto number = [](const std::string& text, std::int64_t& out) {
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        return ec == std::errc{} && end == text.data() + text.size();
    };
    if (auto text = http::query_value(target, "limit"); !text.empty()) {
        std::int64_t n = 0;
        if (!number(text, n) || n < 1 || n > 500) return "`limit` must be a number from 1 to 500.";
        limit = static_cast<std::size_t>(n);
    }
    if (auto text = http::query_value(target, "before"); !text.empty())
        if (!number(text, before) || before < 1) return "`before` must be a message id.";
    return {};
}

}  // namespace gateway::context
