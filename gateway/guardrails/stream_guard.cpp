#include "gateway/guardrails/stream_guard.hpp"

#include "gateway/error.hpp"
#include "gateway/guardrails/request_scan.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace gateway::guardrails {

namespace json = boost::json;

namespace {

// Where an event carries a channel's text delta: the string, the channel's key, and whether the
// event is that delta alone (`plain`: it may be held and merged with the next).
struct delta_site {
    json::string* text = nullptr;
    std::string key;
    bool plain = false;
};

json::object* object_at(json::object& o, std::string_view name) {
    auto* v = o.if_contains(name);
    return v && v->is_object() ? &v->as_object() : nullptr;
}

json::string* string_at(json::object& o, std::string_view name) {
    auto* v = o.if_contains(name);
    return v && v->is_string() ? &v->as_string() : nullptr;
}

bool absent_or_null(const json::object& o, std::string_view name) {
    const auto* v = o.if_contains(name);
    return !v || v->is_null();
}

std::string number_text(const json::object& o, std::string_view name) {
    const auto* v = o.if_contains(name);
    return v && v->is_int64() ? std::to_string(v->as_int64()) : "0";
}

// Whether `o` holds no member but those `allowed`.
bool only(const json::object& o, std::initializer_list<std::string_view> allowed) {
    return std::all_of(o.begin(), o.end(), [&](const json::key_value_pair& member) {
        return std::find(allowed.begin(), allowed.end(), member.key()) != allowed.end();
    });
}

// A Chat Completions delta's one tool call's arguments: its own channel ("choice 0 call 1"),
// plain when the event carries nothing else (the first, with the call's id and name, does).
delta_site call_arguments(json::object& delta, const std::string& choice, bool last) {
    delta_site site;
    auto* calls = delta.if_contains("tool_calls");
    if (!calls || !calls->is_array() || calls->as_array().size() != 1 ||
        !calls->as_array()[0].is_object())
        return site;
    auto& call = calls->as_array()[0].as_object();
    auto* function = object_at(call, "function");
    if (!function) return site;
    site.text = string_at(*function, "arguments");
    site.key = choice + " call " + number_text(call, "index");
    site.plain =
        !last && delta.size() == 1 && only(call, {"index", "function"}) && function->size() == 1;
    return site;
}

delta_site locate(stream_api api, std::string_view type, json::value& data) {
    delta_site site;
    if (!data.is_object()) return site;
    auto& o = data.as_object();
    switch (api) {
        case stream_api::chat_completions: {
            auto* choices = o.if_contains("choices");
            if (!choices || !choices->is_array() || choices->as_array().size() != 1) break;
            auto& first = choices->as_array()[0];
            if (!first.is_object()) break;
            auto& choice = first.as_object();
            auto* delta = object_at(choice, "delta");
            if (!delta) break;
            auto key = "choice " + number_text(choice, "index");
            bool last = !absent_or_null(choice, "finish_reason") || !absent_or_null(o, "usage");
            site.text = string_at(*delta, "content");
            if (!site.text && delta->if_contains("tool_calls")) {
                site = call_arguments(*delta, key, last);
                break;
            }
            site.key = key;
            site.plain = delta->size() == 1 && !last;
            break;
        }
        case stream_api::responses:
            // A function call's arguments are an output item of their own (no content_index).
            if (type != "response.output_text.delta" &&
                type != "response.function_call_arguments.delta")
                break;
            site.text = string_at(o, "delta");
            site.key =
                "output " + number_text(o, "output_index") + "." + number_text(o, "content_index");
            site.plain = true;
            break;
        case stream_api::messages: {
            if (type != "content_block_delta") break;
            auto* delta = object_at(o, "delta");
            if (!delta) break;
            site.text = string_at(*delta, "text");
            if (!site.text) site.text = string_at(*delta, "thinking");
            // A tool_use block's input, as input_json_delta pieces of its JSON text.
            if (!site.text) site.text = string_at(*delta, "partial_json");
            site.key = "block " + number_text(o, "index");
            site.plain = true;
            break;
        }
        case stream_api::generate_content: {
            auto* candidates = o.if_contains("candidates");
            if (!candidates || !candidates->is_array() || candidates->as_array().size() != 1) break;
            auto& first = candidates->as_array()[0];
            if (!first.is_object()) break;
            auto& candidate = first.as_object();
            auto* content = object_at(candidate, "content");
            auto* parts = content ? content->if_contains("parts") : nullptr;
            if (!parts || !parts->is_array() || parts->as_array().size() != 1 ||
                !parts->as_array()[0].is_object())
                break;
            auto& part = parts->as_array()[0].as_object();
            site.text = string_at(part, "text");
            site.key = "candidate " + number_text(candidate, "index");
            site.plain = part.size() == 1 && absent_or_null(candidate, "finishReason");
            break;
        }
    }
    if (!site.text) site = {};
    return site;
}

// The hits of `all` that lie wholly before `cut`.
std::vector<finding> before(const std::vector<finding>& all, std::size_t cut) {
    std::vector<finding> out;
    for (const auto& f : all)
        if (f.end <= cut) out.push_back(f);
    return out;
}

}  // namespace

stream_guard::stream_guard(stream_api api, const engine& rules, const selection& chosen)
    : api_(api), rules_(rules), chosen_(chosen), hold_(chosen.max_match_bytes()) {}

void stream_guard::feed(std::string_view bytes, std::string& out) {
    if (blocked_) return;
    events_.clear();
    parser_.feed(bytes, events_);
    for (const auto& e : events_) {
        on_event(e, out);
        if (blocked_) return;
    }
}

void stream_guard::finish(std::string& out) {
    if (!blocked_) release_all(out);
}

void stream_guard::on_event(const sse::event& e, std::string& out) {
    boost::system::error_code ec;
    auto data = json::parse(e.data, ec);
    if (ec) {
        // Not JSON (`[DONE]`): the end of the text before it.
        release_all(out);
        if (blocked_) return;
        if (e.type != "message") out.append("event: ").append(e.type).append("\n");
        std::string_view rest = e.data;
        for (;;) {
            auto nl = rest.find('\n');
            out.append("data: ").append(rest.substr(0, nl)).append("\n");
            if (nl == std::string_view::npos) break;
            rest.remove_prefix(nl + 1);
        }
        out += "\n";
        return;
    }
    // Responses names its events in the data too.
    std::string_view type = e.type;
    if (api_ == stream_api::responses && data.is_object())
        if (auto* t = string_at(data.as_object(), "type")) type = *t;
    auto site = locate(api_, type, data);
    if (site.text && site.plain) {
        auto& c = channels_[site.key];
        c.text.append(site.text->data(), site.text->size());
        c.type = e.type;
        c.last = std::move(data);
        release(c, false, out);
        return;
    }
    // Not a plain delta: what is held goes first, in order, and this event's texts are checked
    // whole (with its channel's held text before its own delta).
    for (auto& [key, c] : channels_)
        if (key != site.key || !site.text) release(c, true, out);
    if (blocked_) return;
    if (site.text) {
        auto& c = channels_[site.key];
        c.text.append(site.text->data(), site.text->size());
        *site.text = json::string(c.text);
        c = {};
        if (!check_whole(*site.text, out)) return;
    }
    bool go_on = true;
    for_each_text(data, [&](json::string& text) {
        if (go_on && &text != site.text) go_on = check_whole(text, out);
    });
    if (go_on) write(e.type, data, out);
}

void stream_guard::release(channel& c, bool all, std::string& out) {
    if (c.text.empty() || blocked_) return;
    std::size_t cut = all ? c.text.size() : c.text.size() > hold_ ? c.text.size() - hold_ : 0;
    if (cut == 0) return;
    auto scanned = rules_.check(chosen_, c.text);
    // A match that spans the cut may still grow: it waits, whole, for the next release.
    for (bool moved = !all; moved;) {
        moved = false;
        for (const auto& f : scanned.hits)
            if (f.begin < cut && f.end > cut) {
                cut = f.begin;
                moved = true;
            }
    }
    if (cut == 0) return;
    outcome released;
    released.hits = before(scanned.hits, cut);
    for (const auto& f : released.hits)
        if (f.action == config::guardrail_action::block) {
            released.result = verdict::blocked;
            released.blocked_by = f;
            record(released, config::guardrail_stage::response);
            end_blocked(f, out);
            return;
        }
    // One replacement per span where guardrails overlap, as check() masks.
    std::vector<detection::hit> masks;
    for (const auto& f : released.hits)
        if (f.action == config::guardrail_action::mask &&
            (masks.empty() || f.begin >= masks.back().end))
            masks.push_back({f.rule, f.begin, f.end});
    record(released, config::guardrail_stage::response);
    auto text = detection::mask(std::string_view(c.text).substr(0, cut), masks);
    c.text.erase(0, cut);
    // Responses is read by its data's type, the others by the event's name.
    std::string_view type = c.type;
    if (api_ == stream_api::responses)
        if (auto* t = string_at(c.last.as_object(), "type")) type = *t;
    auto site = locate(api_, type, c.last);
    *site.text = json::string(text);
    write(c.type, c.last, out);
}

void stream_guard::release_all(std::string& out) {
    for (auto& [key, c] : channels_) release(c, true, out);
}

bool stream_guard::check_whole(json::string& text, std::string& out) {
    if (text.empty()) return true;
    auto checked = rules_.check(chosen_, std::string_view(text.data(), text.size()));
    record(checked, config::guardrail_stage::response);
    if (checked.result == verdict::blocked) {
        end_blocked(*checked.blocked_by, out);
        return false;
    }
    if (checked.result == verdict::masked) text = json::string(checked.text);
    return true;
}

void stream_guard::end_blocked(const finding& by, std::string& out) {
    // What is still held is never released (release() and feed() look at blocked_ first).
    blocked_ = true;
    auto message = blocked_message(by, "answer");
    json::value data;
    std::string_view type = "error";
    switch (api_) {
        case stream_api::chat_completions:
            out += "event: error\ndata: " +
                   error_json(make_error_code(errc::guardrail_blocked), message) + "\n\n";
            return;
        case stream_api::responses:
            data = {{"type", "error"},
                    {"code", "guardrail_blocked"},
                    {"message", message},
                    {"param", nullptr},
                    {"sequence_number", 0}};
            break;
        case stream_api::messages:
            data = {{"type", "error"},
                    {"error", {{"type", "invalid_request_error"}, {"message", message}}}};
            break;
        case stream_api::generate_content:
            data = {
                {"error", {{"code", 400}, {"message", message}, {"status", "INVALID_ARGUMENT"}}}};
            type = "message";
            break;
    }
    write(type, data, out);
}

void stream_guard::write(std::string_view type, json::value& data, std::string& out) {
    if (api_ == stream_api::responses && data.is_object())
        if (auto* n = data.as_object().if_contains("sequence_number")) *n = sequence_++;
    if (type != "message") out.append("event: ").append(type).append("\n");
    out.append("data: ").append(json::serialize(data)).append("\n\n");
}

}  // namespace gateway::guardrails
