#include "gateway/agent/system_prompts.hpp"

#include <boost/test/unit_test.hpp>

namespace agent_system_prompts_test {

using gateway::agent::system_prompts;
using gateway::tools::role;

BOOST_AUTO_TEST_SUITE(system_prompts_suite)

BOOST_AUTO_TEST_CASE(prompts_are_found_and_built_for_a_role) {
    system_prompts prompts({{"coding", "Coding", "d", "You write code.", "coding.md"}},
                           gateway::tools::registry::standard());
    BOOST_TEST(prompts.all().size() == 1u);
    BOOST_TEST(prompts.find("coding") != nullptr);
    BOOST_TEST(prompts.find("nope") == nullptr);
    auto editor = prompts.build("coding", role::editor, false);
    auto reader = prompts.build("coding", role::reader, false);
    BOOST_TEST(editor.starts_with("You write code."));
    BOOST_TEST(editor.find("edit_file") != std::string::npos);
    BOOST_TEST(reader.find("edit_file") == std::string::npos);
    BOOST_TEST(editor.find("constrained to JSON") == std::string::npos);
    BOOST_TEST(prompts.build("coding", role::editor, true).find("constrained to JSON") !=
               std::string::npos);
    // An unknown prompt id still gives the catalogue and the protocol.
    auto bare = prompts.build("gone", role::editor, false);
    BOOST_TEST(bare.find("read_file") != std::string::npos);
    BOOST_TEST(bare.find("You write code.") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_system_prompts_test
