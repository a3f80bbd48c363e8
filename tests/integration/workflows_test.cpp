// The workflow registry through the gateway: listing by category, one workflow with its form
// schema, and a reload (what SIGHUP does) that keeps the old set when a file breaks.
#include "tests/integration/harness.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

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
            grouped[std::string(group.at("category").as_string())].emplace_back(w.at("id").as_string());
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
    std::ofstream(folder / "explain_file.yaml", std::ios::app) << "  - id: broken\n    tool: no_such_tool\n";
    auto error = gw.server().reload_workflows();
    BOOST_TEST(error.find("explain_file.yaml:") != std::string::npos, error);
    BOOST_TEST(error.find("unknown tool `no_such_tool`") != std::string::npos, error);
    // Still served as it was.
    auto kept = get_json(gw.port(), "/context/workflows/explain_file");
    BOOST_TEST(kept.at("steps").as_array().size() == 2u);

    fs::copy_file(CONTEXTGATE_SOURCE_DIR "/workflows/explain_file.yaml", folder / "explain_file.yaml",
                  fs::copy_options::overwrite_existing);
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
