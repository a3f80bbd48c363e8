#include "gateway/upstream/model_router.hpp"

#include <boost/test/unit_test.hpp>

namespace upstream_model_router_test {

using namespace gateway::upstream;

BOOST_AUTO_TEST_SUITE(model_routing)

BOOST_AUTO_TEST_CASE(model_is_read_without_touching_the_rest) {
    BOOST_TEST(*read_model(R"({"model":"gpt-4o","messages":[]})") == "gpt-4o");
    BOOST_TEST(
        *read_model(R"({"messages":[{"model":"inner"}],"x":{"model":"nested"},"model":"outer"})") ==
        "outer");
    BOOST_TEST(*read_model("  {\n \"stream\" : true , \"model\" : \"caf\\u00e9\\n\"}") ==
               "caf\xC3\xA9\n");
    // The rest of the body is not validated: a syntax error elsewhere is the upstream's to refuse.
    BOOST_TEST(*read_model(R"({"model":"m", broken)") == "m");
    BOOST_TEST(!read_model(R"({"model":42})"));
    BOOST_TEST(!read_model(R"({"model":{"id":"x"}})"));
    BOOST_TEST(!read_model(R"(["model","x"])"));
    BOOST_TEST(!read_model("not json"));
    BOOST_TEST(!read_model(""));
    BOOST_TEST(!read_model(R"({"messages":[]})"));
    std::string deep(10'000, '[');
    BOOST_TEST(!read_model("{\"a\":" + deep));
}

// The model the gateway routes and admits by is the one the upstream will run.
BOOST_AUTO_TEST_CASE(model_is_the_one_the_upstream_reads) {
    // Duplicates: the last member wins in Python's, JavaScript's and Go's JSON parsers.
    BOOST_TEST(*read_model(R"({"model":"cheap","messages":[],"model":"expensive"})") ==
               "expensive");
    BOOST_TEST(!read_model(R"({"model":"cheap","model":null})"));
    BOOST_TEST(*read_model(R"({"model":7,"model":"late"})") == "late");
    // An escaped key is its decoded name; a look-alike is not.
    BOOST_TEST(*read_model(R"({"model":"a","mod\u0065l":"b"})") == "b");
    BOOST_TEST(*read_model(R"({"model":"a","model ":"b","Model":"c"})") == "a");
    // After a large messages array whose strings hold brackets, quotes and backslashes.
    std::string content;
    for (int i = 0; i < 5000; ++i) content += R"(} ] { [ \"model\": \"x\" \\)";
    auto body = R"({"messages":[{"role":"user","content":")" + content + R"("}],"model":"gpt-4o"})";
    BOOST_TEST(*read_model(body) == "gpt-4o");
    // A string value that is not valid JSON text (a raw control character, invalid UTF-8) is no
    // model; nor is one cut short.
    BOOST_TEST(!read_model("{\"model\":\"a\x01\"}"));
    BOOST_TEST(!read_model("{\"model\":\"\xff\xfe\"}"));
    BOOST_TEST(!read_model(R"({"model":"gpt-)"));
    // A member after the object's end is not the object's.
    BOOST_TEST(!read_model(R"({"messages":[]} {"model":"x"})"));
}

BOOST_AUTO_TEST_CASE(only_the_model_the_upstream_reads_is_replaced) {
    std::string body =
        "\xEF\xBB\xBF{\"messages\":[{\"model\":\"inner\"}],\"model\":\"a\", \"model\" : "
        "\"smart\",\"x\":1}";
    BOOST_TEST(replace_model(body, "gpt-5\"x"));
    BOOST_TEST(body ==
               "\xEF\xBB\xBF{\"messages\":[{\"model\":\"inner\"}],\"model\":\"a\", \"model\" : "
               "\"gpt-5\\\"x\",\"x\":1}");
    BOOST_TEST(read_model(body).value_or("") == "gpt-5\"x");
    std::string none = R"({"model": 3})";
    BOOST_TEST(!replace_model(none, "m"));
    BOOST_TEST(none == R"({"model": 3})");
}

BOOST_AUTO_TEST_CASE(first_matching_upstream_wins_and_the_first_is_the_default) {
    std::vector<gateway::config::upstream_config> ups(3);
    ups[0].models = {"gpt-*", "o?-*"};
    ups[1].models = {"claude-*", "gpt-4o-special"};
    ups[2].models = {"*"};
    model_router router(ups);
    BOOST_TEST(router.route("gpt-4o") == 0u);
    BOOST_TEST(router.route("gpt-4o-special") == 0u);
    BOOST_TEST(router.route("claude-3-opus") == 1u);
    BOOST_TEST(router.route("llama") == 2u);
    BOOST_TEST(router.route(std::nullopt) == 0u);
    ups.pop_back();
    model_router no_catch_all(ups);
    BOOST_TEST(no_catch_all.route("llama") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_model_router_test
