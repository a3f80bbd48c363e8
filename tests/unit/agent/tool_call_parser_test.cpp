#include "gateway/agent/tool_call_parser.hpp"

#include "gateway/tools/registry.hpp"

#include <boost/test/unit_test.hpp>

namespace agent_tool_call_parser_test {

using namespace gateway::agent;
using gateway::tools::registry;
using gateway::tools::role;

namespace {

parsed_reply parse(std::string_view text, std::string_view finish = "stop", role r = role::editor) {
    return parse_reply(text, finish, registry::standard(), r);
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tool_call_parser_suite)

BOOST_AUTO_TEST_CASE(plain_text_is_a_final_answer) {
    auto r = parse("I fixed the typo in README.md: `teh` is now `the`.");
    BOOST_TEST((r.what == parsed_reply::kind::final_answer));
    BOOST_TEST(r.answer == "I fixed the typo in README.md: `teh` is now `the`.");
    // Braces that are not a call (code in an answer) do not make it one.
    auto code = parse("Use this config:\n```json\n{\"port\": 8080}\n```");
    BOOST_TEST((code.what == parsed_reply::kind::final_answer));  // JSON in an answer is not a call
    auto braces = parse("In C, a block looks like { int x = 1; } and that's it.");
    BOOST_TEST((braces.what == parsed_reply::kind::final_answer));
}

BOOST_AUTO_TEST_CASE(a_call_with_fences_prose_and_aliases) {
    auto r = parse(
        "Let me look.\n```json\n{\"tool\": \"read_file\", \"parameters\": {\"path\": "
        "\"README.md\"}, \"terminate\": false}\n```\n");
    BOOST_TEST_REQUIRE((r.what == parsed_reply::kind::call), r.message);
    BOOST_TEST(r.call.tool == "read_file");
    BOOST_TEST(r.call.parameters.at("path").as_string() == "README.md");
    BOOST_TEST(!r.call.terminate);
    auto alias =
        parse(R"({"name":"search_files","arguments":"{\"pattern\":\"teh\"}","terminate":true})");
    BOOST_TEST_REQUIRE((alias.what == parsed_reply::kind::call), alias.message);
    BOOST_TEST(alias.call.tool == "search_files");
    BOOST_TEST(alias.call.parameters.at("pattern").as_string() == "teh");
    BOOST_TEST(alias.call.terminate);
    auto braces_in_strings =
        parse(R"({"tool":"search_files","parameters":{"pattern":"\\{ \"}\" }"}})");
    BOOST_TEST_REQUIRE((braces_in_strings.what == parsed_reply::kind::call),
                       braces_in_strings.message);
    BOOST_TEST(braces_in_strings.call.parameters.at("pattern").as_string() == "\\{ \"}\" }");
    auto no_parameters = parse(R"({"tool":"get_document_info"})");
    BOOST_TEST((no_parameters.what == parsed_reply::kind::call));
}

BOOST_AUTO_TEST_CASE(no_json_when_a_call_was_attempted) {
    for (auto text :
         {"read_file(path=\"README.md\")", "I'll call \"tool\": read_file now", "```json\n```"}) {
        auto r = parse(text);
        BOOST_TEST((r.reason == failure::no_json), text);
        BOOST_TEST(has(r.message, "exactly one JSON object"));
    }
}

BOOST_AUTO_TEST_CASE(invalid_json_with_position_and_excerpt) {
    auto r = parse("{\"tool\": \"read_file\", \"parameters\": {path: \"a\"}}");
    BOOST_TEST((r.reason == failure::invalid_json));
    BOOST_TEST(has(r.message, "line 1, column 38"), r.message);
    BOOST_TEST(has(r.message, "path: \"a\""), r.message);
    auto unclosed = parse("{\"tool\": \"read_file\", \"parameters\": {\"path\": \"a\"}");
    BOOST_TEST((unclosed.reason == failure::invalid_json));
    BOOST_TEST(has(unclosed.message, "never closes"));
    auto trailing = parse("{\"tool\": \"read_file\",\n \"parameters\": {\"path\": \"a\",},}");
    BOOST_TEST((trailing.reason == failure::invalid_json));
    BOOST_TEST(has(trailing.message, "line 2"), trailing.message);
    auto bad_string = parse(R"({"tool":"read_file","parameters":"{not json"})");
    BOOST_TEST((bad_string.reason == failure::invalid_json));
}

BOOST_AUTO_TEST_CASE(multiple_calls) {
    auto r = parse(
        R"({"tool":"read_file","parameters":{"path":"a"}} then {"tool":"read_file","parameters":{"path":"b"}})");
    BOOST_TEST((r.reason == failure::multiple_calls));
    BOOST_TEST(has(r.message, "2 tool calls"));
}

BOOST_AUTO_TEST_CASE(unknown_tool_lists_the_roles_tools) {
    auto r = parse(R"({"tool":"run_shell","parameters":{}})");
    BOOST_TEST((r.reason == failure::unknown_tool));
    BOOST_TEST(has(r.message, "read_file"));
    auto reader = parse(R"({"tool":"edit_file","parameters":{"path":"a","content":"b"}})", "stop",
                        role::reader);
    BOOST_TEST((reader.reason == failure::unknown_tool));
    BOOST_TEST(!has(reader.message, "edit_file,"));
}

BOOST_AUTO_TEST_CASE(schema_violations_name_the_path) {
    auto r = parse(R"({"tool":"read_file","parameters":{"path":"a","start_line":"ten"}})");
    BOOST_TEST((r.reason == failure::schema_violation));
    BOOST_TEST(has(r.message, "/start_line"), r.message);
    BOOST_TEST(
        (parse(R"({"tool":"read_file","parameters":[1]})").reason == failure::schema_violation));
    BOOST_TEST(
        (parse(R"({"tool":"read_file","parameters":{"path":"a"},"terminate":"yes"})").reason ==
         failure::schema_violation));
    BOOST_TEST((parse(R"({"tool":7,"parameters":{}})").reason == failure::schema_violation));
}

BOOST_AUTO_TEST_CASE(truncated_replies) {
    auto r = parse(R"({"tool":"create_file","parameters":{"path":"a","content":"lo)", "length");
    BOOST_TEST((r.reason == failure::truncated));
    BOOST_TEST(has(r.message, "Do less in one call"));
    BOOST_TEST(failure_name(r.reason) == "TRUNCATED");
}

BOOST_AUTO_TEST_CASE(deep_nesting_is_refused_not_crashing) {
    std::string deep = R"({"tool":"read_file","parameters":{"path":"a","x":)";
    for (int i = 0; i < 10000; ++i) deep += '[';
    for (int i = 0; i < 10000; ++i) deep += ']';
    deep += "}}";
    auto r = parse(deep);
    BOOST_TEST((r.what == parsed_reply::kind::malformed));
}

BOOST_AUTO_TEST_CASE(reasoning_is_never_searched_for_calls) {
    // A call mentioned while thinking does not count; what follows </think> does.
    auto answer = parse(
        "<think>Maybe {\"tool\": \"delete_file\", \"parameters\": {\"path\": \"x\"}}? "
        "No.</think>\nThe file is fine as it is.");
    BOOST_TEST_REQUIRE((answer.what == parsed_reply::kind::final_answer), answer.message);
    BOOST_TEST(answer.answer == "The file is fine as it is.");
    auto call = parse(
        "<think>I should read it.</think>{\"tool\": \"read_file\", \"parameters\": "
        "{\"path\": \"README.md\"}}");
    BOOST_TEST_REQUIRE((call.what == parsed_reply::kind::call), call.message);
    BOOST_TEST(call.call.tool == "read_file");
    // Still thinking when the reply ended: nothing counts, and the model is told so.
    auto unfinished = parse("<think>Let me consider {\"tool\": \"read_file\"");
    BOOST_TEST((unfinished.what == parsed_reply::kind::malformed));
    BOOST_TEST(has(unfinished.message, "</think>"));
}

BOOST_AUTO_TEST_CASE(a_python_literal_call_is_malformed_not_an_answer) {
    auto r = parse("{'tool': 'read_file', 'parameters': {'path': 'README.md'}}");
    BOOST_TEST_REQUIRE((r.what == parsed_reply::kind::malformed));
    BOOST_TEST((r.reason == failure::invalid_json));
    BOOST_TEST(has(r.message, "double quotes"));
}

BOOST_AUTO_TEST_CASE(a_json_example_in_an_answer_is_part_of_the_answer) {
    auto r =
        parse("The record looks like {\"name\": \"Alice\", \"age\": 3}; add yours the same way.");
    BOOST_TEST_REQUIRE((r.what == parsed_reply::kind::final_answer), r.message);
    BOOST_TEST(has(r.answer, "Alice"));
    auto tool_word = parse("Config: {\"tool\": \"hammer\", \"size\": 3}");
    BOOST_TEST((tool_word.what == parsed_reply::kind::final_answer));
    // A known tool's name, or parameters, still make a call (or a malformed one).
    auto named = parse("{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}");
    BOOST_TEST((named.what == parsed_reply::kind::call));
    auto unknown = parse("{\"tool\": \"hammer\", \"parameters\": {}}");
    BOOST_TEST((unknown.what == parsed_reply::kind::malformed));
    BOOST_TEST((unknown.reason == failure::unknown_tool));
}

// Models trained for native function calling write their call in its shapes; the answer must
// not end with nothing done.
BOOST_AUTO_TEST_CASE(function_call_shapes_written_as_text_are_calls_when_they_name_a_tool) {
    for (
        std::string text :
        {R"({"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"README.md\"}"}})",
         R"(I'll read it: {"function":{"name":"read_file","arguments":{"path":"README.md"}}})",
         R"({"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"README.md\"}"}}]})",
         R"({"function_call":{"name":"read_file","arguments":"{\"path\":\"README.md\"}"}})"}) {
        auto r = parse(text);
        BOOST_TEST_REQUIRE((r.what == parsed_reply::kind::call), text << ": " << r.message);
        BOOST_TEST(r.call.tool == "read_file");
        BOOST_TEST(r.call.parameters.at("path").as_string() == "README.md");
    }
    // Two calls in one array: one at a time, as with any other shape.
    auto two = parse(
        R"({"tool_calls":[{"type":"function","function":{"name":"read_file","arguments":"{}"}},)"
        R"({"type":"function","function":{"name":"list_files","arguments":"{}"}}]})");
    BOOST_TEST((two.reason == failure::multiple_calls));
    // A function object naming no known tool is an example in the answer.
    auto example = parse(
        R"(A call looks like {"type":"function","function":{"name":"get_weather","arguments":"{}"}}.)");
    BOOST_TEST((example.what == parsed_reply::kind::final_answer), example.message);
    // Arguments that break the schema are the usual re-ask, with the tool named.
    auto bad = parse(R"({"type":"function","function":{"name":"read_file","arguments":"{}"}})");
    BOOST_TEST((bad.reason == failure::schema_violation), bad.message);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_tool_call_parser_test
