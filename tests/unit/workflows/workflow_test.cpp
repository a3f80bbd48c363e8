#include "gateway/workflows/workflow.hpp"

#include "gateway/tools/registry.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <set>

namespace workflows_workflow_test {

using namespace gateway::workflows;

namespace {

const auto& tools = gateway::tools::registry::standard();

std::string error_of(const std::string& yaml) {
    auto parsed = parse_workflow(yaml, "workflows/x.yaml", tools);
    BOOST_TEST(!parsed, "expected an error for:\n" << yaml);
    return parsed.error;
}

const std::string header = "id: x\nname: X\ndescription: d\ncategory: Code\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(workflow_definitions)

BOOST_AUTO_TEST_CASE(a_complete_workflow_parses) {
    auto parsed = parse_workflow(R"(id: explain
name: Explain a file
description: Reads a file and explains it.
category: Code
parameters:
  type: object
  properties:
    path: {type: string, description: File to explain}
    depth: {type: integer, default: 2}
  required: [path]
steps:
  - id: read
    tool: read_file
    parameters: {path: "{{params.path}}"}
  - id: explain
    prompt: |
      Explain this file:
      {{steps.read.output}}
  - id: follow_up
    when: "{{steps.read.data.total_lines}}"
    agent:
      instruction: Look for callers of {{params.path}}.
      role: reader
      max_steps: 4
)",
                                 "workflows/explain.yaml", tools);
    BOOST_TEST_REQUIRE(static_cast<bool>(parsed), parsed.error);
    const auto& w = *parsed.value;
    BOOST_TEST(w.id == "explain");
    BOOST_TEST(w.steps.size() == 3u);
    BOOST_TEST((w.steps[0].what == step::kind::tool));
    BOOST_TEST(w.steps[0].parameters.at("path").as_string() == "{{params.path}}");
    BOOST_TEST((w.steps[1].what == step::kind::prompt));
    BOOST_TEST((w.steps[2].what == step::kind::agent));
    BOOST_TEST(w.steps[2].max_steps == 4u);
    BOOST_TEST(w.steps[2].line == 19);
    BOOST_TEST(w.parameters.at("properties").at("depth").at("default").as_int64() == 2);
    BOOST_TEST(w.schema->validate(boost::json::parse(R"({"path": "a"})")).empty());
    BOOST_TEST(w.schema->validate(boost::json::parse(R"({})")).find("path") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(errors_name_file_line_and_reason) {
    BOOST_TEST(error_of("id: [unclosed\n").find("workflows/x.yaml:") == 0u);
    BOOST_TEST(error_of(header + "colour: red\nsteps: [{id: a, prompt: p}]\n")
                   .find(":5: unknown key `colour`") != std::string::npos);
    BOOST_TEST(error_of("id: x\nname: X\ncategory: C\nsteps: [{id: a, prompt: p}]\n")
                   .find("missing `description`") != std::string::npos);
    BOOST_TEST(error_of(header + "steps: []\n").find("non-empty list") != std::string::npos);
    BOOST_TEST(error_of(header + "steps:\n  - id: a\n    tool: rm_rf\n")
                   .find(":6: step `a`: unknown tool `rm_rf`") != std::string::npos);
    BOOST_TEST(error_of(header + "steps:\n  - id: a\n    prompt: p\n  - id: a\n    prompt: q\n")
                   .find(":8: step id `a` is used twice") != std::string::npos);
    BOOST_TEST(error_of(header + "steps:\n  - id: a\n    prompt: p\n    tool: read_file\n")
                   .find("exactly one of") != std::string::npos);
    BOOST_TEST(error_of(header + "steps:\n  - id: a\n    prompt: '{{params.nope}}'\n")
                   .find("names no declared parameter") != std::string::npos);
    BOOST_TEST(
        error_of(header +
                 "steps:\n  - id: a\n    prompt: '{{steps.b.output}}'\n  - id: b\n    prompt: p\n")
            .find("not an earlier step") != std::string::npos);
    BOOST_TEST(
        error_of(header +
                 "steps:\n  - id: a\n    prompt: p\n  - id: b\n    prompt: '{{steps.a.data.x}}'\n")
            .find("only tool steps have `data`") != std::string::npos);
    BOOST_TEST(
        error_of(header + "steps:\n  - id: a\n    prompt: '{{ params.x'\n").find("unclosed") !=
        std::string::npos);
    BOOST_TEST(error_of(header + "parameters: {type: array}\nsteps: [{id: a, prompt: p}]\n")
                   .find("type: object") != std::string::npos);
    BOOST_TEST(error_of(header + "steps:\n  - id: a\n    agent: {instruction: go, role: admin}\n")
                   .find("`agent.role`") != std::string::npos);
    BOOST_TEST(error_of(header + "steps:\n  - id: a\n    agent: {instruction: go, max_steps: 0}\n")
                   .find("max_steps") != std::string::npos);
    BOOST_TEST(
        error_of(
            "id: 'bad id'\nname: X\ndescription: d\ncategory: C\nsteps: [{id: a, prompt: p}]\n")
            .find("letters, digits") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_shipped_workflows_load) {
    auto loaded = load_folder(CONTEXTGATE_SOURCE_DIR "/workflows", tools);
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    std::set<std::string> ids;
    for (const auto& w : *loaded.value) ids.insert(w.id);
    BOOST_TEST((ids == std::set<std::string>{"add_file_header", "create_project", "explain_file",
                                             "find_todos", "fix_typos", "refactor_component"}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace workflows_workflow_test
