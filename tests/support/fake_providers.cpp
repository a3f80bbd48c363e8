#include "tests/support/fake_providers.hpp"

#include "gateway/providers/aws_eventstream.hpp"
#include "gateway/upstream/sigv4.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace gateway::testing::fake_providers {

namespace json = boost::json;

namespace {

std::string frame(const json::value& v, std::string_view event = {}) {
    std::string out;
    if (!event.empty()) out += "event: " + std::string(event) + "\n";
    return out + "data: " + json::serialize(v) + "\n\n";
}

json::object arguments_of(const scripted_call& c) {
    boost::system::error_code ec;
    auto v = json::parse(c.arguments, ec);
    if (ec || !v.is_object()) return {};
    return v.as_object();
}

std::string kind_of(const json::value& block) {
    if (const auto* o = block.if_object())
        if (const auto* t = o->if_contains("type"); t && t->is_string())
            return std::string(t->as_string());
    return {};
}

std::optional<answer> refuse_anthropic(std::string message) {
    return anthropic_error(400, "invalid_request_error", message);
}

std::optional<answer> refuse_gemini(std::string message) {
    return gemini_error(400, message);
}

// A schema key Gemini does not know, anywhere in `v`; "" when none.
std::string unknown_schema_key(const json::value& v) {
    if (const auto* o = v.if_object()) {
        for (const auto& [key, value] : *o) {
            if (key == "additionalProperties" || key == "$schema" || key == "$ref" ||
                key == "$defs" || key == "strict")
                return std::string(key);
            if (key == "properties" && value.is_object()) {
                for (const auto& [name, sub] : value.as_object())
                    if (auto k = unknown_schema_key(sub); !k.empty()) return k;
                continue;
            }
            if (auto k = unknown_schema_key(value); !k.empty()) return k;
        }
        const auto* type = o->if_contains("type");
        const auto* props = o->if_contains("properties");
        if (type && type->is_string() &&
            (type->as_string() == "object" || type->as_string() == "OBJECT") && props &&
            props->is_object() && props->as_object().empty())
            return "properties (should be non-empty for OBJECT type)";
    } else if (const auto* a = v.if_array()) {
        for (const auto& e : *a)
            if (auto k = unknown_schema_key(e); !k.empty()) return k;
    }
    return {};
}

std::string string_of_member(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::string string_of_member(const json::value& v, std::string_view key) {
    const auto* o = v.if_object();
    return o ? string_of_member(*o, key) : std::string();
}

std::optional<answer> refuse_converse(std::string message) {
    return converse_error(400, "ValidationException", message);
}

// A part of a SigV4 Authorization field: `name`=value, up to the next comma.
std::string authorization_part(std::string_view authorization, std::string_view name) {
    auto at = authorization.find(std::string(name) + "=");
    if (at == std::string_view::npos) return {};
    auto value = authorization.substr(at + name.size() + 1);
    return std::string(value.substr(0, value.find(',')));
}

std::vector<std::string> split(std::string_view text, char by) {
    std::vector<std::string> out;
    for (std::size_t start = 0; start <= text.size();) {
        auto end = std::min(text.find(by, start), text.size());
        out.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

// An x-amz-date (20150830T123600Z) as a time.
std::optional<std::chrono::system_clock::time_point> amz_time(const std::string& text) {
    std::tm t{};
    if (text.size() != 16 || !strptime(text.c_str(), "%Y%m%dT%H%M%SZ", &t)) return std::nullopt;
    return std::chrono::system_clock::from_time_t(timegm(&t));
}

// One ConverseStream event: its JSON payload padded as Bedrock pads them (`p`, a run of letters
// that hides the payload's length), framed.
std::string converse_event(std::string_view type, json::object payload) {
    static constexpr std::string_view letters =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    payload["p"] = letters.substr(0, 3 + json::serialize(payload).size() % 40);
    namespace es = gateway::providers::aws_eventstream;
    es::message m;
    m.headers = {es::header::of_string(":event-type", std::string(type)),
                 es::header::of_string(":content-type", "application/json"),
                 es::header::of_string(":message-type", "event")};
    m.payload = json::serialize(payload);
    return es::encode(m);
}

std::string base64(std::string_view bytes) {
    static constexpr std::string_view alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        std::uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
        if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
        if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += i + 1 < bytes.size() ? alphabet[(n >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? alphabet[n & 63] : '=';
    }
    return out;
}

// A base64 text as Converse's JSON carries a blob: the alphabet, `=` only as padding.
bool is_base64(std::string_view s) {
    if (s.empty() || s.size() % 4 != 0) return false;
    auto body = s.substr(0, s.find_last_not_of('=') + 1);
    if (s.size() - body.size() > 2) return false;
    return std::all_of(body.begin(), body.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '+' || c == '/';
    });
}

// The one member of a Converse union (a content block, a toolChoice): its name, or "" when the
// object has none or more than one.
std::string union_member(const json::object& o) {
    return o.size() == 1 ? std::string(o.begin()->key()) : std::string();
}

bool blank(const json::value* text) {
    return !text || !text->is_string() ||
           text->as_string().find_first_not_of(" \t\r\n") == json::string::npos;
}

}  // namespace

answer anthropic_error(unsigned status, std::string_view type, std::string_view message) {
    answer a;
    a.status = status;
    a.body = json::serialize(
        json::object{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}});
    if (status == 429)
        a.extra_headers = "retry-after: 7\r\nanthropic-ratelimit-requests-remaining: 0\r\n";
    return a;
}

answer gemini_error(unsigned status, std::string_view message) {
    std::string_view code = status == 400   ? "INVALID_ARGUMENT"
                            : status == 403 ? "PERMISSION_DENIED"
                            : status == 429 ? "RESOURCE_EXHAUSTED"
                            : status == 404 ? "NOT_FOUND"
                                            : "INTERNAL";
    answer a;
    a.status = status;
    a.body = json::serialize(
        json::object{{"error", {{"code", status}, {"message", message}, {"status", code}}}});
    if (status == 429) a.extra_headers = "retry-after: 7\r\n";
    return a;
}

answer converse_error(unsigned status, std::string_view type, std::string_view message) {
    answer a;
    a.status = status;
    a.body = json::serialize(json::object{{"message", message}});
    a.extra_headers = "x-amzn-ErrorType: " + std::string(type) +
                      ":http://internal.amazon.com/coral/com.amazon.bedrock/\r\n";
    return a;
}

std::string converse_stream_exception(std::string_view type, std::string_view message) {
    namespace es = gateway::providers::aws_eventstream;
    es::message m;
    m.headers = {es::header::of_string(":exception-type", std::string(type)),
                 es::header::of_string(":content-type", "application/json"),
                 es::header::of_string(":message-type", "exception")};
    m.payload = json::serialize(json::object{{"message", message}});
    return es::encode(m);
}

answer invoke_answer(const turn& t, std::string_view model, bool stream, int serial) {
    auto a = anthropic_answer(t, model, stream, serial);
    if (!stream) return a;
    a.content_type = "application/vnd.amazon.eventstream";
    for (auto& e : a.events) {
        // "event: name\ndata: {…}\n\n": the data is the event, as Bedrock hands it on.
        auto data = e.substr(e.find("data: ") + 6);
        data = data.substr(0, data.find('\n'));
        e = converse_event("chunk", {{"bytes", base64(data)}});
    }
    return a;
}

bool thinking_enabled(const json::value& body) {
    const auto* o = body.if_object();
    const auto* thinking = o ? o->if_contains("thinking") : nullptr;
    const auto* type =
        thinking && thinking->is_object() ? thinking->as_object().if_contains("type") : nullptr;
    return type && *type == "enabled";
}

std::string thinking_signature(std::string_view text) {
    return "fake-thinking-" + base64(text);
}

std::optional<answer> invoke_refusal(const received_request& r, const json::value& body,
                                     std::string_view segment) {
    if (auto refused = converse_credential_refusal(r)) return refused;
    // anthropic.…, or a geography's inference profile of one (us., eu., apac., global.…).
    auto dot = segment.find('.');
    bool claude =
        segment.starts_with("anthropic.") ||
        (dot != std::string_view::npos && segment.substr(dot + 1).starts_with("anthropic.") &&
         segment.substr(0, dot).find_first_not_of("abcdefghijklmnopqrstuvwxyz-") ==
             std::string_view::npos);
    if (!claude)
        return refuse_converse("The fake serves InvokeModel for Claude models only, not `" +
                               std::string(segment) + "`");
    const auto* o = body.if_object();
    if (!o)
        return refuse_converse(
            "Malformed input request, please reformat your input and try again.");
    // The members of Claude's InvokeModel body (Bedrock's Anthropic Claude Messages API page).
    for (const auto& [key, value] : *o)
        if (key != "anthropic_version" && key != "anthropic_beta" && key != "max_tokens" &&
            key != "system" && key != "messages" && key != "temperature" && key != "top_p" &&
            key != "top_k" && key != "stop_sequences" && key != "tools" && key != "tool_choice" &&
            key != "thinking" && key != "metadata")
            return refuse_converse("Malformed input request: #: extraneous key [" +
                                   std::string(key) +
                                   "] is not permitted, please reformat your input and try again.");
    const auto* version = o->if_contains("anthropic_version");
    if (!version || *version != "bedrock-2023-05-31")
        return refuse_converse(
            "Malformed input request: #/anthropic_version: expected "
            "bedrock-2023-05-31, please reformat your input and try again.");
    if (auto refused = messages_refusal(body, false)) {
        // Claude's own refusal, in Bedrock's envelope.
        auto said = json::parse(refused->body).at("error").at("message");
        return refuse_converse(std::string(said.as_string()));
    }
    const auto& messages = o->at("messages").as_array();
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const auto& m = messages[i].as_object();
        const auto* content = m.if_contains("content");
        if (m.at("role") != "assistant" || !content || !content->is_array()) continue;
        const auto& blocks = content->as_array();
        for (std::size_t j = 0; j < blocks.size(); ++j) {
            if (kind_of(blocks[j]) != "thinking") continue;
            auto at = "messages." + std::to_string(i) + ".content." + std::to_string(j);
            const auto& b = blocks[j].as_object();
            const auto* text = b.if_contains("thinking");
            const auto* signature = b.if_contains("signature");
            if (!text || !text->is_string() || !signature || !signature->is_string() ||
                signature->as_string() != thinking_signature(text->as_string()))
                return refuse_converse(at + ": Invalid `signature` in `thinking` block");
        }
    }
    return std::nullopt;
}

std::optional<answer> converse_credential_refusal(const received_request& r) {
    auto authorization = r.header("authorization");
    if (authorization.empty())
        return converse_error(403, "MissingAuthenticationTokenException",
                              "Missing Authentication Token");
    if (authorization.rfind("Bearer ", 0) == 0) return std::nullopt;
    bool sigv4 = authorization.rfind("AWS4-HMAC-SHA256 Credential=", 0) == 0 &&
                 authorization.find("SignedHeaders=") != std::string::npos &&
                 authorization.find("Signature=") != std::string::npos;
    if (!sigv4)
        return converse_error(403, "IncompleteSignatureException",
                              "Authorization header requires 'Credential', 'Signature' and "
                              "'SignedHeaders' parameters.");
    auto date = r.header("x-amz-date");
    if (date.empty())
        return converse_error(403, "IncompleteSignatureException",
                              "Authorization header requires existence of either a 'X-Amz-Date' "
                              "or a 'Date' header.");
    // Credential=KEY/DATE/REGION/SERVICE/aws4_request
    auto scope = split(authorization_part(authorization, "Credential"), '/');
    auto token = r.header("x-amz-security-token");
    bool temporary = scope.size() == 5 && scope[0] == fake_aws_temporary_key_id;
    if (scope.size() != 5 || (scope[0] != fake_aws_key_id && !temporary) ||
        (temporary && token.empty()))
        return converse_error(403, "UnrecognizedClientException",
                              "The security token included in the request is invalid.");
    if (token == fake_aws_expired_token)
        return converse_error(403, "ExpiredTokenException",
                              "The security token included in the request is expired");
    auto when = amz_time(date);
    auto skew = when ? std::chrono::abs(std::chrono::system_clock::now() - *when)
                     : std::chrono::system_clock::duration::max();
    if (skew > std::chrono::minutes(5))
        return converse_error(403, "InvalidSignatureException",
                              "Signature expired: " + date + " is now earlier or later than " +
                                  "5 minutes from the current time.");
    // The request as received, signed again with what the fake knows.
    namespace aws = gateway::upstream::aws;
    auto path_end = std::min(r.target.find('?'), r.target.size());
    std::string path = r.target.substr(0, path_end);
    std::string query = r.target.substr(std::min(path_end + 1, r.target.size()));
    std::vector<std::string> values;
    auto names = split(authorization_part(authorization, "SignedHeaders"), ';');
    for (const auto& name : names) values.push_back(r.header(name));
    aws::request q;
    q.method = r.method;
    q.path = path;
    q.query = query;
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] != "x-amz-date" && names[i] != "x-amz-security-token")
            q.headers.emplace_back(names[i], values[i]);
    auto hash = aws::payload_hash(r.body);
    q.payload_sha256 = hash;
    aws::credentials keys{std::string(scope[0]), std::string(fake_aws_secret), token, {}};
    auto expected = aws::sign(q, keys, scope[3], scope[2], *when);
    if (scope[3] != "bedrock" ||
        expected.signature != authorization_part(authorization, "Signature"))
        return converse_error(403, "InvalidSignatureException",
                              "The request signature we calculated does not match the signature "
                              "you provided. Check your AWS Secret Access Key and signing method. "
                              "Consult the service documentation for details.");
    return std::nullopt;
}

std::optional<answer> converse_refusal(const received_request& r, const json::value& body) {
    if (auto refused = converse_credential_refusal(r)) return refused;
    const auto* o = body.if_object();
    if (!o)
        return refuse_converse(
            "Malformed input request, please reformat your input and try again.");
    for (const auto& [key, value] : *o)
        if (key != "messages" && key != "system" && key != "inferenceConfig" &&
            key != "toolConfig" && key != "guardrailConfig" &&
            key != "additionalModelRequestFields" && key != "additionalModelResponseFieldPaths" &&
            key != "promptVariables" && key != "requestMetadata" && key != "performanceConfig")
            return refuse_converse("Malformed input request: extraneous key [" + std::string(key) +
                                   "] is not permitted, please reformat your input and try again.");
    if (const auto* system = o->if_contains("system")) {
        if (!system->is_array()) return refuse_converse("system: expected a list of blocks");
        for (std::size_t i = 0; i < system->as_array().size(); ++i) {
            const auto* b = system->as_array()[i].if_object();
            auto member = b ? union_member(*b) : "";
            if (member != "text" && member != "cachePoint" && member != "guardContent")
                return refuse_converse("system." + std::to_string(i) + ": unknown block `" +
                                       member + "`");
            if (member == "text" && blank(b->if_contains("text")))
                return refuse_converse(
                    "The text field in the SystemContentBlock object at system." +
                    std::to_string(i) + " is blank. Add text to the text field, and try again.");
        }
    }
    if (const auto* inference = o->if_contains("inferenceConfig")) {
        if (!inference->is_object()) return refuse_converse("inferenceConfig: expected an object");
        for (const auto& [key, value] : inference->as_object()) {
            if (key == "maxTokens") {
                if (!value.is_int64() || value.as_int64() < 1)
                    return refuse_converse("inferenceConfig.maxTokens: must be at least 1");
            } else if (key == "temperature" || key == "topP") {
                if (!value.is_number() || value.to_number<double>() < 0 ||
                    value.to_number<double>() > 1)
                    return refuse_converse("inferenceConfig." + std::string(key) +
                                           ": must be between 0 and 1");
            } else if (key == "stopSequences") {
                if (!value.is_array())
                    return refuse_converse("inferenceConfig.stopSequences: expected a list");
            } else {
                return refuse_converse("Malformed input request: extraneous key [" +
                                       std::string(key) +
                                       "] is not permitted, please reformat your input and try "
                                       "again.");
            }
        }
    }
    std::vector<std::string> declared;
    const auto* config = o->if_contains("toolConfig");
    if (config) {
        const auto* c = config->if_object();
        const auto* tools = c ? c->if_contains("tools") : nullptr;
        if (!tools || !tools->is_array() || tools->as_array().empty())
            return refuse_converse("toolConfig.tools: must hold at least one tool");
        for (const auto& [key, value] : *c)
            if (key != "tools" && key != "toolChoice")
                return refuse_converse("Malformed input request: extraneous key [" +
                                       std::string(key) + "] is not permitted");
        for (std::size_t i = 0; i < tools->as_array().size(); ++i) {
            auto at = "toolConfig.tools." + std::to_string(i);
            const auto* t = tools->as_array()[i].if_object();
            auto member = t ? union_member(*t) : "";
            if (member == "cachePoint") continue;
            if (member != "toolSpec") return refuse_converse(at + ": expected a toolSpec");
            const auto* spec = t->at("toolSpec").if_object();
            const auto* name = spec ? spec->if_contains("name") : nullptr;
            if (!name || !name->is_string() || name->as_string().empty())
                return refuse_converse(at + ".toolSpec.name: must not be empty");
            for (const auto& [key, value] : *spec)
                if (key != "name" && key != "description" && key != "inputSchema")
                    return refuse_converse("Malformed input request: extraneous key [" +
                                           std::string(key) + "] is not permitted");
            if (const auto* d = spec->if_contains("description");
                d && (!d->is_string() || d->as_string().empty()))
                return refuse_converse(at + ".toolSpec.description: must not be empty");
            const auto* schema = spec->if_contains("inputSchema");
            const auto* json_schema =
                schema && schema->is_object() ? schema->as_object().if_contains("json") : nullptr;
            if (!json_schema || !json_schema->is_object() || schema->as_object().size() != 1)
                return refuse_converse(at + ".toolSpec.inputSchema: expected {\"json\": {…}}");
            declared.push_back(std::string(name->as_string()));
        }
        if (const auto* choice = c->if_contains("toolChoice")) {
            const auto* ch = choice->if_object();
            auto member = ch ? union_member(*ch) : "";
            if (member == "tool") {
                auto name = string_of_member(ch->at("tool"), "name");
                if (std::find(declared.begin(), declared.end(), name) == declared.end())
                    return refuse_converse("toolConfig.toolChoice.tool.name: `" + name +
                                           "` is not one of the tools");
            } else if (member != "auto" && member != "any") {
                return refuse_converse("toolConfig.toolChoice: expected one of auto, any, tool");
            }
        }
    }
    const auto* messages = o->if_contains("messages");
    if (!messages || !messages->is_array() || messages->as_array().empty())
        return refuse_converse("messages: at least one message is required");
    const auto& list = messages->as_array();
    bool tool_blocks = false;
    std::vector<std::string> open_calls;  // toolUseIds of the previous assistant turn
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto at = "messages." + std::to_string(i);
        const auto* m = list[i].if_object();
        if (!m) return refuse_converse(at + ": expected an object");
        for (const auto& [key, value] : *m)
            if (key != "role" && key != "content")
                return refuse_converse("Malformed input request: extraneous key [" +
                                       std::string(key) + "] is not permitted");
        auto role = string_of_member(*m, "role");
        if (role != "user" && role != "assistant")
            return refuse_converse(at + ".role: must be user or assistant");
        if (i == 0 && role != "user")
            return refuse_converse(
                "A conversation must start with a user message. Try again with a conversation "
                "that starts with a user message.");
        if (i > 0 && role == string_of_member(list[i - 1], "role"))
            return refuse_converse(
                "A conversation must alternate between user and assistant roles. Make sure the "
                "conversation alternates between user and assistant roles and try again.");
        const auto* content = m->if_contains("content");
        if (!content || !content->is_array() || content->as_array().empty())
            return refuse_converse(at + ".content: must hold at least one block");
        std::vector<std::string> calls, answered;
        for (std::size_t j = 0; j < content->as_array().size(); ++j) {
            auto bat = at + ".content." + std::to_string(j);
            const auto* b = content->as_array()[j].if_object();
            auto member = b ? union_member(*b) : "";
            if (member == "text") {
                if (blank(b->if_contains("text")))
                    return refuse_converse("The text field in the ContentBlock object at " + bat +
                                           " is blank. Add text to the text field, and try "
                                           "again.");
            } else if (member == "image") {
                const auto* image = b->at("image").if_object();
                auto format = image ? string_of_member(*image, "format") : "";
                if (format != "png" && format != "jpeg" && format != "gif" && format != "webp")
                    return refuse_converse(bat + ".image.format: must be png, jpeg, gif or webp");
                const auto* source = image->if_contains("source");
                const auto* bytes = source && source->is_object()
                                        ? source->as_object().if_contains("bytes")
                                        : nullptr;
                if (!bytes || !bytes->is_string() || !is_base64(bytes->as_string()))
                    return refuse_converse(bat + ".image.source.bytes: must be base64");
            } else if (member == "toolUse") {
                tool_blocks = true;
                if (role != "assistant")
                    return refuse_converse(bat +
                                           ": toolUse blocks are only allowed in assistant "
                                           "messages");
                const auto* use = b->at("toolUse").if_object();
                const auto* input = use ? use->if_contains("input") : nullptr;
                auto id = use ? string_of_member(*use, "toolUseId") : "";
                if (id.empty() || string_of_member(*use, "name").empty() || !input ||
                    !input->is_object())
                    return refuse_converse(bat +
                                           ".toolUse: needs toolUseId, name and an input "
                                           "object");
                calls.push_back(id);
            } else if (member == "toolResult") {
                tool_blocks = true;
                if (role != "user")
                    return refuse_converse(bat +
                                           ": toolResult blocks are only allowed in user "
                                           "messages");
                const auto* result = b->at("toolResult").if_object();
                auto id = result ? string_of_member(*result, "toolUseId") : "";
                if (std::find(open_calls.begin(), open_calls.end(), id) == open_calls.end())
                    return refuse_converse("The toolResult block at " + bat + " has toolUseId " +
                                           id +
                                           ", which no toolUse block of the previous turn has.");
                if (auto status = string_of_member(*result, "status");
                    result->contains("status") && status != "success" && status != "error")
                    return refuse_converse(bat + ".toolResult.status: must be success or error");
                const auto* parts = result->if_contains("content");
                if (!parts || !parts->is_array())
                    return refuse_converse(bat + ".toolResult.content: expected a list");
                for (std::size_t k = 0; k < parts->as_array().size(); ++k) {
                    const auto* p = parts->as_array()[k].if_object();
                    auto kind = p ? union_member(*p) : "";
                    if (kind == "text" && blank(p->if_contains("text")))
                        return refuse_converse(
                            "The text field in the ToolResultContentBlock object at " + bat +
                            ".toolResult.content." + std::to_string(k) +
                            " is blank. Add text to the text field, and try again.");
                    if (kind != "text" && kind != "json" && kind != "image" && kind != "document")
                        return refuse_converse(bat + ".toolResult.content." + std::to_string(k) +
                                               ": unknown block `" + kind + "`");
                }
                answered.push_back(id);
            } else if (member != "reasoningContent" && member != "cachePoint" &&
                       member != "document" && member != "guardContent") {
                return refuse_converse(bat + ": unknown content block `" + member + "`");
            }
        }
        for (const auto& id : open_calls)
            if (std::find(answered.begin(), answered.end(), id) == answered.end())
                return refuse_converse("Expected toolResult blocks at " + at +
                                       ".content for the following Ids: " + id);
        open_calls = role == "assistant" ? calls : std::vector<std::string>{};
    }
    if (tool_blocks && !config)
        return refuse_converse(
            "The toolConfig field must be defined when using toolUse and toolResult content "
            "blocks.");
    return std::nullopt;
}

std::optional<answer> anthropic_refusal(const received_request& r, const json::value& body) {
    if (r.header("x-api-key").empty())
        return anthropic_error(401, "authentication_error", "x-api-key header is required");
    if (r.header("anthropic-version").empty())
        return anthropic_error(400, "invalid_request_error",
                               "anthropic-version: header is required");
    return messages_refusal(body, true);
}

std::optional<answer> messages_refusal(const json::value& body, bool names_model) {
    const auto* o = body.if_object();
    if (!o) return refuse_anthropic("Request body must be a JSON object");
    if (names_model && !o->contains("model")) return refuse_anthropic("model: Field required");
    const auto* max_tokens = o->if_contains("max_tokens");
    if (!max_tokens || !max_tokens->is_number())
        return refuse_anthropic("max_tokens: Field required");
    const auto* messages = o->if_contains("messages");
    if (!messages || !messages->is_array() || messages->as_array().empty())
        return refuse_anthropic("messages: at least one message is required");
    const auto& list = messages->as_array();
    bool tool_blocks = false;
    std::string previous_role;
    std::vector<std::string> open_calls;  // tool_use ids of the previous assistant message
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto at = "messages." + std::to_string(i);
        const auto* m = list[i].if_object();
        if (!m) return refuse_anthropic(at + ": Input should be an object");
        const auto* role_v = m->if_contains("role");
        std::string role = role_v && role_v->is_string() ? std::string(role_v->as_string()) : "";
        if (role != "user" && role != "assistant")
            return refuse_anthropic(at + ".role: Input should be 'user' or 'assistant'");
        if (i == 0 && role != "user")
            return refuse_anthropic("messages: first message must use the \"user\" role");
        if (role == previous_role)
            return refuse_anthropic(
                "messages: roles must alternate between \"user\" and \"assistant\", but found "
                "multiple \"" +
                role + "\" roles in a row");
        previous_role = role;
        json::array blocks;
        if (const auto* c = m->if_contains("content"); c && c->is_string()) {
            if (c->as_string().empty())
                return refuse_anthropic(at + ": text content blocks must be non-empty");
            blocks.push_back({{"type", "text"}, {"text", c->as_string()}});
        } else if (c && c->is_array()) {
            blocks = c->as_array();
        } else {
            return refuse_anthropic(at + ".content: Field required");
        }
        std::vector<std::string> answered;
        bool other_seen = false;
        std::vector<std::string> calls;
        for (std::size_t j = 0; j < blocks.size(); ++j) {
            auto bat = at + ".content." + std::to_string(j);
            auto kind = kind_of(blocks[j]);
            const auto& b = blocks[j].as_object();
            if (kind == "text") {
                const auto* t = b.if_contains("text");
                if (!t || !t->is_string() || t->as_string().empty())
                    return refuse_anthropic(bat + ": text content blocks must be non-empty");
                other_seen = true;
            } else if (kind == "tool_use") {
                tool_blocks = true;
                if (role != "assistant")
                    return refuse_anthropic(
                        bat + ": tool_use blocks are only allowed in assistant messages");
                const auto* input = b.if_contains("input");
                if (!input || !input->is_object())
                    return refuse_anthropic(bat + ".input: Input should be a valid dictionary");
                calls.push_back(std::string(b.at("id").as_string()));
            } else if (kind == "tool_result") {
                tool_blocks = true;
                if (other_seen)
                    return refuse_anthropic(bat +
                                            ": tool_result blocks must come before any other "
                                            "content in a user message");
                auto id = std::string(b.at("tool_use_id").as_string());
                if (std::find(open_calls.begin(), open_calls.end(), id) == open_calls.end())
                    return refuse_anthropic(
                        bat + ": unexpected `tool_use_id` found in `tool_result` blocks: " + id +
                        ". Each `tool_result` block must have a corresponding `tool_use` block in "
                        "the previous message.");
                answered.push_back(id);
            } else if (kind == "image" || kind == "thinking" || kind == "redacted_thinking") {
                other_seen = true;
            } else {
                return refuse_anthropic(bat + ".type: unknown content block type `" + kind + "`");
            }
        }
        for (const auto& id : open_calls)
            if (std::find(answered.begin(), answered.end(), id) == answered.end())
                return refuse_anthropic(
                    at +
                    ": `tool_use` ids were found without `tool_result` blocks immediately after: " +
                    id +
                    ". Each `tool_use` block must have a corresponding `tool_result` block in the "
                    "next message.");
        open_calls = role == "assistant" ? calls : std::vector<std::string>{};
    }
    if (tool_blocks && !o->contains("tools"))
        return refuse_anthropic(
            "Requests which include `tool_use` or `tool_result` blocks must define tools.");
    return std::nullopt;
}

std::optional<answer> gemini_refusal(const received_request& r, const json::value& body) {
    if (r.header("x-goog-api-key").empty() && r.target.find("key=") == std::string::npos)
        return gemini_error(
            403,
            "Method doesn't allow unregistered callers (callers without established identity). "
            "Please use API Key or other form of API consumer identity to call this API.");
    return generate_content_refusal(body);
}

std::optional<answer> generate_content_refusal(const json::value& body) {
    const auto* o = body.if_object();
    if (!o) return refuse_gemini("Invalid JSON payload received.");
    for (const auto& [key, value] : *o)
        if (key != "contents" && key != "tools" && key != "toolConfig" &&
            key != "systemInstruction" && key != "generationConfig" && key != "safetySettings")
            return refuse_gemini("Invalid JSON payload received. Unknown name \"" +
                                 std::string(key) + "\": Cannot find field.");
    if (const auto* tools = o->if_contains("tools"); tools && tools->is_array())
        for (std::size_t t = 0; t < tools->as_array().size(); ++t) {
            const auto* decls =
                tools->as_array()[t].as_object().if_contains("functionDeclarations");
            if (!decls) continue;
            for (std::size_t d = 0; d < decls->as_array().size(); ++d)
                if (const auto* p = decls->as_array()[d].as_object().if_contains("parameters"))
                    if (auto key = unknown_schema_key(*p); !key.empty())
                        return refuse_gemini("Invalid JSON payload received. Unknown name \"" +
                                             key + "\" at 'tools[" + std::to_string(t) +
                                             "].function_declarations[" + std::to_string(d) +
                                             "].parameters': Cannot find field.");
        }
    const auto* contents = o->if_contains("contents");
    if (!contents || !contents->is_array() || contents->as_array().empty())
        return refuse_gemini("* GenerateContentRequest.contents: contents is not specified");
    const auto& list = contents->as_array();
    std::string previous_role;
    std::size_t open_calls = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& c = list[i].as_object();
        std::string role = c.contains("role") ? std::string(c.at("role").as_string()) : "user";
        if (role != "user" && role != "model")
            return refuse_gemini("Please use a valid role: user, model.");
        if (role == previous_role)
            return refuse_gemini(
                "Please ensure that multiturn requests alternate between user and model.");
        previous_role = role;
        const auto* parts = c.if_contains("parts");
        if (!parts || !parts->is_array() || parts->as_array().empty())
            return refuse_gemini("* GenerateContentRequest.contents[" + std::to_string(i) +
                                 "].parts: contents.parts must not be empty.");
        std::size_t calls = 0, responses = 0;
        for (const auto& pv : parts->as_array()) {
            const auto& p = pv.as_object();
            if (const auto* fc = p.if_contains("functionCall")) {
                if (role != "model")
                    return refuse_gemini("functionCall parts are only allowed in model turns.");
                // Gemini 3: the first call of a turn carries the signature it was given.
                if (calls == 0) {
                    const auto* sig = p.if_contains("thoughtSignature");
                    // (The placeholder Gemini documents for history from another model too.)
                    if (!sig || !sig->is_string() ||
                        (sig->as_string().find("fake-sig-") != 0 &&
                         sig->as_string() != "skip_thought_signature_validator"))
                        return refuse_gemini(
                            "Function call is missing a thought_signature in functionCall parts. "
                            "This is required for tools to work correctly, and missing "
                            "thought_signature may lead to degraded model performance. Additional "
                            "data, function call `default_api:" +
                            std::string(fc->as_object().at("name").as_string()) + "` , position " +
                            std::to_string(i + 1) +
                            ". Please refer to "
                            "https://ai.google.dev/gemini-api/docs/thought-signatures for more "
                            "details.");
                }
                ++calls;
            } else if (const auto* fr = p.if_contains("functionResponse")) {
                const auto* response = fr->as_object().if_contains("response");
                if (!response || !response->is_object())
                    return refuse_gemini("Invalid value at 'contents[" + std::to_string(i) +
                                         "].parts[0].function_response.response' "
                                         "(type.googleapis.com/google.protobuf.Struct): Starting "
                                         "an object on a scalar field");
                ++responses;
            } else if (!p.contains("text") && !p.contains("inlineData") &&
                       !p.contains("fileData")) {
                return refuse_gemini("Invalid JSON payload received. A part must have data.");
            }
        }
        if (open_calls > 0 && responses != open_calls)
            return refuse_gemini(
                "Please ensure that the number of function response parts is equal to the number "
                "of function call parts of the function call turn.");
        open_calls = calls;
    }
    return std::nullopt;
}

answer anthropic_answer(const turn& t, std::string_view model, bool stream, int serial) {
    auto id = "msg_fake_" + std::to_string(serial);
    json::array content;
    if (!t.thinking.empty())
        content.push_back({{"type", "thinking"},
                           {"thinking", t.thinking},
                           {"signature", thinking_signature(t.thinking)}});
    // The blocks before the calls (thinking, text).
    std::size_t said = content.size() + (t.text.empty() ? 0 : 1);
    if (!t.text.empty()) content.push_back({{"type", "text"}, {"text", t.text}});
    for (std::size_t i = 0; i < t.calls.size(); ++i)
        content.push_back({{"type", "tool_use"},
                           {"id", "toolu_fake_" + std::to_string(serial) + "_" + std::to_string(i)},
                           {"name", t.calls[i].name},
                           {"input", arguments_of(t.calls[i])}});
    std::string stop = t.calls.empty() ? "end_turn" : "tool_use";
    // A scripted usage goes whole in message_start and message_delta, as Anthropic's newer
    // message_delta repeats the input counts.
    auto usage = [&](json::object canned) {
        return t.usage.empty() ? json::value(std::move(canned)) : json::parse(t.usage);
    };
    answer a;
    if (!stream) {
        a.body = json::serialize(
            json::object{{"id", id},
                         {"type", "message"},
                         {"role", "assistant"},
                         {"model", model},
                         {"content", content},
                         {"stop_reason", stop},
                         {"stop_sequence", nullptr},
                         {"usage", usage({{"input_tokens", 10}, {"output_tokens", 5}})}});
        return a;
    }
    a.content_type = "text/event-stream; charset=utf-8";
    a.events.push_back(
        frame(json::object{{"type", "message_start"},
                           {"message",
                            {{"id", id},
                             {"type", "message"},
                             {"role", "assistant"},
                             {"model", model},
                             {"content", json::array{}},
                             {"stop_reason", nullptr},
                             {"usage", usage({{"input_tokens", 10}, {"output_tokens", 1}})}}}},
              "message_start"));
    a.events.push_back(frame(json::object{{"type", "ping"}}, "ping"));
    std::size_t index = 0;
    if (!t.thinking.empty()) {
        // As Anthropic streams it: the text in deltas, then its signature in one.
        a.events.push_back(frame(
            json::object{
                {"type", "content_block_start"},
                {"index", index},
                {"content_block", {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}}},
            "content_block_start"));
        a.events.push_back(
            frame(json::object{{"type", "content_block_delta"},
                               {"index", index},
                               {"delta", {{"type", "thinking_delta"}, {"thinking", t.thinking}}}},
                  "content_block_delta"));
        a.events.push_back(frame(json::object{{"type", "content_block_delta"},
                                              {"index", index},
                                              {"delta",
                                               {{"type", "signature_delta"},
                                                {"signature", thinking_signature(t.thinking)}}}},
                                 "content_block_delta"));
        a.events.push_back(frame(json::object{{"type", "content_block_stop"}, {"index", index}},
                                 "content_block_stop"));
        ++index;
    }
    if (!t.text.empty()) {
        a.events.push_back(frame(json::object{{"type", "content_block_start"},
                                              {"index", index},
                                              {"content_block", {{"type", "text"}, {"text", ""}}}},
                                 "content_block_start"));
        auto half = t.text.size() / 2;
        for (auto piece : {t.text.substr(0, half), t.text.substr(half)})
            if (!piece.empty())
                a.events.push_back(
                    frame(json::object{{"type", "content_block_delta"},
                                       {"index", index},
                                       {"delta", {{"type", "text_delta"}, {"text", piece}}}},
                          "content_block_delta"));
        a.events.push_back(frame(json::object{{"type", "content_block_stop"}, {"index", index}},
                                 "content_block_stop"));
        ++index;
    }
    for (std::size_t i = 0; i < t.calls.size(); ++i, ++index) {
        auto args = json::serialize(arguments_of(t.calls[i]));
        a.events.push_back(frame(json::object{{"type", "content_block_start"},
                                              {"index", index},
                                              {"content_block",
                                               {{"type", "tool_use"},
                                                {"id", content[said + i].as_object().at("id")},
                                                {"name", t.calls[i].name},
                                                {"input", json::object{}}}}},
                                 "content_block_start"));
        // A call without arguments streams one empty fragment, as the API does.
        std::vector<std::string> pieces;
        if (args == "{}")
            pieces.push_back("");
        else
            pieces = {args.substr(0, args.size() / 2), args.substr(args.size() / 2)};
        for (const auto& piece : pieces)
            a.events.push_back(frame(
                json::object{{"type", "content_block_delta"},
                             {"index", index},
                             {"delta", {{"type", "input_json_delta"}, {"partial_json", piece}}}},
                "content_block_delta"));
        a.events.push_back(frame(json::object{{"type", "content_block_stop"}, {"index", index}},
                                 "content_block_stop"));
    }
    a.events.push_back(
        frame(json::object{{"type", "message_delta"},
                           {"delta", {{"stop_reason", stop}, {"stop_sequence", nullptr}}},
                           {"usage", usage({{"output_tokens", 5}})}},
              "message_delta"));
    a.events.push_back(frame(json::object{{"type", "message_stop"}}, "message_stop"));
    return a;
}

answer gemini_answer(const turn& t, std::string_view model, bool stream, int serial) {
    auto response_id = "fake-resp-" + std::to_string(serial);
    json::value usage =
        t.usage.empty()
            ? json::value(json::object{
                  {"promptTokenCount", 10}, {"candidatesTokenCount", 5}, {"totalTokenCount", 15}})
            : json::parse(t.usage);
    auto chunk = [&](json::array parts, bool last) {
        json::object candidate{{"content", {{"role", "model"}, {"parts", std::move(parts)}}},
                               {"index", 0}};
        if (last) candidate["finishReason"] = "STOP";
        json::object out{{"candidates", json::array{std::move(candidate)}},
                         {"modelVersion", model},
                         {"responseId", response_id}};
        if (last) out["usageMetadata"] = usage;
        return out;
    };
    json::array calls;
    for (std::size_t i = 0; i < t.calls.size(); ++i) {
        json::object part{
            {"functionCall", {{"name", t.calls[i].name}, {"args", arguments_of(t.calls[i])}}}};
        if (i == 0) part["thoughtSignature"] = "fake-sig-" + std::to_string(serial);
        calls.push_back(std::move(part));
    }
    answer a;
    if (!stream) {
        json::array parts;
        if (!t.text.empty()) parts.push_back(json::object{{"text", t.text}});
        for (auto& c : calls) parts.push_back(c);
        a.body = json::serialize(chunk(std::move(parts), true));
        return a;
    }
    a.content_type = "text/event-stream";
    auto sse = [](const json::value& v) { return "data: " + json::serialize(v) + "\r\n\r\n"; };
    auto half = t.text.size() / 2;
    std::vector<std::string> pieces;
    for (auto piece : {t.text.substr(0, half), t.text.substr(half)})
        if (!piece.empty()) pieces.push_back(piece);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        bool last = i + 1 == pieces.size() && calls.empty();
        a.events.push_back(sse(chunk(json::array{json::object{{"text", pieces[i]}}}, last)));
    }
    if (!calls.empty() || pieces.empty()) a.events.push_back(sse(chunk(calls, true)));
    return a;
}

answer converse_answer(const turn& t, bool stream, int serial) {
    json::array content;
    if (!t.text.empty()) content.push_back(json::object{{"text", t.text}});
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < t.calls.size(); ++i) {
        ids.push_back("tooluse_fake" + std::to_string(serial) + "_" + std::to_string(i));
        content.push_back(json::object{{"toolUse",
                                        {{"toolUseId", ids.back()},
                                         {"name", t.calls[i].name},
                                         {"input", arguments_of(t.calls[i])}}}});
    }
    std::string stop = t.calls.empty() ? "end_turn" : "tool_use";
    json::object usage{{"inputTokens", 10}, {"outputTokens", 5}, {"totalTokens", 15}};
    json::object metrics{{"latencyMs", 42}};
    answer a;
    if (!stream) {
        a.body = json::serialize(
            json::object{{"output", {{"message", {{"role", "assistant"}, {"content", content}}}}},
                         {"stopReason", stop},
                         {"usage", usage},
                         {"metrics", metrics}});
        return a;
    }
    a.content_type = "application/vnd.amazon.eventstream";
    a.events.push_back(converse_event("messageStart", {{"role", "assistant"}}));
    std::size_t index = 0;
    // A text block has no contentBlockStart: its first delta starts it.
    if (!t.text.empty()) {
        auto half = t.text.size() / 2;
        for (auto piece : {t.text.substr(0, half), t.text.substr(half)})
            if (!piece.empty())
                a.events.push_back(
                    converse_event("contentBlockDelta",
                                   {{"contentBlockIndex", index}, {"delta", {{"text", piece}}}}));
        a.events.push_back(converse_event("contentBlockStop", {{"contentBlockIndex", index}}));
        ++index;
    }
    for (std::size_t i = 0; i < t.calls.size(); ++i, ++index) {
        a.events.push_back(converse_event(
            "contentBlockStart",
            {{"contentBlockIndex", index},
             {"start", {{"toolUse", {{"toolUseId", ids[i]}, {"name", t.calls[i].name}}}}}}));
        auto args = json::serialize(arguments_of(t.calls[i]));
        for (auto piece : {args.substr(0, args.size() / 2), args.substr(args.size() / 2)})
            a.events.push_back(converse_event(
                "contentBlockDelta",
                {{"contentBlockIndex", index}, {"delta", {{"toolUse", {{"input", piece}}}}}}));
        a.events.push_back(converse_event("contentBlockStop", {{"contentBlockIndex", index}}));
    }
    a.events.push_back(converse_event("messageStop", {{"stopReason", stop}}));
    a.events.push_back(converse_event("metadata", {{"usage", usage}, {"metrics", metrics}}));
    return a;
}

bool holds_tool_result(const json::value& body) {
    const auto* o = body.if_object();
    if (!o) return false;
    auto list = [&](std::string_view key) -> const json::array* {
        const auto* v = o->if_contains(key);
        return v ? v->if_array() : nullptr;
    };
    auto any_in = [](const json::array* items, std::string_view key, auto&& is_result) {
        if (items)
            for (const auto& item : *items)
                if (const auto* i = item.if_object())
                    if (const auto* inner = i->if_contains(key); inner && inner->is_array())
                        for (const auto& part : inner->as_array())
                            if (const auto* p = part.if_object(); p && is_result(*p)) return true;
        return false;
    };
    if (const auto* messages = list("messages"))
        for (const auto& m : *messages)
            if (const auto* mo = m.if_object())
                if (const auto* role = mo->if_contains("role");
                    role && role->is_string() && role->as_string() == "tool")
                    return true;
    auto typed = [](std::string_view type) {
        return [type](const json::object& p) {
            const auto* t = p.if_contains("type");
            return t && t->is_string() && t->as_string() == type;
        };
    };
    if (any_in(list("messages"), "content", typed("tool_result"))) return true;
    if (any_in(list("messages"), "content",
               [](const json::object& p) { return p.contains("toolResult"); }))
        return true;
    if (any_in(list("contents"), "parts",
               [](const json::object& p) { return p.contains("functionResponse"); }))
        return true;
    if (const auto* input = list("input"))
        for (const auto& item : *input)
            if (const auto* i = item.if_object(); i && typed("function_call_output")(*i))
                return true;
    return false;
}

turn canned_turn(const json::value& body, bool gemini) {
    turn t;
    const auto* o = body.if_object();
    // The declared tools, each with its parameters' schema: OpenAI-shaped for neither; Anthropic
    // `tools[]`, Gemini declarations, Converse's toolConfig.tools[].toolSpec.
    std::vector<std::pair<const json::object*, const json::value*>> tools;
    if (o)
        if (const auto* list = o->if_contains("tools"); list && list->is_array())
            for (const auto& entry : list->as_array()) {
                const auto& e = entry.as_object();
                if (gemini) {
                    if (const auto* d = e.if_contains("functionDeclarations"))
                        for (const auto& decl : d->as_array())
                            tools.emplace_back(&decl.as_object(),
                                               decl.as_object().if_contains("parameters"));
                } else {
                    tools.emplace_back(&e, e.if_contains("input_schema"));
                }
            }
    if (o)
        if (const auto* config = o->if_contains("toolConfig"); config && config->is_object())
            if (const auto* list = config->as_object().if_contains("tools");
                list && list->is_array())
                for (const auto& entry : list->as_array())
                    if (const auto* spec = entry.as_object().if_contains("toolSpec")) {
                        const auto& s = spec->as_object();
                        const auto* input = s.if_contains("inputSchema");
                        tools.emplace_back(&s, input && input->is_object()
                                                   ? input->as_object().if_contains("json")
                                                   : nullptr);
                    }
    if (tools.empty() || holds_tool_result(body)) {
        t.text = "Hello from the fake upstream!";
        return t;
    }
    for (std::size_t i = 0; i < tools.size() && i < 2; ++i) {
        const auto& [declared, schema] = tools[i];
        const auto& tool = *declared;
        json::object args;
        if (schema && schema->is_object())
            if (const auto* required = schema->as_object().if_contains("required");
                required && required->is_array())
                for (const auto& name : required->as_array()) {
                    std::string type;
                    if (const auto* props = schema->as_object().if_contains("properties"))
                        if (const auto* p = props->as_object().if_contains(name.as_string()))
                            if (const auto* ty = p->as_object().if_contains("type");
                                ty && ty->is_string())
                                type = std::string(ty->as_string());
                    if (type == "integer" || type == "number")
                        args[name.as_string()] = 1;
                    else if (type == "boolean")
                        args[name.as_string()] = true;
                    else
                        args[name.as_string()] = "Paris";
                }
        t.calls.push_back({std::string(tool.at("name").as_string()), json::serialize(args)});
    }
    return t;
}

std::string with_usage(const std::string& body, std::string_view usage) {
    boost::system::error_code ec;
    auto answer = json::parse(body, ec);
    auto replaced = ec ? json::value() : json::parse(usage, ec);
    if (ec || !answer.is_object() || !replaced.is_object()) return body;
    auto& o = answer.as_object();
    o[o.contains("usageMetadata") ? "usageMetadata" : "usage"] = std::move(replaced);
    return json::serialize(answer);
}

}  // namespace gateway::testing::fake_providers
