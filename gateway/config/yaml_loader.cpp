// YAML -> gateway_config: the sections read through their declared fields (schema.hpp,
// sections.cpp), with the rules between fields. With yaml_reader.cpp and sections.cpp, the only
// place besides content loaders that includes yaml-cpp.
#include "gateway/config/config.hpp"
#include "gateway/config/schema.hpp"
#include "gateway/config/yaml_reader.hpp"
#include "gateway/detection/detectors.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

namespace gateway::config {

namespace {

// The file's top level: each section read through its declared fields (sections.cpp), then the
// rules between fields that each section keeps.
class loader : public yaml_reader {
public:
    using yaml_reader::yaml_reader;

    template <class S>
    S section(const YAML::Node& node, std::string_view name,
              const schema::fields<S>& fields) const {
        S s;
        schema::read(*this, node, name, fields, s);
        return s;
    }

    upstream_config upstream(const YAML::Node& node, std::size_t index) const {
        std::string name = "upstreams[" + std::to_string(index) + "]";
        if (node.IsMap() && !node["name"]) fail(node, name + ": `name` is required");
        auto u = section(node, name, upstream_fields());
        if (u.name.empty()) fail(node["name"], name + ": `name` must not be empty");
        if (u.provider == provider_kind::bedrock)
            bedrock(node, name, u);
        else if (node["region"] || node["aws"])
            fail(node["region"] ? node["region"] : node["aws"],
                 name + ": `region` and `aws` are for `provider: bedrock`");
        if (u.host == hosting::vertex)
            vertex(node, name, u);
        else if (node["project"] || node["location"])
            fail(node["project"] ? node["project"] : node["location"],
                 name + ": `project` and `location` are for `provider: vertex`");
        if (u.base_url.empty()) fail(node, name + ": `base_url` is required");
        if (u.host == hosting::azure)
            azure(node, name, u);
        else if (node["api_version"] || node["deployments"])
            fail(node["api_version"] ? node["api_version"] : node["deployments"],
                 name + ": `api_version` and `deployments` are for `provider: azure`");
        if (u.inject_stream_usage && u.provider != provider_kind::openai)
            fail(node["stream_usage"],
                 "`stream_usage: inject` applies to OpenAI-compatible upstreams only");
        if (u.translate_responses && u.provider != provider_kind::openai)
            fail(node["responses"],
                 "`responses: translate` applies to OpenAI-compatible upstreams only (the others "
                 "are always translated)");
        if (u.auth == auth_mode::replace && u.api_key.empty())
            fail(node["auth"], name + ": `auth: replace` needs a non-empty `api_key`");
        return u;
    }

    // A Bedrock upstream's rules: a region to sign for, which also gives the default base_url;
    // its key is an AWS one (`aws.bearer_token`), never `api_key`, which would go unsigned.
    void bedrock(const YAML::Node& node, const std::string& name, upstream_config& u) const {
        if (u.region.empty())
            fail(node, name +
                           ": `provider: bedrock` needs `region` (e.g. us-east-1): its "
                           "requests are signed for it");
        if (u.region.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") !=
            std::string::npos)
            fail(node["region"],
                 name + ": `region`: `" + u.region + "` is no AWS region name (such as us-east-1)");
        if (!u.api_key.empty())
            fail(node["api_key"], name +
                                      ": a Bedrock upstream takes no `api_key`: give a Bedrock "
                                      "API key as `aws: {bearer_token: …}`");
        if (u.auth == auth_mode::replace)
            fail(node["auth"], name +
                                   ": `auth` does not apply to Bedrock, which always signs "
                                   "with its own credentials");
        if (node["base_url"]) return;
        u.base_url = "https://bedrock-runtime." + u.region + ".amazonaws.com";
        u.endpoint = *parse_base_url(u.base_url).value;
    }

    // A Vertex AI upstream's rules: the project and location every path names, the location
    // also giving the default base_url; it is authorised by Google access tokens, never `api_key`.
    void vertex(const YAML::Node& node, const std::string& name, upstream_config& u) const {
        auto is_name = [](const std::string& v) {
            return !v.empty() && v.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") ==
                                     std::string::npos;
        };
        if (u.project.empty())
            fail(node, name + ": `provider: vertex` needs `project` (the Google Cloud project id)");
        if (!is_name(u.project))
            fail(node["project"], name + ": `project`: `" + u.project +
                                      "` is no Google Cloud project id (lowercase letters, "
                                      "digits and hyphens)");
        if (u.location.empty())
            fail(node, name + ": `provider: vertex` needs `location` (e.g. us-east5, or global)");
        if (!is_name(u.location))
            fail(node["location"], name + ": `location`: `" + u.location +
                                       "` is no Vertex AI location (such as us-east5 or global)");
        if (!u.api_key.empty())
            fail(node["api_key"], name +
                                      ": a Vertex AI upstream takes no `api_key`: it is "
                                      "authorised by Google access tokens (`credentials_file`, "
                                      "GOOGLE_APPLICATION_CREDENTIALS or the metadata server)");
        if (u.auth == auth_mode::replace)
            fail(node["auth"], name +
                                   ": `auth` does not apply to Vertex AI, which always sends "
                                   "the gateway's own access token");
        if (node["base_url"]) return;
        // Global has no region in its host name.
        u.base_url = u.location == "global"
                         ? std::string("https://aiplatform.googleapis.com")
                         : "https://" + u.location + "-aiplatform.googleapis.com";
        u.endpoint = *parse_base_url(u.base_url).value;
    }

    // An Azure OpenAI upstream's rules: the api-version its deployment paths carry ("v1": the v1
    // API), and TLS, since its key or token would otherwise cross the network in clear (plain
    // http only to a loopback address, as in tests).
    void azure(const YAML::Node& node, const std::string& name, const upstream_config& u) const {
        if (u.api_version.empty())
            fail(node, name +
                           ": `provider: azure` needs `api_version` (such as 2024-10-21 for "
                           "the deployments API, or v1 for the v1 API)");
        if (u.api_version == "v1" && !u.deployments.empty())
            fail(node["deployments"],
                 name +
                     ": `deployments` are for the deployments API: the v1 API names the "
                     "deployment as the body's `model` (map names with `model_map`)");
        const auto& host = u.endpoint.host;
        bool loopback =
            host == "localhost" || host.starts_with("127.") || host == "::1" || host == "[::1]";
        if (!u.endpoint.tls && !loopback)
            fail(node["base_url"], name +
                                       ": `base_url`: an Azure upstream is reached over https "
                                       "(such as https://my-resource.openai.azure.com)");
    }

    limits_config limits(const YAML::Node& node) const {
        auto l = section(node, "limits", limits_fields());
        if (l.backend == limits_backend::redis && !l.redis_url.starts_with("redis://"))
            fail(node["redis_url"].IsDefined() ? node["redis_url"] : node,
                 "`limits.backend: redis` needs `redis_url: redis://host:port`");
        return l;
    }

    context_config context(const YAML::Node& node) const {
        auto c = section(node, "context", context_fields());
        if (c.identical_call_stop <= c.identical_call_warn)
            fail(node, "`identical_call_stop` must be greater than `identical_call_warn`");
        return c;
    }

    mcp_server_config mcp_server(const YAML::Node& node, std::size_t index) const {
        std::string name = "mcp_servers[" + std::to_string(index) + "]";
        if (node.IsMap() && !node["name"]) fail(node, name + ": `name` is required");
        if (node.IsMap() && !node["transport"])
            fail(node, name + ": `transport` is required (stdio or http)");
        auto m = section(node, name, mcp_server_fields());
        if (m.transport == mcp_transport::stdio) {
            if (m.command.empty()) fail(node, name + ": `transport: stdio` needs `command`");
            if (node["url"] || node["headers"])
                fail(node["url"] ? node["url"] : node["headers"],
                     name + ": `url` and `headers` are for `transport: http`");
        } else {
            if (!node["url"]) fail(node, name + ": `transport: http` needs `url`");
            auto endpoint = parse_base_url(m.url);
            if (!endpoint)
                fail(node["url"], "`url`: `" + mask_url_password(m.url) + "` " + endpoint.error);
            m.endpoint = *endpoint.value;
            if (node["command"] || node["args"] || node["env"])
                fail(node["command"] ? node["command"]
                     : node["args"]  ? node["args"]
                                     : node["env"],
                     name + ": `command`, `args` and `env` are for `transport: stdio`");
        }
        return m;
    }

    // The routes, their targets named by upstream; an upstream that is only a route's target
    // (its `models` not given) takes no model names of its own.
    std::vector<route_config> routes(const YAML::Node& node,
                                     std::vector<upstream_config>& upstreams,
                                     const std::vector<bool>& models_given) const {
        if (!node.IsSequence()) fail(node, "`routes` must be a list");
        std::vector<route_config> out;
        for (std::size_t i = 0; i < node.size(); ++i) {
            std::string name = "routes[" + std::to_string(i) + "]";
            const auto& n = node[i];
            if (n.IsMap() && !n["model"]) fail(n, name + ": `model` is required");
            if (n.IsMap() && !n["targets"]) fail(n, name + ": `targets` is required");
            auto r = section(n, name, route_fields());
            if (r.model.empty()) fail(n["model"], name + ": `model` must not be empty");
            auto resolve = [&](std::vector<route_target>& targets, const char* key) {
                for (std::size_t t = 0; t < targets.size(); ++t) {
                    auto& target = targets[t];
                    std::size_t u = 0;
                    while (u < upstreams.size() && upstreams[u].name != target.upstream) ++u;
                    if (u == upstreams.size())
                        fail(n[key][t]["upstream"], name + "." + key + "[" + std::to_string(t) +
                                                        "]: there is no upstream named `" +
                                                        target.upstream + "`");
                    target.index = u;
                    if (!models_given[u]) upstreams[u].models.clear();
                }
            };
            resolve(r.targets, "targets");
            resolve(r.on_context_window, "on_context_window");
            out.push_back(std::move(r));
        }
        return out;
    }

    // An override's upstream must be one of the configuration's.
    pricing_config pricing(const YAML::Node& node, const std::set<std::string>& upstreams) const {
        auto p = section(node, "pricing", pricing_fields());
        for (std::size_t i = 0; i < p.overrides.size(); ++i)
            if (const auto& up = p.overrides[i].upstream; !up.empty() && !upstreams.contains(up))
                fail(node["overrides"][i]["upstream"], "pricing.overrides[" + std::to_string(i) +
                                                           "]: no upstream is named `" + up + "`");
        return p;
    }

    std::vector<team_config> teams(const YAML::Node& node) const {
        if (!node.IsSequence()) fail(node, "`teams` must be a list");
        std::vector<team_config> out;
        std::set<std::string> names;
        for (std::size_t i = 0; i < node.size(); ++i) {
            std::string section = "teams[" + std::to_string(i) + "]";
            if (!node[i]["name"]) fail(node[i], section + ": `name` is required");
            out.push_back(this->section(node[i], section, team_fields()));
            if (!names.insert(out.back().name).second)
                fail(node[i]["name"], "duplicate team name `" + out.back().name + "`");
        }
        return out;
    }

    // Each guardrail checks something (detectors or a webhook), and its rules build together:
    // the same build the gateway does per configuration generation, so it cannot fail there.
    std::vector<guardrail_config> guardrails(const YAML::Node& node) const {
        if (!node.IsSequence()) fail(node, "`guardrails` must be a list");
        std::vector<guardrail_config> out;
        std::set<std::string> names;
        for (std::size_t i = 0; i < node.size(); ++i) {
            std::string at = "guardrails[" + std::to_string(i) + "]";
            const auto& n = node[i];
            if (n.IsMap() && !n["name"]) fail(n, at + ": `name` is required");
            auto g = section(n, at, guardrail_fields());
            if (g.detect.empty() && g.regex.empty() && !g.webhook && !g.model_check)
                fail(n, at + ": `" + g.name +
                            "` checks nothing: give it `detect`, `regex`, `webhook` or "
                            "`model_check`");
            if (g.webhook && g.model_check)
                fail(n, at + ": `" + g.name +
                            "` asks one outside check: `webhook` or `model_check`, not both");
            if (auto built = detection::detectors::make(g.detect, g.regex); !built)
                fail(n, at + ": " + built.error);
            if (!names.insert(g.name).second)
                fail(n["name"], "duplicate guardrail name `" + g.name + "`");
            out.push_back(std::move(g));
        }
        return out;
    }

    mcp_serve_config mcp_serve(const YAML::Node& node) const {
        auto m = section(node, "mcp", mcp_serve_fields());
        if (m.serve && m.model.empty())
            fail(node, "`mcp.serve: true` needs `mcp.model`: the model the workflows' chats use");
        return m;
    }

    gateway_config root(const YAML::Node& node) const {
        if (!node.IsDefined() || node.IsNull()) fail(node, "the file is empty");
        check_keys(node, "top level",
                   {"server", "upstreams", "routes", "health", "logging", "context", "metrics",
                    "admin", "limits", "cache", "tracing", "mcp_servers", "mcp", "pricing", "auth",
                    "teams", "guardrails"});
        gateway_config c;
        c.source = source();
        if (auto n = node["server"]) c.server = section(n, "server", server_fields());
        auto ups = node["upstreams"];
        if (!ups) fail(node, "`upstreams` is required: at least one upstream to forward to");
        if (!ups.IsSequence() || ups.size() == 0) fail(ups, "`upstreams` must be a non-empty list");
        std::set<std::string> names;
        std::vector<bool> models_given;
        for (std::size_t i = 0; i < ups.size(); ++i) {
            c.upstreams.push_back(upstream(ups[i], i));
            models_given.push_back(ups[i].IsMap() && ups[i]["models"].IsDefined());
            if (!names.insert(c.upstreams.back().name).second)
                fail(ups[i]["name"], "duplicate upstream name `" + c.upstreams.back().name + "`");
        }
        if (auto n = node["routes"]) c.routes = routes(n, c.upstreams, models_given);
        if (auto n = node["health"]) {
            c.health = section(n, "health", health_fields());
            if (c.health.max_cooldown < c.health.cooldown)
                fail(n, "`health.max_cooldown` must not be shorter than `health.cooldown`");
        }
        if (auto n = node["logging"]) c.logging = section(n, "logging", logging_fields());
        if (auto n = node["context"]) c.context = context(n);
        if (auto n = node["metrics"]) c.metrics = section(n, "metrics", metrics_fields());
        if (auto n = node["admin"]) c.admin = section(n, "admin", admin_fields());
        if (auto n = node["limits"]) c.limits = limits(n);
        if (auto n = node["cache"]) {
            c.cache = section(n, "cache", cache_fields());
            auto url = c.cache.redis_url.empty() ? c.limits.redis_url : c.cache.redis_url;
            if (c.cache.backend == cache_backend::redis && !url.starts_with("redis://"))
                fail(n,
                     "`cache.backend: redis` needs `cache.redis_url` (or `limits.redis_url`): "
                     "redis://host:port");
        }
        if (auto n = node["tracing"]) {
            c.tracing = section(n, "tracing", tracing_fields());
            if (const auto& url = c.tracing.otlp_endpoint; !url.empty()) {
                auto endpoint = parse_base_url(url);
                if (!endpoint) {
                    bool credentials = endpoint.error.find("credentials") != std::string::npos;
                    fail(n["otlp_endpoint"],
                         "`tracing.otlp_endpoint`: `" + mask_url_password(url) + "` " +
                             (credentials ? "must not contain credentials; send them in "
                                            "`tracing.headers`"
                                          : endpoint.error + " (such as http://127.0.0.1:4318)"));
                }
                c.tracing.endpoint = *endpoint.value;
                // The collector's base URL: OTLP/HTTP takes traces at /v1/traces below it.
                if (c.tracing.endpoint.base_path.empty())
                    c.tracing.endpoint.base_path = "/v1/traces";
            }
        }
        if (auto n = node["mcp_servers"]) {
            if (!n.IsSequence()) fail(n, "`mcp_servers` must be a list");
            std::set<std::string> servers;
            for (std::size_t i = 0; i < n.size(); ++i) {
                c.mcp_servers.push_back(mcp_server(n[i], i));
                if (!servers.insert(c.mcp_servers.back().name).second)
                    fail(n[i]["name"],
                         "duplicate MCP server name `" + c.mcp_servers.back().name + "`");
            }
        }
        if (auto n = node["mcp"]) c.mcp = mcp_serve(n);
        if (auto n = node["pricing"]) c.pricing = pricing(n, names);
        if (auto n = node["auth"]) c.auth = section(n, "auth", auth_fields());
        if (auto n = node["teams"]) c.teams = teams(n);
        if (auto n = node["guardrails"]) c.guardrails = guardrails(n);
        // A declared key's team must be declared too: a misspelt one would bound nothing.
        for (std::size_t i = 0; i < c.admin.keys.size(); ++i) {
            const auto& team = c.admin.keys[i].team;
            bool known = team.empty();
            for (const auto& t : c.teams) known = known || t.name == team;
            if (!known)
                fail(node["admin"]["keys"][i]["team"], "admin.keys[" + std::to_string(i) +
                                                           "]: no team in `teams` is named `" +
                                                           team + "`");
        }
        return c;
    }
};

}  // namespace

namespace {

parsed<gateway_config> load(const std::string& yaml, const std::string& source,
                            const std::string& base) {
    try {
        YAML::Node node = YAML::Load(yaml);
        return {loader(source, base).root(node), {}};
    } catch (const load_error& e) {
        return parsed<gateway_config>::fail(e.message);
    } catch (const YAML::Exception& e) {
        // yaml-cpp's marks are 0-based; its own message already carries the text.
        std::string where = source;
        if (e.mark.line >= 0) where += ":" + std::to_string(e.mark.line + 1);
        return parsed<gateway_config>::fail(where + ": " + e.msg);
    }
}

}  // namespace

parsed<gateway_config> load_string(const std::string& yaml, const std::string& source) {
    return load(yaml, source, "");
}

parsed<gateway_config> load_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return parsed<gateway_config>::fail(path + ": cannot open the file");
    std::ostringstream text;
    text << in.rdbuf();
    std::error_code ec;
    auto folder = std::filesystem::absolute(path, ec).parent_path().string();
    return load(text.str(), path, folder);
}

}  // namespace gateway::config
