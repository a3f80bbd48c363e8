#include "gateway/providers/usage_observer.hpp"

#include <boost/test/unit_test.hpp>

#include <tuple>

namespace providers_usage_observer_test {

using namespace gateway::providers;

namespace {

// Feeds `text` in pieces of `step` bytes, as relayed reads would arrive.
gateway::providers::usage observe(bool sse, std::string_view text, std::size_t step) {
    usage_observer o(sse);
    for (std::size_t i = 0; i < text.size(); i += step) o.feed(text.substr(i, step));
    return o.finish();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(usage_observation)

BOOST_AUTO_TEST_CASE(chat_completion_json_body) {
    auto body = R"({"id":"x","choices":[{"message":{"content":"usage"}}],
                    "usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}})";
    auto u = observe(false, body, 7);
    BOOST_TEST(u.known);
    BOOST_TEST(u.input == 9);
    BOOST_TEST(u.output == 12);
}

BOOST_AUTO_TEST_CASE(stream_with_a_usage_chunk_split_anywhere) {
    std::string stream =
        "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n"
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\n"
        "data: [DONE]\n\n";
    for (std::size_t step : {1u, 5u, 1000u}) {
        auto u = observe(true, stream, step);
        BOOST_TEST(u.known);
        BOOST_TEST(u.input == 3);
        BOOST_TEST(u.output == 4);
    }
}

BOOST_AUTO_TEST_CASE(stream_without_usage_is_unknown) {
    auto u = observe(true,
                     "data: {\"choices\":[{\"delta\":{\"content\":\"\\\"usage\\\": {\"}}]}\n\n"
                     "data: [DONE]\n\n",
                     3);
    BOOST_TEST(!u.known);
    BOOST_TEST(!observe(false, R"({"object":"list","data":[]})", 4).known);
}

BOOST_AUTO_TEST_CASE(anthropic_stream_counts_cache_and_cumulative_output) {
    auto stream =
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
        "{\"input_tokens\":10,\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\n\n"
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":"
        "42}}\n\n";
    auto u = observe(true, stream, 11);
    BOOST_TEST(u.input == 15);
    BOOST_TEST(u.output == 42);
}

BOOST_AUTO_TEST_CASE(gemini_and_responses_api) {
    auto gemini = observe(
        false,
        R"({"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":3,"thoughtsTokenCount":2}})",
        100);
    BOOST_TEST(gemini.input == 7);
    BOOST_TEST(gemini.output == 5);
    auto responses =
        observe(true,
                "event: response.completed\ndata: {\"type\":\"response.completed\","
                "\"response\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":6}}}\n\n",
                9);
    BOOST_TEST(responses.input == 5);
    BOOST_TEST(responses.output == 6);
}

// The usage objects are found by a scan, not a parse of the whole document: only the members the
// dialects define count, wherever else a `usage` key or its text appears.
BOOST_AUTO_TEST_CASE(only_the_dialects_usage_members_count) {
    auto nested = observe(false, R"({"choices":[{"usage":{"prompt_tokens":99}}],
        "data":{"usage":{"prompt_tokens":98}},
        "content":"\"usage\":{\"prompt_tokens\":97} and } { [",
        "usage" : {"prompt_tokens":9,"completion_tokens":2,"note":"}\"{"}})",
                          5);
    BOOST_TEST(nested.known);
    BOOST_TEST(nested.input == 9);
    BOOST_TEST(nested.output == 2);
    auto anthropic = observe(false, R"({"message":{"id":"m","usage":{"input_tokens":4,
        "output_tokens":1}},"other":{"usage":{"input_tokens":40}}})",
                             3);
    BOOST_TEST(anthropic.input == 4);
    BOOST_TEST(anthropic.output == 1);
    // A body cut short, or one that is not an object, reports nothing.
    BOOST_TEST(
        !observe(false, R"({"usage":{"prompt_tokens":9,"completion_tokens":2},"id":"x")", 4).known);
    BOOST_TEST(!observe(false, R"([{"usage":{"prompt_tokens":9}}])", 4).known);
    BOOST_TEST(!observe(false, R"({"usage":{"prompt_tokens":9}}} trailing)", 4).known);
}

// A usage object is read member by member: its nested objects, escaped keys, values that are not
// counts and objects that do not parse are each handled as a document parser would have them.
BOOST_AUTO_TEST_CASE(usage_members_are_read_as_json_not_as_text) {
    // Nested details are skipped; their own `prompt_tokens` is not the object's.
    auto nested = observe(false, R"({"usage":{"prompt_tokens":8,"completion_tokens":3,
        "prompt_tokens_details":{"prompt_tokens":50,"cached_tokens":[1,{"completion_tokens":60}]}}})",
                          6);
    BOOST_TEST(nested.input == 8);
    BOOST_TEST(nested.output == 3);
    // An escaped key is its unescaped name; a long unknown key matches nothing.
    auto escaped = observe(
        false,
        R"({"usage":{"prompt\u005ftokens":4,"completion_tokens_that_go_on_for_a_long_while":70,"completion\u005Ftokens":5}})",
        4);
    BOOST_TEST(escaped.known);
    BOOST_TEST(escaped.input == 4);
    BOOST_TEST(escaped.output == 5);
    // Present but not a count: known, 0; negatives count as 0, fractions are truncated.
    auto odd = observe(false, R"({"usage":{"prompt_tokens":null,"completion_tokens":"7"}})", 5);
    BOOST_TEST(odd.known);
    BOOST_TEST(odd.input == 0);
    BOOST_TEST(odd.output == 0);
    auto signs = observe(false, R"({"usage":{"prompt_tokens":-4,"completion_tokens":2.9e0}})", 5);
    BOOST_TEST(signs.input == 0);
    BOOST_TEST(signs.output == 2);
    // A string that ends in an escaped backslash ends at its quote; an escaped quote does not end
    // one, however many backslashes came before it.
    auto backslashes = observe(false, R"({"a":"C:\\","b":"say \\\"usage\": {}","c":"\\\\",
        "usage":{"prompt_tokens":6,"completion_tokens":1}})",
                               7);
    BOOST_TEST(backslashes.known);
    BOOST_TEST(backslashes.input == 6);
    BOOST_TEST(backslashes.output == 1);
    // A usage object that is not valid JSON inside (the scan only balances brackets) counts
    // nothing, not the members before the fault.
    BOOST_TEST(!observe(false, R"({"usage":{"prompt_tokens":9,"completion_tokens":2,}})", 5).known);
    BOOST_TEST(!observe(false, R"({"usage":{"prompt_tokens":9 "completion_tokens":2}})", 5).known);
}

// What the client received, in every dialect: the content strings of events that add content,
// never the ids, roles or the events that repeat what came before.
BOOST_AUTO_TEST_CASE(delivered_content_is_counted_once_per_dialect) {
    auto delivered = [](bool sse, std::string_view text, std::size_t step) {
        usage_observer o(sse);
        for (std::size_t i = 0; i < text.size(); i += step) o.feed(text.substr(i, step));
        o.finish();
        return o.delivered_bytes();
    };
    const std::string chat =
        "data: "
        "{\"id\":\"chatcmpl-1\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":"
        "\"Hello\"}}]}\n\n"
        "data: "
        "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\","
        "\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n"
        "data: [DONE]\n\n";
    for (std::size_t step : {1u, 7u, 4096u}) BOOST_TEST(delivered(true, chat, step) == 5u + 7u);
    const std::string anthropic =
        "event: message_start\ndata: "
        "{\"type\":\"message_start\",\"message\":{\"content\":[],\"usage\":{\"input_tokens\":10,"
        "\"output_tokens\":1}}}\n\n"
        "event: content_block_delta\ndata: "
        "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi "
        "there\"}}\n\n"
        "event: content_block_delta\ndata: "
        "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"input_json_delta\",\"partial_"
        "json\":\"{\\\"p\\\"\"}}\n\n";
    BOOST_TEST(delivered(true, anthropic, 3) == 8u + 4u);
    const std::string responses =
        "event: response.output_text.delta\ndata: "
        "{\"type\":\"response.output_text.delta\",\"delta\":\"abcd\"}\n\n"
        "event: response.output_text.done\ndata: "
        "{\"type\":\"response.output_text.done\",\"text\":\"abcd\"}\n\n"
        "event: response.completed\ndata: "
        "{\"type\":\"response.completed\",\"response\":{\"output\":[{\"content\":[{\"text\":"
        "\"abcd\"}]}]}}\n\n";
    BOOST_TEST(delivered(true, responses, 5) == 4u);
    BOOST_TEST(
        delivered(false,
                  R"({"choices":[{"message":{"role":"assistant","content":"Hello, world"}}]})",
                  3) == 12u);
}

// The settlement rule: the upstream's count for an answer relayed whole; otherwise never less
// than what was delivered (bytes / 4), and the request's size as input when unreported.
BOOST_AUTO_TEST_CASE(settlement_charges_at_least_what_was_delivered) {
    gateway::providers::usage reported{true, 12, 30};
    auto whole = settled_usage(reported, 400, 1000, true);
    BOOST_TEST(!whole.estimated);
    BOOST_TEST(whole.used.output == 30);
    // Cut before the final usage (Anthropic's message_start said 10/1): what was delivered.
    auto cut = settled_usage({true, 10, 1}, 96'000, 1000, false);
    BOOST_TEST(cut.estimated);
    BOOST_TEST(cut.used.input == 10);
    BOOST_TEST(cut.used.output == 24'000);
    // No usage at all: the request's size and the delivered content.
    auto none = settled_usage({}, 401, 1001, true);
    BOOST_TEST(none.estimated);
    BOOST_TEST(none.used.known);
    BOOST_TEST(none.used.input == 251);
    BOOST_TEST(none.used.output == 101);
    // A partial report larger than the estimate stands.
    BOOST_TEST(settled_usage({true, 5, 500}, 40, 10, false).used.output == 500);
}

BOOST_AUTO_TEST_CASE(a_whole_body_that_reports_its_usage_is_charged_that_alone) {
    const std::string body = R"({"choices":[{"message":{"content":"Hello there"}}],)"
                             R"("usage":{"prompt_tokens":3,"completion_tokens":2}})";
    auto counted = [&](bool complete) {
        usage_observer o(false);
        o.feed(body);
        auto used = o.finish(complete);
        BOOST_TEST(used.known);
        // What the settlement charges from it: the report, whether the content was counted.
        BOOST_TEST(settled_usage(used, o.delivered_bytes(), 10, complete).used.output ==
                   (complete ? 2 : 3));
        return o.delivered_bytes();
    };
    BOOST_TEST(counted(true) == 0u);    // relayed whole: the report is charged, nothing counted
    BOOST_TEST(counted(false) == 11u);  // cut short: what was delivered sets the floor
    // A whole body without a report is counted: the estimate needs it.
    usage_observer unreported(false);
    unreported.feed(R"({"choices":[{"message":{"content":"Hello there"}}]})");
    BOOST_TEST(!unreported.finish(true).known);
    BOOST_TEST(unreported.delivered_bytes() == 11u);
}

// A whole body's usage is looked up from its end first (finish(true)); a body that may be cut
// short is scanned from the start (finish(false)). Both read the same usage from every body,
// wherever else `usage` appears: inside content after the real member, as an inner key, as a key
// that only starts with it, with white space and escapes around it.
BOOST_AUTO_TEST_CASE(a_whole_body_is_read_from_its_end_as_from_its_start) {
    auto usage_of = [](std::string_view body, bool complete) {
        usage_observer o(false);
        o.feed(body);
        return o.finish(complete);
    };
    const std::string_view bodies[] = {
        // The usage last, or followed by other members of every kind.
        R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12}})",
        R"({"usage":{"prompt_tokens":9,"completion_tokens":12},"service_tier":"default",)"
        R"("n":-1.5e3,"ok":true,"none":null,"list":[1,{"a":"]}"}],"x":{"kept":"\\"}} )",
        R"( { "usageMetadata" : {"promptTokenCount":7,"candidatesTokenCount":3} ,
            "modelVersion" : "gemini" }
        )",
        // `usage` after the real member: in content, escaped quotes and backslashes around it.
        R"({"usage":{"prompt_tokens":4,"completion_tokens":1},)"
        R"("choices":[{"message":{"content":"say \"usage\":{\"prompt_tokens\":90} \\"}}]})",
        // As an inner key after it, as a longer key, and as a value that is no object.
        R"({"usage":{"prompt_tokens":4,"completion_tokens":1},"data":{"usage":{"prompt_tokens":80}}})",
        R"({"usage":{"prompt_tokens":4,"completion_tokens":1},"usage_note":{"prompt_tokens":80}})",
        R"({"usage":null,"choices":[]})",
        // Inside the top-level message or response (Anthropic's, the Responses API's events).
        R"({"message":{"id":"m","usage":{"input_tokens":4,"output_tokens":1}}})",
        R"({"response":{"usage":{"input_tokens":5,"output_tokens":6}},"type":"done"})",
        // An object that does not parse, a body that is no object, and bodies without usage.
        R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,}})",
        R"([{"usage":{"prompt_tokens":9}}])",
        R"({"usage":{"prompt_tokens":9}}} trailing)",
        R"({"usage":{"prompt_tokens":9}}})",
        R"({"choices":[{"message":{"content":"no usage here"}}]})",
        "",
    };
    for (auto body : bodies) {
        BOOST_TEST_CONTEXT(body) {
            auto from_end = usage_of(body, true);
            auto from_start = usage_of(body, false);
            BOOST_TEST(from_end.known == from_start.known);
            BOOST_TEST(from_end.input == from_start.input);
            BOOST_TEST(from_end.output == from_start.output);
            // Read where it lies, without a copy: as fed and finished whole.
            usage_observer in_place(false);
            auto whole = in_place.finish_whole(body);
            BOOST_TEST(whole.known == from_end.known);
            BOOST_TEST(whole.input == from_end.input);
            BOOST_TEST(whole.output == from_end.output);
            BOOST_TEST(in_place.finish(true).input == from_end.input);  // read once
        }
    }
    // Over the cap, as fed: nothing is read.
    usage_observer capped(usage_observer::framing::json, 16);
    BOOST_TEST(!capped.finish_whole(bodies[0]).known);
    BOOST_TEST(!capped.finish(true).known);
    BOOST_TEST(usage_of(bodies[1], true).output == 12);
    BOOST_TEST(usage_of(bodies[2], true).input == 7);
    BOOST_TEST(usage_of(bodies[3], true).input == 4);
    BOOST_TEST(usage_of(bodies[8], true).output == 6);
}

BOOST_AUTO_TEST_CASE(bedrock_converse_usage_counts_its_cache_as_input) {
    auto body = R"({"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}},)"
                R"("usage":{"inputTokens":7,"outputTokens":3,"totalTokens":20,)"
                R"("cacheReadInputTokens":6,"cacheWriteInputTokens":4}})";
    auto u = observe(false, body, 9);
    BOOST_TEST(u.known);
    BOOST_TEST(u.input == 17);
    BOOST_TEST(u.output == 3);
    BOOST_TEST(u.cache_read == 6);
    BOOST_TEST(u.cache_write == 4);
}

BOOST_AUTO_TEST_CASE(bedrock_event_streams_report_usage_in_frames_split_anywhere) {
    namespace es = gateway::providers::aws_eventstream;
    auto frame = [](std::string type, std::string payload) {
        es::message m;
        m.headers = {es::header::of_string(":event-type", std::move(type)),
                     es::header::of_string(":message-type", "event")};
        m.payload = std::move(payload);
        return es::encode(m);
    };
    // ConverseStream: the usage in its metadata event.
    auto converse =
        frame("messageStart", R"({"role":"assistant"})") +
        frame("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"hey"}})") +
        frame("metadata", R"({"usage":{"inputTokens":11,"outputTokens":2},"metrics":{}})");
    // InvokeModelWithResponseStream: Messages events, base64 in each chunk's `bytes`:
    // {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}} and
    // {"type":"message_delta","usage":{"output_tokens":8}}.
    auto invoke =
        frame(
            "chunk",
            R"({"bytes":"eyJ0eXBlIjoibWVzc2FnZV9zdGFydCIsIm1lc3NhZ2UiOnsidXNhZ2UiOnsiaW5wdXRfdG9rZW5zIjo1LCJvdXRwdXRfdG9rZW5zIjoxfX19"})") +
        frame(
            "chunk",
            R"({"bytes":"eyJ0eXBlIjoibWVzc2FnZV9kZWx0YSIsInVzYWdlIjp7Im91dHB1dF90b2tlbnMiOjh9fQ=="})");
    for (std::size_t step : {1u, 7u, 10000u}) {
        for (auto [stream, input, output] :
             {std::tuple{converse, 11, 2}, std::tuple{invoke, 5, 8}}) {
            usage_observer o(usage_observer::framing::aws_event_stream);
            for (std::size_t i = 0; i < stream.size(); i += step)
                o.feed(std::string_view(stream).substr(i, step));
            auto u = o.finish(true);
            BOOST_TEST(u.known);
            BOOST_TEST(u.input == input);
            BOOST_TEST(u.output == output);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_body_over_the_cap_is_not_kept) {
    usage_observer o(false, 64);
    o.feed(R"({"usage":{"prompt_tokens":1,"completion_tokens":1},"pad":")");
    o.feed(std::string(100, 'x'));
    o.feed("\"}");
    BOOST_TEST(!o.finish().known);
}

BOOST_AUTO_TEST_CASE(include_usage_is_injected_only_into_streamed_requests_without_it) {
    std::string streamed = R"({"model":"m","stream":true,"messages":[]})";
    BOOST_TEST(inject_include_usage(streamed));
    BOOST_TEST(streamed.find(R"("stream_options":{"include_usage":true})") != std::string::npos);
    std::string other_options = R"({"stream":true,"stream_options":{"x":1}})";
    BOOST_TEST(inject_include_usage(other_options));
    BOOST_TEST(other_options.find(R"("x":1,"include_usage":true)") != std::string::npos);
    for (std::string kept :
         {R"({"stream":false})", R"({"messages":[]})",
          R"({"stream":true,"stream_options":{"include_usage":false}})", "not json"}) {
        auto before = kept;
        BOOST_TEST(!inject_include_usage(kept));
        BOOST_TEST(kept == before);
    }
}

// An upstream's usage numbers that are no count (1e300 reached an undefined conversion; 2^64 - 1
// became negative, and sums of them overflowed) count 0; the others still count.
BOOST_AUTO_TEST_CASE(usage_figures_out_of_range_count_nothing) {
    for (std::string bad :
         {"1e300", "-1e300", "1e309", "18446744073709551615", "9223372036854775807", "-3"}) {
        auto body = R"({"usage":{"input_tokens":)" + bad + R"(,"cache_read_input_tokens":)" + bad +
                    R"(,"cache_creation_input_tokens":)" + bad + R"(,"output_tokens":4}})";
        auto u = observe(false, body, 5);
        BOOST_TEST(u.known, bad);
        BOOST_TEST(u.input == 0, bad);
        BOOST_TEST(u.output == 4, bad);
        BOOST_TEST(u.unreadable, bad);
    }
    auto whole = observe(false, R"({"usage":{"prompt_tokens":3.0,"completion_tokens":1e3}})", 64);
    BOOST_TEST(whole.input == 3);
    BOOST_TEST(whole.output == 1000);
    BOOST_TEST(!whole.unreadable);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_usage_observer_test
