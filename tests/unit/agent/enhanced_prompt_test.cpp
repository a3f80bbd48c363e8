#include "gateway/agent/enhanced_prompt.hpp"

#include "gateway/prompts/prompt_library.hpp"
#include "gateway/tools/registry.hpp"

#include <boost/test/unit_test.hpp>

namespace agent_enhanced_prompt_test {

using gateway::tools::registry;
using gateway::tools::role;

BOOST_AUTO_TEST_SUITE(enhanced_prompt_suite)

BOOST_AUTO_TEST_CASE(base_catalogue_protocol_guidance_in_order_and_deterministic) {
    gateway::prompts::prompt base{"coding", "Coding", "d", "You are a careful engineer.\n", "x"};
    auto text = gateway::agent::enhanced_prompt(base, registry::standard(), role::editor);
    BOOST_TEST(text == gateway::agent::enhanced_prompt(base, registry::standard(), role::editor));
    auto base_at = text.find("You are a careful engineer.");
    auto tools_at = text.find("### Search & Discovery");
    auto protocol_at = text.find("## How to reply");
    auto example_at = text.find(
        R"({"tool": "read_file", "parameters": {"path": "README.md"}, "terminate": false})");
    auto terminate_at = text.find("`terminate: true`");
    auto guidance_at = text.find("Read before you edit");
    auto mermaid_at = text.find("mermaid");
    BOOST_TEST(base_at == 0u);
    BOOST_TEST(base_at < tools_at);
    BOOST_TEST(tools_at < protocol_at);
    BOOST_TEST(protocol_at < example_at);
    BOOST_TEST(example_at < terminate_at);
    BOOST_TEST(terminate_at < guidance_at);
    BOOST_TEST(guidance_at < mermaid_at);
    BOOST_TEST(mermaid_at != std::string::npos);
    auto reader = gateway::agent::enhanced_prompt(base, registry::standard(), role::reader);
    BOOST_TEST(reader.find("`edit_file`") == std::string::npos);
    BOOST_TEST(text.find("`edit_file`") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_enhanced_prompt_test
