#include "tests/support/fake_vertex.hpp"

#include <boost/json/serialize.hpp>

namespace gateway::testing::fake_vertex {

namespace json = boost::json;
namespace fp = fake_providers;

std::optional<call> read_path(std::string_view target) {
    call c;
    auto question = target.find('?');
    if (question != std::string_view::npos) c.query = std::string(target.substr(question + 1));
    std::string_view rest = target.substr(0, question);
    // The API's version first: /v1/ or /v1beta1/, each followed by /projects/.
    for (std::string_view version : {"v1", "v1beta1"})
        if (rest.starts_with('/') && rest.substr(1).starts_with(version) &&
            rest.substr(1 + version.size()).starts_with("/projects/"))
            c.version = std::string(version);
    if (c.version.empty()) return std::nullopt;
    rest.remove_prefix(1 + c.version.size());
    // Each fixed part, then its value up to the next `/` (the model's up to `:`).
    static constexpr std::string_view parts[] = {"/projects/", "/locations/", "/publishers/",
                                                 "/models/"};
    std::string* values[] = {&c.project, &c.location, &c.publisher, &c.model};
    for (std::size_t i = 0; i < 4; ++i) {
        if (!rest.starts_with(parts[i])) return std::nullopt;
        rest.remove_prefix(parts[i].size());
        auto end = rest.find(i < 3 ? '/' : ':');
        if (end == 0 || end == std::string_view::npos) return std::nullopt;
        *values[i] = std::string(rest.substr(0, end));
        rest.remove_prefix(end + (i < 3 ? 0 : 1));
    }
    if (rest.empty() || c.model.find('/') != std::string::npos) return std::nullopt;
    c.method = std::string(rest);
    c.stream = c.method == "streamRawPredict" || c.method == "streamGenerateContent";
    return c;
}

fp::answer unauthenticated(std::string_view why) {
    fp::answer a;
    a.status = 401;
    a.body = json::serialize(json::object{
        {"error",
         {{"code", 401},
          {"message",
           "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
           "cookie or other valid authentication credential. See "
           "https://developers.google.com/identity/sign-in/web/devconsole-project. (fake: " +
               std::string(why) + ")"},
          {"status", "UNAUTHENTICATED"}}}});
    a.extra_headers = "WWW-Authenticate: Bearer realm=\"https://accounts.google.com/\"\r\n";
    return a;
}

std::optional<fp::answer> refusal(const received_request& r, const json::value& body, const call& c,
                                  const token_check& check) {
    bool claude = c.publisher == "anthropic";
    bool google = c.publisher == "google";
    bool known = (claude && (c.method == "rawPredict" || c.method == "streamRawPredict")) ||
                 (google && (c.method == "generateContent" || c.method == "streamGenerateContent" ||
                             c.method == "countTokens"));
    if (!known)
        return fp::gemini_error(404, "Publisher model `projects/" + c.project + "/locations/" +
                                         c.location + "/publishers/" + c.publisher + "/models/" +
                                         c.model + "` method `" + c.method + "` was not found");
    if (google && c.stream && c.query.find("alt=sse") == std::string::npos)
        return fp::gemini_error(400, "the fake serves streamGenerateContent with alt=sse only");
    auto authorization = r.header("authorization");
    constexpr std::string_view bearer = "Bearer ";
    if (!authorization.starts_with(bearer) || authorization.size() == bearer.size())
        return unauthenticated("no Authorization: Bearer");
    if (check)
        if (auto why = check(std::string_view(authorization).substr(bearer.size())); !why.empty())
            return unauthenticated(why);
    if (!claude) return fp::generate_content_refusal(body);
    const auto* o = body.if_object();
    if (o && o->contains("model"))
        return fp::anthropic_error(400, "invalid_request_error",
                                   "model: Extra inputs are not permitted");
    const auto* version = o ? o->if_contains("anthropic_version") : nullptr;
    if (!version || *version != "vertex-2023-10-16")
        return fp::anthropic_error(400, "invalid_request_error",
                                   "anthropic_version: Input should be 'vertex-2023-10-16'");
    return fp::messages_refusal(body, false);
}

}  // namespace gateway::testing::fake_vertex
