// Every configuration section's fields, declared once (schema.hpp says what drives what). The
// order is the order of the valid keys in an unknown-key error and of check-config's lines; a
// field that depends on another (tool_calling's default on provider) comes after it.
#include "gateway/config/field_kinds.hpp"
#include "gateway/config/google_key_file.hpp"

#include <array>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace gateway::config {

namespace field_kinds {

std::string listen_text(const listen_address& a) {
    return a.host + ":" + std::to_string(a.port);
}

void check_secret(const yaml_reader& r, const YAML::Node& n, const std::string& key,
                  std::string_view what) {
    bool hashed = key.starts_with("sha256:");
    if (hashed &&
        (key.size() != 7 + 64 || key.find_first_not_of("0123456789abcdef", 7) != key.npos))
        r.fail(n, "`" + std::string(what) +
                      "`: a hashed key is `sha256:` and 64 lowercase hex digits");
    if (!hashed && key.size() < 16)
        r.fail(n, "`" + std::string(what) + "`: keys must be at least 16 characters");
}

std::string flow_map(const std::vector<std::pair<std::string, std::string>>& pairs,
                     bool mask_values) {
    std::string out = "{";
    for (const auto& [name, value] : pairs) {
        if (out.size() > 1) out += ", ";
        out += quoted(name) + ": " + (mask_values ? std::string("\"***\"") : quoted(value));
    }
    return out + "}";
}

approval_policy read_approval(const yaml_reader& r, const YAML::Node& n, std::string_view label) {
    static const std::vector<std::pair<std::string_view, approval_policy>> approval_spellings{
        {"always", approval_policy::always},
        {"never", approval_policy::never},
        {"ask", approval_policy::ask}};
    std::vector<std::string_view> options;
    for (const auto& [text, value] : approval_spellings) options.push_back(text);
    return approval_spellings[r.one_of(n, label, options)].second;
}

void read_budget(const yaml_reader& r, const YAML::Node& b, std::string_view example,
                 std::uint64_t& usd_nano, budget_period& period) {
    if (auto n = b["usd"]) {
        auto text = r.scalar(n, "usd");
        auto usd = parse_usd(text);
        if (!usd)
            r.fail(n, "`budget.usd`: `" + text + "` must be an amount of USD such as " +
                          std::string(example) + " (up to 9 decimals)");
        usd_nano = *usd;
    }
    if (auto n = b["period"])
        period = std::array{
            budget_period::day, budget_period::week,
            budget_period::month}[r.one_of(n, "budget.period", {"day", "week", "month"})];
}

}  // namespace field_kinds

namespace {

using namespace schema;
using namespace field_kinds;

}  // namespace

std::string schema::flow_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quoted(items[i]);
    return out + "]";
}

const fields<server_config>& server_fields() {
    using S = server_config;
    static const fields<S> all{
        {"listen", "host:port the gateway listens on",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             auto text = r.scalar(n, "listen");
             auto address = parse_listen(text);
             if (!address) r.fail(n, "`listen`: `" + text + "` is not host:port");
             s.listen = *address;
         },
         [](const S& s) { return listen_text(s.listen); }},
        count_field("workers", &S::workers, 0, 256, "worker threads; 0: one per core"),
        size_field("header_limit", &S::header_limit, "request line and headers", 1024, "1KiB"),
        size_field("body_limit", &S::body_limit, "request body"),
        duration_field("header_timeout", &S::header_timeout, "a whole header within", true),
        duration_field("body_timeout", &S::body_timeout, "a whole body within", true),
        duration_field("keep_alive_timeout", &S::keep_alive_timeout, "idle between requests", true),
        duration_field("write_timeout", &S::write_timeout, "each write must progress within", true),
        duration_field("drain_time", &S::drain_time, "on SIGTERM, for in-flight requests"),
        count_field("max_requests_per_connection", &S::max_requests_per_connection, 1, 100'000'000,
                    "then the connection is closed"),
        duration_field("sse_heartbeat", &S::sse_heartbeat, "keep-alive comments; 0: off"),
        bool_field("websocket_tunnel", &S::websocket_tunnel, "tunnel Upgrade: websocket"),
        bool_field("console", &S::console, "serve the web console at /console/"),
        list_field("allowed_hosts", &S::allowed_hosts, "Host/Origin names served besides IPs"),
    };
    return all;
}

const fields<upstream_config>& upstream_fields() {
    using S = upstream_config;
    static const fields<S> all{
        text_field("name", &S::name, "the upstream's name (logs, metrics, errors)"),
        {"base_url", "where requests go, with the API's base path",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.base_url = r.scalar(n, "base_url");
             auto endpoint = parse_base_url(s.base_url);
             if (!endpoint)
                 r.fail(n, "`base_url`: `" + mask_url_password(s.base_url) + "` " + endpoint.error);
             s.endpoint = *endpoint.value;
         },
         [](const S& s) { return quoted(s.base_url); }},
        text_field("api_key", &S::api_key, "the provider key (auth: replace)",
                   [](const std::string& key) { return key.empty() ? "" : "***"; }),
        choice_field<S, auth_mode>(
            "auth", &S::auth, {{"forward", auth_mode::forward}, {"replace", auth_mode::replace}},
            "forward the client's key, or replace it with api_key"),
        {"models", "model name globs routed here; the first matching upstream wins",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             if (!n.IsSequence() || n.size() == 0)
                 r.fail(n, "`models` must be a non-empty list of model name globs");
             s.models.clear();
             for (const auto& m : n) s.models.push_back(r.scalar(m, "models"));
         },
         // None: only routes reach it (it was a route's target without `models`).
         [](const S& s) { return s.models.empty() ? std::string() : flow_list(s.models); }},
        duration_field("model_list_ttl", &S::model_list_ttl,
                       "its own model list kept for /v1/models; 0: not asked"),
        duration_field("connect_timeout", &S::connect_timeout, "TCP and TLS connect", true),
        duration_field("first_byte_timeout", &S::first_byte_timeout, "request sent to header",
                       true),
        duration_field("idle_timeout", &S::idle_timeout, "between two reads of a body", true),
        count_field("max_idle_connections", &S::max_idle_connections, 0, 100'000,
                    "pooled per worker"),
        duration_field("pool_idle_timeout", &S::pool_idle_timeout, "pooled connections closed"),
        {"probe_interval", "asked for its model list this often (0: never; unset: health's)",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.probe_interval = r.get_duration(n, "probe_interval");
         },
         [](const S& s) {
             return s.probe_interval ? format_duration(*s.probe_interval) : std::string();
         }},
        ca_file_field(&S::ca_file, "CA bundle for this upstream; empty: the system store"),
        bool_field("tls_insecure", &S::tls_insecure, "skip certificate checks (development)"),
        bool_field("json_schema", &S::json_schema, "the agent may send response_format"),
        count_field("context_budget", &S::context_budget, 0, 100'000'000,
                    "agent requests stay within this many tokens; 0: no limit"),
        {"provider", "openai | anthropic | gemini | bedrock | vertex | azure: dialect or host",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             // A host names its default dialect beside it (dialect_for: claude-* on Vertex
             // speaks Anthropic's).
             struct spelling {
                 provider_kind dialect;
                 hosting host;
             };
             static const std::vector<std::string_view> options{"openai",  "anthropic", "gemini",
                                                                "bedrock", "vertex",    "azure"};
             static constexpr spelling meant[] = {
                 {provider_kind::openai, hosting::direct},
                 {provider_kind::anthropic, hosting::direct},
                 {provider_kind::gemini, hosting::direct},
                 {provider_kind::bedrock, hosting::direct},
                 {provider_kind::gemini, hosting::vertex},
                 {provider_kind::openai, hosting::azure},
             };
             auto chosen = meant[r.one_of(n, "provider", options)];
             s.provider = chosen.dialect;
             s.host = chosen.host;
             // tool_calling (read after) defaults by provider; Azure serves OpenAI's own models,
             // which call tools.
             s.tool_calling = s.provider == provider_kind::openai && s.host != hosting::azure
                                  ? tool_calling_mode::json
                                  : tool_calling_mode::native;
         },
         [](const S& s) {
             if (s.host == hosting::vertex) return std::string("vertex");
             if (s.host == hosting::azure) return std::string("azure");
             return std::string(provider_kind_name(s.provider));
         }},
        {"project", "vertex: the Google Cloud project its paths name",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.project = r.scalar(n, "project");
         },
         [](const S& s) { return s.project.empty() ? std::string() : quoted(s.project); }},
        {"location", "vertex: its region (us-east5, europe-west1) or global",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.location = r.scalar(n, "location");
         },
         [](const S& s) { return s.location.empty() ? std::string() : quoted(s.location); }},
        {"api_version", "azure: the deployments API's api-version (2024-10-21), or v1",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.api_version = r.scalar(n, "api_version");
         },
         [](const S& s) { return s.api_version.empty() ? std::string() : quoted(s.api_version); }},
        {"deployments", "azure: model name -> deployment name (default: the model's own)",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             if (!n.IsMap())
                 r.fail(n, "`deployments` must map model names to Azure deployment names");
             for (const auto& entry : n)
                 s.deployments.emplace_back(r.scalar(entry.first, "deployments"),
                                            r.scalar(entry.second, "deployments"));
         },
         [](const S& s) {
             return s.deployments.empty() ? std::string() : flow_map(s.deployments, false);
         }},
        {"credentials_file",
         "vertex: a service account's key file (or gcloud's application default credentials); "
         "unset: GOOGLE_APPLICATION_CREDENTIALS, then the metadata server",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.credentials_file = r.path(n, "credentials_file");
             // Read now: a broken key file is refused at start and by check-config, with what is
             // wrong in it, rather than at the first request.
             auto key = google::read_key_file(s.credentials_file);
             if (!key) r.fail(n, "`credentials_file`: " + key.error);
         },
         [](const S& s) {
             return s.credentials_file.empty() ? std::string() : quoted(s.credentials_file);
         }},
        {"azure",
         "azure: an Entra ID application {tenant_id, client_id, client_secret} instead of api_key",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             if (!n.IsMap())
                 r.fail(n, "`azure` must be a map such as {tenant_id, client_id, client_secret}");
             schema::read(r, n, std::string(section) + ".azure", azure_entra_fields(), s.azure);
             if (s.azure.tenant_id.empty() || s.azure.client_id.empty() ||
                 s.azure.client_secret.empty())
                 r.fail(n,
                        "`azure` needs `tenant_id`, `client_id` and `client_secret` (an Entra ID "
                        "application's)");
         },
         [](const S& s) {
             auto shown = flow(s.azure, azure_entra_fields());
             return shown == "{}" ? std::string() : shown;
         },
         true},
        {"region", "bedrock: the AWS region its requests are signed for",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.region = r.scalar(n, "region");
         },
         [](const S& s) { return s.region.empty() ? std::string() : quoted(s.region); }},
        {"aws", "bedrock: {access_key_id, secret_access_key, session_token} or {bearer_token}",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             if (!n.IsMap()) r.fail(n, "`aws` must be a map such as {access_key_id, …}");
             schema::read(r, n, std::string(section) + ".aws", aws_keys_fields(), s.aws);
             if (s.aws.access_key_id.empty() != s.aws.secret_access_key.empty())
                 r.fail(n, "`aws` needs both `access_key_id` and `secret_access_key`, or neither");
         },
         [](const S& s) {
             auto shown = flow(s.aws, aws_keys_fields());
             return shown == "{}" ? std::string() : shown;
         },
         true},
        {"model_map", "client model name -> the upstream's",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             if (!n.IsMap()) r.fail(n, "`model_map` must map client model names to upstream names");
             for (const auto& entry : n)
                 s.model_map.emplace_back(r.scalar(entry.first, "model_map"),
                                          r.scalar(entry.second, "model_map"));
         },
         [](const S& s) { return flow_map(s.model_map, false); }},
        choice_field<S, tool_calling_mode>(
            "tool_calling", &S::tool_calling,
            {{"native", tool_calling_mode::native}, {"json", tool_calling_mode::json}},
            "the agent's tool protocol"),
        choice_field<S, bool>("stream_usage", &S::inject_stream_usage,
                              {{"pass", false}, {"inject", true}},
                              "inject: ask streamed completions for their usage"),
        choice_field<S, bool>("responses", &S::translate_responses,
                              {{"native", false}, {"translate", true}},
                              "translate: answer /v1/responses from the upstream's Chat "
                              "Completions"),
        cache_policy_field(&S::cache),
    };
    return all;
}

const fields<aws_keys>& aws_keys_fields() {
    using S = aws_keys;
    // Shown as *** when set, left out when not.
    auto secret = [](std::string_view name, std::string S::*m, std::string_view about) {
        auto f = text_field(name, m, about, [](const std::string&) { return "***"; });
        f.print = [m](const S& s) { return (s.*m).empty() ? std::string() : quoted("***"); };
        return f;
    };
    static const fields<S> all{
        secret("access_key_id", &S::access_key_id, "signs its requests, with the secret"),
        secret("secret_access_key", &S::secret_access_key, "the access key's secret"),
        secret("session_token", &S::session_token, "temporary keys' token"),
        secret("bearer_token", &S::bearer_token, "a Bedrock API key instead of signing"),
    };
    return all;
}

const fields<azure_entra>& azure_entra_fields() {
    using S = azure_entra;
    // Left out when not set; the secret shown as ***.
    auto optional = [](std::string_view name, std::string S::*m, std::string_view about,
                       bool secret) {
        auto f = text_field(name, m, about);
        f.print = [m, secret](const S& s) {
            return (s.*m).empty() ? std::string() : quoted(secret ? "***" : s.*m);
        };
        f.secret = secret;
        return f;
    };
    static const fields<S> all{
        optional("tenant_id", &S::tenant_id, "the directory (tenant) id", false),
        optional("client_id", &S::client_id, "the application (client) id", false),
        optional("client_secret", &S::client_secret, "the application's secret", true),
        optional("authority_host", &S::authority_host,
                 "unset: AZURE_AUTHORITY_HOST, then https://login.microsoftonline.com", false),
    };
    return all;
}

const fields<logging_config>& logging_fields() {
    using S = logging_config;
    static const fields<S> all{
        choice_field<S, log_level>("level", &S::level,
                                   {{"debug", log_level::debug},
                                    {"info", log_level::info},
                                    {"warn", log_level::warn},
                                    {"error", log_level::error}},
                                   "the least severe line written"),
        bool_field("access_log", &S::access_log, "one line per request"),
        choice_field<S, log_format>("format", &S::format,
                                    {{"text", log_format::text}, {"json", log_format::json}},
                                    "text | json lines"),
    };
    return all;
}

const fields<metrics_config>& metrics_fields() {
    using S = metrics_config;
    static const fields<S> all{
        bool_field("enabled", &S::enabled, "serve /metrics"),
        {"listen", "serve /metrics only on this host:port; empty: on server.listen",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             auto text = r.scalar(n, "listen");
             if (text.empty()) return;
             auto address = parse_listen(text);
             if (!address) r.fail(n, "`metrics.listen`: `" + text + "` is not host:port");
             s.listen = *address;
         },
         [](const S& s) { return quoted(s.listen ? listen_text(*s.listen) : ""); }},
        bool_field("key_labels", &S::key_labels, "per-virtual-key series"),
    };
    return all;
}

const fields<virtual_key>& virtual_key_fields() {
    using S = virtual_key;
    static const fields<S> all{
        {"name", "1-64 letters, digits, _ - .",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             s.name = r.scalar(n, "name");
             if (!valid_key_name(s.name))
                 r.fail(n, std::string(section) + ": `name` must be " + std::string(key_name_rule));
             s.id = "cfg-" + s.name;
         },
         [](const S& s) { return quoted(s.name); }},
        // The configured key is kept only as its digest, as a key made through /admin/keys is.
        {"key", "the key, or sha256:<hex> of it",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             auto key = r.scalar(n, "key");
             check_secret(r, n, key, std::string(section) + ".key");
             s.digest = hashed_key(key);
         },
         [](const S& s) { return quoted(s.digest); }, true},
        list_field("models", &S::models, "globs; empty: every model"),
        count_field("rpm", &S::rpm, 0, 1'000'000'000'000, "requests per minute; 0: no limit"),
        count_field("tpm", &S::tpm, 0, 1'000'000'000'000, "tokens per minute; 0: no limit"),
        count_field("max_parallel", &S::max_parallel, 0, 1'000'000'000'000,
                    "requests in flight at once; 0: no limit"),
        {"budget", "{usd, tokens, period: day | week | month}",
         [](const yaml_reader& r, const YAML::Node& b, std::string_view section, S& s) {
             r.check_keys(b, std::string(section) + ".budget", {"usd", "tokens", "period"});
             read_budget(r, b, "25.00", s.budget_usd_nano, s.budget_period);
             if (auto n = b["tokens"])
                 s.budget_tokens = r.get_count(n, "tokens", 0, 1'000'000'000'000'000);
         },
         [](const S& s) {
             return "{usd: " + usd_text(s.budget_usd_nano) +
                    ", tokens: " + std::to_string(s.budget_tokens) +
                    ", period: " + std::string(budget_period_name(s.budget_period)) + "}";
         }},
        {"expires_at", "2027-01-31 or 2027-01-31T12:00:00Z; absent: never",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             auto text = r.scalar(n, "expires_at");
             auto at = parse_time(text);
             if (!at)
                 r.fail(n, "`expires_at`: `" + text +
                               "` is not a time (2027-01-31 or 2027-01-31T12:00:00Z)");
             s.expires_at = *at;
         },
         [](const S& s) { return s.expires_at ? format_time(s.expires_at) : std::string(); }},
        // Checked against `teams:` by the loader, which reads them after `admin`.
        {"team", "a declared team that owns the key: its budget and models bound it too",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.team = r.scalar(n, "team");
         },
         [](const S& s) { return s.team.empty() ? std::string() : quoted(s.team); }},
    };
    return all;
}

const fields<budget_alerts_config>& budget_alerts_fields() {
    using S = budget_alerts_config;
    static const fields<S> all{
        {"thresholds", "percent of a key's USD budget, ascending, 1-100",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             if (!n.IsSequence() || n.size() == 0)
                 r.fail(n, "`thresholds` must be a list of percentages such as [50, 80, 100]");
             s.thresholds.clear();
             for (const auto& item : n) {
                 auto percent = r.get_unsigned(item, "thresholds", 1, 100);
                 if (!s.thresholds.empty() && percent <= s.thresholds.back())
                     r.fail(item, "`thresholds` must be ascending, each once");
                 s.thresholds.push_back(percent);
             }
         },
         [](const S& s) {
             std::string out = "[";
             for (auto t : s.thresholds) out += (out.size() > 1 ? ", " : "") + std::to_string(t);
             return out + "]";
         }},
        // A chat tool's webhook URL holds its token in the path: printed as its origin only.
        {"webhook", "http(s) URL each alert is posted to as JSON; empty: the log only",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.webhook = r.scalar(n, "webhook");
             if (s.webhook.empty()) return;
             auto endpoint = parse_base_url(s.webhook);
             if (!endpoint)
                 r.fail(n, "`budget_alerts.webhook`: " + endpoint.error +
                               " (such as https://hooks.example.com/contextgate)");
             s.endpoint = *endpoint.value;
         },
         [](const S& s) {
             if (s.webhook.empty()) return quoted("");
             const auto& e = s.endpoint;
             return quoted((e.tls ? "https://" : "http://") + e.host + ":" +
                           std::to_string(e.port) + (e.base_path.empty() ? "" : "/***"));
         },
         true},
        duration_field("timeout", &S::timeout, "one post, connecting included", true),
    };
    return all;
}

const fields<admin_config>& admin_fields() {
    using S = admin_config;
    static const fields<S> all{
        {"api_key", "Bearer key for /admin; empty: no /admin",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.api_key = r.scalar(n, "api_key");
             if (!s.api_key.empty()) check_secret(r, n, s.api_key, "admin.api_key");
         },
         [](const S& s) { return quoted(s.api_key.empty() ? "" : hashed_key(s.api_key)); }, true},
        {"keys", "declared virtual keys",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             if (!n.IsSequence()) r.fail(n, "`admin.keys` must be a list");
             std::set<std::string> names;
             for (std::size_t i = 0; i < n.size(); ++i) {
                 std::string section = "admin.keys[" + std::to_string(i) + "]";
                 if (!n[i]["name"]) r.fail(n[i], section + ": `name` is required");
                 if (!n[i]["key"]) r.fail(n[i], section + ": `key` is required");
                 virtual_key k;
                 schema::read(r, n[i], section, virtual_key_fields(), k);
                 if (!names.insert(k.name).second)
                     r.fail(n[i]["name"], "duplicate key name `" + k.name + "`");
                 s.keys.push_back(std::move(k));
             }
         },
         [](const S& s) {
             if (s.keys.empty()) return std::string("[]");
             std::ostringstream out;
             for (const auto& k : s.keys)
                 schema::print(out, k, virtual_key_fields(), "      ", "    - ");
             auto text = "\n" + out.str();
             text.pop_back();  // print() ends each line; the caller ends this one
             return text;
         }},
        count_field("budget_default_output_tokens", &S::budget_default_output_tokens, 0, 10'000'000,
                    "output tokens a USD budget reserves for a request that sets no max_tokens"),
        {"budget_alerts", "{thresholds, webhook, timeout}: spend passing shares of a USD budget",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             if (!n.IsMap())
                 r.fail(n, "`admin.budget_alerts` must be a map such as {webhook: URL}");
             schema::read(r, n, "admin.budget_alerts", budget_alerts_fields(), s.budget_alerts);
         },
         [](const S& s) { return flow(s.budget_alerts, budget_alerts_fields()); }},
    };
    return all;
}

const fields<limits_config>& limits_fields() {
    using S = limits_config;
    static const fields<S> all{
        choice_field<S, limits_backend>(
            "backend", &S::backend,
            {{"memory", limits_backend::memory}, {"redis", limits_backend::redis}},
            "memory (one process) | redis (shared)", "limits.backend"),
        text_field("redis_url", &S::redis_url, "redis://[:password@]host[:port][/db]",
                   mask_url_password),
        duration_field("redis_timeout", &S::redis_timeout, "one Redis round trip"),
    };
    return all;
}

const fields<store_config>& store_fields() {
    using S = store_config;
    static const fields<S> all{
        choice_field<S, store_type>(
            "type", &S::type, {{"sqlite", store_type::sqlite}, {"postgres", store_type::postgres}},
            "sqlite (one gateway) | postgres (replicas)", "context.store.type"),
        text_field("dsn", &S::dsn, "postgres://user:password@host:port/database",
                   mask_url_password),
        {"lease_timeout", "a dead replica's runs are taken over within this",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.lease_timeout = r.get_duration(n, "lease_timeout");
             if (s.lease_timeout < duration(1'000))
                 r.fail(n, "`context.store.lease_timeout` must be at least 1s");
         },
         [](const S& s) { return format_duration(s.lease_timeout); }},
    };
    return all;
}

const fields<context_config>& context_fields() {
    using S = context_config;
    static const fields<S> all{
        path_field("data_dir", &S::data_dir, "the SQLite file and the lock live here"),
        {"workspaces", "absolute paths a chat's workspace must be in",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.workspaces = r.string_list(n, "workspaces");
             for (std::size_t i = 0; i < s.workspaces.size(); ++i)
                 if (s.workspaces[i].empty() || s.workspaces[i].front() != '/')
                     r.fail(n[i],
                            "`workspaces`: `" + s.workspaces[i] + "` must be an absolute path");
         },
         [](const S& s) { return flow_list(s.workspaces); }},
        {"api_keys", "Bearer keys for /context; empty: open",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.api_keys = r.string_list(n, "api_keys");
             for (std::size_t i = 0; i < s.api_keys.size(); ++i)
                 check_secret(r, n[i], s.api_keys[i], "api_keys");
         },
         [](const S& s) {
             std::vector<std::string> hashed;
             for (const auto& k : s.api_keys) hashed.push_back(hashed_key(k));
             return flow_list(hashed);
         },
         true},
        path_field("prompts_dir", &S::prompts_dir, "prompts/*.md; empty: the shipped ones"),
        path_field("workflows_dir", &S::workflows_dir, "workflows/*.yaml; empty: the shipped ones"),
        text_field("default_prompt", &S::default_prompt, "a new chat's prompt"),
        count_field("max_steps", &S::max_steps, 1, 1000, "tool steps per run"),
        duration_field("max_wall_time", &S::max_wall_time, "per run, not waiting for approval",
                       true),
        count_field("max_retries", &S::max_retries, 0, 20, "re-asks after malformed output"),
        count_field("identical_call_warn", &S::identical_call_warn, 2, 100,
                    "identical calls in a row: warn"),
        count_field("identical_call_stop", &S::identical_call_stop, 2, 100, "... and stop"),
        count_field("max_tool_errors", &S::max_tool_errors, 1, 100, "failing calls in a row"),
        duration_field("approval_timeout", &S::approval_timeout, "a pending approval fails", true),
        count_field("model_retries", &S::model_retries, 0, 10, "retries of a model call"),
        {"approvals", "per tool: ask | always | never",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             if (!n.IsMap()) r.fail(n, "`approvals` must map tool names to always, never or ask");
             for (const auto& entry : n) {
                 auto tool = entry.first.as<std::string>();
                 s.approvals.emplace_back(tool,
                                          read_approval(r, entry.second, "approvals." + tool));
             }
         },
         [](const S& s) {
             std::string out = "{";
             for (const auto& [tool, policy] : s.approvals)
                 out += (out.size() > 1 ? ", " : "") + quoted(tool) + ": " + approval_name(policy);
             return out + "}";
         }},
        size_field("max_message_bytes", &S::max_message_bytes, "a user message; larger: 413"),
        count_field("max_watchers_per_run", &S::max_watchers_per_run, 1, 10'000,
                    "event streams per run"),
        size_field("event_excerpt_bytes", &S::event_excerpt_bytes, "longer event strings cut", 256),
        {"store", "{type, dsn, lease_timeout}",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             schema::read(r, n, "context.store", store_fields(), s.store);
             if (s.store.type == store_type::postgres &&
                 !(s.store.dsn.starts_with("postgres://") ||
                   s.store.dsn.starts_with("postgresql://")))
                 r.fail(n["dsn"].IsDefined() ? n["dsn"] : n,
                        "`context.store.type: postgres` needs `dsn: "
                        "postgres://user:password@host:port/database` (is the variable it names "
                        "set?)");
         },
         [](const S& s) { return flow(s.store, store_fields()); }},
    };
    return all;
}

const fields<tracing_config>& tracing_fields() {
    using S = tracing_config;
    static const fields<S> all{
        text_field("otlp_endpoint", &S::otlp_endpoint,
                   "http(s)://host:4318: where spans go as OTLP/HTTP (\"\": no tracing)",
                   mask_url_password),
        {"sample_ratio", "the share of new traces recorded, 0 to 1",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             auto text = r.scalar(n, "sample_ratio");
             double value = -1;
             auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
             if (ec != std::errc{} || end != text.data() + text.size() || !(value >= 0) ||
                 value > 1)
                 r.fail(n, "`sample_ratio` must be a number from 0 to 1, such as 0.25");
             s.sample_ratio = value;
         },
         [](const S& s) {
             std::ostringstream out;
             out << s.sample_ratio;
             return out.str();
         }},
        bool_field("capture_content", &S::capture_content,
                   "spans carry the messages, answers and tool arguments"),
        text_field("service_name", &S::service_name, "the spans' service.name"),
        masked_map_field("headers", &S::headers, "sent with every export (an API key)"),
        ca_file_field(&S::ca_file,
                      "https: CA bundle the collector is verified with; empty: the "
                      "system store"),
        count_field("max_queue_spans", &S::max_queue_spans, 1, 1'000'000,
                    "finished spans waiting to be sent; more are dropped"),
        duration_field("export_interval", &S::export_interval,
                       "a batch is sent at least this often", true),
    };
    return all;
}

}  // namespace gateway::config
