#include "gateway/prompts/prompt_library.hpp"

#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace prompts_prompt_library_test {

using gateway::prompts::load_folder;
using gateway::prompts::parse_prompt;

BOOST_AUTO_TEST_SUITE(prompt_library_suite)

BOOST_AUTO_TEST_CASE(front_matter_and_body) {
    auto p = parse_prompt(
        "---\nid: coding\ntitle: Coding\ndescription: Code things.\n---\n\nYou are helpful.\n",
        "coding.md");
    BOOST_TEST_REQUIRE(static_cast<bool>(p), p.error);
    BOOST_TEST(p.value->id == "coding");
    BOOST_TEST(p.value->title == "Coding");
    BOOST_TEST(p.value->description == "Code things.");
    BOOST_TEST(p.value->body == "You are helpful.\n");
}

BOOST_AUTO_TEST_CASE(errors_name_file_and_line) {
    auto check = [](const std::string& text, const std::string& expected) {
        auto p = parse_prompt(text, "p.md");
        BOOST_TEST(!p);
        BOOST_TEST(p.error.find(expected) != std::string::npos, p.error);
    };
    check("no front matter\n", "p.md:1: a prompt file starts with `---`");
    check("---\nid: a\n", "never closed");
    check("---\nid: a\ntitle: T\ntittle: x\ndescription: d\n---\nbody\n",
          "p.md:4: unknown key `tittle`");
    check("---\nid: a\ndescription: d\n---\nbody\n", "missing `title`");
    check("---\nid: a b\ntitle: T\ndescription: d\n---\nbody\n", "may only hold");
    check("---\nid: a\ntitle: T\ndescription: d\n---\n", "no text after the front matter");
    check("---\nid: [a\n---\nbody\n", "invalid front matter");
}

BOOST_AUTO_TEST_CASE(the_shipped_prompts_load) {
    auto loaded = load_folder(CONTEXTGATE_SOURCE_DIR "/prompts");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    BOOST_TEST_REQUIRE(loaded.value->size() == 2u);
    BOOST_TEST((*loaded.value)[0].id == "coding");
    BOOST_TEST((*loaded.value)[1].id == "writing");
}

BOOST_AUTO_TEST_CASE(duplicate_ids_are_refused) {
    char pattern[] = "/tmp/contextgate-prompts-XXXXXX";
    std::filesystem::path dir = ::mkdtemp(pattern);
    std::ofstream(dir / "a.md") << "---\nid: same\ntitle: A\ndescription: a\n---\nA\n";
    std::ofstream(dir / "b.md") << "---\nid: same\ntitle: B\ndescription: b\n---\nB\n";
    auto loaded = load_folder(dir.string());
    BOOST_TEST(!loaded);
    BOOST_TEST(loaded.error.find("duplicate prompt id `same`") != std::string::npos);
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace prompts_prompt_library_test
