#pragma once

#include "gateway/config/virtual_key.hpp"
#include "gateway/detection/custom_rule.hpp"
#include "gateway/edit_mode.hpp"
#include "gateway/parsed.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::config {

using duration = std::chrono::milliseconds;

// Where the gateway accepts connections. Port 0 asks the kernel for a free port.
struct listen_address {
    std::string host = "127.0.0.1";
    std::uint16_t port = 8080;
};

struct server_config {
    listen_address listen;
    unsigned workers = 0;                       // 0: one per hardware thread
    std::size_t header_limit = 64 * 1024;       // bytes of request line + headers
    std::size_t body_limit = 32 * 1024 * 1024;  // bytes of request body
    duration header_timeout{30'000};            // a client must send a whole header in this time
    duration body_timeout{60'000};              // ... and a whole body in this time
    duration keep_alive_timeout{75'000};        // idle time between requests on one connection
    duration write_timeout{60'000};             // each write to a client must progress in this time
    duration drain_time{10'000};  // on SIGTERM: how long in-flight requests may finish
    std::size_t max_requests_per_connection = 10'000;
    duration sse_heartbeat{0};     // 0: off; else `: keep-alive` while upstream is silent
    bool websocket_tunnel = true;  // Upgrade: websocket is tunnelled (else refused)
    bool console = true;           // the web console at /console/
    // Host/Origin names the gateway answers to besides IP literals, localhost and the listen
    // address (http::origin_rule); "*": any.
    std::vector<std::string> allowed_hosts;
};

enum class auth_mode { forward, replace };

// Whether answers to the requests of an upstream or a route are kept in the response cache
// (docs/operations.md, "Response cache"). ttl 0: not cached.
struct cache_policy {
    duration ttl{0};
};

// The dialect an upstream speaks: any OpenAI-compatible server, Anthropic Messages, Gemini,
// Amazon Bedrock's Converse (always translated: no client speaks it on /v1).
enum class provider_kind { openai, anthropic, gemini, bedrock };

// Where an upstream's models are hosted, when that changes its URLs and credentials but not its
// dialect: `provider: vertex` is Google Vertex AI (Gemini's generateContent, or Claude's
// rawPredict for claude-* models, under a project and location, with Google access tokens);
// `provider: azure` is Azure OpenAI (the OpenAI dialect under deployment URLs, with `api-key` or
// Entra ID tokens). The loader sets `provider` to the dialect (gemini, openai) beside it.
enum class hosting { direct, vertex, azure };

// A Bedrock upstream's `aws:` block: keys to sign with (both, or neither: then the chain of
// aws_credentials.hpp looks further), or a Bedrock API key instead of signing. Secrets.
struct aws_keys {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;
    std::string bearer_token;
};

// An Azure upstream's Entra ID application (client credentials), the alternative to `api_key`.
// The client secret is a secret. authority_host: AZURE_AUTHORITY_HOST, or
// https://login.microsoftonline.com.
struct azure_entra {
    std::string tenant_id;
    std::string client_id;
    std::string client_secret;
    std::string authority_host;
    bool configured() const { return !client_id.empty(); }
};

// How the agent loop asks a model for tool calls: the provider's own tool calling, or our JSON
// protocol in the reply text.
enum class tool_calling_mode { native, json };

// A parsed `base_url`: scheme decides TLS; `base_path` is prefixed to the part after `/v1`.
struct upstream_endpoint {
    bool tls = false;
    std::string host;
    std::uint16_t port = 80;
    std::string base_path;  // without a trailing slash, e.g. "/v1" or "/api/v1"
};

struct upstream_config {
    std::string name;
    std::string base_url;
    upstream_endpoint endpoint;
    std::string api_key;  // empty: none
    auth_mode auth = auth_mode::forward;
    provider_kind provider = provider_kind::openai;
    hosting host = hosting::direct;
    std::string region;  // bedrock: the AWS region its requests are signed for
    aws_keys aws;        // bedrock: what it signs with (empty: the standard chain)
    // vertex: the Google Cloud project and location ("global" too) its paths name, and the
    // service-account key file its tokens come from ("": GOOGLE_APPLICATION_CREDENTIALS, then the
    // metadata server).
    std::string project;
    std::string location;
    std::string credentials_file;
    // azure: the deployments API's `api-version` ("v1": the v1 API, base_url/openai/v1/…), the
    // model -> deployment names (a model not listed is its own deployment), and Entra ID.
    std::string api_version;
    std::vector<std::pair<std::string, std::string>> deployments;
    azure_entra azure;
    std::vector<std::string> models{"*"};  // globs; first matching upstream wins
    // The client's model name -> the upstream's (the rest go as they are).
    std::vector<std::pair<std::string, std::string>> model_map;
    // How long its own model list, asked of it for /v1/models when `models` holds a glob, is
    // kept before it is asked again; 0: it is not asked.
    duration model_list_ttl{300'000};
    // Default: native for anthropic and gemini, json for openai (many compatible servers have
    // no tool support).
    tool_calling_mode tool_calling = tool_calling_mode::json;
    duration connect_timeout{10'000};
    duration first_byte_timeout{600'000};   // request sent -> response header complete
    duration idle_timeout{300'000};         // between two reads of a response body
    std::size_t max_idle_connections = 64;  // per worker thread
    duration pool_idle_timeout{60'000};     // pooled connections older than this are closed
    bool json_schema = false;  // the agent loop may send response_format: {type: json_schema}
    // The agent loop keeps each model request within this many tokens, estimated as bytes / 4:
    // older turns of the chat are left out, oldest first. 0: no limit.
    std::size_t context_budget = 100'000;
    std::string ca_file;        // empty: the system CA store
    bool tls_insecure = false;  // skip certificate verification (development only)
    // inject: a streamed Chat Completions request without stream_options gets
    // `stream_options: {include_usage: true}`, so its tokens are counted (the one change the
    // gateway may make to a forwarded body; off by default).
    bool inject_stream_usage = false;
    // translate: /v1/responses is answered by translating to the upstream's Chat Completions
    // (for OpenAI-compatible servers without a Responses endpoint); native (the default) passes
    // it through. Anthropic and Gemini upstreams are always translated.
    bool translate_responses = false;
    cache_policy cache;  // for requests that reach it without a route of their own
    // How often the gateway asks it for its model list to learn its health (docs/routing.md);
    // unset: health.probe_interval; 0: never.
    std::optional<duration> probe_interval;
};

enum class log_level { debug, info, warn, error };

enum class log_format { text, json };

struct logging_config {
    log_level level = log_level::info;
    bool access_log = true;
    log_format format = log_format::text;
};

// GET /metrics in Prometheus text format.
struct metrics_config {
    bool enabled = true;
    std::optional<listen_address> listen;  // set: served there only, not on server.listen
    bool key_labels = false;               // per-virtual-key series (one per key)
};

// When a key's spend in a period crosses a share of its USD budget: a warning in the log, once
// per key, period and threshold, and a JSON event posted to `webhook` when one is set.
struct budget_alerts_config {
    std::vector<unsigned> thresholds{50, 80, 100};  // percent of the budget, ascending
    std::string webhook;                            // http(s) URL; "": the log only
    upstream_endpoint endpoint;                     // webhook, parsed
    duration timeout{5'000};                        // one post, connection included
};

struct admin_config {
    std::string api_key;  // Bearer key for /admin (16+ characters or sha256:<hex>); "": no /admin
    std::vector<virtual_key> keys;  // declared keys (besides those made with /admin/keys)
    // A key with a USD budget reserves a request's cost at admission: its input (its bytes / 4)
    // and its output cap (max_tokens and its kin), or this many output tokens when it sets none.
    std::uint64_t budget_default_output_tokens = 4096;
    budget_alerts_config budget_alerts;
};

enum class limits_backend { memory, redis };

struct limits_config {
    limits_backend backend = limits_backend::memory;
    std::string redis_url;  // redis://[:password@]host[:port][/db]
    duration redis_timeout{250};
};

// Where the response cache keeps answers, and whose answers may serve whom.
enum class cache_backend { memory, redis };

struct cache_config {
    cache_backend backend = cache_backend::memory;
    std::size_t max_bytes = 64 * 1024 * 1024;   // memory: least recently used entries go first
    std::size_t max_entry_bytes = 1024 * 1024;  // a larger answer is not stored
    std::string redis_url;                      // redis: "" takes limits.redis_url
    // Entries are kept per caller (the virtual key and its secret, and every credential the
    // request presents); true: one namespace for everyone the gateway lets through.
    bool shared = false;
};

// OpenTelemetry traces (docs/operations.md): spans for requests, upstream attempts and agent runs,
// sent as OTLP/HTTP protobuf from a thread of the gateway's own. Off while `otlp_endpoint` is "".
struct tracing_config {
    // http(s)://host:port, and a path; without one (or "/") the spans go to /v1/traces.
    std::string otlp_endpoint;
    upstream_endpoint endpoint;  // otlp_endpoint, parsed; base_path is the path posted to
    // A new trace is recorded with this probability; a request with a `traceparent` follows its
    // sampled flag instead.
    double sample_ratio = 1.0;
    // true: the spans carry the messages sent to the models and their answers, tool arguments
    // and results. Off by default: prompts often hold what a trace store should not keep.
    bool capture_content = false;
    std::string service_name = "contextgate";                  // the resource's service.name
    std::vector<std::pair<std::string, std::string>> headers;  // sent with every export
    std::string ca_file;  // https: the collector's CA bundle; empty: the system CA store
    std::size_t max_queue_spans = 2048;  // finished spans waiting; past it they are dropped
    duration export_interval{2'000};     // a batch leaves at least this often
};

// What the agent loop does before running a tool that needs approval.
enum class approval_policy { ask, always, never };  // always: run without asking; never: refuse

// Where the Context API keeps its state. SQLite: one file in data_dir, one gateway. PostgreSQL:
// several gateways (replicas) share runs; each run is driven by the replica holding its lease.
enum class store_type { sqlite, postgres };

struct store_config {
    store_type type = store_type::sqlite;
    std::string dsn;                 // postgres: postgres://user:password@host:port/database
    duration lease_timeout{15'000};  // a dead replica's runs are taken over within this
};

// The Context API and its agent loop.
struct context_config {
    // Relative paths in a configuration file are taken from the file's folder.
    std::string data_dir = "var";  // the SQLite file lives here
    store_config store;
    std::vector<std::string> workspaces;  // a chat's workspace must be one of these or beneath
    std::vector<std::string> api_keys;    // empty: /context is open; "sha256:<hex>" = hashed
    std::string prompts_dir;              // prompts/*.md; "": the prompts shipped with the binary
    std::string workflows_dir;  // workflows/*.yaml; "": the workflows shipped with the binary
    std::string default_prompt = "coding";
    unsigned max_steps = 10;                      // tool steps per run
    duration max_wall_time{300'000};              // per run, excluding time awaiting approval
    unsigned max_retries = 3;                     // re-asks after malformed output, in a row
    unsigned identical_call_warn = 3;             // identical consecutive calls: warn the model
    unsigned identical_call_stop = 5;             // ... and stop the run
    unsigned max_tool_errors = 3;                 // consecutive failing tool calls
    duration approval_timeout{3'600'000};         // a pending approval fails the run after this
    unsigned model_retries = 3;                   // 429 / 5xx retries per model call
    std::size_t max_message_bytes = 1024 * 1024;  // a user message (or workflow input); more: 413
    unsigned max_watchers_per_run = 16;           // open event streams per run; more: 429
    std::size_t event_excerpt_bytes = 16 * 1024;  // longer strings in events are cut to this
    std::vector<std::pair<std::string, approval_policy>> approvals;  // per tool; default ask
};

// An MCP server whose tools the agent may use (docs/mcp.md). Its tools are named
// `mcp__<name>__<tool>` for the model.
enum class mcp_transport { stdio, http };

struct mcp_server_config {
    std::string name;  // letters, digits, `_` and `-`; at most 24 characters
    mcp_transport transport = mcp_transport::stdio;
    // stdio: the program (found on PATH), its arguments and variables added to the gateway's own.
    std::string command;
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;
    // http (Streamable HTTP): the endpoint and headers sent with every request.
    std::string url;
    upstream_endpoint endpoint;
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<std::string> allow{"*"};  // globs over the server's own tool names
    std::vector<std::string> deny;        // ... taken out again
    approval_policy approval = approval_policy::ask;
    duration connect_timeout{30'000};          // starting and initializing the server
    duration call_timeout{60'000};             // one tools/call; then it is cancelled
    std::size_t max_output_bytes = 64 * 1024;  // what a result may give the model
};

// The gateway's workflows offered as an MCP server at /mcp (docs/mcp.md): one tool per workflow,
// each call run in a chat of its own with these settings.
struct mcp_serve_config {
    bool serve = false;
    std::string model;          // the chats' model; required when serving
    std::string workspace;      // their workspace; "": the first of context.workspaces
    std::string system_prompt;  // "": context.default_prompt
    edit_mode edits = edit_mode::approve;
    // Names the Host and Origin headers may carry besides the loopback ones and the listen
    // address (DNS rebinding); "*" lets any through.
    std::vector<std::string> allowed_hosts;
};

enum class route_strategy { priority, weighted, least_busy, latency };

// One upstream a route may send its requests to.
struct route_target {
    std::string upstream;   // an upstream's name
    std::string model;      // the name that upstream hears; "": the client's
    unsigned weight = 1;    // for `weighted`
    std::size_t index = 0;  // the upstream's position in `upstreams` (set by the loader)
};

// A model name (or glob) and where its requests may go (docs/routing.md). Routes are consulted
// in order before the upstreams' own `models` globs, which stay the default route.
struct route_config {
    std::string model;
    route_strategy strategy = route_strategy::priority;
    std::vector<route_target> targets;
    unsigned max_attempts = 3;       // retries and fallbacks together
    duration first_byte_timeout{0};  // per attempt; 0: each upstream's own
    duration deadline{0};            // the whole request, across attempts; 0: none
    // Targets for a request its target refused as too long for its context window (a 400 that
    // says so); empty: such a 400 goes to the client like any other.
    std::vector<route_target> on_context_window;
    cache_policy cache;  // its requests' answers are cached (its upstreams' `cache` is not used)
};

// How failed targets are kept out (docs/routing.md).
struct health_config {
    duration cooldown{5'000};        // after a failure; doubled while it keeps failing
    duration max_cooldown{300'000};  // the most it grows to
    // Active probes: every upstream is asked for its model list this often (0: none, unless an
    // upstream sets its own probe_interval); a probe's answer head must come within
    // probe_timeout.
    duration probe_interval{0};
    duration probe_timeout{5'000};
};

// Prices in USD per 1M tokens (docs/operations.md "Prices and cost"). A rate not given is
// charged as pricing::cost says: cache reads and writes at the input rate, the 1-hour cache write
// at the 5-minute one, reasoning at the output rate.
struct token_rates {
    std::optional<double> input;
    std::optional<double> output;
    std::optional<double> cache_read;
    std::optional<double> cache_write;  // a 5-minute cache
    std::optional<double> cache_write_1h;
    std::optional<double> reasoning;
    bool operator==(const token_rates&) const = default;
};

// The rates of a request whose input passes `above` tokens (Gemini 2.5 Pro's and Claude
// Sonnet's above 200k); 0: no such tier.
struct price_tier {
    std::int64_t above = 0;
    token_rates rates;
    bool operator==(const price_tier&) const = default;
};

// One model's price: an entry of the price table, or an override (`pricing.overrides`).
struct price_entry {
    std::string model;     // a name or a glob
    std::string upstream;  // only as this upstream serves it; "": every upstream
    std::string source;    // the published page the price was taken from
    token_rates rates;     // input and output are required
    price_tier long_context;
};

// A price table as its file says it (the shipped one, or `pricing.file`).
struct price_list {
    std::string date;    // when its prices were read from their sources
    std::string origin;  // the file, or "the shipped table"
    std::vector<price_entry> models;
};

struct pricing_config {
    std::string file;  // replaces the table shipped with the binary; "": that table
    // Checked before the table, the first that matches the upstream and model wins.
    std::vector<price_entry> overrides;
};

// Sign-in for the console and /admin with the company's identity provider (OpenID Connect,
// authorization code with PKCE). Off while `issuer` is "".
struct oidc_config {
    std::string issuer;  // discovery: <issuer>/.well-known/openid-configuration
    std::string client_id;
    std::string client_secret;  // a secret
    std::string redirect_url;   // <gateway>/auth/callback as the provider knows it
    std::vector<std::string> scopes{"openid", "email", "profile"};
    std::string roles_claim;  // the claim whose values map to roles through `roles`
    std::vector<std::pair<std::string, std::string>> roles;  // claim value -> role name
    std::string team_claim;               // the claim naming the user's team; "": set by an admin
    std::string default_role = "member";  // a user no claim value maps
    std::string ca_file;                  // the provider's CA bundle; "": the system CA store
};

struct auth_config {
    oidc_config oidc;
    duration session_idle{8 * 3'600'000};       // a session unused this long ends
    duration session_absolute{7 * 86'400'000};  // and any session after this
};

// A declared team (the admin API makes more): its budget and models bound every key it owns.
struct team_config {
    std::string name;
    std::uint64_t budget_usd_nano = 0;  // per period; 0: none
    config::budget_period budget_period = config::budget_period::month;
    std::vector<std::string> models{"*"};  // globs
};

// Where a guardrail looks, and what it does with a hit (docs/operations.md "Guardrails").
enum class guardrail_stage { request, response, tool_result };
enum class guardrail_action { mask, block, log };
// Their names in the configuration, metrics and logs.
std::string_view guardrail_stage_name(guardrail_stage stage);
std::string_view guardrail_action_name(guardrail_action action);

// A custom detector (its name and RE2 pattern), as the detectors take it.
using guardrail_regex = detection::custom_rule;

// An external policy check: posted {"stage", "text", "model", "key"}, answering
// {"action": "allow"|"block"|"mask", "reason", "spans"}.
struct guardrail_webhook {
    std::string url;
    upstream_endpoint endpoint;  // url, parsed
    duration timeout{500};
    bool fail_open = true;  // fail: open | closed — when it does not answer in time
};

// The opt-in model-based check: the text is put to a model (a route's or an upstream's, through
// the attempt loop) with a moderation prompt, and the model answers `allow` or `block`.
struct guardrail_model_check {
    std::string model;   // as a client names it: a route's model or one an upstream serves
    std::string prompt;  // the moderation instructions; empty: the built-in ones
    duration timeout{10000};
    bool fail_open = true;  // fail: open | closed — no answer in time, or not allow/block
};

struct guardrail_config {
    std::string name;
    std::vector<std::string> detect;     // built-in detector sets: "secrets", "pii"
    std::vector<guardrail_regex> regex;  // custom detectors
    std::optional<guardrail_webhook> webhook;
    std::optional<guardrail_model_check> model_check;
    std::vector<guardrail_stage> on{guardrail_stage::request};
    guardrail_action action = guardrail_action::mask;
    std::vector<std::string> keys{"*"};  // globs over virtual key names and team names
    std::vector<std::string> routes;     // globs over route models; empty: every route
};

struct gateway_config {
    std::string source;  // the file it came from, for messages
    server_config server;
    std::vector<upstream_config> upstreams;
    std::vector<route_config> routes;
    health_config health;
    logging_config logging;
    context_config context;
    metrics_config metrics;
    admin_config admin;
    limits_config limits;
    cache_config cache;
    tracing_config tracing;
    std::vector<mcp_server_config> mcp_servers;
    mcp_serve_config mcp;
    pricing_config pricing;
    auth_config auth;
    std::vector<team_config> teams;
    std::vector<guardrail_config> guardrails;
};

// A value or the reason there is none (gateway/parsed.hpp).
template <class T>
using parsed = gateway::parsed<T>;

// `key` as it is stored hashed in `context.api_keys`: "sha256:" and 64 lowercase hex digits
// (unchanged when it already is). check-config prints keys this way: masked, yet still valid.
std::string hashed_key(const std::string& key);
// "sha256:<hex>" of `key`, always hashed: what a presented API key is compared as.
std::string key_digest(std::string_view key);

// The one rule for a virtual key's name, in the configuration file and through /admin/keys:
// 1 to 64 letters, digits, `_`, `-` or `.` — a name is shown in pages, logs and metric labels, so
// it holds no markup, no line break and no bidirectional control. key_name_rule says it in words.
bool valid_key_name(std::string_view name);
inline constexpr std::string_view key_name_rule = "1-64 letters, digits, `_`, `-`, `.`";

// Loads, interpolates `${NAME}` / `${NAME:-default}` from the environment, and validates a
// configuration file. Relative paths in it (data_dir, prompts_dir, workflows_dir, ca_file) are
// taken from the file's folder. The error names the file, the line and the offending key or
// value.
parsed<gateway_config> load_file(const std::string& path);

// The same from YAML text; `source` is used in error messages only.
parsed<gateway_config> load_string(const std::string& yaml, const std::string& source);

// A price table's text (`date:` and `models:`, a list of price entries, as overrides are
// written), read through the same declared fields; errors name `source` and the line.
parsed<price_list> load_price_list(const std::string& yaml, const std::string& source);
// The same from a file.
parsed<price_list> load_price_file(const std::string& path);
// `list` as a price table's text (`date:` and `models:`, an entry a line, each rate in its
// shortest form), which load_price_list reads back as it is.
std::string price_list_yaml(const price_list& list);

// `scheme://user:password@host` with the password as ***; other URLs unchanged.
std::string mask_url_password(const std::string& url);

// "ask", "always" or "never", as the configuration writes it.
const char* approval_name(approval_policy policy);

// "priority", "weighted", "least_busy" or "latency".
const char* route_strategy_name(route_strategy s);
const char* provider_kind_name(provider_kind p);  // as `provider:` spells it

// The effective configuration as YAML, with every secret masked.
std::string to_yaml(const gateway_config& config);

// The top-level sections ("server", "upstreams", …) in which `a` and `b` differ, as to_yaml
// prints them (a secret is compared masked: a change of a secret alone is not seen).
std::vector<std::string> differing_sections(const gateway_config& a, const gateway_config& b);

// "250ms", "10s", "5m", "1h" or a bare number of seconds.
std::optional<duration> parse_duration(std::string_view text);
// "512", "64KiB", "10MiB", "1GiB" (also KB/MB/GB as powers of 1024, and k/m/g).
std::optional<std::size_t> parse_size(std::string_view text);
// "2027-01-31" (midnight UTC) or "2027-01-31T12:00:00Z" (also with a fractional second or a
// +hh:mm offset) as Unix milliseconds.
std::optional<std::int64_t> parse_time(std::string_view text);
// Unix milliseconds as "2027-01-31T12:00:00Z".
std::string format_time(std::int64_t unix_ms);
// A USD amount as the configuration and the admin API write it ("25", "25.00", "0.005"): not
// negative, at most 9 decimals and a million dollars; in nano-dollars (1e-9 USD), exactly.
std::optional<std::uint64_t> parse_usd(std::string_view text);
// Nano-dollars as dollars with two decimals, or as many more as it needs: "25.00", "0.005".
std::string usd_text(std::uint64_t nano);
// "host:port" or "[v6]:port".
std::optional<listen_address> parse_listen(std::string_view text);
// http(s)://host[:port][/path]; the error says what is wrong.
parsed<upstream_endpoint> parse_base_url(std::string_view text);

}  // namespace gateway::config
