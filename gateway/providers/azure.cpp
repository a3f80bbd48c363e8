#include "gateway/providers/azure.hpp"

#include "gateway/http/target.hpp"

namespace gateway::providers::azure {

namespace {

// `query` (without its `?`) less any api-version parameter.
std::string without_api_version(std::string_view query) {
    std::string kept;
    while (!query.empty()) {
        auto amp = query.find('&');
        auto param = query.substr(0, amp);
        if (!param.starts_with("api-version=") && param != "api-version" && !param.empty()) {
            if (!kept.empty()) kept += '&';
            kept += param;
        }
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    }
    return kept;
}

}  // namespace

std::string_view deployment_of(const config::upstream_config& up, std::string_view model) {
    for (const auto& [name, deployment] : up.deployments)
        if (name == model) return deployment;
    return model;
}

std::string target(const config::upstream_config& up, std::string_view model,
                   std::string_view target) {
    std::string out;
    if (up.api_version == "v1") {
        out = "/openai/v1";
        out += target;
        return out;
    }
    auto mark = target.find('?');
    auto path = target.substr(0, mark);
    auto query = mark == std::string_view::npos ? std::string_view{} : target.substr(mark + 1);
    bool responses = path == "/responses" || path.starts_with("/responses/");
    out = "/openai";
    if (!model.empty() && !responses) {
        out += "/deployments/";
        out += gateway::http::path_segment(deployment_of(up, model));
    }
    out += path;
    out += '?';
    auto kept = without_api_version(query);
    if (!kept.empty()) out += kept + '&';
    out += "api-version=";
    out += gateway::http::path_segment(up.api_version);
    return out;
}

}  // namespace gateway::providers::azure
