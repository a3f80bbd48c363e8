#include "gateway/passthrough/request_models.hpp"

#include <boost/test/unit_test.hpp>

namespace passthrough_request_models_test {

using namespace gateway;
namespace bhttp = boost::beast::http;

namespace {

http::request make(bhttp::verb verb, std::string target, std::string body = {},
                   std::string type = "application/json") {
    http::request r{verb, target, 11};
    if (!type.empty()) r.set(bhttp::field::content_type, type);
    r.body() = std::move(body);
    return r;
}

std::vector<std::string> names(const passthrough::requested_models& m) {
    return m.names;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(request_models)

BOOST_AUTO_TEST_CASE(the_model_is_read_wherever_the_request_puts_it) {
    auto json = passthrough::models_of(
        make(bhttp::verb::post, "/v1/chat/completions", R"({"model":"gpt-4o"})"), false);
    BOOST_TEST(json.established);
    BOOST_TEST(names(json) == std::vector<std::string>{"gpt-4o"});

    // A byte order mark before the object hid the model from the allow-list.
    auto bom = passthrough::models_of(
        make(bhttp::verb::post, "/v1/chat/completions", "\xEF\xBB\xBF{\"model\":\"o3\"}"), false);
    BOOST_TEST(names(bom) == std::vector<std::string>{"o3"});

    std::string form =
        "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n"
        "Content-Type: audio/wav\r\n\r\nRIFF model\r\n--XyZ\r\n"
        "Content-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--XyZ--\r\n";
    auto multipart = passthrough::models_of(make(bhttp::verb::post, "/v1/audio/transcriptions",
                                                 form, "multipart/form-data; boundary=XyZ"),
                                            false);
    BOOST_TEST(multipart.established);
    BOOST_TEST(names(multipart) == std::vector<std::string>{"whisper-1"});
    auto quoted = passthrough::models_of(make(bhttp::verb::post, "/v1/audio/transcriptions", form,
                                              "multipart/form-data; boundary=\"XyZ\""),
                                         false);
    BOOST_TEST(names(quoted) == std::vector<std::string>{"whisper-1"});

    auto batch = passthrough::models_of(
        make(bhttp::verb::post, "/v1/messages/batches",
             R"({"requests":[{"custom_id":"a","params":{"model":"claude-haiku"}},)"
             R"({"custom_id":"b","params":{"model":"claude-opus"}}]})"),
        false);
    BOOST_TEST(batch.established);
    BOOST_TEST(names(batch) == (std::vector<std::string>{"claude-haiku", "claude-opus"}));

    auto gemini = passthrough::models_of(
        make(bhttp::verb::post, "/v1beta/models/gemini-2.5-pro:generateContent?alt=sse", "{}"),
        false);
    BOOST_TEST(names(gemini) == std::vector<std::string>{"gemini-2.5-pro"});
    auto tuned = passthrough::models_of(
        make(bhttp::verb::post, "/v1beta/tunedModels/my-model:generateContent", "{}"), false);
    BOOST_TEST(names(tuned) == std::vector<std::string>{"tunedModels/my-model"});
}

// The method follows the last colon: a key limited to `llama3` was let through for
// `llama3:70b:generateContent`, which the upstream hears as `llama3:70b`.
BOOST_AUTO_TEST_CASE(geminis_path_names_the_model_up_to_its_last_colon) {
    auto tagged = passthrough::models_of(
        make(bhttp::verb::post, "/v1beta/models/llama3:70b:generateContent", "{}"), false);
    BOOST_TEST(tagged.established);
    BOOST_TEST(names(tagged) == std::vector<std::string>{"llama3:70b"});
    auto streamed = passthrough::models_of(
        make(bhttp::verb::post, "/v1beta/models/a:b:c:streamGenerateContent?alt=sse:x", "{}"),
        false);
    BOOST_TEST(names(streamed) == std::vector<std::string>{"a:b:c"});
    auto tuned = passthrough::models_of(
        make(bhttp::verb::post, "/v1beta/tunedModels/mine:v2:generateContent", "{}"), false);
    BOOST_TEST(names(tuned) == std::vector<std::string>{"tunedModels/mine:v2"});
    // No method: the whole segment.
    auto bare =
        passthrough::models_of(make(bhttp::verb::post, "/v1beta/models/llama3", "{}"), false);
    BOOST_TEST(names(bare) == std::vector<std::string>{"llama3"});
}

BOOST_AUTO_TEST_CASE(what_cannot_be_established_says_so) {
    for (auto r :
         {make(bhttp::verb::post, "/v1/audio/transcriptions",
               "--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx\r\n--XyZ--",
               "multipart/form-data; boundary=XyZ"),
          make(bhttp::verb::post, "/v1/messages/batches",
               R"({"requests":[{"params":{"model":"a"}},{"params":{}}]})"),
          make(bhttp::verb::post, "/v1/batches", R"({"input_file_id":"file-1"})"),
          make(bhttp::verb::post, "/v1/chat/completions", "not json"),
          make(bhttp::verb::post, "/v1beta/cachedContents", "{}")}) {
        auto asked = passthrough::models_of(r, false);
        BOOST_TEST(!asked.established, r.target());
        BOOST_TEST(!asked.model_less, r.target());
    }
}

BOOST_AUTO_TEST_CASE(listings_files_and_cancellations_use_no_model) {
    for (auto r : {make(bhttp::verb::get, "/v1/models"), make(bhttp::verb::get, "/v1beta/models"),
                   make(bhttp::verb::delete_, "/v1/files/file-1"),
                   make(bhttp::verb::post, "/v1/files", "--x--", "multipart/form-data; boundary=x"),
                   make(bhttp::verb::post, "/v1/batches/batch_1/cancel")})
        BOOST_TEST(passthrough::models_of(r, false).model_less, r.target());
    // A tunnel is opened with a GET, and is not model-less: its frames name models.
    auto tunnel = passthrough::models_of(make(bhttp::verb::get, "/v1/responses"), true);
    BOOST_TEST(tunnel.tunnel);
    BOOST_TEST(!tunnel.model_less);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace passthrough_request_models_test
