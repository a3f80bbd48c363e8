#include "gateway/providers/bedrock.hpp"

#include "gateway/config/glob.hpp"
#include "gateway/http/target.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <optional>
#include <set>

namespace gateway::providers::bedrock {

namespace {

using detail::count_of;
using detail::string_of;

// Bedrock's errors (the Converse and ConverseStream API reference), with the status a client is
// given for each.
struct error_kind {
    std::string_view name;
    unsigned status;
};
constexpr error_kind error_kinds[] = {
    {"ValidationException", 400},
    {"AccessDeniedException", 403},
    {"ResourceNotFoundException", 404},
    {"ThrottlingException", 429},
    // A quota of the account (tokens a day), not of this request's shape: Bedrock says 400.
    {"ServiceQuotaExceededException", 429},
    // Bedrock says 429 and its SDKs retry; a route should try another target instead.
    {"ModelNotReadyException", 503},
    {"ServiceUnavailableException", 503},
    {"InternalServerException", 500},
    {"ModelErrorException", 502},        // Bedrock's 424: the model failed the request
    {"ModelStreamErrorException", 502},  // the same, in a stream
    {"ModelTimeoutException", 504},      // Bedrock's 408: the model took too long, not the client
    // The credential the gateway signed with (AWS answers these 403 or 400).
    {"UnrecognizedClientException", 401},
    {"InvalidSignatureException", 401},
    {"IncompleteSignatureException", 401},
    {"MissingAuthenticationTokenException", 401},
    {"ExpiredTokenException", 401},
};

// An error type as AWS writes it in any of its places, bare: "ValidationException:http://…"
// (x-amzn-ErrorType), "com.amazon.coral.validate#ValidationException" (`__type`).
std::string_view bare_type(std::string_view type) {
    if (auto hash = type.rfind('#'); hash != std::string_view::npos) type = type.substr(hash + 1);
    return type.substr(0, type.find(':'));
}

// The kind `type` names; a stream names them in lower camel case (throttlingException).
const error_kind* kind_of(std::string_view type) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    for (const auto& k : error_kinds)
        if (k.name.size() == type.size() &&
            std::equal(type.begin(), type.end(), k.name.begin(),
                       [&](char a, char b) { return lower(a) == lower(b); }))
            return &k;
    return nullptr;
}

finish finish_from(std::string_view reason) {
    if (reason == "tool_use") return finish::tool_calls;
    if (reason == "max_tokens" || reason == "model_context_window_exceeded") return finish::length;
    if (reason == "guardrail_intervened" || reason == "content_filtered")
        return finish::content_filter;
    return finish::stop;  // end_turn, stop_sequence
}

// A sum of token counts that stays a count: at most detail::max_reported_tokens.
std::int64_t add_counts(std::int64_t a, std::int64_t b) {
    return std::min(a + b, detail::max_reported_tokens);
}

// Converse's TokenUsage into ours. Bedrock's inputTokens are the input read afresh: the cache
// reads and writes come apart from it (Bedrock's prompt caching guide: total input =
// inputTokens + cacheReadInputTokens + cacheWriteInputTokens), as Anthropic's do, and are added.
// cacheDetails splits the writes by their cache's lifetime (5m, 1h).
usage usage_from(const json::value* v) {
    usage out;
    const auto* u = v ? v->if_object() : nullptr;
    if (!u) return out;
    out.known = true;
    auto fresh = count_of(u->if_contains("inputTokens"), out);
    out.output = count_of(u->if_contains("outputTokens"), out);
    out.cache_read = count_of(u->if_contains("cacheReadInputTokens"), out);
    std::int64_t detailed = 0, hour = 0;
    if (const auto* details = u->if_contains("cacheDetails"); details && details->is_array())
        for (const auto& d : details->as_array()) {
            const auto* cache = d.if_object();
            if (!cache) continue;
            auto n = count_of(cache->if_contains("inputTokens"), out);
            detailed = add_counts(detailed, n);
            if (string_of(cache->if_contains("ttl")) == "1h") hour = add_counts(hour, n);
        }
    const auto* total = u->if_contains("cacheWriteInputTokens");
    auto written = total ? count_of(total, out) : detailed;
    out.cache_write_1h = std::min(hour, written);
    out.cache_write = written - out.cache_write_1h;
    out.input = fresh + out.cache_read + written;
    return out;
}

// Converse's image formats by media type.
std::optional<std::string_view> image_format(std::string_view media_type) {
    if (media_type == "image/png") return "png";
    if (media_type == "image/jpeg" || media_type == "image/jpg") return "jpeg";
    if (media_type == "image/gif") return "gif";
    if (media_type == "image/webp") return "webp";
    return std::nullopt;
}

// An image block from a data: URL; empty with `error` set for anything else.
json::object image_block(const std::string& url, std::string& error) {
    auto semi = url.find(';');
    auto comma = url.find(',');
    if (url.rfind("data:", 0) != 0 || semi == std::string::npos || comma == std::string::npos ||
        semi > comma || url.compare(semi, 8, ";base64,") != 0) {
        error = "Bedrock takes images inline: send the image as a data: URL (base64)";
        return {};
    }
    auto format = image_format(std::string_view(url).substr(5, semi - 5));
    if (!format) {
        error = "Bedrock takes PNG, JPEG, GIF and WebP images, not `" +
                url.substr(5, std::min<std::size_t>(semi - 5, 64)) + "`";
        return {};
    }
    // A blob is base64 in Converse's JSON: the client's text goes as it came.
    return {{"image", {{"format", *format}, {"source", {{"bytes", url.substr(comma + 1)}}}}}};
}

// One turn on the wire, with the position after its last toolResult (results come first).
struct turn {
    std::string_view role;
    json::array blocks;
    std::size_t results = 0;
};

void add_block(std::vector<turn>& turns, std::string_view role, json::object block,
               bool result = false) {
    if (turns.empty() || turns.back().role != role) turns.push_back({role, {}, 0});
    auto& t = turns.back();
    if (result) {
        t.blocks.insert(t.blocks.begin() + static_cast<std::ptrdiff_t>(t.results),
                        std::move(block));
        ++t.results;
    } else {
        t.blocks.push_back(std::move(block));
    }
}

json::object tool_spec_of(std::string_view name, std::string_view description,
                          const json::object& schema) {
    json::object spec{
        {"name", name},
        {"inputSchema",
         {{"json", schema.empty() ? json::object{{"type", "object"}, {"properties", json::object{}}}
                                  : schema}}}};
    // Bedrock refuses an empty description.
    if (!description.empty()) spec["description"] = description;
    return {{"toolSpec", std::move(spec)}};
}

// A block's contentBlockIndex: nullopt when it is missing or not an index.
std::optional<std::size_t> block_index(const json::object& event) {
    auto n = integer_of(event.if_contains("contentBlockIndex"), 0, 1 << 30);
    if (!n) return std::nullopt;
    return static_cast<std::size_t>(*n);
}

// ConverseStream's events; whatever else arrives is one of its exceptions.
enum class stream_event {
    message_start,
    block_start,
    block_delta,
    block_stop,
    message_stop,
    metadata,
};
std::optional<stream_event> stream_event_of(std::string_view type) {
    if (type == "messageStart") return stream_event::message_start;
    if (type == "contentBlockStart") return stream_event::block_start;
    if (type == "contentBlockDelta") return stream_event::block_delta;
    if (type == "contentBlockStop") return stream_event::block_stop;
    if (type == "messageStop") return stream_event::message_stop;
    if (type == "metadata") return stream_event::metadata;
    return std::nullopt;
}

class converse_decoder final : public stream_decoder {
public:
    bool feed(const sse::event& e, std::vector<stream_delta>& out, provider_error& error) override {
        auto event = stream_event_of(e.type);
        if (!event) {
            // An exception (throttlingException, modelStreamErrorException…) or an error message.
            error = read_error(502, e.type, e.data);
            if (e.type.empty()) error.message = "a stream message named no event: " + error.message;
            return false;
        }
        boost::system::error_code ec;
        auto v = json::parse(e.data, ec);
        if (ec || !v.is_object()) {
            error.message = "an unreadable " + e.type + " event: " + e.data.substr(0, 200);
            return false;
        }
        const auto& o = v.as_object();
        switch (*event) {
            case stream_event::message_start: {
                stream_delta d;
                d.what = stream_delta::kind::started;
                out.push_back(std::move(d));
                break;
            }
            case stream_event::block_start:
            case stream_event::block_delta: {
                auto index = block_index(o);
                // Blocks are numbered from 0 in order (a text block starts with its first delta).
                if (!index || *index > blocks_) {
                    error.message =
                        "a content block event has index " +
                        json::serialize(o.contains("contentBlockIndex") ? o.at("contentBlockIndex")
                                                                        : json::value(nullptr)) +
                        " after " + std::to_string(blocks_) + " blocks";
                    return false;
                }
                blocks_ = std::max(blocks_, *index + 1);
                if (call_of_block_.size() < blocks_) call_of_block_.resize(blocks_, npos);
                if (*event == stream_event::block_start)
                    start_block(o, *index, out);
                else
                    read_delta(o, *index, out);
                break;
            }
            case stream_event::block_stop:
                break;
            case stream_event::message_stop:
                why_ = finish_from(string_of(o.if_contains("stopReason")));
                stopped_ = true;
                if (metered_) finished(out);
                break;
            case stream_event::metadata:
                used_ = usage_from(o.if_contains("usage"));
                metered_ = true;
                if (stopped_) finished(out);
                break;
        }
        return true;
    }

    // Without its metadata event the reply ends at messageStop, its usage unknown.
    bool end(std::vector<stream_delta>& out) override {
        if (!stopped_) return false;
        finished(out);
        return true;
    }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    void start_block(const json::object& o, std::size_t index, std::vector<stream_delta>& out) {
        const auto* start = o.if_contains("start");
        const auto* use =
            start && start->is_object() ? start->as_object().if_contains("toolUse") : nullptr;
        if (!use || !use->is_object()) return;
        call_of_block_[index] = calls_++;
        stream_delta d;
        d.what = stream_delta::kind::call_started;
        d.index = call_of_block_[index];
        d.id = string_of(use->as_object().if_contains("toolUseId"));
        d.name = string_of(use->as_object().if_contains("name"));
        out.push_back(std::move(d));
    }

    void read_delta(const json::object& o, std::size_t index, std::vector<stream_delta>& out) {
        const auto* delta = o.if_contains("delta");
        if (!delta || !delta->is_object()) return;
        const auto& d = delta->as_object();
        stream_delta piece;
        if (const auto* text = d.if_contains("text")) {
            piece.what = stream_delta::kind::text;
            piece.text = string_of(text);
        } else if (const auto* use = d.if_contains("toolUse"); use && use->is_object()) {
            if (call_of_block_[index] == npos) return;  // input of a block that is no call
            piece.what = stream_delta::kind::call_arguments;
            piece.index = call_of_block_[index];
            piece.text = string_of(use->as_object().if_contains("input"));
        } else if (const auto* r = d.if_contains("reasoningContent"); r && r->is_object()) {
            // Its signature and redacted parts go nowhere: reasoning is never sent back.
            piece.what = stream_delta::kind::reasoning;
            piece.text = string_of(r->as_object().if_contains("text"));
        }
        if (!piece.text.empty()) out.push_back(std::move(piece));
    }

    void finished(std::vector<stream_delta>& out) {
        if (done_) return;
        done_ = true;
        stream_delta d;
        d.what = stream_delta::kind::finished;
        d.why = why_;
        d.used = used_;
        out.push_back(std::move(d));
    }

    std::vector<std::size_t> call_of_block_;
    std::size_t blocks_ = 0;  // content blocks seen
    std::size_t calls_ = 0;
    finish why_ = finish::stop;
    usage used_;
    bool stopped_ = false;  // messageStop came
    bool metered_ = false;  // metadata came
    bool done_ = false;
};

class converse final : public providers::adapter {
public:
    provider kind() const override { return provider::bedrock; }

    std::string target(const request& r) const override {
        return "/model/" + model_segment(r.model) + (r.stream ? "/converse-stream" : "/converse");
    }

    stream_framing framing() const override { return stream_framing::aws_eventstream; }

    std::string encode(const request& r, std::string& error) const override {
        if (r.model.empty()) {
            error = "Bedrock needs a model id";
            return {};
        }
        std::vector<turn> turns;
        std::set<std::string> called;
        bool tool_blocks = false;
        for (const auto& m : r.messages) {
            std::string_view role = m.who == role::assistant ? "assistant" : "user";
            for (const auto& p : m.parts) {
                switch (p.what) {
                    case part::kind::text:
                        // Bedrock refuses a blank text block.
                        if (!p.text.empty()) add_block(turns, role, {{"text", p.text}});
                        break;
                    case part::kind::image: {
                        auto image = image_block(p.text, error);
                        if (image.empty()) return {};
                        add_block(turns, role, std::move(image));
                        break;
                    }
                    case part::kind::tool_call:
                        tool_blocks = true;
                        called.insert(p.call.name);
                        add_block(turns, role,
                                  {{"toolUse",
                                    {{"toolUseId", p.call.id},
                                     {"name", p.call.name},
                                     {"input", p.call.arguments}}}});
                        break;
                    case part::kind::tool_result: {
                        tool_blocks = true;
                        std::string_view text = p.result.content;
                        json::object result{
                            {"toolUseId", p.result.call_id},
                            {"content", json::array{json::object{
                                            {"text", text.empty() ? empty_tool_result : text}}}}};
                        if (p.result.is_error) result["status"] = "error";
                        add_block(turns, "user", {{"toolResult", std::move(result)}}, true);
                        break;
                    }
                    case part::kind::reasoning:  // shown to the client, never sent back
                    case part::kind::opaque:     // another provider's block
                        break;
                }
            }
        }
        json::array messages;
        for (auto& t : turns)
            messages.push_back({{"role", t.role}, {"content", std::move(t.blocks)}});
        json::object body{{"messages", std::move(messages)}};
        if (!r.system.empty()) body["system"] = json::array{json::object{{"text", r.system}}};

        json::object inference;
        if (r.max_tokens) inference["maxTokens"] = *r.max_tokens;
        if (r.temperature) inference["temperature"] = *r.temperature;
        if (r.top_p) inference["topP"] = *r.top_p;
        if (!r.stop.empty()) {
            json::array stop;
            for (const auto& s : r.stop) stop.push_back(json::string(s));
            inference["stopSequences"] = std::move(stop);
        }
        if (!inference.empty()) body["inferenceConfig"] = std::move(inference);

        // `none` has no toolChoice: the tools stay home unless the history needs them declared.
        bool offered = r.choice != tool_choice::none || tool_blocks;
        json::array tools;
        if (offered)
            for (const auto& t : r.tools)
                tools.push_back(tool_spec_of(t.name, t.description, t.parameters));
        if (tools.empty() && tool_blocks)
            for (const auto& name : called) tools.push_back(tool_spec_of(name, "", {}));
        if (!tools.empty()) {
            json::object config{{"tools", std::move(tools)}};
            if (r.choice == tool_choice::required)
                config["toolChoice"] = {{"any", json::object{}}};
            else if (r.choice == tool_choice::named)
                config["toolChoice"] = {{"tool", {{"name", r.choice_name}}}};
            body["toolConfig"] = std::move(config);
        }
        // r.format, parallel_tool_calls and the reasoning asked for have no Converse field that
        // every model reads; they are left out as Anthropic's encoder leaves them.
        return json::serialize(body);
    }

    bool decode(std::string_view body, reply& out, std::string& error) const override {
        boost::system::error_code ec;
        auto v = json::parse(body, ec);
        const json::object* o = ec ? nullptr : v.if_object();
        const json::value* output = o ? o->if_contains("output") : nullptr;
        const json::value* message =
            output && output->is_object() ? output->as_object().if_contains("message") : nullptr;
        const json::value* content =
            message && message->is_object() ? message->as_object().if_contains("content") : nullptr;
        if (!content || !content->is_array()) {
            error = "the upstream's answer is not a Converse response";
            return false;
        }
        out.why = finish_from(string_of(o->if_contains("stopReason")));
        out.used = usage_from(o->if_contains("usage"));
        // In the order a streamed reply is assembled in (reply_builder): reasoning, text, calls.
        std::string reasoning, text;
        std::vector<part> calls;
        for (const auto& b : content->as_array()) {
            const auto* block = b.if_object();
            if (!block) continue;
            if (const auto* t = block->if_contains("text")) {
                text += string_of(t);
            } else if (const auto* use = block->if_contains("toolUse"); use && use->is_object()) {
                const auto& u = use->as_object();
                tool_call c;
                c.id = string_of(u.if_contains("toolUseId"));
                c.name = string_of(u.if_contains("name"));
                if (const auto* input = u.if_contains("input"); input && input->is_object())
                    c.arguments = input->as_object();
                calls.push_back(part::of_call(std::move(c)));
            } else if (const auto* r = block->if_contains("reasoningContent");
                       r && r->is_object()) {
                if (const auto* shown = r->as_object().if_contains("reasoningText");
                    shown && shown->is_object())
                    reasoning += string_of(shown->as_object().if_contains("text"));
            }
        }
        if (!reasoning.empty())
            out.content.parts.push_back(part::of_reasoning(std::move(reasoning)));
        if (!text.empty()) out.content.parts.push_back(part::of_text(std::move(text)));
        for (auto& c : calls) out.content.parts.push_back(std::move(c));
        return true;
    }

    std::unique_ptr<stream_decoder> decoder() const override {
        return std::make_unique<converse_decoder>();
    }

    provider_error decode_error(unsigned status, std::string_view body) const override {
        return read_error(status, {}, body);
    }

    // A Bedrock API key; SigV4 signing is the upstream connection's, not the dialect's.
    std::pair<std::string_view, std::string_view> key_field() const override {
        return {"Authorization", "Bearer "};
    }
};

}  // namespace

std::string model_segment(std::string_view model) {
    if (!model.empty() && model.find_first_not_of('.') == std::string_view::npos) {
        std::string dots;
        for (std::size_t i = 0; i < model.size(); ++i) dots += "%2E";
        return dots;
    }
    return http::path_segment(model);
}

bool is_inference_profile(std::string_view model_id) {
    if (model_id.starts_with("arn:"))
        return model_id.find(":inference-profile/") != std::string_view::npos;
    // {geography}.{provider}.{model}: two dots before any `:`, a prefix of letters and dashes.
    auto first = model_id.find('.');
    if (first == std::string_view::npos || first == 0) return false;
    for (char c : model_id.substr(0, first))
        if (!(c >= 'a' && c <= 'z') && c != '-') return false;
    auto second = model_id.find('.', first + 1);
    return second != std::string_view::npos && second > first + 1 &&
           model_id.substr(0, second).find(':') == std::string_view::npos;
}

std::string inference_profiles(const std::vector<config::upstream_config>& upstreams,
                               const std::vector<config::route_config>& routes,
                               const std::vector<std::string>& allowed, std::string_view type) {
    json::array summaries;
    std::set<std::string> listed;
    auto add = [&](const std::string& name, std::string_view profile,
                   const config::upstream_config& up, std::string_view served_by) {
        bool taken = allowed.empty();
        for (const auto& glob : allowed) taken = taken || config::glob_match(glob, name);
        if (!taken || !listed.insert(name).second) return;
        const auto& region = up.region;
        // An ARN's id is its last segment; the profile's model is its id without the geography.
        auto tail = [](std::string_view id) { return id.substr(id.rfind('/') + 1); };
        auto id = std::string(tail(name));
        auto model = tail(profile).substr(tail(profile).find('.') + 1);
        auto arn = name.starts_with("arn:")
                       ? name
                       : "arn:aws:bedrock:" + region + "::inference-profile/" + id;
        summaries.push_back(json::object{
            {"inferenceProfileArn", arn},
            {"inferenceProfileId", id},
            {"inferenceProfileName", id},
            {"description", std::string(served_by)},
            {"models", json::array{json::object{{"modelArn", "arn:aws:bedrock:" + region +
                                                                 "::foundation-model/" +
                                                                 std::string(model)}}}},
            {"status", "ACTIVE"},
            {"type", "SYSTEM_DEFINED"}});
    };
    auto is_glob = [](std::string_view name) {
        return name.find_first_of("*?[") != std::string_view::npos;
    };
    if (type.empty() || type == "SYSTEM_DEFINED") {
        for (const auto& route : routes) {
            if (is_glob(route.model)) continue;
            for (const auto& t : route.targets) {
                const auto& up = upstreams[t.index];
                const auto& heard = t.model.empty() ? route.model : t.model;
                if (up.provider != provider::bedrock || !is_inference_profile(heard)) continue;
                add(route.model, heard, up, "route `" + route.model + "` of contextgate");
                break;
            }
        }
        for (const auto& up : upstreams) {
            if (up.provider != provider::bedrock) continue;
            for (const auto& name : up.models)
                if (!is_glob(name) && is_inference_profile(name))
                    add(name, name, up, "upstream `" + up.name + "` of contextgate");
        }
    }
    return json::serialize(json::object{{"inferenceProfileSummaries", std::move(summaries)}});
}

const providers::adapter& converse_adapter() {
    static const converse instance;
    return instance;
}

provider_error read_error(unsigned status, std::string_view error_type, std::string_view body) {
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    const auto* o = ec ? nullptr : v.if_object();
    std::string said, body_type;
    if (o) {
        said = string_of(o->if_contains("message"));
        if (said.empty()) said = string_of(o->if_contains("Message"));  // IAM's spelling
        body_type = string_of(o->if_contains("__type"));
    }
    if (said.empty()) said = std::string(body.substr(0, 500));
    auto type = bare_type(error_type.empty() ? std::string_view(body_type) : error_type);
    provider_error e;
    e.status = status;
    const auto* known = kind_of(type);
    if (known) {
        e.status = known->status;
        type = known->name;  // a stream's throttlingException reads as the answer's would
    }
    e.type = std::string(detail::error_type_for(e.status));
    e.message = type.empty() ? said : std::string(type) + ": " + said;
    return e;
}

}  // namespace gateway::providers::bedrock
