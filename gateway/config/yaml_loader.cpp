// YAML -> gateway_config: each section of the file read into its struct (yaml_reader.hpp reads
// the values). With yaml_reader.cpp, the only place besides content loaders that includes yaml-cpp.
#include "gateway/config/config.hpp"
#include "gateway/config/yaml_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

namespace gateway::config {

namespace {

class loader : public yaml_reader {
public:
    using yaml_reader::yaml_reader;

    server_config server(const YAML::Node& node) const {
        check_keys(
            node, "server",
            {"listen", "workers", "header_limit", "body_limit", "header_timeout", "body_timeout",
             "keep_alive_timeout", "write_timeout", "drain_time", "max_requests_per_connection",
             "sse_heartbeat", "websocket_tunnel", "console", "allowed_hosts"});
        server_config s;
        if (auto n = node["listen"]) {
            auto text = scalar(n, "listen");
            auto address = parse_listen(text);
            if (!address) fail(n, "`listen`: `" + text + "` is not host:port");
            s.listen = *address;
        }
        if (auto n = node["workers"]) s.workers = get_count(n, "workers", 0, 256);
        if (auto n = node["header_limit"]) s.header_limit = get_size(n, "header_limit");
        if (auto n = node["body_limit"]) s.body_limit = get_size(n, "body_limit");
        if (auto n = node["header_timeout"])
            s.header_timeout = positive_duration(n, "header_timeout");
        if (auto n = node["body_timeout"]) s.body_timeout = positive_duration(n, "body_timeout");
        if (auto n = node["keep_alive_timeout"])
            s.keep_alive_timeout = positive_duration(n, "keep_alive_timeout");
        if (auto n = node["write_timeout"]) s.write_timeout = positive_duration(n, "write_timeout");
        if (auto n = node["drain_time"]) s.drain_time = get_duration(n, "drain_time");
        if (auto n = node["max_requests_per_connection"])
            s.max_requests_per_connection =
                get_count(n, "max_requests_per_connection", 1, 100'000'000);
        if (auto n = node["sse_heartbeat"]) s.sse_heartbeat = get_duration(n, "sse_heartbeat");
        if (auto n = node["websocket_tunnel"]) s.websocket_tunnel = get_bool(n, "websocket_tunnel");
        if (auto n = node["console"]) s.console = get_bool(n, "console");
        if (auto n = node["allowed_hosts"]) s.allowed_hosts = string_list(n, "allowed_hosts");
        if (s.header_limit < 1024)
            fail(node["header_limit"], "`header_limit` must be at least 1KiB");
        return s;
    }

    upstream_config upstream(const YAML::Node& node, std::size_t index) const {
        std::string section = "upstreams[" + std::to_string(index) + "]";
        check_keys(node, section,
                   {"name", "base_url", "api_key", "auth", "models", "connect_timeout",
                    "first_byte_timeout", "idle_timeout", "max_idle_connections",
                    "pool_idle_timeout", "ca_file", "tls_insecure", "json_schema", "context_budget",
                    "provider", "model_map", "tool_calling", "stream_usage"});
        upstream_config u;
        if (!node["name"]) fail(node, section + ": `name` is required");
        u.name = scalar(node["name"], "name");
        if (u.name.empty()) fail(node["name"], section + ": `name` must not be empty");
        if (!node["base_url"]) fail(node, section + ": `base_url` is required");
        u.base_url = scalar(node["base_url"], "base_url");
        auto endpoint = parse_base_url(u.base_url);
        if (!endpoint) fail(node["base_url"], "`base_url`: `" + u.base_url + "` " + endpoint.error);
        u.endpoint = *endpoint.value;
        if (auto n = node["api_key"]) u.api_key = scalar(n, "api_key");
        if (auto n = node["auth"])
            u.auth =
                either(n, "auth", "forward", "replace") ? auth_mode::replace : auth_mode::forward;
        if (auto n = node["provider"]) {
            auto text = scalar(n, "provider");
            if (text == "openai")
                u.provider = provider_kind::openai;
            else if (text == "anthropic")
                u.provider = provider_kind::anthropic;
            else if (text == "gemini")
                u.provider = provider_kind::gemini;
            else
                fail(n, "`provider`: `" + text + "` must be openai, anthropic or gemini");
        }
        u.tool_calling = u.provider == provider_kind::openai ? tool_calling_mode::json
                                                             : tool_calling_mode::native;
        if (auto n = node["tool_calling"])
            u.tool_calling = either(n, "tool_calling", "native", "json")
                                 ? tool_calling_mode::json
                                 : tool_calling_mode::native;
        if (auto n = node["model_map"]) {
            if (!n.IsMap()) fail(n, "`model_map` must map client model names to upstream names");
            for (const auto& entry : n)
                u.model_map.emplace_back(scalar(entry.first, "model_map"),
                                         scalar(entry.second, "model_map"));
        }
        if (auto n = node["models"]) {
            if (!n.IsSequence() || n.size() == 0)
                fail(n, "`models` must be a non-empty list of model name globs");
            u.models.clear();
            for (const auto& m : n) u.models.push_back(scalar(m, "models"));
        }
        if (auto n = node["connect_timeout"])
            u.connect_timeout = positive_duration(n, "connect_timeout");
        if (auto n = node["first_byte_timeout"])
            u.first_byte_timeout = positive_duration(n, "first_byte_timeout");
        if (auto n = node["idle_timeout"]) u.idle_timeout = positive_duration(n, "idle_timeout");
        if (auto n = node["max_idle_connections"])
            u.max_idle_connections = get_count(n, "max_idle_connections", 0, 100'000);
        if (auto n = node["pool_idle_timeout"])
            u.pool_idle_timeout = get_duration(n, "pool_idle_timeout");
        if (auto n = node["ca_file"]) {
            u.ca_file = path(n, "ca_file");
            if (!u.ca_file.empty() && !std::ifstream(u.ca_file))
                fail(n, "`ca_file`: cannot read `" + u.ca_file + "`");
        }
        if (auto n = node["tls_insecure"]) u.tls_insecure = get_bool(n, "tls_insecure");
        if (auto n = node["json_schema"]) u.json_schema = get_bool(n, "json_schema");
        if (auto n = node["context_budget"])
            u.context_budget = get_count(n, "context_budget", 0, 100'000'000);
        if (auto n = node["stream_usage"]) {
            u.inject_stream_usage = either(n, "stream_usage", "pass", "inject");
            if (u.inject_stream_usage && u.provider != provider_kind::openai)
                fail(n, "`stream_usage: inject` applies to OpenAI-compatible upstreams only");
        }
        if (u.auth == auth_mode::replace && u.api_key.empty())
            fail(node["auth"], section + ": `auth: replace` needs a non-empty `api_key`");
        return u;
    }

    logging_config logging(const YAML::Node& node) const {
        check_keys(node, "logging", {"level", "access_log", "format"});
        logging_config l;
        if (auto n = node["level"]) {
            auto text = scalar(n, "level");
            if (text == "debug")
                l.level = log_level::debug;
            else if (text == "info")
                l.level = log_level::info;
            else if (text == "warn")
                l.level = log_level::warn;
            else if (text == "error")
                l.level = log_level::error;
            else
                fail(n, "`level`: `" + text + "` must be debug, info, warn or error");
        }
        if (auto n = node["access_log"]) l.access_log = get_bool(n, "access_log");
        if (auto n = node["format"])
            l.format = either(n, "format", "text", "json") ? log_format::json : log_format::text;
        return l;
    }

    metrics_config metrics(const YAML::Node& node) const {
        check_keys(node, "metrics", {"enabled", "listen", "key_labels"});
        metrics_config m;
        if (auto n = node["enabled"]) m.enabled = get_bool(n, "enabled");
        if (auto n = node["listen"]) {
            auto text = scalar(n, "listen");
            if (!text.empty()) {
                auto address = parse_listen(text);
                if (!address) fail(n, "`metrics.listen`: `" + text + "` is not host:port");
                m.listen = *address;
            }
        }
        if (auto n = node["key_labels"]) m.key_labels = get_bool(n, "key_labels");
        return m;
    }

    // A secret as `api_keys` take it: 16+ characters, or "sha256:" and 64 lowercase hex digits.
    void check_secret(const YAML::Node& n, const std::string& key, std::string_view what) const {
        bool hashed = key.starts_with("sha256:");
        if (hashed &&
            (key.size() != 7 + 64 || key.find_first_not_of("0123456789abcdef", 7) != key.npos))
            fail(n, "`" + std::string(what) +
                        "`: a hashed key is `sha256:` and 64 lowercase hex digits");
        if (!hashed && key.size() < 16)
            fail(n, "`" + std::string(what) + "`: keys must be at least 16 characters");
    }

    virtual_key_config virtual_key(const YAML::Node& node, std::size_t index) const {
        std::string section = "admin.keys[" + std::to_string(index) + "]";
        check_keys(node, section,
                   {"name", "key", "models", "rpm", "tpm", "max_parallel", "budget", "expires_at"});
        virtual_key_config k;
        if (!node["name"]) fail(node, section + ": `name` is required");
        k.name = scalar(node["name"], "name");
        if (k.name.empty() || k.name.size() > 64 ||
            k.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                     "0123456789_-.") != std::string::npos)
            fail(node["name"], section + ": `name` must be 1-64 letters, digits, `_`, `-`, `.`");
        k.id = "cfg-" + k.name;
        if (!node["key"]) fail(node, section + ": `key` is required");
        k.key = scalar(node["key"], "key");
        check_secret(node["key"], k.key, section + ".key");
        if (auto n = node["models"]) k.models = string_list(n, "models");
        auto limit = [&](const char* name, std::uint64_t& into) {
            if (auto n = node[name]) into = get_count(n, name, 0, 1'000'000'000'000);
        };
        limit("rpm", k.rpm);
        limit("tpm", k.tpm);
        limit("max_parallel", k.max_parallel);
        if (auto b = node["budget"]) {
            check_keys(b, section + ".budget", {"tokens", "period"});
            if (auto n = b["tokens"])
                k.budget_tokens = get_count(n, "tokens", 0, 1'000'000'000'000'000);
            if (auto n = b["period"])
                k.budget_period = either(n, "budget.period", "day", "month") ? "month" : "day";
        }
        if (auto n = node["expires_at"]) {
            auto text = scalar(n, "expires_at");
            auto at = parse_time(text);
            if (!at)
                fail(n, "`expires_at`: `" + text +
                            "` is not a time (2027-01-31 or 2027-01-31T12:00:00Z)");
            k.expires_at = *at;
        }
        return k;
    }

    admin_config admin(const YAML::Node& node) const {
        check_keys(node, "admin", {"api_key", "keys"});
        admin_config a;
        if (auto n = node["api_key"]) {
            a.api_key = scalar(n, "api_key");
            if (!a.api_key.empty()) check_secret(n, a.api_key, "admin.api_key");
        }
        if (auto n = node["keys"]) {
            if (!n.IsSequence()) fail(n, "`admin.keys` must be a list");
            std::set<std::string> names;
            for (std::size_t i = 0; i < n.size(); ++i) {
                a.keys.push_back(virtual_key(n[i], i));
                if (!names.insert(a.keys.back().name).second)
                    fail(n[i]["name"], "duplicate key name `" + a.keys.back().name + "`");
            }
        }
        return a;
    }

    limits_config limits(const YAML::Node& node) const {
        check_keys(node, "limits", {"backend", "redis_url", "redis_timeout"});
        limits_config l;
        if (auto n = node["backend"])
            l.backend = either(n, "limits.backend", "memory", "redis") ? limits_backend::redis
                                                                       : limits_backend::memory;
        if (auto n = node["redis_url"]) l.redis_url = scalar(n, "redis_url");
        if (auto n = node["redis_timeout"]) l.redis_timeout = get_duration(n, "redis_timeout");
        if (l.backend == limits_backend::redis) {
            if (!l.redis_url.starts_with("redis://"))
                fail(node["redis_url"].IsDefined() ? node["redis_url"] : node,
                     "`limits.backend: redis` needs `redis_url: redis://host:port`");
        }
        return l;
    }

    store_config store(const YAML::Node& node) const {
        check_keys(node, "context.store", {"type", "dsn", "lease_timeout"});
        store_config s;
        if (auto n = node["type"])
            s.type = either(n, "context.store.type", "sqlite", "postgres") ? store_type::postgres
                                                                           : store_type::sqlite;
        if (auto n = node["dsn"]) s.dsn = scalar(n, "dsn");
        if (auto n = node["lease_timeout"]) {
            s.lease_timeout = get_duration(n, "lease_timeout");
            if (s.lease_timeout < duration(1'000))
                fail(n, "`context.store.lease_timeout` must be at least 1s");
        }
        if (s.type == store_type::postgres &&
            !(s.dsn.starts_with("postgres://") || s.dsn.starts_with("postgresql://")))
            fail(node["dsn"].IsDefined() ? node["dsn"] : node,
                 "`context.store.type: postgres` needs `dsn: postgres://user:password@host:port/"
                 "database` (is the variable it names set?)");
        return s;
    }

    context_config context(const YAML::Node& node) const {
        check_keys(node, "context",
                   {"data_dir", "workspaces", "api_keys", "prompts_dir", "workflows_dir",
                    "default_prompt", "max_steps", "max_wall_time", "max_retries",
                    "identical_call_warn", "identical_call_stop", "max_tool_errors",
                    "approval_timeout", "model_retries", "approvals", "max_message_bytes",
                    "max_watchers_per_run", "event_excerpt_bytes", "store"});
        context_config c;
        if (auto n = node["data_dir"]) c.data_dir = path(n, "data_dir");
        if (auto n = node["store"]) c.store = store(n);
        if (auto n = node["workspaces"]) {
            c.workspaces = string_list(n, "workspaces");
            for (std::size_t i = 0; i < c.workspaces.size(); ++i)
                if (c.workspaces[i].empty() || c.workspaces[i].front() != '/')
                    fail(n[i], "`workspaces`: `" + c.workspaces[i] + "` must be an absolute path");
        }
        if (auto n = node["api_keys"]) {
            c.api_keys = string_list(n, "api_keys");
            for (std::size_t i = 0; i < c.api_keys.size(); ++i)
                check_secret(n[i], c.api_keys[i], "api_keys");
        }
        if (auto n = node["prompts_dir"]) c.prompts_dir = path(n, "prompts_dir");
        if (auto n = node["workflows_dir"]) c.workflows_dir = path(n, "workflows_dir");
        if (auto n = node["default_prompt"]) c.default_prompt = scalar(n, "default_prompt");
        if (auto n = node["max_steps"]) c.max_steps = get_unsigned(n, "max_steps", 1, 1000);
        if (auto n = node["max_wall_time"]) c.max_wall_time = positive_duration(n, "max_wall_time");
        if (auto n = node["max_retries"]) c.max_retries = get_unsigned(n, "max_retries", 0, 20);
        if (auto n = node["identical_call_warn"])
            c.identical_call_warn = get_unsigned(n, "identical_call_warn", 2, 100);
        if (auto n = node["identical_call_stop"])
            c.identical_call_stop = get_unsigned(n, "identical_call_stop", 2, 100);
        if (c.identical_call_stop <= c.identical_call_warn)
            fail(node, "`identical_call_stop` must be greater than `identical_call_warn`");
        if (auto n = node["max_tool_errors"])
            c.max_tool_errors = get_unsigned(n, "max_tool_errors", 1, 100);
        if (auto n = node["approval_timeout"])
            c.approval_timeout = positive_duration(n, "approval_timeout");
        if (auto n = node["model_retries"])
            c.model_retries = get_unsigned(n, "model_retries", 0, 10);
        if (auto n = node["max_message_bytes"])
            c.max_message_bytes = get_size(n, "max_message_bytes");
        if (auto n = node["max_watchers_per_run"])
            c.max_watchers_per_run = get_unsigned(n, "max_watchers_per_run", 1, 10'000);
        if (auto n = node["event_excerpt_bytes"]) {
            c.event_excerpt_bytes = get_size(n, "event_excerpt_bytes");
            if (c.event_excerpt_bytes < 256) fail(n, "`event_excerpt_bytes` must be at least 256");
        }
        if (auto n = node["approvals"]) {
            if (!n.IsMap()) fail(n, "`approvals` must map tool names to always, never or ask");
            for (const auto& entry : n) {
                auto tool = entry.first.as<std::string>();
                c.approvals.emplace_back(tool, approval(entry.second, "approvals." + tool));
            }
        }
        return c;
    }

    approval_policy approval(const YAML::Node& node, const std::string& label) const {
        auto text = scalar(node, label);
        if (text == "always") return approval_policy::always;
        if (text == "never") return approval_policy::never;
        if (text != "ask")
            fail(node, "`" + label + "`: `" + text + "` must be always, never or ask");
        return approval_policy::ask;
    }

    mcp_server_config mcp_server(const YAML::Node& node, std::size_t index) const {
        std::string section = "mcp_servers[" + std::to_string(index) + "]";
        check_keys(node, section,
                   {"name", "transport", "command", "args", "env", "url", "headers", "tools",
                    "approval", "connect_timeout", "call_timeout", "max_output_bytes"});
        mcp_server_config m;
        if (!node["name"]) fail(node, section + ": `name` is required");
        m.name = scalar(node["name"], "name");
        if (m.name.empty() || m.name.size() > 24 ||
            m.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                     "0123456789_-") != std::string::npos ||
            m.name.find("__") != std::string::npos)
            fail(node["name"], section +
                                   ": `name` must be 1-24 letters, digits, `_` or `-` (no `__`): "
                                   "it becomes part of tool names");
        if (!node["transport"]) fail(node, section + ": `transport` is required (stdio or http)");
        m.transport = either(node["transport"], "transport", "stdio", "http")
                          ? mcp_transport::http
                          : mcp_transport::stdio;
        if (auto n = node["command"]) m.command = scalar(n, "command");
        if (auto n = node["args"]) m.args = string_list(n, "args");
        if (auto n = node["env"]) m.env = string_map(n, "env");
        if (auto n = node["url"]) m.url = scalar(n, "url");
        if (auto n = node["headers"]) m.headers = string_map(n, "headers");
        if (m.transport == mcp_transport::stdio) {
            if (m.command.empty()) fail(node, section + ": `transport: stdio` needs `command`");
            if (node["url"] || node["headers"])
                fail(node["url"] ? node["url"] : node["headers"],
                     section + ": `url` and `headers` are for `transport: http`");
        } else {
            if (!node["url"]) fail(node, section + ": `transport: http` needs `url`");
            auto endpoint = parse_base_url(m.url);
            if (!endpoint) fail(node["url"], "`url`: `" + m.url + "` " + endpoint.error);
            m.endpoint = *endpoint.value;
            if (node["command"] || node["args"] || node["env"])
                fail(node["command"] ? node["command"]
                     : node["args"]  ? node["args"]
                                     : node["env"],
                     section + ": `command`, `args` and `env` are for `transport: stdio`");
        }
        if (auto t = node["tools"]) {
            check_keys(t, section + ".tools", {"allow", "deny"});
            if (auto n = t["allow"]) m.allow = string_list(n, "allow");
            if (auto n = t["deny"]) m.deny = string_list(n, "deny");
        }
        if (auto n = node["approval"]) m.approval = approval(n, "approval");
        if (auto n = node["connect_timeout"])
            m.connect_timeout = positive_duration(n, "connect_timeout");
        if (auto n = node["call_timeout"]) m.call_timeout = positive_duration(n, "call_timeout");
        if (auto n = node["max_output_bytes"]) {
            m.max_output_bytes = get_size(n, "max_output_bytes");
            if (m.max_output_bytes < 256) fail(n, "`max_output_bytes` must be at least 256");
        }
        return m;
    }

    mcp_serve_config mcp_serve(const YAML::Node& node) const {
        check_keys(node, "mcp",
                   {"serve", "model", "workspace", "system_prompt", "edits", "allowed_hosts"});
        mcp_serve_config m;
        if (auto n = node["serve"]) m.serve = get_bool(n, "serve");
        if (auto n = node["model"]) m.model = scalar(n, "model");
        if (auto n = node["workspace"]) {
            m.workspace = path(n, "workspace");  // "": the first of context.workspaces
            if (!m.workspace.empty() && m.workspace.front() != '/')
                fail(n, "`mcp.workspace` must be an absolute path");
        }
        if (auto n = node["system_prompt"]) m.system_prompt = scalar(n, "system_prompt");
        if (auto n = node["edits"])
            m.edits = either(n, "mcp.edits", "approve", "review") ? "review" : "approve";
        if (auto n = node["allowed_hosts"]) m.allowed_hosts = string_list(n, "allowed_hosts");
        if (m.serve && m.model.empty())
            fail(node, "`mcp.serve: true` needs `mcp.model`: the model the workflows' chats use");
        return m;
    }

    gateway_config root(const YAML::Node& node) const {
        if (!node.IsDefined() || node.IsNull()) fail(node, "the file is empty");
        check_keys(node, "top level",
                   {"server", "upstreams", "logging", "context", "metrics", "admin", "limits",
                    "mcp_servers", "mcp"});
        gateway_config c;
        c.source = source();
        if (auto n = node["server"]) c.server = server(n);
        auto ups = node["upstreams"];
        if (!ups) fail(node, "`upstreams` is required: at least one upstream to forward to");
        if (!ups.IsSequence() || ups.size() == 0) fail(ups, "`upstreams` must be a non-empty list");
        std::set<std::string> names;
        for (std::size_t i = 0; i < ups.size(); ++i) {
            c.upstreams.push_back(upstream(ups[i], i));
            if (!names.insert(c.upstreams.back().name).second)
                fail(ups[i]["name"], "duplicate upstream name `" + c.upstreams.back().name + "`");
        }
        if (auto n = node["logging"]) c.logging = logging(n);
        if (auto n = node["context"]) c.context = context(n);
        if (auto n = node["metrics"]) c.metrics = metrics(n);
        if (auto n = node["admin"]) c.admin = admin(n);
        if (auto n = node["limits"]) c.limits = limits(n);
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
