// The workflow registry through the gateway: listing by category, one workflow with its form
// schema, and a reload (what SIGHUP does) that keeps the old set when a file breaks.
#include "tests/integration/context_fixture.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

namespace integration_workflows_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

json::value get_json(std::uint16_t port, const std::string& path, unsigned expected = 200) {
    client c(port);
    auto r = c.request(make_request("GET", path));
    BOOST_TEST(r.status == expected, path << ": " << r.body);
    return json::parse(r.body);
}

// A copy of the shipped workflows that a test may break.
fs::path workflows_copy() {
    fs::path folder = temporary_folder();
    for (const auto& f : fs::directory_iterator(CONTEXTGATE_SOURCE_DIR "/workflows"))
        fs::copy_file(f.path(), folder / f.path().filename());
    return folder;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(workflow_registry)

BOOST_AUTO_TEST_CASE(list_by_category_categories_and_one_workflow) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.context.workflows_dir = CONTEXTGATE_SOURCE_DIR "/workflows";
    running_gateway gw(config);
    auto list = get_json(gw.port(), "/context/workflows");
    std::map<std::string, std::vector<std::string>> grouped;
    for (const auto& group : list.at("categories").as_array())
        for (const auto& w : group.at("workflows").as_array()) {
            grouped[std::string(group.at("category").as_string())].emplace_back(
                w.at("id").as_string());
            BOOST_TEST(w.at("parameters").at("type").as_string() == "object");
        }
    BOOST_TEST(grouped["Code"].size() == 4u);
    BOOST_TEST((grouped["Project"] == std::vector<std::string>{"create_project"}));
    BOOST_TEST((grouped["Writing"] == std::vector<std::string>{"fix_typos"}));

    auto categories = get_json(gw.port(), "/context/workflows/categories").at("data").as_array();
    BOOST_TEST(categories.size() == 3u);
    BOOST_TEST(categories[0].at("category").as_string() == "Code");
    BOOST_TEST(categories[0].at("workflows").as_int64() == 4);

    auto explain = get_json(gw.port(), "/context/workflows/explain_file");
    BOOST_TEST(explain.at("name").as_string() == "Explain a file");
    BOOST_TEST(explain.at("parameters").at("required").as_array()[0].as_string() == "path");
    auto steps = explain.at("steps").as_array();
    BOOST_TEST(steps.size() == 2u);
    BOOST_TEST(steps[0].at("kind").as_string() == "tool");
    BOOST_TEST(steps[0].at("tool").as_string() == "read_file");
    BOOST_TEST(steps[1].at("kind").as_string() == "prompt");
    auto missing = get_json(gw.port(), "/context/workflows/nope", 404);
    BOOST_TEST(missing.at("error").at("code").as_string() == "not_found");
}

BOOST_AUTO_TEST_CASE(a_broken_edit_keeps_the_old_set_and_a_fix_is_picked_up) {
    fake_upstream fake;
    auto folder = workflows_copy();
    auto config = make_config(fake);
    config.context.workflows_dir = folder.string();
    running_gateway gw(config);
    std::ofstream(folder / "explain_file.yaml", std::ios::app)
        << "  - id: broken\n    tool: no_such_tool\n";
    auto error = gw.server().reload_workflows();
    BOOST_TEST(error.find("explain_file.yaml:") != std::string::npos, error);
    BOOST_TEST(error.find("unknown tool `no_such_tool`") != std::string::npos, error);
    // Still served as it was.
    auto kept = get_json(gw.port(), "/context/workflows/explain_file");
    BOOST_TEST(kept.at("steps").as_array().size() == 2u);

    fs::copy_file(CONTEXTGATE_SOURCE_DIR "/workflows/explain_file.yaml",
                  folder / "explain_file.yaml", fs::copy_options::overwrite_existing);
    fs::remove(folder / "find_todos.yaml");
    BOOST_TEST(gw.server().reload_workflows().empty());
    get_json(gw.port(), "/context/workflows/find_todos", 404);
    get_json(gw.port(), "/context/workflows/explain_file");
}

BOOST_AUTO_TEST_CASE(an_invalid_workflow_stops_the_start_with_file_and_line) {
    fake_upstream fake;
    auto folder = workflows_copy();
    std::ofstream(folder / "zz_bad.yaml") << "id: bad\nname: Bad\ndescription: d\ncategory: C\n"
                                             "steps:\n  - id: a\n    prompt: '{{params.nope}}'\n";
    auto config = make_config(fake);
    config.context.workflows_dir = folder.string();
    gateway::app::server server(config);
    auto error = server.start();
    BOOST_TEST(error.find("zz_bad.yaml:6:") != std::string::npos, error);
    BOOST_TEST(error.find("names no declared parameter") != std::string::npos, error);
}

BOOST_AUTO_TEST_SUITE_END()

// Running the shipped workflows end to end against the scripted model.
namespace {

struct workflow_fixture : context_fixture {
    workflow_fixture()
        : context_fixture(
              [](auto& c) { c.context.workflows_dir = CONTEXTGATE_SOURCE_DIR "/workflows"; }) {}

    std::pair<response, json::value> start(const std::string& workflow, json::object body) {
        return send("POST", "/context/workflows/" + workflow + "/runs", body);
    }
    std::string run(const std::string& workflow, const std::string& chat, json::object parameters) {
        auto [r, j] = start(workflow, {{"chat_id", chat}, {"parameters", std::move(parameters)}});
        BOOST_TEST_REQUIRE(r.status == 202u, r.body);
        return std::string(j.at("run_id").as_string());
    }
};

std::vector<std::string> step_events(const std::vector<sse_event>& all) {
    std::vector<std::string> out;
    for (const auto& e : all)
        if (e.type.starts_with("step."))
            out.push_back(e.type + " " + std::string(e.data.at("step_id").as_string()));
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(workflow_runs)

BOOST_AUTO_TEST_CASE(explain_file_reads_then_asks_once) {
    workflow_fixture f;
    f.fake.script({{"README.md introduces the demo; line 3 has a typo."}});
    auto run = f.run("explain_file", f.create_chat(), {{"path", "README.md"}});
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed", json::serialize(all.back().data));
    BOOST_TEST(all.back().data.at("output").as_string() ==
               "README.md introduces the demo; line 3 has a typo.");
    std::vector<std::string> expected{"step.started read", "step.completed read",
                                      "step.started explain", "step.completed explain"};
    BOOST_TEST(step_events(all) == expected, boost::test_tools::per_element());
    auto asked = f.model_messages(0);
    BOOST_TEST(last_content(asked).find("This is teh readme.") != std::string::npos);
    BOOST_TEST(last_content(asked).find("to a newcomer") != std::string::npos);  // the default
}

BOOST_AUTO_TEST_CASE(find_todos_skips_the_summary_when_there_are_none) {
    workflow_fixture f;
    auto none = f.run("find_todos", f.create_chat(), {});
    auto all = f.events(none);
    BOOST_TEST(all.back().type == "run.completed");
    std::vector<std::string> expected{"step.started search", "step.completed search",
                                      "step.skipped summary"};
    BOOST_TEST(step_events(all) == expected, boost::test_tools::per_element());
    BOOST_TEST(f.fake.scripted_requests().empty());

    write_text(f.workspace / "src/todo.py", "x = 1  # TODO: handle errors\n");
    f.fake.script({{"One TODO: handle errors in src/todo.py."}});
    auto some = f.run("find_todos", f.create_chat(), {});
    auto second = f.events(some);
    BOOST_TEST(second.back().data.at("output").as_string() ==
               "One TODO: handle errors in src/todo.py.");
    BOOST_TEST(last_content(f.model_messages(0)).find("src/todo.py:1:") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(add_file_header_inserts_the_written_header_after_approval) {
    workflow_fixture f;
    f.fake.script({{"# Demo project: what it is and how to run it."}});
    auto run = f.run("add_file_header", f.create_chat(), {{"path", "README.md"}});
    auto approval = f.wait_for(run, "approval.required");
    BOOST_TEST(approval.data.at("tool").as_string() == "edit_lines");
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");
    f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST(f.events(run).back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "README.md") ==
               "# Demo project: what it is and how to run it.\n# Demo\n\nThis is teh readme.\n");
}

BOOST_AUTO_TEST_CASE(a_workflow_runs_in_its_chats_review_mode) {
    workflow_fixture f;
    f.fake.script({{"# Demo project: what it is and how to run it."}});
    auto chat = f.create_chat({{"edits", "review"}});
    auto run = f.run("add_file_header", chat, {{"path", "README.md"}});
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed");
    for (const auto& e : all) BOOST_TEST(e.type != "approval.required");
    // Recorded for review, not written.
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");
    auto [r, j] = f.send("GET", "/context/chats/" + chat + "/sessions");
    BOOST_TEST_REQUIRE(j.at("data").as_array().size() == 1u);
    auto id = std::string(j.at("data").at(0).at("id").as_string());
    auto [s, session] = f.send("GET", "/context/sessions/" + id);
    BOOST_TEST(session.at("ai_version").as_string() ==
               "# Demo project: what it is and how to run it.\n# Demo\n\nThis is teh readme.\n");
    BOOST_TEST(session.at("edits").at(0).at("tool").as_string() == "edit_lines");
}

BOOST_AUTO_TEST_CASE(fix_typos_runs_an_agent_on_the_open_document) {
    workflow_fixture f;
    auto chat = f.create_chat({{"system_prompt", "writing"}});
    f.send("PUT", "/context/chats/" + chat + "/document",
           json::object{{"name", "note.md"}, {"content", "Teh end is near.\n"}});
    f.fake.script(
        {{call("edit_document", {{"find", "Teh"}, {"replace", "The"}})}, {"Fixed: Teh -> The."}});
    auto run = f.run("fix_typos", chat, {});
    auto approval = f.wait_for(run, "approval.required");
    f.approve(run, std::string(approval.data.at("call_id").as_string()));
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    BOOST_TEST(all.back().data.at("output").as_string() == "Fixed: Teh -> The.");
    auto [r, doc] = f.send("GET", "/context/chats/" + chat + "/document");
    BOOST_TEST(doc.at("content").as_string() == "The end is near.\n");
    // The agent step starts its own conversation: the instruction with the document in it.
    auto first = f.model_messages(0);
    BOOST_TEST(first.size() == 2u);
    BOOST_TEST(std::string_view(first[0].at("content").as_string()).find("`edit_document`") !=
               std::string_view::npos);
    BOOST_TEST(last_content(first).find("Teh end is near.") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(create_project_scaffolds_with_scope_run_approval) {
    workflow_fixture f;
    f.fake.script(
        {{call("create_file", {{"path", "demo/README.md"}, {"content", "# demo\n"}})},
         {call("create_file", {{"path", "demo/main.py"}, {"content", "print('demo')\n"}})},
         {"Created demo/README.md and demo/main.py."}});
    auto run =
        f.run("create_project", f.create_chat(), {{"name", "demo"}, {"spec", "prints its name"}});
    auto approval = f.wait_for(run, "approval.required");
    f.approve(run, std::string(approval.data.at("call_id").as_string()),
              {{"decision", "approve"}, {"scope", "run"}});
    BOOST_TEST(f.events(run).back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "demo/README.md") == "# demo\n");
    BOOST_TEST(read_text(f.workspace / "demo/main.py") == "print('demo')\n");
    BOOST_TEST(last_content(f.model_messages(0)).find("new python project named `demo`") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(refactor_component_reads_and_edits_with_approval) {
    workflow_fixture f;
    write_text(f.workspace / "src/main.py", "from src.app import main\nmain()\n");
    f.fake.script(
        {{call("replace_in_file",
               {{"path", "src/app.py"}, {"find", "print('hi')"}, {"replace", "print('hello')"}})},
         {"The greeting now says hello."}});
    auto run = f.run("refactor_component", f.create_chat(),
                     {{"path", "src/app.py"}, {"goal", "greet with hello"}});
    auto approval = f.wait_for(run, "approval.required");
    f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST(f.events(run).back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "src/app.py") == "def main():\n    print('hello')\n");
    auto instruction = last_content(f.model_messages(0));
    BOOST_TEST(instruction.find("def main():") != std::string::npos);
    BOOST_TEST(instruction.find("src/main.py") != std::string::npos);  // the importer
}

BOOST_AUTO_TEST_CASE(bad_requests_are_refused_precisely) {
    workflow_fixture f;
    auto chat = f.create_chat();
    auto [missing, mj] =
        f.start("explain_file", {{"chat_id", chat}, {"parameters", json::object{}}});
    BOOST_TEST(missing.status == 400u);
    BOOST_TEST(missing.body.find("path") != std::string::npos, missing.body);
    auto [typed, tj] = f.start("explain_file", {{"chat_id", chat}, {"parameters", {{"path", 3}}}});
    BOOST_TEST(typed.status == 400u);
    BOOST_TEST(typed.body.find("/path") != std::string::npos, typed.body);
    auto [choice, cj] =
        f.start("explain_file",
                {{"chat_id", chat}, {"parameters", {{"path", "a"}}}, {"input", "explain a"}});
    BOOST_TEST(choice.status == 400u);
    auto [no_chat, nj] = f.start("explain_file", {{"parameters", {{"path", "a"}}}});
    BOOST_TEST(no_chat.status == 400u);
    auto [unknown, uj] = f.start("nope", {{"chat_id", chat}, {"parameters", json::object{}}});
    BOOST_TEST(unknown.status == 404u);
    auto [enum_bad, ej] = f.start(
        "explain_file", {{"chat_id", chat}, {"parameters", {{"path", "a"}, {"audience", "boss"}}}});
    BOOST_TEST(enum_bad.status == 400u);
    BOOST_TEST(enum_bad.body.find("/audience") != std::string::npos, enum_bad.body);
    BOOST_TEST(f.fake.scripted_requests().empty());
}

BOOST_AUTO_TEST_CASE(free_text_input_becomes_parameters_or_a_clear_question) {
    workflow_fixture f;
    auto chat = f.create_chat();
    f.fake.script({{R"({"path": "README.md"})"}, {"It is the readme."}});
    auto [r, j] = f.start("explain_file", {{"chat_id", chat}, {"input", "explain the readme"}});
    BOOST_TEST_REQUIRE(r.status == 202u, r.body);
    auto all = f.events(std::string(j.at("run_id").as_string()));
    BOOST_TEST(all.back().type == "run.completed");
    BOOST_TEST(all.back().data.at("output").as_string() == "It is the readme.");
    bool extracted = false;
    for (const auto& e : all)
        extracted = extracted || (e.type == "workflow.parameters" &&
                                  e.data.at("parameters").at("path").as_string() == "README.md" &&
                                  e.data.at("parameters").at("audience").as_string() == "newcomer");
    BOOST_TEST(extracted);
    BOOST_TEST(last_content(f.model_messages(0)) == "explain the readme");

    f.fake.script({{"{}"}});
    auto [r2, j2] = f.start("explain_file", {{"chat_id", chat}, {"input", "explain something"}});
    auto failed = f.events(std::string(j2.at("run_id").as_string()));
    BOOST_TEST(failed.back().type == "run.failed");
    auto error = std::string(failed.back().data.at("error").as_string());
    BOOST_TEST(error.find("does not give all the workflow needs") != std::string::npos, error);
    BOOST_TEST(error.find("- path: The file to explain") != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(a_workflow_run_is_cancelled_like_any_run) {
    workflow_fixture f;
    f.fake.script({{"# Header."}});
    auto run = f.run("add_file_header", f.create_chat(), {{"path", "README.md"}});
    f.wait_for(run, "approval.required");
    auto [r, j] = f.send("POST", "/context/runs/" + run + "/cancel");
    BOOST_TEST(j.at("status").as_string() == "cancelled");
    BOOST_TEST(f.events(run).back().type == "run.cancelled");
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");
}

BOOST_AUTO_TEST_CASE(a_workflow_awaiting_approval_survives_a_restart) {
    workflow_fixture f;
    f.fake.script({{"# Header."}});
    auto run = f.run("add_file_header", f.create_chat(), {{"path", "src/app.py"}});
    auto approval = f.wait_for(run, "approval.required");
    f.gateway.reset();
    f.gateway.emplace(f.config);
    f.approve(run, std::string(approval.data.at("call_id").as_string()));
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "src/app.py") ==
               "# Header.\ndef main():\n    print('hi')\n");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_workflows_test
