#include "gateway/workflows/template.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

namespace workflows_template_test {

using namespace gateway::workflows;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(workflow_template)

BOOST_AUTO_TEST_CASE(references_are_parsed_and_malformed_ones_named) {
    auto refs = references(
        "Hi {{ params.name }}, see {{steps.read.output}} and {{steps.find.data.matches.0.path}}");
    BOOST_TEST_REQUIRE(static_cast<bool>(refs));
    BOOST_TEST_REQUIRE(refs.value->size() == 3u);
    BOOST_TEST((*refs.value)[0].is_param);
    BOOST_TEST((*refs.value)[0].name == "name");
    BOOST_TEST(!(*refs.value)[1].data);
    BOOST_TEST((*refs.value)[2].data);
    BOOST_TEST(((*refs.value)[2].path == std::vector<std::string>{"matches", "0", "path"}));
    BOOST_TEST(references("{{ params.x").error.find("unclosed") != std::string::npos);
    BOOST_TEST(references("{{ stepz.x }}").error.find("unknown name `stepz.x`") !=
               std::string::npos);
    BOOST_TEST(!references("{{ steps.read }}"));
    BOOST_TEST(!references("{{ steps.read.data }}"));
    BOOST_TEST(!references("{{ params.a + 1 }}"));  // no expressions
    BOOST_TEST(!references("{{ }}"));
    BOOST_TEST(references("no templates at all").value->empty());
}

BOOST_AUTO_TEST_CASE(render_substitutes_text_and_json) {
    json::object params{{"name", "README.md"}, {"count", 3}, {"flags", json::array{1, 2}}};
    step_outputs steps;
    steps["read"] = {"line one\nline two", {{"lines", 2}}, false};
    auto r = render(
        "{{params.name}} has {{ steps.read.data.lines }} lines: {{steps.read.output}} "
        "{{params.flags}} [{{params.missing}}]",
        params, steps);
    BOOST_TEST_REQUIRE(static_cast<bool>(r), r.error);
    BOOST_TEST(*r.value == "README.md has 2 lines: line one\nline two [1,2] []");
    auto early = render("{{steps.later.output}}", params, steps);
    BOOST_TEST(early.error.find("has not run yet") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(render_value_keeps_types_of_whole_references) {
    json::object params{{"path", "src/a.py"}, {"line", 7}, {"recursive", true}};
    step_outputs steps;
    auto v =
        render_value(json::parse(R"({"path": "{{params.path}}", "start_line": "{{ params.line }}",
        "recursive": "{{params.recursive}}", "note": "at {{params.line}}", "gone": "{{params.nope}}",
        "list": ["{{params.path}}", 1]})"),
                     params, steps);
    BOOST_TEST_REQUIRE(static_cast<bool>(v), v.error);
    auto& o = v.value->as_object();
    BOOST_TEST(o.at("path").as_string() == "src/a.py");
    BOOST_TEST(o.at("start_line").as_int64() == 7);
    BOOST_TEST(o.at("recursive").as_bool());
    BOOST_TEST(o.at("note").as_string() == "at 7");
    BOOST_TEST(!o.contains("gone"));  // an optional parameter left out stays out
    BOOST_TEST(o.at("list").as_array()[0].as_string() == "src/a.py");
}

BOOST_AUTO_TEST_CASE(skipped_steps_render_empty_and_truthiness) {
    step_outputs steps;
    steps["maybe"] = {"", {}, true};
    BOOST_TEST(*render("[{{steps.maybe.output}}]", {}, steps).value == "[]");
    for (auto no : {"", "  ", "false", "FALSE", "0", "no", "null"}) BOOST_TEST(!truthy(no), no);
    for (auto yes : {"1", "true", "x", "found 3 matches"}) BOOST_TEST(truthy(yes), yes);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace workflows_template_test
