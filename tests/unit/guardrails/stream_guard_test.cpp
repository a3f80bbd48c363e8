#include "gateway/guardrails/stream_guard.hpp"

#include "gateway/guardrails/request_scan.hpp"
#include "gateway/guardrails/webhook.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

namespace guardrails_stream_guard_test {

namespace config = gateway::config;
namespace guardrails = gateway::guardrails;
namespace json = boost::json;

namespace {

const std::string secret = "AKIAZ7QWERTYUIOPASDF";
const std::string masked = "[REDACTED:aws_access_key_id]";

guardrails::engine engine_of(config::guardrail_action action, config::guardrail_stage stage) {
    config::guardrail_config g;
    g.name = "secrets";
    g.detect = {"secrets"};
    g.on = {stage};
    g.action = action;
    return guardrails::engine({g});
}

std::string chat_chunk(const json::object& delta, const json::value& finish = nullptr) {
    json::object chunk{
        {"id", "c1"},
        {"object", "chat.completion.chunk"},
        {"choices", json::array{{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}};
    return "data: " + json::serialize(chunk) + "\n\n";
}

// The stream fed in `piece`-byte pieces: what the guard let out.
std::string through(guardrails::stream_guard& guard, const std::string& stream, std::size_t piece) {
    std::string out;
    for (std::size_t at = 0; at < stream.size(); at += piece)
        guard.feed(std::string_view(stream).substr(at, piece), out);
    guard.finish(out);
    return out;
}

// The text of a Chat Completions stream's deltas.
std::string chat_text(const std::string& stream) {
    std::string text;
    for (std::size_t at = stream.find("data: "); at != std::string::npos;
         at = stream.find("data: ", at + 1)) {
        auto end = stream.find('\n', at);
        auto data = stream.substr(at + 6, end - at - 6);
        if (data == "[DONE]") continue;
        auto v = json::parse(data);
        if (const auto* content =
                v.at("choices").at(0).at("delta").as_object().if_contains("content"))
            if (content->is_string()) text += content->as_string();
    }
    return text;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(guardrails_stream_guard)

BOOST_AUTO_TEST_CASE(a_secret_split_across_events_and_reads_is_masked) {
    auto rules = engine_of(config::guardrail_action::mask, config::guardrail_stage::response);
    auto chosen = rules.select(config::guardrail_stage::response, {});
    std::string stream = chat_chunk({{"role", "assistant"}, {"content", ""}});
    std::string text = "Here: " + secret + " and more text after it.";
    // One event per 3 bytes of text: the key is in seven of them.
    for (std::size_t at = 0; at < text.size(); at += 3)
        stream += chat_chunk({{"content", text.substr(at, 3)}});
    stream += chat_chunk({}, "stop") + "data: [DONE]\n\n";
    for (std::size_t piece : {1u, 7u, 4096u}) {
        guardrails::stream_guard guard(guardrails::stream_api::chat_completions, rules, chosen);
        auto out = through(guard, stream, piece);
        BOOST_TEST(out.find(secret) == std::string::npos, out);
        BOOST_TEST(chat_text(out) == "Here: " + masked + " and more text after it.");
        BOOST_TEST(out.ends_with("data: [DONE]\n\n"));
        BOOST_TEST(!guard.blocked());
    }
}

// Tool-call arguments are a channel of their own: a secret split across two argument deltas is
// masked, and the arguments joined are still the JSON they were (Chat Completions, Messages'
// input_json_delta, Responses' function_call_arguments.delta), cut anywhere.
BOOST_AUTO_TEST_CASE(a_secret_split_across_tool_call_arguments_is_masked) {
    auto rules = engine_of(config::guardrail_action::mask, config::guardrail_stage::response);
    auto chosen = rules.select(config::guardrail_stage::response, {});
    const std::string arguments = R"({"key":")" + secret + R"(","note":"kept"})";
    const std::string expected = R"({"key":")" + masked + R"(","note":"kept"})";
    auto cut = arguments.find(secret) + 7;
    std::vector<std::string> pieces{arguments.substr(0, cut), arguments.substr(cut)};

    std::string chat = chat_chunk(
        {{"role", "assistant"},
         {"tool_calls", json::array{{{"index", 0},
                                     {"id", "call_1"},
                                     {"type", "function"},
                                     {"function", {{"name", "store"}, {"arguments", ""}}}}}}});
    for (const auto& piece : pieces)
        chat += chat_chunk(
            {{"tool_calls", json::array{{{"index", 0}, {"function", {{"arguments", piece}}}}}}});
    chat += chat_chunk({}, "tool_calls") + "data: [DONE]\n\n";

    auto event = [](std::string_view type, const json::object& data) {
        return "event: " + std::string(type) + "\ndata: " + json::serialize(data) + "\n\n";
    };
    std::string messages = event(
        "content_block_start",
        {{"type", "content_block_start"},
         {"index", 0},
         {"content_block",
          {{"type", "tool_use"}, {"id", "tu"}, {"name", "store"}, {"input", json::object{}}}}});
    for (const auto& piece : pieces)
        messages += event("content_block_delta",
                          {{"type", "content_block_delta"},
                           {"index", 0},
                           {"delta", {{"type", "input_json_delta"}, {"partial_json", piece}}}});
    messages += event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}});

    std::string responses;
    for (const auto& piece : pieces)
        responses += event("response.function_call_arguments.delta",
                           {{"type", "response.function_call_arguments.delta"},
                            {"item_id", "fc_1"},
                            {"output_index", 0},
                            {"delta", piece},
                            {"sequence_number", 0}});
    responses += event("response.function_call_arguments.done",
                       {{"type", "response.function_call_arguments.done"},
                        {"item_id", "fc_1"},
                        {"output_index", 0},
                        {"arguments", arguments},
                        {"sequence_number", 0}});

    // The arguments as the client joins them, from the events that carry them.
    auto joined = [](const std::string& out, std::string_view kind) {
        std::string text;
        for (std::size_t at = out.find("data: "); at != std::string::npos;
             at = out.find("data: ", at + 1)) {
            auto data = out.substr(at + 6, out.find('\n', at) - at - 6);
            if (data == "[DONE]") continue;
            auto v = json::parse(data);
            const auto& o = v.as_object();
            if (kind == "chat") {
                const auto& delta = v.at("choices").at(0).at("delta").as_object();
                if (const auto* calls = delta.if_contains("tool_calls"))
                    text += calls->at(0).at("function").at("arguments").as_string();
            } else if (kind == "messages") {
                if (o.at("type") == "content_block_delta")
                    text += v.at("delta").at("partial_json").as_string();
            } else if (o.at("type") == "response.function_call_arguments.delta") {
                text += v.at("delta").as_string();
            }
        }
        return text;
    };
    for (std::size_t piece : {1u, 5u, 4096u}) {
        guardrails::stream_guard c(guardrails::stream_api::chat_completions, rules, chosen);
        auto out = through(c, chat, piece);
        BOOST_TEST(out.find(secret) == std::string::npos, out);
        BOOST_TEST(joined(out, "chat") == expected);
        BOOST_TEST(out.ends_with("data: [DONE]\n\n"));
        guardrails::stream_guard m(guardrails::stream_api::messages, rules, chosen);
        out = through(m, messages, piece);
        BOOST_TEST(out.find(secret) == std::string::npos, out);
        BOOST_TEST(joined(out, "messages") == expected);
        BOOST_TEST(out.find("content_block_stop") != std::string::npos);
        guardrails::stream_guard r(guardrails::stream_api::responses, rules, chosen);
        out = through(r, responses, piece);
        BOOST_TEST(out.find(secret) == std::string::npos, out);
        BOOST_TEST(joined(out, "responses") == expected);
    }
}

BOOST_AUTO_TEST_CASE(text_far_from_any_match_is_released_before_the_end) {
    auto rules = engine_of(config::guardrail_action::mask, config::guardrail_stage::response);
    auto chosen = rules.select(config::guardrail_stage::response, {});
    guardrails::stream_guard guard(guardrails::stream_api::chat_completions, rules, chosen);
    std::string out;
    std::string words(chosen.max_match_bytes() + 100, 'a');
    for (std::size_t i = 0; i < words.size(); i += 10) words[i] = ' ';
    guard.feed(chat_chunk({{"content", words}}), out);
    // Held back no more than the longest match.
    BOOST_TEST(chat_text(out).size() >= 100u);
    guard.finish(out);
    BOOST_TEST(chat_text(out) == words);
}

BOOST_AUTO_TEST_CASE(responses_events_are_numbered_again_and_their_whole_texts_masked) {
    auto rules = engine_of(config::guardrail_action::mask, config::guardrail_stage::response);
    auto chosen = rules.select(config::guardrail_stage::response, {});
    guardrails::stream_guard guard(guardrails::stream_api::responses, rules, chosen);
    auto event = [](std::string type, json::object data, int n) {
        data["type"] = type;
        data["sequence_number"] = n;
        return "event: " + type + "\ndata: " + json::serialize(data) + "\n\n";
    };
    std::string stream;
    int n = 0;
    std::string text = "k=" + secret;
    for (std::size_t at = 0; at < text.size(); at += 5)
        stream +=
            event("response.output_text.delta",
                  {{"output_index", 0}, {"content_index", 0}, {"delta", text.substr(at, 5)}}, n++);
    stream += event("response.output_text.done",
                    {{"output_index", 0}, {"content_index", 0}, {"text", text}}, n++);
    auto out = through(guard, stream, 11);
    BOOST_TEST(out.find(secret) == std::string::npos, out);
    std::vector<std::int64_t> numbers;
    std::string deltas;
    std::string done;
    for (std::size_t at = out.find("data: "); at != std::string::npos;
         at = out.find("data: ", at + 1)) {
        auto v = json::parse(out.substr(at + 6, out.find('\n', at) - at - 6)).as_object();
        numbers.push_back(v.at("sequence_number").as_int64());
        if (v.at("type") == "response.output_text.delta") deltas += v.at("delta").as_string();
        if (v.at("type") == "response.output_text.done") done = v.at("text").as_string();
    }
    BOOST_TEST(deltas == "k=" + masked);
    BOOST_TEST(done == deltas);
    for (std::size_t i = 0; i < numbers.size(); ++i)
        BOOST_TEST(numbers[i] == static_cast<std::int64_t>(i));
}

BOOST_AUTO_TEST_CASE(a_block_ends_the_stream_with_the_apis_error_event) {
    auto rules = engine_of(config::guardrail_action::block, config::guardrail_stage::response);
    auto chosen = rules.select(config::guardrail_stage::response, {});
    guardrails::stream_guard guard(guardrails::stream_api::messages, rules, chosen);
    auto delta = [](std::string text) {
        json::object d{{"type", "content_block_delta"},
                       {"index", 0},
                       {"delta", {{"type", "text_delta"}, {"text", text}}}};
        return "event: content_block_delta\ndata: " + json::serialize(d) + "\n\n";
    };
    std::string out;
    guard.feed(delta("one " + secret.substr(0, 8)), out);
    guard.feed(delta(secret.substr(8) + " two"), out);
    guard.feed("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
               out);
    BOOST_TEST(guard.blocked());
    BOOST_TEST(out.find(secret.substr(0, 8)) == std::string::npos, out);
    BOOST_TEST(out.starts_with("event: error\n"), out);
    BOOST_TEST(out.find("aws_access_key_id") != std::string::npos);
    std::string more;
    guard.feed(delta("after"), more);
    guard.finish(more);
    BOOST_TEST(more.empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(guardrails_request_scan)

BOOST_AUTO_TEST_CASE(every_text_of_a_request_is_read_and_no_data) {
    const std::string body = R"({"model":"claude-x","system":"s1","messages":[
        {"role":"user","content":[{"type":"text","text":"t1"},
          {"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUtJQQ=="}}]},
        {"role":"assistant","content":[{"type":"tool_use","id":"tu","name":"n","input":{"a":"t2"}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"tu","content":"t3"}]}]})";
    guardrails::body_texts texts;
    BOOST_TEST_REQUIRE(texts.read(body, guardrails::body_kind::request));
    BOOST_TEST(texts.joined() == "s1\n\nt1\n\nt2\n\nt3");
    BOOST_TEST(!texts.read("[1,2]", guardrails::body_kind::request));
    BOOST_TEST(!texts.read("not json", guardrails::body_kind::request));
}

BOOST_AUTO_TEST_CASE(spans_of_the_joined_texts_land_in_each_text) {
    guardrails::body_texts texts;
    BOOST_TEST_REQUIRE(texts.read(R"({"messages":[{"content":"abcdef"},{"content":"ghij"}]})",
                                  guardrails::body_kind::request));
    // "abcdef\n\nghij": [1,3) in the first, [4,10) across both.
    texts.replace_joined({{1, 3}, {4, 10}}, "#");
    BOOST_TEST(texts.write() == R"({"messages":[{"content":"a#d#"},{"content":"#ij"}]})");
}

BOOST_AUTO_TEST_CASE(a_request_and_an_answer_are_masked_or_blocked) {
    auto rules = engine_of(config::guardrail_action::mask, config::guardrail_stage::response);
    auto chosen = rules.select(config::guardrail_stage::response, {});
    std::string answer = R"({"id":"x","choices":[{"index":0,"message":{"role":"assistant",)"
                         R"("content":"k )" +
                         secret + R"("}}]})";
    auto found = guardrails::check_answer(answer, rules, chosen);
    BOOST_TEST((found.result == guardrails::verdict::masked));
    BOOST_TEST(answer.find(masked) != std::string::npos, answer);

    auto blocking = engine_of(config::guardrail_action::block, config::guardrail_stage::request);
    auto on_request = blocking.select(config::guardrail_stage::request, {});
    guardrails::body_texts texts;
    BOOST_TEST_REQUIRE(
        texts.read(R"({"input":"a )" + secret + R"("})", guardrails::body_kind::request));
    auto refused =
        guardrails::check_texts(texts, blocking, on_request, config::guardrail_stage::request);
    BOOST_TEST_REQUIRE((refused.result == guardrails::verdict::blocked));
    auto message = guardrails::blocked_message(*refused.blocked_by, "request");
    BOOST_TEST(message.find("`secrets`") != std::string::npos);
    BOOST_TEST(message.find(secret) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_webhook_answer_is_read_or_refused) {
    auto mask = guardrails::read_webhook_answer(R"({"action":"mask","spans":[[0,2],[4,5]]})", 5);
    BOOST_TEST(mask.answered);
    BOOST_TEST((mask.what == guardrails::webhook_answer::action::mask));
    BOOST_TEST(mask.spans.size() == 2u);
    auto block = guardrails::read_webhook_answer(R"({"action":"block","reason":"no"})", 5);
    BOOST_TEST((block.what == guardrails::webhook_answer::action::block));
    BOOST_TEST(block.reason == "no");
    for (const auto* bad : {"nope", R"({"action":"maybe"})", R"({"action":"mask","spans":[[3,9]]})",
                            R"({"action":"mask","spans":[[3,4],[0,1]]})"}) {
        auto refused = guardrails::read_webhook_answer(bad, 5);
        BOOST_TEST(!refused.answered, bad);
        BOOST_TEST(!refused.reason.empty());
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace guardrails_stream_guard_test
