#include "gateway/providers/anthropic.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

#include <set>

namespace gateway::providers::anthropic {

namespace {

using detail::count_of;
using detail::string_of;

// An Anthropic usage object into `used`: input_tokens with the cache reads and writes added
// (Anthropic counts them apart; they are input the model read), the writes split into the 5-minute
// and 1-hour caches when `cache_creation` says so (else all 5-minute), output_tokens. A member that
// is missing keeps what `used` had: message_start reports the input, message_delta the output so
// far (and, lately, the input counts again).
void read_usage(const json::object& u, usage& used) {
    used.known = true;
    auto fresh = used.input - used.cache_read - used.cache_write - used.cache_write_1h;
    auto take = [&](const char* name, std::int64_t& into) {
        if (const auto* v = u.if_contains(name)) into = count_of(v, used);
    };
    take("input_tokens", fresh);
    take("output_tokens", used.output);
    take("cache_read_input_tokens", used.cache_read);
    if (const auto* v = u.if_contains("cache_creation_input_tokens")) {
        // A total without its split keeps the 1-hour share an earlier event gave.
        auto total = count_of(v, used);
        used.cache_write_1h = std::min(used.cache_write_1h, total);
        used.cache_write = total - used.cache_write_1h;
    }
    if (const auto* split = u.if_contains("cache_creation"); split && split->is_object()) {
        const auto& c = split->as_object();
        std::int64_t five = 0, hour = 0;
        if (const auto* v = c.if_contains("ephemeral_5m_input_tokens")) five = count_of(v, used);
        if (const auto* v = c.if_contains("ephemeral_1h_input_tokens")) hour = count_of(v, used);
        if (five + hour > 0) {
            used.cache_write = std::max(used.cache_write - hour, five);
            used.cache_write_1h = hour;
        }
    }
    used.input = fresh + used.cache_read + used.cache_write + used.cache_write_1h;
}

// An event's block index: -1 (refused) when it is there but no integer; 0 when it is missing.
std::int64_t block_index(const json::object& event) {
    const auto* index = event.if_contains("index");
    return index ? integer_of(index).value_or(-1) : 0;
}

json::object image_block(const std::string& url) {
    // data:<media type>;base64,<data>
    if (url.rfind("data:", 0) == 0) {
        auto semi = url.find(';');
        auto comma = url.find(',');
        if (semi != std::string::npos && comma != std::string::npos && semi < comma)
            return {{"type", "image"},
                    {"source",
                     {{"type", "base64"},
                      {"media_type", url.substr(5, semi - 5)},
                      {"data", url.substr(comma + 1)}}}};
    }
    return {{"type", "image"}, {"source", {{"type", "url"}, {"url", url}}}};
}

finish finish_from(std::string_view reason) {
    if (reason == "max_tokens") return finish::length;
    if (reason == "tool_use") return finish::tool_calls;
    if (reason == "refusal") return finish::content_filter;
    return finish::stop;
}

// One turn on the wire, with the position after its last tool_result (results come first).
struct turn {
    std::string role;
    json::array blocks;
    std::size_t results = 0;
};

void add_block(std::vector<turn>& turns, std::string_view role, json::object block) {
    bool result = block["type"] == "tool_result";
    if (turns.empty() || turns.back().role != role) turns.push_back({std::string(role), {}, 0});
    auto& t = turns.back();
    if (result) {
        t.blocks.insert(t.blocks.begin() + static_cast<std::ptrdiff_t>(t.results),
                        std::move(block));
        ++t.results;
    } else {
        t.blocks.push_back(std::move(block));
    }
}

class anthropic_decoder final : public stream_decoder {
public:
    bool feed(const sse::event& e, std::vector<stream_delta>& out, provider_error& error) override {
        if (e.type == "ping") return true;
        boost::system::error_code ec;
        auto v = json::parse(e.data, ec);
        if (ec || !v.is_object()) {
            error.message = "an unreadable stream event: " + e.data.substr(0, 200);
            return false;
        }
        const auto& o = v.as_object();
        auto type = string_of(o.if_contains("type"));
        if (type == "error" || e.type == "error") {
            const auto* err = o.if_contains("error");
            error = adapter().decode_error(500, e.data);
            if (err && err->is_object() &&
                string_of(err->as_object().if_contains("type")) == "overloaded_error")
                error.status = 529;
            return false;
        }
        if (type == "message_start") {
            const auto* m = o.if_contains("message");
            if (m && m->is_object()) {
                stream_delta d;
                d.what = stream_delta::kind::started;
                d.id = string_of(m->as_object().if_contains("id"));
                d.name = string_of(m->as_object().if_contains("model"));
                if (const auto* u = m->as_object().if_contains("usage"); u && u->is_object())
                    read_usage(u->as_object(), used_);
                out.push_back(std::move(d));
            }
        } else if (type == "content_block_start") {
            auto at = block_index(o);
            // Blocks are numbered from 0 in order; anything else is not Anthropic's stream.
            if (at < 0 || at > static_cast<std::int64_t>(blocks_)) {
                error.message = "a content block has index " + std::to_string(at) + " after " +
                                std::to_string(blocks_) + " blocks";
                return false;
            }
            auto index = static_cast<std::size_t>(at);
            blocks_ = std::max(blocks_, index + 1);
            const auto* block = o.if_contains("content_block");
            if (block && block->is_object() &&
                string_of(block->as_object().if_contains("type")) == "tool_use") {
                if (call_of_block_.size() <= index) call_of_block_.resize(index + 1, npos);
                call_of_block_[index] = calls_++;
                stream_delta d;
                d.what = stream_delta::kind::call_started;
                d.index = call_of_block_[index];
                d.id = string_of(block->as_object().if_contains("id"));
                d.name = string_of(block->as_object().if_contains("name"));
                out.push_back(std::move(d));
            } else if (block && block->is_object() &&
                       string_of(block->as_object().if_contains("type")) == "text") {
                if (auto text = string_of(block->as_object().if_contains("text")); !text.empty()) {
                    stream_delta d;
                    d.what = stream_delta::kind::text;
                    d.text = std::move(text);
                    out.push_back(std::move(d));
                }
            }
        } else if (type == "content_block_delta") {
            auto at = block_index(o);
            if (at < 0) {
                error.message = "a content block has index " + std::to_string(at);
                return false;
            }
            auto index = static_cast<std::size_t>(at);
            const auto* delta = o.if_contains("delta");
            if (!delta || !delta->is_object()) return true;
            auto kind = string_of(delta->as_object().if_contains("type"));
            if (kind == "text_delta") {
                stream_delta d;
                d.what = stream_delta::kind::text;
                d.text = string_of(delta->as_object().if_contains("text"));
                if (!d.text.empty()) out.push_back(std::move(d));
            } else if (kind == "input_json_delta" && index < call_of_block_.size() &&
                       call_of_block_[index] != npos) {
                stream_delta d;
                d.what = stream_delta::kind::call_arguments;
                d.index = call_of_block_[index];
                d.text = string_of(delta->as_object().if_contains("partial_json"));
                if (!d.text.empty()) out.push_back(std::move(d));
            }
        } else if (type == "message_delta") {
            if (const auto* delta = o.if_contains("delta"); delta && delta->is_object())
                if (auto reason = string_of(delta->as_object().if_contains("stop_reason"));
                    !reason.empty())
                    why_ = finish_from(reason);
            // Cumulative: the output so far, and (lately) the input counts again.
            if (const auto* u = o.if_contains("usage"); u && u->is_object())
                read_usage(u->as_object(), used_);
        } else if (type == "message_stop") {
            stream_delta d;
            d.what = stream_delta::kind::finished;
            d.why = why_;
            d.used = used_;
            out.push_back(std::move(d));
            done_ = true;
        }
        return true;
    }
    bool end(std::vector<stream_delta>&) override { return done_; }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    std::vector<std::size_t> call_of_block_;
    std::size_t blocks_ = 0;  // content blocks started
    std::size_t calls_ = 0;
    finish why_ = finish::stop;
    usage used_;
    bool done_ = false;
};

class anthropic_adapter final : public providers::adapter {
public:
    provider kind() const override { return provider::anthropic; }
    std::string target(const request&) const override { return "/v1/messages"; }

    std::string encode(const request& r, std::string&) const override {
        std::vector<turn> turns;
        std::set<std::string> called;
        bool tool_blocks = false;
        for (const auto& m : r.messages) {
            std::string_view role = m.who == role::assistant ? "assistant" : "user";
            for (const auto& p : m.parts) {
                switch (p.what) {
                    case part::kind::text:
                        // The API refuses empty text blocks.
                        if (!p.text.empty())
                            add_block(turns, role, {{"type", "text"}, {"text", p.text}});
                        break;
                    case part::kind::image:
                        add_block(turns, role, image_block(p.text));
                        break;
                    case part::kind::tool_call:
                        tool_blocks = true;
                        called.insert(p.call.name);
                        add_block(turns, role,
                                  {{"type", "tool_use"},
                                   {"id", p.call.id},
                                   {"name", p.call.name},
                                   {"input", p.call.arguments}});
                        break;
                    case part::kind::tool_result: {
                        tool_blocks = true;
                        json::object block{{"type", "tool_result"},
                                           {"tool_use_id", p.result.call_id},
                                           {"content", p.result.content}};
                        if (p.result.is_error) block["is_error"] = true;
                        add_block(turns, "user", std::move(block));
                        break;
                    }
                    case part::kind::reasoning:  // shown to the client, never sent back
                        break;
                    case part::kind::opaque:
                        if (string_of(p.provider_meta.if_contains("provider")) == "anthropic")
                            if (const auto* b = p.provider_meta.if_contains("block");
                                b && b->is_object())
                                add_block(turns, role, b->as_object());
                        break;
                }
            }
        }
        json::array messages;
        for (auto& t : turns)
            messages.push_back({{"role", t.role}, {"content", std::move(t.blocks)}});

        json::object body{{"model", r.model},
                          {"max_tokens", r.max_tokens.value_or(default_max_tokens)},
                          {"messages", std::move(messages)}};
        if (!r.system.empty()) body["system"] = r.system;
        json::array tools;
        for (const auto& t : r.tools) {
            json::object tool{{"name", t.name}, {"input_schema", t.parameters}};
            if (!t.description.empty()) tool["description"] = t.description;
            tools.push_back(std::move(tool));
        }
        if (tools.empty() && tool_blocks)
            for (const auto& name : called)
                tools.push_back(
                    {{"name", name},
                     {"input_schema", {{"type", "object"}, {"properties", json::object{}}}}});
        if (!tools.empty()) {
            body["tools"] = std::move(tools);
            json::object choice;
            switch (r.choice) {
                case tool_choice::automatic:
                    choice["type"] = "auto";
                    break;
                case tool_choice::none:
                    choice["type"] = "none";
                    break;
                case tool_choice::required:
                    choice["type"] = "any";
                    break;
                case tool_choice::named:
                    choice["type"] = "tool";
                    choice["name"] = r.choice_name;
                    break;
            }
            if (r.parallel_tool_calls == false && r.choice != tool_choice::none)
                choice["disable_parallel_tool_use"] = true;
            if (r.choice != tool_choice::automatic || r.parallel_tool_calls == false)
                body["tool_choice"] = std::move(choice);
        }
        if (r.temperature) body["temperature"] = *r.temperature;
        if (r.top_p) body["top_p"] = *r.top_p;
        if (!r.stop.empty()) {
            json::array stop;
            for (const auto& s : r.stop) stop.push_back(json::string(s));
            body["stop_sequences"] = std::move(stop);
        }
        // r.format has no field here: only a prompt that asks for the JSON can (the agent's does).
        if (r.stream) body["stream"] = true;
        return json::serialize(body);
    }

    bool decode(std::string_view body, reply& out, std::string& error) const override {
        boost::system::error_code ec;
        auto v = json::parse(body, ec);
        const json::object* o = ec ? nullptr : v.if_object();
        const json::value* content = o ? o->if_contains("content") : nullptr;
        if (!content || !content->is_array()) {
            error = "the upstream's answer is not an Anthropic message";
            return false;
        }
        out.id = string_of(o->if_contains("id"));
        out.model = string_of(o->if_contains("model"));
        out.why = finish_from(string_of(o->if_contains("stop_reason")));
        if (const auto* u = o->if_contains("usage"); u && u->is_object())
            read_usage(u->as_object(), out.used);
        std::string text;
        std::vector<part> calls;
        for (const auto& b : content->as_array()) {
            const auto* block = b.if_object();
            if (!block) continue;
            auto type = string_of(block->if_contains("type"));
            if (type == "text") {
                text += string_of(block->if_contains("text"));
            } else if (type == "tool_use") {
                tool_call c;
                c.id = string_of(block->if_contains("id"));
                c.name = string_of(block->if_contains("name"));
                const auto* input = block->if_contains("input");
                if (input && input->is_object()) c.arguments = input->as_object();
                calls.push_back(part::of_call(std::move(c)));
            } else if (type == "thinking" || type == "redacted_thinking") {
                part p;
                p.what = part::kind::opaque;
                p.provider_meta = {{"provider", "anthropic"}, {"block", *block}};
                out.content.parts.push_back(std::move(p));
            }
        }
        if (!text.empty()) out.content.parts.push_back(part::of_text(std::move(text)));
        for (auto& c : calls) out.content.parts.push_back(std::move(c));
        return true;
    }

    std::unique_ptr<stream_decoder> decoder() const override {
        return std::make_unique<anthropic_decoder>();
    }

    provider_error decode_error(unsigned status, std::string_view body) const override {
        return detail::read_error(status, body, false);
    }

    std::pair<std::string_view, std::string_view> key_field() const override {
        return {"x-api-key", ""};
    }
};

}  // namespace

const providers::adapter& adapter() {
    static const anthropic_adapter instance;
    return instance;
}

}  // namespace gateway::providers::anthropic
