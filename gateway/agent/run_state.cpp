#include "gateway/agent/run_state.hpp"

#include "gateway/run_events.hpp"

#include <boost/json/error.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <array>

namespace gateway::agent {

namespace {

using boost::system::result;

constexpr std::array<std::string_view, 5> phase_names{"", "extract", "tool", "prompt", "agent"};

boost::system::error_code mismatch() {
    return make_error_code(json::error::not_object);
}

// Reads members of one JSON object into typed fields: a missing member keeps the field's
// default, a member of the wrong type makes the whole read fail.
class fields {
public:
    explicit fields(const json::value& v) : object_(v.if_object()), ok_(object_ != nullptr) {}

    template <class T>
    fields& get(std::string_view key, T& out) {
        if (!ok_) return *this;
        const auto* v = object_->if_contains(key);
        if (!v || v->is_null()) return *this;
        auto r = json::try_value_to<T>(*v);
        if (r)
            out = std::move(*r);
        else
            ok_ = false;
        return *this;
    }

    template <class T>
    fields& get(std::string_view key, std::optional<T>& out) {
        if (!ok_) return *this;
        const auto* v = object_->if_contains(key);
        if (!v || v->is_null()) return *this;
        auto r = json::try_value_to<T>(*v);
        if (r)
            out = std::move(*r);
        else
            ok_ = false;
        return *this;
    }

    // A size: a non-negative integer.
    fields& size(std::string_view key, std::size_t& out) {
        std::int64_t n = static_cast<std::int64_t>(out);
        get(key, n);
        if (n < 0) ok_ = false;
        if (ok_) out = static_cast<std::size_t>(n);
        return *this;
    }

    // Conversation messages, in either stored form (read_message).
    fields& messages(std::string_view key, conversation& out) {
        if (!ok_) return *this;
        const auto* v = object_->if_contains(key);
        if (!v || v->is_null()) return *this;
        if (!v->is_array()) {
            ok_ = false;
            return *this;
        }
        for (const auto& m : v->get_array()) {
            auto read = read_message(m);
            if (!read) {
                ok_ = false;
                return *this;
            }
            out.push_back(std::move(*read));
        }
        return *this;
    }

    fields& phase(std::string_view key, workflow_phase& out) {
        std::string name(phase_name(out));
        get(key, name);
        for (std::size_t i = 0; i < phase_names.size(); ++i)
            if (phase_names[i] == name) {
                out = static_cast<workflow_phase>(i);
                return *this;
            }
        ok_ = false;
        return *this;
    }

    bool ok() const { return ok_; }

private:
    const json::object* object_;
    bool ok_;
};

template <class T>
void put_optional(json::object& o, std::string_view key, const std::optional<T>& v) {
    if (v) o[key] = json::value_from(*v);
}

}  // namespace

bool is_final_event(std::string_view type) {
    return event::ends_run(type);
}

std::string_view phase_name(workflow_phase p) {
    return phase_names[static_cast<std::size_t>(p)];
}

void tag_invoke(const json::value_from_tag&, json::value& v, const write_intent& w) {
    v = json::object{{"path", w.path},
                     {"existed", w.existed},
                     {"before_sha256", w.before_sha256},
                     {"after_sha256", w.after_sha256}};
}

result<write_intent> tag_invoke(const json::try_value_to_tag<write_intent>&, const json::value& v) {
    write_intent w;
    fields f(v);
    f.get("path", w.path)
        .get("existed", w.existed)
        .get("before_sha256", w.before_sha256)
        .get("after_sha256", w.after_sha256);
    if (!f.ok()) return mismatch();
    return w;
}

void tag_invoke(const json::value_from_tag&, json::value& v, const pending_call& p) {
    json::object o{{"call_id", p.call_id},       {"tool", p.tool},
                   {"parameters", p.parameters}, {"terminate", p.terminate},
                   {"asked", p.asked},           {"requested_at", p.requested_at}};
    if (!p.workflow_step.empty()) o["workflow_step"] = p.workflow_step;
    if (!p.reason.empty()) o["reason"] = p.reason;
    put_optional(o, "document_version", p.document_version);
    put_optional(o, "executing", p.executing);
    if (!p.native_id.empty()) o["native_id"] = p.native_id;
    v = std::move(o);
}

result<pending_call> tag_invoke(const json::try_value_to_tag<pending_call>&, const json::value& v) {
    pending_call p;
    fields f(v);
    f.get("call_id", p.call_id)
        .get("tool", p.tool)
        .get("parameters", p.parameters)
        .get("terminate", p.terminate)
        .get("asked", p.asked)
        .get("requested_at", p.requested_at)
        .get("workflow_step", p.workflow_step)
        .get("reason", p.reason)
        .get("document_version", p.document_version)
        .get("executing", p.executing)
        .get("native_id", p.native_id);
    if (!f.ok() || p.call_id.empty() || p.tool.empty()) return mismatch();
    return p;
}

void tag_invoke(const json::value_from_tag&, json::value& v, const step_output& s) {
    json::object o{{"output", s.output}, {"data", s.data}};
    if (s.skipped) o["skipped"] = true;
    v = std::move(o);
}

result<step_output> tag_invoke(const json::try_value_to_tag<step_output>&, const json::value& v) {
    step_output s;
    fields f(v);
    f.get("output", s.output).get("data", s.data).get("skipped", s.skipped);
    if (!f.ok()) return mismatch();
    return s;
}

void tag_invoke(const json::value_from_tag&, json::value& v, const workflow_progress& w) {
    json::object outputs;
    for (const auto& [id, out] : w.outputs) outputs[id] = json::value_from(out);
    json::object o{{"id", w.id},
                   {"parameters", w.parameters},
                   {"next", w.next},
                   {"phase", phase_name(w.phase)},
                   {"outputs", std::move(outputs)}};
    if (!w.input.empty()) o["input"] = w.input;
    if (!w.text.empty()) o["text"] = w.text;
    if (!w.role.empty()) o["role"] = w.role;
    v = std::move(o);
}

result<workflow_progress> tag_invoke(const json::try_value_to_tag<workflow_progress>&,
                                     const json::value& v) {
    workflow_progress w;
    fields f(v);
    f.get("id", w.id)
        .get("parameters", w.parameters)
        .size("next", w.next)
        .phase("phase", w.phase)
        .get("outputs", w.outputs)
        .get("input", w.input)
        .get("text", w.text)
        .get("role", w.role);
    if (!f.ok() || w.id.empty()) return mismatch();
    return w;
}

void tag_invoke(const json::value_from_tag&, json::value& v, const run_state& s) {
    json::object o{{"version", s.version},
                   {"failed", json::value_from(s.failed)},
                   {"retries", s.retries},
                   {"last_call", s.last_call},
                   {"identical", s.identical},
                   {"tool_errors", s.tool_errors},
                   {"final_request", s.final_request},
                   {"segment_start", s.segment_start},
                   {"left_out", s.left_out},
                   {"first_sent", s.first_sent},
                   {"trim_reported", s.trim_reported},
                   {"approved_tools", json::value_from(s.approved_tools)},
                   {"active_ms", s.active_ms}};
    put_optional(o, "turns", s.turns);
    put_optional(o, "turn_limit", s.turn_limit);
    put_optional(o, "turn_start", s.turn_start);
    put_optional(o, "pending", s.pending);
    if (!s.queue.empty()) o["queue"] = json::value_from(s.queue);
    put_optional(o, "workflow", s.workflow);
    if (s.usage.calls > 0) o["usage"] = json::value_from(s.usage);
    v = std::move(o);
}

result<run_state> tag_invoke(const json::try_value_to_tag<run_state>&, const json::value& v) {
    run_state s;
    s.version = 1;  // a state without a version is the first release's
    fields f(v);
    f.get("version", s.version)
        .messages("failed", s.failed)
        .get("retries", s.retries)
        .get("last_call", s.last_call)
        .get("identical", s.identical)
        .get("tool_errors", s.tool_errors)
        .get("final_request", s.final_request)
        .size("segment_start", s.segment_start)
        .get("turns", s.turns)
        .get("turn_limit", s.turn_limit)
        .get("turn_start", s.turn_start)
        .size("left_out", s.left_out)
        .size("first_sent", s.first_sent)
        .size("trim_reported", s.trim_reported)
        .get("approved_tools", s.approved_tools)
        .get("active_ms", s.active_ms)
        .get("pending", s.pending)
        .get("queue", s.queue)
        .get("workflow", s.workflow)
        .get("usage", s.usage);
    if (!f.ok() || s.version < 1) return mismatch();
    return s;
}

std::string serialize_state(const run_state& s) {
    return json::serialize(json::value_from(s));
}

result<run_state> parse_state(std::string_view text) {
    if (text.empty()) return run_state{};
    boost::system::error_code ec;
    auto value = json::parse(text, ec);
    if (ec) return ec;
    auto state = json::try_value_to<run_state>(value);
    if (!state) return state;
    if (state->version > run_state::current_version)
        return make_error_code(boost::system::errc::not_supported);
    state->version = run_state::current_version;  // read: it is this version's state now
    return state;
}

model_usage usage_of(std::string_view text) {
    if (text.empty()) return {};
    boost::system::error_code ec;
    auto value = json::parse(text, ec);
    const auto* state = value.if_object();
    if (ec || !state) return {};
    const auto* usage = state->if_contains("usage");
    if (!usage) return {};
    auto read = json::try_value_to<model_usage>(*usage);
    return read ? *read : model_usage{};
}

}  // namespace gateway::agent
