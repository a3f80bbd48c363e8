#include "gateway/mcp/results.hpp"

#include "gateway/tools/error_codes.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

namespace mcp_results_test {

using gateway::mcp::to_tool_result;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(mcp_results)

BOOST_AUTO_TEST_CASE(text_goes_to_the_model_and_other_content_is_described) {
    auto r = to_tool_result(json::parse(R"({"content":[
        {"type":"text","text":"first"},
        {"type":"image","data":"AAAA","mimeType":"image/png"},
        {"type":"resource_link","uri":"file:///a.txt","name":"a"},
        {"type":"resource","resource":{"uri":"file:///b.txt","text":"bee"}},
        {"type":"resource","resource":{"uri":"file:///c.bin","blob":"AAAAAA==","mimeType":"application/x"}},
        {"type":"video"}]})"),
                            4096);
    BOOST_TEST(r.ok);
    BOOST_TEST(r.text ==
               "first\n[image image/png, 3 bytes: not shown to the model]\n"
               "[resource link file:///a.txt (a)]\n[resource file:///b.txt]\nbee\n"
               "[resource file:///c.bin application/x, 4 bytes: not shown to the model]\n"
               "[content of type `video`: not shown to the model]");
    BOOST_TEST(r.data.at("content_types").as_array().size() == 6u);
}

BOOST_AUTO_TEST_CASE(is_error_is_a_tool_error_with_the_servers_text) {
    auto r = to_tool_result(
        json::parse(
            R"({"content":[{"type":"text","text":"ENOENT: no such file"}],"isError":true})"),
        4096);
    BOOST_TEST(!r.ok);
    BOOST_TEST(r.error_code == gateway::tools::code::mcp_tool_error);
    BOOST_TEST(r.text == "ENOENT: no such file");
    auto bare = to_tool_result(json::parse(R"({"content":[],"isError":true})"), 4096);
    BOOST_TEST(bare.text == "The tool reported an error.");
}

BOOST_AUTO_TEST_CASE(structured_content_is_kept_and_given_when_there_is_no_text) {
    auto both = to_tool_result(json::parse(R"({"content":[{"type":"text","text":"t"}],
        "structuredContent":{"temperature":21}})"),
                               4096);
    BOOST_TEST(both.text == "t");
    BOOST_TEST(both.data.at("structured").at("temperature").as_int64() == 21);
    auto only = to_tool_result(json::parse(R"({"structuredContent":{"a":[1,2]}})"), 4096);
    BOOST_TEST(only.text == R"({"a":[1,2]})");
}

BOOST_AUTO_TEST_CASE(everything_is_capped_at_max_output_bytes) {
    std::string big(5000, 'x');
    auto r = to_tool_result(
        json::object{{"content", json::array{json::object{{"type", "text"}, {"text", big}}}},
                     {"structuredContent", json::object{{"big", big}}}},
        1000);
    BOOST_TEST(r.text.size() < 1300u);
    BOOST_TEST(r.text.find("[output truncated: ") != std::string::npos);
    BOOST_TEST(!r.data.contains("structured"));
    BOOST_TEST(r.data.at("structured_omitted_bytes").to_number<std::int64_t>() > 5000);
    // A cut never splits a UTF-8 sequence.
    std::string accents;
    for (int i = 0; i < 600; ++i) accents += "é";
    auto cut = to_tool_result(
        json::object{{"content", json::array{json::object{{"type", "text"}, {"text", accents}}}}},
        301);
    auto kept = cut.text.substr(0, cut.text.find('\n'));
    BOOST_TEST(kept.size() % 2 == 0u);
}

BOOST_AUTO_TEST_CASE(a_result_that_is_not_an_object_is_an_mcp_error) {
    auto r = to_tool_result(json::value("nope"), 100);
    BOOST_TEST(r.error_code == gateway::tools::code::mcp_error);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace mcp_results_test
