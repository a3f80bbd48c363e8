#include "tests/support/stream_grammar.hpp"

#include <boost/json.hpp>

#include <set>

namespace gateway::testing {

namespace json = boost::json;

std::vector<std::pair<std::string, std::string>> sse_events(std::string_view transcript) {
    std::vector<std::pair<std::string, std::string>> out;
    std::string name, data;
    std::size_t at = 0;
    while (at < transcript.size()) {
        auto end = transcript.find('\n', at);
        if (end == std::string_view::npos) end = transcript.size();
        auto line = transcript.substr(at, end - at);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        at = end + 1;
        if (line.empty()) {
            if (!name.empty() || !data.empty()) out.emplace_back(name, data);
            name.clear();
            data.clear();
        } else if (line.starts_with("event:")) {
            name = line.substr(line.size() > 6 && line[6] == ' ' ? 7 : 6);
        } else if (line.starts_with("data:")) {
            if (!data.empty()) data += "\n";
            data += line.substr(line.size() > 5 && line[5] == ' ' ? 6 : 5);
        }
    }
    if (!name.empty() || !data.empty()) out.emplace_back(name, data);
    return out;
}

namespace {

std::string str(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::int64_t num(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_int64() ? v->as_int64()
                              : (v && v->is_uint64() ? std::int64_t(v->as_uint64()) : -1);
}

bool json_object_text(const std::string& text) {
    boost::system::error_code ec;
    auto v = json::parse(text.empty() ? "{}" : text, ec);
    return !ec && v.is_object();
}

}  // namespace

std::string check_messages_stream(std::string_view transcript) {
    auto events = sse_events(transcript);
    if (events.empty()) return "no events";
    bool started = false, delta_seen = false, stopped = false, errored = false, tool_use = false;
    long open = -1;  // the open block's index
    long next = 0;   // the next block's index
    std::string open_type, arguments;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const auto& [name, data] = events[i];
        auto where = "event " + std::to_string(i) + " (" + name + "): ";
        if (stopped || errored) return where + "after the stream ended";
        boost::system::error_code ec;
        auto v = json::parse(data, ec);
        if (ec || !v.is_object()) return where + "data is not a JSON object";
        const auto& o = v.as_object();
        if (str(o, "type") != name) return where + "data.type is `" + str(o, "type") + "`";
        if (name == "error") {
            errored = true;
            continue;
        }
        if (name == "message_start") {
            if (started) return where + "a second message_start";
            if (i != 0) return where + "message_start is not first";
            const auto* m = o.if_contains("message");
            if (!m || !m->is_object() || !m->as_object().contains("usage"))
                return where + "message_start without message.usage";
            started = true;
            continue;
        }
        if (!started) return where + "before message_start";
        if (name == "ping") continue;
        if (delta_seen && name != "message_stop") return where + "after message_delta";
        if (name == "content_block_start") {
            if (open >= 0) return where + "block " + std::to_string(open) + " is still open";
            if (num(o, "index") != next)
                return where + "index " + std::to_string(num(o, "index")) + " where " +
                       std::to_string(next) + " comes next";
            const auto* b = o.if_contains("content_block");
            if (!b || !b->is_object()) return where + "no content_block";
            open_type = str(b->as_object(), "type");
            if (open_type != "text" && open_type != "tool_use" && open_type != "thinking")
                return where + "block type `" + open_type + "`";
            if (open_type == "tool_use") {
                tool_use = true;
                if (str(b->as_object(), "id").empty() || str(b->as_object(), "name").empty())
                    return where + "tool_use without id or name";
            }
            arguments.clear();
            open = next++;
        } else if (name == "content_block_delta") {
            if (open < 0 || num(o, "index") != open) return where + "not the open block's index";
            const auto* d = o.if_contains("delta");
            auto type = d && d->is_object() ? str(d->as_object(), "type") : "";
            bool fits = (open_type == "text" && type == "text_delta") ||
                        (open_type == "thinking" &&
                         (type == "thinking_delta" || type == "signature_delta")) ||
                        (open_type == "tool_use" && type == "input_json_delta");
            if (!fits) return where + "a " + type + " inside a " + open_type + " block";
            if (type == "input_json_delta") arguments += str(d->as_object(), "partial_json");
        } else if (name == "content_block_stop") {
            if (open < 0 || num(o, "index") != open) return where + "not the open block's index";
            if (open_type == "tool_use" && !json_object_text(arguments))
                return where + "the tool_use input is not a JSON object: " + arguments;
            open = -1;
        } else if (name == "message_delta") {
            if (open >= 0) return where + "block " + std::to_string(open) + " was never stopped";
            const auto* d = o.if_contains("delta");
            auto reason = d && d->is_object() ? str(d->as_object(), "stop_reason") : "";
            static const std::set<std::string> reasons{"end_turn", "max_tokens", "stop_sequence",
                                                       "tool_use", "pause_turn", "refusal"};
            if (!reasons.count(reason)) return where + "stop_reason `" + reason + "`";
            if (tool_use != (reason == "tool_use"))
                return where + "stop_reason `" + reason + "` for a turn " +
                       (tool_use ? "with" : "without") + " tool_use";
            if (!o.contains("usage")) return where + "no usage";
            delta_seen = true;
        } else if (name == "message_stop") {
            if (!delta_seen) return where + "message_stop before message_delta";
            stopped = true;
        } else {
            return where + "not an event of the Messages stream";
        }
    }
    if (!stopped && !errored) return "the stream ended without message_stop or error";
    return "";
}

std::string check_responses_stream(std::string_view transcript) {
    auto events = sse_events(transcript);
    if (events.empty()) return "no events";
    std::int64_t sequence = 0;
    bool created = false, in_progress = false, ended = false;
    long open = -1;
    long next = 0;
    std::string open_id, open_type, text, arguments;
    bool part_open = false;
    std::set<std::string> ids;
    std::vector<std::string> done_ids;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const auto& [name, data] = events[i];
        auto where = "event " + std::to_string(i) + " (" + name + "): ";
        if (ended) return where + "after the response ended";
        boost::system::error_code ec;
        auto v = json::parse(data, ec);
        if (ec || !v.is_object()) return where + "data is not a JSON object";
        const auto& o = v.as_object();
        if (str(o, "type") != name) return where + "data.type is `" + str(o, "type") + "`";
        if (num(o, "sequence_number") != sequence++) return where + "sequence_number out of order";
        if (name == "response.created") {
            if (created || i != 0) return where + "response.created is not first and once";
            created = true;
            continue;
        }
        if (name == "response.in_progress") {
            if (in_progress || i != 1) return where + "response.in_progress is not second and once";
            in_progress = true;
            continue;
        }
        if (!created) return where + "before response.created";
        auto item_of_event = [&]() -> std::string {
            if (open < 0) return "no item is open";
            if (num(o, "output_index") != open) return "output_index is not the open item's";
            if (o.contains("item_id") && str(o, "item_id") != open_id)
                return "item_id is not the open item's";
            return "";
        };
        if (name == "response.output_item.added") {
            if (open >= 0) return where + "item " + std::to_string(open) + " is still open";
            if (num(o, "output_index") != next) return where + "output_index out of order";
            const auto* item = o.if_contains("item");
            if (!item || !item->is_object()) return where + "no item";
            open_id = str(item->as_object(), "id");
            open_type = str(item->as_object(), "type");
            if (open_id.empty() || !ids.insert(open_id).second)
                return where + "item id `" + open_id + "` empty or reused";
            if ((open_type == "function_call" || open_type == "custom_tool_call") &&
                (str(item->as_object(), "call_id").empty() ||
                 str(item->as_object(), "name").empty()))
                return where + "a call without call_id or name";
            text.clear();
            arguments.clear();
            part_open = false;
            open = next++;
        } else if (name == "response.content_part.added" ||
                   name == "response.reasoning_summary_part.added") {
            if (auto e = item_of_event(); !e.empty()) return where + e;
            if (part_open) return where + "a part is already open";
            part_open = true;
        } else if (name == "response.output_text.delta" ||
                   name == "response.reasoning_summary_text.delta") {
            if (auto e = item_of_event(); !e.empty()) return where + e;
            if (!part_open) return where + "text outside a part";
            bool fits = (open_type == "message") == (name == "response.output_text.delta");
            if (!fits) return where + "inside a " + open_type + " item";
            text += str(o, "delta");
        } else if (name == "response.output_text.done" ||
                   name == "response.reasoning_summary_text.done") {
            if (auto e = item_of_event(); !e.empty()) return where + e;
            if (str(o, "text") != text) return where + "text is not the deltas joined";
        } else if (name == "response.content_part.done" ||
                   name == "response.reasoning_summary_part.done") {
            if (auto e = item_of_event(); !e.empty()) return where + e;
            if (!part_open) return where + "no part is open";
            part_open = false;
        } else if (name == "response.function_call_arguments.delta" ||
                   name == "response.custom_tool_call_input.delta") {
            if (auto e = item_of_event(); !e.empty()) return where + e;
            bool fits = (open_type == "function_call") ==
                        (name == "response.function_call_arguments.delta");
            if (!fits || (open_type != "function_call" && open_type != "custom_tool_call"))
                return where + "inside a " + open_type + " item";
            arguments += str(o, "delta");
        } else if (name == "response.function_call_arguments.done") {
            if (auto e = item_of_event(); !e.empty()) return where + e;
            if (str(o, "arguments") != arguments)
                return where + "arguments are not the deltas joined";
            if (!json_object_text(arguments)) return where + "arguments are not a JSON object";
        } else if (name == "response.custom_tool_call_input.done") {
            if (auto e = item_of_event(); !e.empty()) return where + e;
            if (str(o, "input") != arguments) return where + "input is not the deltas joined";
        } else if (name == "response.output_item.done") {
            if (open < 0 || num(o, "output_index") != open) return where + "not the open item";
            const auto* item = o.if_contains("item");
            if (!item || !item->is_object() || str(item->as_object(), "id") != open_id)
                return where + "the item's id changed";
            if (part_open) return where + "its part was never closed";
            done_ids.push_back(open_id);
            open = -1;
        } else if (name == "response.completed" || name == "response.incomplete" ||
                   name == "response.failed") {
            ended = true;
            const auto* r = o.if_contains("response");
            if (!r || !r->is_object()) return where + "no response";
            auto status = str(r->as_object(), "status");
            if (name.substr(9) != status) return where + "status `" + status + "`";
            if (name == "response.failed") continue;
            if (open >= 0) return where + "item " + std::to_string(open) + " was never done";
            const auto* output = r->as_object().if_contains("output");
            if (!output || !output->is_array() || output->as_array().size() != done_ids.size())
                return where + "output does not list the items";
            for (std::size_t k = 0; k < done_ids.size(); ++k)
                if (str(output->as_array()[k].as_object(), "id") != done_ids[k])
                    return where + "output[" + std::to_string(k) + "] is not item " + done_ids[k];
            const auto* usage = r->as_object().if_contains("usage");
            if (!usage || !usage->is_object() || num(usage->as_object(), "total_tokens") < 0)
                return where + "no usage";
        } else {
            return where + "not an event this validator knows";
        }
    }
    if (!ended) return "the stream ended without response.completed, incomplete or failed";
    return "";
}

std::string check_gemini_stream(std::string_view transcript, bool sse) {
    std::vector<json::value> responses;
    if (sse) {
        for (const auto& [name, data] : sse_events(transcript)) {
            boost::system::error_code ec;
            auto v = json::parse(data, ec);
            if (ec) return "an event's data is not JSON: " + data.substr(0, 80);
            responses.push_back(std::move(v));
        }
    } else {
        boost::system::error_code ec;
        auto v = json::parse(transcript, ec);
        if (ec || !v.is_array()) return "the stream is not one JSON array";
        for (auto& item : v.as_array()) responses.push_back(item);
    }
    if (responses.empty()) return "no responses";
    bool finished = false;
    for (std::size_t i = 0; i < responses.size(); ++i) {
        auto where = "response " + std::to_string(i) + ": ";
        if (finished) return where + "after the last one";
        if (!responses[i].is_object()) return where + "not an object";
        const auto& o = responses[i].as_object();
        if (const auto* e = o.if_contains("error")) {
            if (!e->is_object() || num(e->as_object(), "code") < 400 ||
                str(e->as_object(), "message").empty() || str(e->as_object(), "status").empty())
                return where + "an error without code, message and status";
            finished = true;
            continue;
        }
        const auto* candidates = o.if_contains("candidates");
        if (!candidates || !candidates->is_array() || candidates->as_array().size() != 1)
            return where + "not one candidate";
        const auto& c = candidates->as_array()[0].as_object();
        const auto* content = c.if_contains("content");
        if (!content || !content->is_object() || str(content->as_object(), "role") != "model")
            return where + "no content of role model";
        const auto* parts = content->as_object().if_contains("parts");
        if (!parts || !parts->is_array() || parts->as_array().empty()) return where + "no parts";
        for (const auto& p : parts->as_array()) {
            const auto* po = p.if_object();
            if (!po) return where + "a part is not an object";
            if (const auto* fc = po->if_contains("functionCall")) {
                if (!fc->is_object() || str(fc->as_object(), "name").empty())
                    return where + "a functionCall without name";
                const auto* args = fc->as_object().if_contains("args");
                if (!args || !args->is_object())
                    return where + "a functionCall whose args is not an object";
            } else if (!po->contains("text")) {
                return where + "a part that is neither text nor functionCall";
            }
        }
        bool last = c.contains("finishReason");
        if (last != o.contains("usageMetadata"))
            return where + "finishReason and usageMetadata do not come together";
        if (last) {
            static const std::set<std::string> reasons{"STOP", "MAX_TOKENS", "SAFETY", "RECITATION",
                                                       "OTHER"};
            if (!reasons.count(str(c, "finishReason")))
                return where + "finishReason `" + str(c, "finishReason") + "`";
            finished = true;
        }
    }
    if (!finished) return "the stream ended without a finishReason or an error";
    return "";
}

}  // namespace gateway::testing
