#include "gateway/app/mcp_command.hpp"

#include <boost/test/unit_test.hpp>

namespace app_mcp_command_test {

using gateway::app::split_command;

BOOST_AUTO_TEST_SUITE(mcp_command)

BOOST_AUTO_TEST_CASE(commands_split_like_a_shell_without_expansion) {
    auto words = split_command(R"(npx -y 'a b' "c \"d\"" e\ f $HOME)");
    BOOST_TEST_REQUIRE(words.has_value());
    std::vector<std::string> expected{"npx", "-y", "a b", "c \"d\"", "e f", "$HOME"};
    BOOST_TEST(*words == expected, boost::test_tools::per_element());
    BOOST_TEST(split_command("  ")->empty());
    BOOST_TEST(split_command("''")->size() == 1u);
    BOOST_TEST(!split_command("node 'unclosed").has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace app_mcp_command_test
