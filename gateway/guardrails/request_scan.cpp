#include "gateway/guardrails/request_scan.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>

namespace gateway::guardrails {

namespace json = boost::json;

namespace {

// The members a model call's texts are under, in each API's request and answer.
constexpr std::array<std::string_view, 8> request_members{
    "messages",          "system", "input", "instructions", "contents", "system_instruction",
    "systemInstruction", "prompt"};
constexpr std::array<std::string_view, 4> answer_members{"choices", "content", "output",
                                                         "candidates"};

// Members whose strings are no text a model reads: names, ids, roles, reasons, and data
// (base64 images and files, URLs, signatures) that is large and never a prompt.
constexpr std::array<std::string_view, 42> not_text{"type",
                                                    "role",
                                                    "id",
                                                    "model",
                                                    "name",
                                                    "object",
                                                    "tool_call_id",
                                                    "tool_use_id",
                                                    "call_id",
                                                    "item_id",
                                                    "status",
                                                    "finish_reason",
                                                    "stop_reason",
                                                    "finishReason",
                                                    "stopReason",
                                                    "mime_type",
                                                    "mimeType",
                                                    "media_type",
                                                    "signature",
                                                    "thoughtSignature",
                                                    "thought_signature",
                                                    "cache_control",
                                                    "encrypted_content",
                                                    "image_url",
                                                    "source",
                                                    "inlineData",
                                                    "inline_data",
                                                    "fileData",
                                                    "file_data",
                                                    "data",
                                                    "input_audio",
                                                    "audio",
                                                    "file",
                                                    "image",
                                                    "file_id",
                                                    "url",
                                                    "system_fingerprint",
                                                    "logprobs",
                                                    "usage",
                                                    "usageMetadata",
                                                    "safetyRatings",
                                                    "annotations"};

bool is_not_text(std::string_view key) {
    return std::find(not_text.begin(), not_text.end(), key) != not_text.end();
}

void walk(json::value& v, const std::function<void(json::string&)>& f) {
    if (v.is_string()) {
        f(v.as_string());
    } else if (v.is_array()) {
        for (auto& item : v.as_array()) walk(item, f);
    } else if (v.is_object()) {
        for (auto& member : v.as_object())
            if (!is_not_text(member.key())) walk(member.value(), f);
    }
}

constexpr std::string_view separator = "\n\n";

}  // namespace

void for_each_text(json::value& v, const std::function<void(json::string&)>& f) {
    walk(v, f);
}

bool body_texts::read(std::string_view body, body_kind kind) {
    texts_.clear();
    boost::system::error_code ec;
    json::parse_options limits;
    limits.max_depth = 64;
    doc_ = json::parse(body, ec, {}, limits);
    if (ec || !doc_.is_object()) return false;
    auto collect = [this](json::string& s) {
        if (!s.empty()) texts_.push_back(&s);
    };
    auto& o = doc_.as_object();
    auto take = [&](const auto& members) {
        for (auto& member : o)
            if (std::find(members.begin(), members.end(), member.key()) != members.end())
                walk(member.value(), collect);
    };
    if (kind == body_kind::request)
        take(request_members);
    else
        take(answer_members);
    return true;
}

std::string body_texts::joined() const {
    std::string out;
    for (const auto* t : texts_) {
        if (!out.empty()) out += separator;
        out.append(t->data(), t->size());
    }
    return out;
}

void body_texts::replace_joined(const std::vector<std::pair<std::size_t, std::size_t>>& spans,
                                std::string_view label) {
    std::size_t at = 0;  // where the text being looked at starts in joined()
    auto span = spans.begin();
    for (auto* t : texts_) {
        std::size_t end = at + t->size();
        std::string rewritten;
        std::size_t copied = 0;  // of this text
        bool changed = false;
        for (; span != spans.end() && span->first < end; ++span) {
            if (span->second <= at) continue;  // it ended in the separator before this text
            auto b = std::max(span->first, at) - at;
            auto e = std::min(span->second, end) - at;
            if (e <= b) continue;
            rewritten.append(t->data() + copied, b - copied);
            rewritten += label;
            copied = e;
            changed = true;
            // A span running on into the next text is masked there too.
            if (span->second > end) break;
        }
        if (changed) {
            rewritten.append(t->data() + copied, t->size() - copied);
            *t = json::string(rewritten);
        }
        at = end + separator.size();
    }
}

std::string body_texts::write() const {
    return json::serialize(doc_);
}

body_check check_texts(body_texts& texts, const engine& rules, const selection& chosen,
                       config::guardrail_stage stage) {
    body_check found;
    for (auto* t : texts.texts()) {
        auto checked = rules.check(chosen, std::string_view(t->data(), t->size()));
        record(checked, stage);
        if (checked.result == verdict::blocked) {
            found.result = verdict::blocked;
            found.blocked_by = checked.blocked_by;
            return found;
        }
        if (checked.result == verdict::masked) {
            *t = json::string(checked.text);
            found.result = verdict::masked;
        }
    }
    return found;
}

body_check check_answer(std::string& body, const engine& rules, const selection& chosen) {
    body_texts texts;
    if (!texts.read(body, body_kind::answer)) return {};
    auto found = check_texts(texts, rules, chosen, config::guardrail_stage::response);
    if (found.result == verdict::masked) body = texts.write();
    return found;
}

std::string blocked_message(const finding& by, std::string_view what) {
    return "guardrail_blocked: the guardrail `" + std::string(by.guardrail) + "` blocked this " +
           std::string(what) + " (rule `" + std::string(by.rule) + "`)";
}

}  // namespace gateway::guardrails
