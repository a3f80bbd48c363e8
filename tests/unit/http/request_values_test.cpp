#include "gateway/http/request_values.hpp"

#include <boost/test/unit_test.hpp>

namespace http_request_values_test {

using namespace gateway::http;

BOOST_AUTO_TEST_SUITE(request_values)

BOOST_AUTO_TEST_CASE(query_values_are_found_and_percent_decoded) {
    auto target = "/admin/usage?key=key_1&model=meta-llama%2FLlama%203&plus=a+b&empty=&flag";
    BOOST_TEST(query_value(target, "key") == "key_1");
    BOOST_TEST(query_value(target, "model") == "meta-llama/Llama 3");
    BOOST_TEST(query_value(target, "plus") == "a+b");
    BOOST_TEST(query_value(target, "empty") == "");
    BOOST_TEST(query_value(target, "flag") == "");  // no value
    BOOST_TEST(query_value(target, "missing") == "");
    BOOST_TEST(query_value("/admin/usage", "key") == "");
    // A target inside a larger buffer, as Beast holds it (no NUL after the last value).
    std::string head = "/admin/usage?from=2026-11-01&group_by=day HTTP/1.1\r\nHost: x";
    std::string_view in_head = std::string_view(head).substr(0, head.find(' '));
    BOOST_TEST(query_value(in_head, "group_by") == "day");
    BOOST_TEST(query_value(in_head, "from") == "2026-11-01");
    BOOST_TEST(query_value("/x?bad=%zz", "bad") == "%zz");  // not valid: kept as it is
}

BOOST_AUTO_TEST_CASE(bodies_must_be_json_objects) {
    std::string error;
    BOOST_TEST(body_object("", error)->empty());
    BOOST_TEST(!body_object("[1]", error));
    BOOST_TEST(error == "The body must be a JSON object.");
    BOOST_TEST(!body_object("{", error));
    auto o = body_object(R"({"name":"a","n":1})", error);
    BOOST_TEST_REQUIRE(o.has_value());
    std::string member_error;
    BOOST_TEST(string_member(*o, "name", member_error) == "a");
    BOOST_TEST(string_member(*o, "n", member_error).empty());
    BOOST_TEST(member_error == "`n` must be a string.");
}

BOOST_AUTO_TEST_CASE(a_member_the_api_does_not_know_is_refused_by_name) {
    std::string error;
    BOOST_TEST(body_object(R"({"model":"m","workspace":"/w"})", error, {"model", "workspace"})
                   .has_value());
    BOOST_TEST(error.empty());
    BOOST_TEST(!body_object(R"({"model":"m","workspce":"/w"})", error, {"model", "workspace"})
                    .has_value());
    BOOST_TEST(error == "Unknown member `workspce`; did you mean `workspace`?");
    error.clear();
    BOOST_TEST(!body_object(R"({"colour":"red"})", error, {"model", "workspace"}).has_value());
    BOOST_TEST(error == "Unknown member `colour`; the members are `model`, `workspace`.");
    BOOST_TEST(nearest_name("contnet", {"content", "name"}) == "content");
    BOOST_TEST(nearest_name("x", {"content"}).empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace http_request_values_test
