// OpenAI-shaped answers written by the gateway (the translated /v1/chat/completions): a whole
// completion, its streamed chunks, an error body. (Requests and the adapter: openai.cpp.)
#include "gateway/providers/openai.hpp"

#include <boost/json/serialize.hpp>

namespace gateway::providers::openai {

std::string chat_completion(const reply& r, std::string_view id, std::string_view model,
                            std::int64_t created) {
    json::object message{{"role", "assistant"}};
    auto text = r.content.text();
    auto calls = r.content.calls();
    if (text.empty() && !calls.empty())
        message["content"] = nullptr;
    else
        message["content"] = text;
    if (!calls.empty()) {
        json::array list;
        for (const auto* c : calls) list.push_back(call_json(*c));
        message["tool_calls"] = std::move(list);
    }
    json::object body{
        {"id", id},
        {"object", "chat.completion"},
        {"created", created},
        {"model", model},
        {"choices", json::array{json::object{{"index", 0},
                                             {"message", std::move(message)},
                                             {"logprobs", nullptr},
                                             {"finish_reason", openai_finish_reason(r.why)}}}}};
    if (r.used.known) body["usage"] = usage_json(r.used);
    return json::serialize(body);
}

chunk_writer::chunk_writer(std::string id, std::string model, std::int64_t created,
                           bool include_usage)
    : id_(std::move(id)),
      model_(std::move(model)),
      created_(created),
      include_usage_(include_usage) {}

std::string chunk_writer::chunk(const json::object& delta, const json::value& finish_reason) {
    json::object body{{"id", id_},
                      {"object", "chat.completion.chunk"},
                      {"created", created_},
                      {"model", model_},
                      {"choices", json::array{json::object{{"index", 0},
                                                           {"delta", delta},
                                                           {"logprobs", nullptr},
                                                           {"finish_reason", finish_reason}}}}};
    if (include_usage_) body["usage"] = nullptr;
    return "data: " + json::serialize(body) + "\n\n";
}

void chunk_writer::frames(const stream_delta& d, std::string& out) {
    json::object delta;
    if (!role_sent_) {
        delta["role"] = "assistant";
        role_sent_ = true;
    }
    switch (d.what) {
        case stream_delta::kind::started:
            delta["content"] = "";
            out += chunk(delta, nullptr);
            return;
        case stream_delta::kind::text:
            delta["content"] = d.text;
            out += chunk(delta, nullptr);
            return;
        case stream_delta::kind::call_started: {
            if (has_arguments_.size() <= d.index) has_arguments_.resize(d.index + 1, false);
            json::object call{{"index", d.index},
                              {"id", d.id},
                              {"type", "function"},
                              {"function", {{"name", d.name}, {"arguments", ""}}}};
            if (!d.provider_meta.empty()) call["extra_content"] = extra_content(d.provider_meta);
            delta["tool_calls"] = json::array{std::move(call)};
            out += chunk(delta, nullptr);
            return;
        }
        case stream_delta::kind::call_arguments:
            if (has_arguments_.size() <= d.index) has_arguments_.resize(d.index + 1, false);
            has_arguments_[d.index] = true;
            delta["tool_calls"] = json::array{
                json::object{{"index", d.index}, {"function", {{"arguments", d.text}}}}};
            out += chunk(delta, nullptr);
            return;
        case stream_delta::kind::finished: {
            for (std::size_t i = 0; i < has_arguments_.size(); ++i)
                if (!has_arguments_[i]) {
                    json::object empty{
                        {"tool_calls", json::array{json::object{
                                           {"index", i}, {"function", {{"arguments", "{}"}}}}}}};
                    out += chunk(empty, nullptr);
                }
            out += chunk(delta, json::string(openai_finish_reason(d.why)));
            if (include_usage_) {
                json::object body{{"id", id_},
                                  {"object", "chat.completion.chunk"},
                                  {"created", created_},
                                  {"model", model_},
                                  {"choices", json::array{}},
                                  {"usage", usage_json(d.used)}};
                out += "data: " + json::serialize(body) + "\n\n";
            }
            out += "data: [DONE]\n\n";
            return;
        }
    }
}

std::string error_body(const provider_error& e) {
    return json::serialize(json::object{
        {"error",
         {{"message", e.message}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}}}});
}

}  // namespace gateway::providers::openai
