#include "tests/support/fake_azure.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace gateway::testing::fake_azure {

namespace json = boost::json;
namespace fp = fake_providers;

namespace {

fp::answer error(unsigned status, std::string_view code, std::string_view message) {
    fp::answer a;
    a.status = status;
    a.body = json::serialize(json::object{{"error", {{"code", code}, {"message", message}}}});
    return a;
}

// The value of `name` in a query ("" when absent), and whether it is there.
std::optional<std::string> query_value(std::string_view query, std::string_view name) {
    while (!query.empty()) {
        auto amp = query.find('&');
        auto param = query.substr(0, amp);
        if (param.starts_with(name) && param.size() > name.size() && param[name.size()] == '=')
            return std::string(param.substr(name.size() + 1));
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    }
    return std::nullopt;
}

// The query less its api-version.
std::string other_params(std::string_view query) {
    std::string kept;
    while (!query.empty()) {
        auto amp = query.find('&');
        auto param = query.substr(0, amp);
        if (!param.empty() && !param.starts_with("api-version=")) {
            kept += kept.empty() ? "?" : "&";
            kept += param;
        }
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    }
    return kept;
}

const deployment* find_deployment(std::string_view name) {
    for (const auto& d : deployments)
        if (d.name == name) return &d;
    return nullptr;
}

fp::answer deployment_not_found() {
    return error(404, "DeploymentNotFound",
                 "The API deployment for this resource does not exist. If you created the "
                 "deployment within the last 5 minutes, please wait a moment and try again.");
}

// The prompt's refusal by the content filter, with its categories as Azure reports them.
fp::answer content_filtered() {
    auto category = [](bool filtered, std::string_view severity) {
        return json::object{{"filtered", filtered}, {"severity", severity}};
    };
    fp::answer a;
    a.status = 400;
    a.body = json::serialize(json::object{
        {"error",
         {{"message",
           "The response was filtered due to the prompt triggering Azure OpenAI's content "
           "management policy. Please modify your prompt and retry. To learn more about our "
           "content filtering policies please read our documentation: "
           "https://go.microsoft.com/fwlink/?linkid=2198766"},
          {"type", nullptr},
          {"param", "prompt"},
          {"code", "content_filter"},
          {"status", 400},
          {"innererror",
           {{"code", "ResponsibleAIPolicyViolation"},
            {"content_filter_result",
             {{"hate", category(false, "safe")},
              {"jailbreak", json::object{{"filtered", false}, {"detected", false}}},
              {"self_harm", category(false, "safe")},
              {"sexual", category(false, "safe")},
              {"violence", category(true, "high")}}}}}}}});
    return a;
}

// The credential check: `api-key` must be the resource's; `Authorization: Bearer` must be a
// token `check` takes (a key there is none).
std::optional<fp::answer> credential_refusal(const received_request& r, const token_check& check) {
    auto key = r.header("api-key");
    auto authorization = r.header("authorization");
    if (!key.empty()) {
        if (key == api_key) return std::nullopt;
        return error(401, "401",
                     "Access denied due to invalid subscription key or wrong API endpoint. Make "
                     "sure to provide a valid key for an active subscription and use a correct "
                     "regional API endpoint for your resource.");
    }
    constexpr std::string_view bearer = "Bearer ";
    if (authorization.starts_with(bearer)) {
        std::string why = check ? check(std::string_view(authorization).substr(bearer.size()))
                                : std::string("no Entra ID token is taken here");
        if (why.empty()) return std::nullopt;
        return error(401, "401",
                     "Unauthorized. Access token is missing, invalid, audience is incorrect "
                     "(https://cognitiveservices.azure.com), or have expired. (fake: " +
                         why + ")");
    }
    return error(401, "401",
                 "Access denied due to missing subscription key. Make sure to include "
                 "subscription key when making requests to an API.");
}

}  // namespace

fp::answer throttled() {
    auto a = error(429, "429",
                   "Requests to the ChatCompletions_Create Operation under Azure OpenAI API "
                   "version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 "
                   "pricing tier. Please retry after 2 seconds.");
    a.extra_headers = "retry-after-ms: 1500\r\nretry-after: 2\r\n";
    return a;
}

read_result read(const received_request& r, const token_check& check) {
    read_result out;
    if (auto refused = credential_refusal(r, check)) {
        out.refusal = std::move(refused);
        return out;
    }
    auto question = r.target.find('?');
    std::string_view path = std::string_view(r.target).substr(0, question);
    std::string_view query = question == std::string::npos
                                 ? std::string_view{}
                                 : std::string_view(r.target).substr(question + 1);
    boost::system::error_code ec;
    auto body = json::parse(r.body, ec);
    const auto* object = ec ? nullptr : body.if_object();
    auto body_model = object && object->contains("model") && object->at("model").is_string()
                          ? std::string(object->at("model").as_string())
                          : std::string();
    std::string_view operation;
    std::string deployment_name;
    constexpr std::string_view v1 = "/openai/v1/", deployed = "/openai/deployments/";
    if (path.starts_with(v1)) {
        // The v1 API: OpenAI's paths, the deployment named as the body's model.
        operation = path.substr(v1.size() - 1);
        deployment_name = body_model;
    } else {
        auto version = query_value(query, "api-version");
        if (!version) {
            out.refusal = error(400, "MissingApiVersionParameter",
                                "The api-version query parameter (?api-version=) is required "
                                "for all requests.");
            return out;
        }
        bool known = false;
        for (auto v : api_versions) known = known || v == *version;
        if (!known) {
            out.refusal = error(400, "BadRequest", "API version not supported");
            return out;
        }
        if (path.starts_with(deployed)) {
            auto rest = path.substr(deployed.size());
            auto slash = rest.find('/');
            if (slash == std::string_view::npos || slash == 0) {
                out.refusal = error(404, "404", "Resource not found");
                return out;
            }
            deployment_name = std::string(rest.substr(0, slash));
            operation = rest.substr(slash);
            if (operation != "/chat/completions" && operation != "/completions" &&
                operation != "/embeddings") {
                out.refusal = error(404, "404", "Resource not found");
                return out;
            }
        } else {
            // Below /openai itself: the model list, and Responses (its deployment in the body).
            operation = path.substr(7);
            if (operation == "/responses") deployment_name = body_model;
        }
    }
    bool names_model = operation != "/models";
    if (names_model && operation != "/chat/completions" && operation != "/completions" &&
        operation != "/embeddings" && operation != "/responses") {
        out.refusal = error(404, "404", "Resource not found");
        return out;
    }
    if (names_model) {
        const auto* d = find_deployment(deployment_name);
        if (!d) {
            out.refusal = deployment_not_found();
            return out;
        }
        out.call.model = std::string(d->model);
    }
    if (r.body.find(filtered_prompt) != std::string::npos) {
        out.refusal = content_filtered();
        return out;
    }
    out.call.openai_target = "/v1" + std::string(operation) + other_params(query);
    return out;
}

}  // namespace gateway::testing::fake_azure
