#include "gateway/admin/usage_report.hpp"

#include "gateway/admin/key_ring.hpp"
#include "gateway/config/config.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

namespace admin_usage_report_test {

using namespace gateway;
namespace json = boost::json;

namespace {

admin::key_ring ring_with_ci() {
    admin::virtual_key ci;
    ci.id = "key_1";
    ci.name = "ci";
    ci.digest = config::key_digest("sk-ci-0123456789abcdef");
    return admin::key_ring({ci});
}

// The request the query string `query` makes, or its error.
std::string request_of(std::string_view query, admin::usage_request& out) {
    return admin::usage_request_of("/admin/usage" + std::string(query), out);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(usage_report)

BOOST_AUTO_TEST_CASE(group_by_names_the_dimensions_and_absent_means_key_and_model) {
    admin::usage_request plain;
    BOOST_TEST(request_of("", plain).empty());
    const auto& q = plain.query;
    BOOST_TEST((!q.by_day && q.by_key && q.by_model && !q.by_upstream));
    BOOST_TEST(!plain.csv);

    admin::usage_request day;
    BOOST_TEST(request_of("?group_by=day", day).empty());
    BOOST_TEST((day.query.by_day && !day.query.by_key && !day.query.by_model));

    admin::usage_request all;
    BOOST_TEST(request_of("?group_by=upstream,day,model,key&upstream=azure&format=csv&from="
                          "2026-11-01&to=2026-11-30&key=key_1&model=gpt-4o",
                          all)
                   .empty());
    const auto& a = all.query;
    BOOST_TEST((a.by_day && a.by_key && a.by_model && a.by_upstream));
    BOOST_TEST(a.upstream == "azure");
    BOOST_TEST(a.key_id == "key_1");
    BOOST_TEST(a.model == "gpt-4o");
    BOOST_TEST(a.from_day == "2026-11-01");
    BOOST_TEST(a.to_day == "2026-11-30");
    BOOST_TEST(all.csv);
}

BOOST_AUTO_TEST_CASE(a_bad_parameter_is_named_with_what_it_allows) {
    for (auto query : {"?group_by=week", "?group_by=day,", "?group_by=day,,key", "?group_by=Day"}) {
        admin::usage_request r;
        auto error = request_of(query, r);
        BOOST_TEST(error.find("`group_by` must be a comma-separated list of day, key, model, "
                              "upstream and team") == 0u,
                   query << ": " << error);
    }
    admin::usage_request r;
    BOOST_TEST(request_of("?group_by=day,hour", r).find("`hour` is none of them") !=
               std::string::npos);
    BOOST_TEST(request_of("?format=xlsx", r) == "`format` must be json or csv (absent: json)");
    BOOST_TEST(request_of("?from=someday", r) == "`from` must be a day such as 2026-11-01");
}

BOOST_AUTO_TEST_CASE(json_rows_carry_the_dimensions_named_and_exact_dollars) {
    auto keys = ring_with_ci();
    admin::usage_request asked;
    BOOST_TEST_REQUIRE(request_of("?group_by=key,upstream", asked).empty());
    std::vector<store::usage_row> rows{{.key_id = "key_1",
                                        .upstream = "up",
                                        .requests = 3,
                                        .input_tokens = 10,
                                        .output_tokens = 5,
                                        .usd_nano = 5'615'000,
                                        .estimated_requests = 1},
                                       {.key_id = "context",
                                        .requests = 2,
                                        .usd_nano = 12'000'000'001,
                                        .unpriced_requests = 1,
                                        .cache_hits = 1,
                                        .saved_usd_nano = 70}};
    auto reply = admin::usage_reply(rows, asked, keys, 0);
    BOOST_TEST(reply.status == 200u);
    BOOST_TEST(reply.content_type == "application/json");
    // Exact decimals, not a double's 5.615E-3.
    BOOST_TEST(reply.body.find(R"("usd":0.005615,)") != std::string::npos, reply.body);
    BOOST_TEST(reply.body.find(R"("usd":12.000000001,)") != std::string::npos, reply.body);
    BOOST_TEST(reply.body.find(R"("saved_usd":0.00000007})") != std::string::npos, reply.body);
    auto data = json::parse(reply.body).at("data").as_array();
    BOOST_TEST_REQUIRE(data.size() == 2u);
    const auto& first = data[0].as_object();
    std::vector<std::string> names;
    for (const auto& [name, value] : first) names.emplace_back(name);
    BOOST_TEST((names == std::vector<std::string>{
                             "key_id", "key_name", "upstream", "requests", "input_tokens",
                             "output_tokens", "total_tokens", "cache_read_tokens",
                             "cache_write_tokens", "reasoning_tokens", "usd", "unpriced_requests",
                             "estimated_requests", "cache_hits", "saved_usd"}));
    BOOST_TEST(first.at("key_name") == "ci");
    BOOST_TEST(first.at("total_tokens") == 15);
    BOOST_TEST(data[1].at("key_name").is_null());  // no key has the id `context`
    BOOST_TEST(data[1].at("saved_usd").as_double() == 7e-8);
}

BOOST_AUTO_TEST_CASE(csv_has_a_header_of_the_same_names_and_quotes_what_needs_it) {
    auto keys = ring_with_ci();
    admin::usage_request asked;
    BOOST_TEST_REQUIRE(request_of("?group_by=day,model&format=csv&from=2026-11-01", asked).empty());
    std::vector<store::usage_row> rows{
        {.day = "2026-11-02", .model = "plain", .requests = 1, .usd_nano = 1'500'000'000},
        {.day = "2026-11-02", .model = "a,b \"c\"", .requests = 2}};
    auto reply = admin::usage_reply(rows, asked, keys, 1'795'000'000'000);
    BOOST_TEST(reply.content_type == "text/csv; charset=utf-8");
    BOOST_TEST(reply.body ==
               "day,model,requests,input_tokens,output_tokens,total_tokens,cache_read_tokens,"
               "cache_write_tokens,reasoning_tokens,usd,unpriced_requests,estimated_requests,"
               "cache_hits,saved_usd\r\n"
               "2026-11-02,plain,1,0,0,0,0,0,0,1.5,0,0,0,0\r\n"
               "2026-11-02,\"a,b \"\"c\"\"\",2,0,0,0,0,0,0,0,0,0,0,0\r\n");
    BOOST_TEST_REQUIRE(reply.headers.size() == 1u);
    BOOST_TEST(reply.headers[0].first == "Content-Disposition");
    // No `to`: up to today, the day of `now_ms` (2026-11-18 UTC).
    BOOST_TEST(reply.headers[0].second ==
               "attachment; filename=\"usage-2026-11-01-2026-11-18.csv\"");

    admin::usage_request everything;
    BOOST_TEST_REQUIRE(request_of("?format=csv", everything).empty());
    auto empty = admin::usage_reply({}, everything, keys, 1'795'000'000'000);
    BOOST_TEST(empty.body.find("key_id,key_name,model,requests,") == 0u);
    BOOST_TEST(empty.headers.at(0).second == "attachment; filename=\"usage-all-2026-11-18.csv\"");
}

BOOST_AUTO_TEST_CASE(csv_defuses_a_model_name_a_spreadsheet_would_run_as_a_formula) {
    auto keys = ring_with_ci();
    admin::usage_request asked;
    BOOST_TEST_REQUIRE(request_of("?group_by=model&format=csv", asked).empty());
    std::vector<store::usage_row> rows{{.model = "=HYPERLINK(\"http://x\",\"y\")", .requests = 1},
                                       {.model = "@SUM(A1)", .requests = 1},
                                       {.model = "gpt-5", .requests = 1}};
    auto body = admin::usage_reply(rows, asked, keys, 1'795'000'000'000).body;
    BOOST_TEST(body.find("\r\n\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",1,") !=
               std::string::npos);
    BOOST_TEST(body.find("\r\n\"'@SUM(A1)\",1,") != std::string::npos);
    BOOST_TEST(body.find("\r\ngpt-5,1,") != std::string::npos);  // an ordinary name as it is
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace admin_usage_report_test
