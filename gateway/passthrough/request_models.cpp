#include "gateway/passthrough/request_models.hpp"

#include "gateway/providers/ingress.hpp"
#include "gateway/upstream/model_router.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/json/parse.hpp>

namespace gateway::passthrough {

namespace {

namespace bhttp = boost::beast::http;
namespace json = boost::json;

// The parameter `name` of a header value such as `multipart/form-data; boundary="x"`.
std::string_view parameter(std::string_view value, std::string_view name) {
    for (auto at = value.find(';'); at != std::string_view::npos; at = value.find(';', at + 1)) {
        auto rest = value.substr(at + 1);
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        if (rest.size() <= name.size() ||
            !boost::beast::iequals(rest.substr(0, name.size()), name) || rest[name.size()] != '=')
            continue;
        auto text = rest.substr(name.size() + 1);
        if (text.starts_with('"')) {
            auto close = text.find('"', 1);
            return close == std::string_view::npos ? std::string_view{} : text.substr(1, close - 1);
        }
        return text.substr(0, text.find_first_of("; "));
    }
    return {};
}

// Every params.model of an Anthropic batch; nullopt when one is missing or the body is not one.
std::optional<std::vector<std::string>> batch_models(std::string_view body) {
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 64;
    auto value = json::parse(body, ec, {}, options);
    const auto* requests =
        !ec && value.is_object() ? value.as_object().if_contains("requests") : nullptr;
    if (!requests || !requests->is_array()) return std::nullopt;
    std::vector<std::string> models;
    for (const auto& r : requests->as_array()) {
        const auto* params = r.is_object() ? r.as_object().if_contains("params") : nullptr;
        const auto* model =
            params && params->is_object() ? params->as_object().if_contains("model") : nullptr;
        if (!model || !model->is_string()) return std::nullopt;
        models.emplace_back(model->as_string());
    }
    return models;
}

bool under(std::string_view path, std::string_view prefix) {
    return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

}  // namespace

std::optional<std::string> multipart_field(std::string_view body, std::string_view boundary,
                                           std::string_view name) {
    if (boundary.empty()) return std::nullopt;
    std::string delimiter = "--" + std::string(boundary);
    for (auto at = body.find(delimiter); at != std::string_view::npos;) {
        auto part = at + delimiter.size();
        if (body.substr(part, 2) == "--") break;  // the closing delimiter
        auto next = body.find("\r\n" + delimiter, part);
        if (next == std::string_view::npos) break;
        auto text = body.substr(part, next - part);
        auto headers_end = text.find("\r\n\r\n");
        if (headers_end != std::string_view::npos) {
            auto headers = text.substr(0, headers_end);
            // Content-Disposition: form-data; name="model"
            for (auto line_at = headers.find("\r\n"); line_at != std::string_view::npos;
                 line_at = headers.find("\r\n", line_at + 2)) {
                auto line =
                    headers.substr(line_at + 2, headers.find("\r\n", line_at + 2) - line_at - 2);
                if (line.size() < 20 ||
                    !boost::beast::iequals(line.substr(0, 20), "content-disposition:"))
                    continue;
                if (parameter(line, "name") == name)
                    return std::string(text.substr(headers_end + 4));
            }
        }
        at = next + 2;
    }
    return std::nullopt;
}

requested_models models_of(const http::request& req, bool tunnel,
                           std::optional<std::string_view> routed_model) {
    requested_models asked;
    asked.tunnel = tunnel;
    std::string_view target = req.target();
    std::string_view path = target.substr(0, target.find('?'));
    auto verb = req.method();
    if (!tunnel &&
        (verb == bhttp::verb::get || verb == bhttp::verb::head || verb == bhttp::verb::delete_)) {
        asked.model_less = true;
        return asked;
    }
    if (under(path, "/v1/files") || under(path, "/v1/uploads") || path.ends_with("/cancel")) {
        asked.model_less = true;
        return asked;
    }
    for (std::string_view prefix : {"/v1beta/models/", "/v1beta/tunedModels/"}) {
        if (!path.starts_with(prefix)) continue;
        // `llama3:70b:generateContent` names `llama3:70b`: what the upstream will hear.
        auto name = providers::gemini_path_model(path.substr(prefix.size()));
        if (name.empty() || name.find('/') != std::string_view::npos) return asked;
        asked.names.push_back((prefix == "/v1beta/tunedModels/" ? "tunedModels/" : "") +
                              std::string(name));
        asked.established = true;
        return asked;
    }
    const auto& body = req.body();
    if (path == "/v1/messages/batches") {
        if (auto models = batch_models(body)) {
            asked.names = std::move(*models);
            asked.established = true;
        }
        return asked;
    }
    std::string_view type = req[bhttp::field::content_type];
    if (type.size() >= 19 && boost::beast::iequals(type.substr(0, 19), "multipart/form-data")) {
        if (auto model = multipart_field(body, parameter(type, "boundary"), "model")) {
            asked.names.push_back(std::move(*model));
            asked.established = true;
        }
        return asked;
    }
    if (routed_model) {
        asked.names.emplace_back(*routed_model);
        asked.established = true;
    } else if (auto model = upstream::read_model(body)) {
        asked.names.push_back(std::move(*model));
        asked.established = true;
    }
    return asked;
}

}  // namespace gateway::passthrough
