#include "gateway/providers/stream_probe.hpp"

#include "gateway/json_fields.hpp"

#include <boost/json/parse.hpp>

namespace gateway::providers {

namespace json = boost::json;

namespace {

bool has_text(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && ((v->is_string() && !v->get_string().empty()) ||
                 (v->is_array() && !v->get_array().empty()));
}

// An OpenAI chat chunk: content once its delta says something or it finishes.
stream_event chat_chunk(const json::array& choices) {
    if (choices.empty()) return stream_event::preamble;  // a usage-only chunk
    const auto* choice = choices[0].if_object();
    if (!choice) return stream_event::content;
    if (const auto* f = choice->if_contains("finish_reason"); f && !f->is_null())
        return stream_event::content;
    const auto* delta = choice->if_contains("delta");
    if (!delta || !delta->is_object()) return stream_event::preamble;
    const auto& d = delta->get_object();
    for (std::string_view key : {"content", "tool_calls", "reasoning_content", "reasoning",
                                 "refusal", "function_call", "audio"})
        if (has_text(d, key) || (d.contains(key) && d.at(key).is_object()))
            return stream_event::content;
    return stream_event::preamble;
}

}  // namespace

stream_event probe_event(const sse::event& e) {
    if (e.type == "error") return stream_event::error;
    if (e.data == "[DONE]") return stream_event::done;
    if (e.data.empty() || e.type == "ping") return stream_event::preamble;
    boost::system::error_code ec;
    auto v = json::parse(e.data, ec);
    const auto* o = ec ? nullptr : v.if_object();
    if (!o) return stream_event::content;  // not ours to judge: the client's
    if (o->contains("error")) return stream_event::error;
    if (const auto* choices = o->if_contains("choices"); choices && choices->is_array())
        return chat_chunk(choices->get_array());
    auto type = string_of(*o, "type");
    if (type == "error" || type == "response.failed") return stream_event::error;
    if (type == "message_start" || type == "ping" || type == "response.created" ||
        type == "response.in_progress" || type == "response.content_part.added")
        return stream_event::preamble;
    if (type == "content_block_start") {
        // A text block opens empty; a tool_use or thinking block is the answer beginning.
        const auto* block = o->if_contains("content_block");
        if (block && block->is_object() && string_of(block->get_object(), "type") == "text" &&
            string_of(block->get_object(), "text").empty())
            return stream_event::preamble;
        return stream_event::content;
    }
    if (type == "response.output_item.added") {
        const auto* item = o->if_contains("item");
        if (item && item->is_object() && string_of(item->get_object(), "type") == "message")
            return stream_event::preamble;
        return stream_event::content;
    }
    return stream_event::content;  // Gemini's candidates, deltas, and anything else
}

}  // namespace gateway::providers
