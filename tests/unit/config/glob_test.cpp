#include "gateway/config/glob.hpp"

#include <boost/test/unit_test.hpp>

namespace config_glob_test {

using gateway::config::glob_match;

BOOST_AUTO_TEST_SUITE(model_globs)

BOOST_AUTO_TEST_CASE(globs) {
    BOOST_TEST(glob_match("*", ""));
    BOOST_TEST(glob_match("*", "gpt-4o"));
    BOOST_TEST(glob_match("gpt-*", "gpt-4o-mini"));
    BOOST_TEST(!glob_match("gpt-*", "o1-gpt-4"));
    BOOST_TEST(glob_match("*-mini", "gpt-4o-mini"));
    BOOST_TEST(glob_match("o?-*", "o1-preview"));
    BOOST_TEST(!glob_match("o?-*", "o10-preview"));
    BOOST_TEST(glob_match("claude-[0-9]*", "claude-3-opus"));
    BOOST_TEST(!glob_match("claude-[!0-9]*", "claude-3-opus"));
    BOOST_TEST(glob_match("a*b*c", "a-b-b-c"));
    BOOST_TEST(!glob_match("a*b*c", "a-b-b-d"));
    BOOST_TEST(glob_match("qwen/[", "qwen/["));  // a lone '[' is literal
    BOOST_TEST(!glob_match("gpt-4o", "GPT-4o"));
    BOOST_TEST(glob_match("meta-llama/*", "meta-llama/Llama-3.1-8B"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace config_glob_test
