#include "gateway/config/config.hpp"

#include <openssl/sha.h>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <charconv>
#include <sstream>

namespace gateway::config {

std::string hashed_key(const std::string& key) {
    return key.starts_with("sha256:") ? key : key_digest(key);
}

std::string key_digest(std::string_view key) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    ::SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out = "sha256:";
    for (unsigned char byte : digest) {
        out.push_back(hex[byte >> 4]);
        out.push_back(hex[byte & 15]);
    }
    return out;
}

namespace {

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

std::string format_duration(duration d) {
    auto ms = d.count();
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

const char* level_name(log_level level) {
    switch (level) {
        case log_level::debug:
            return "debug";
        case log_level::info:
            return "info";
        case log_level::warn:
            return "warn";
        case log_level::error:
            return "error";
    }
    return "info";
}

std::string quoted(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::optional<duration> parse_duration(std::string_view text) {
    struct unit {
        std::string_view suffix;
        std::int64_t ms;
    };
    // Longest suffixes first so "ms" is not read as "m".
    static constexpr unit units[] = {{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}};
    for (const auto& u : units) {
        if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
            auto number = parse_unsigned(text.substr(0, text.size() - u.suffix.size()));
            if (!number) return std::nullopt;
            return duration{static_cast<std::int64_t>(*number) * u.ms};
        }
    }
    auto seconds = parse_unsigned(text);
    if (!seconds) return std::nullopt;
    return duration{static_cast<std::int64_t>(*seconds) * 1000};
}

std::optional<std::size_t> parse_size(std::string_view text) {
    struct unit {
        std::string_view suffix;
        std::uint64_t factor;
    };
    static constexpr unit units[] = {{"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
                                     {"KB", 1ull << 10},  {"MB", 1ull << 20},  {"GB", 1ull << 30},
                                     {"k", 1ull << 10},   {"m", 1ull << 20},   {"g", 1ull << 30},
                                     {"K", 1ull << 10},   {"M", 1ull << 20},   {"G", 1ull << 30}};
    for (const auto& u : units) {
        if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
            auto number = parse_unsigned(text.substr(0, text.size() - u.suffix.size()));
            if (!number) return std::nullopt;
            return static_cast<std::size_t>(*number * u.factor);
        }
    }
    auto bytes = parse_unsigned(text);
    if (!bytes) return std::nullopt;
    return static_cast<std::size_t>(*bytes);
}

std::optional<listen_address> parse_listen(std::string_view text) {
    std::string_view host;
    std::string_view port;
    if (text.starts_with('[')) {
        auto close = text.find("]:");
        if (close == std::string_view::npos) return std::nullopt;
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string_view::npos) return std::nullopt;
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    auto number = parse_unsigned(port);
    if (host.empty() || !number || *number > 65535) return std::nullopt;
    return listen_address{std::string(host), static_cast<std::uint16_t>(*number)};
}

parsed<upstream_endpoint> parse_base_url(std::string_view text) {
    using result = parsed<upstream_endpoint>;
    auto url = boost::urls::parse_absolute_uri(text);
    if (!url) return result::fail("not an absolute URL");
    upstream_endpoint endpoint;
    if (url->scheme() == "https") {
        endpoint.tls = true;
        endpoint.port = 443;
    } else if (url->scheme() != "http") {
        return result::fail("scheme must be http or https, not `" + std::string(url->scheme()) +
                            "`");
    }
    if (!url->has_authority() || url->encoded_host().empty()) return result::fail("has no host");
    if (url->has_userinfo()) return result::fail("must not contain credentials; use api_key");
    if (url->has_query() || url->has_fragment())
        return result::fail("must not have a query or a fragment");
    endpoint.host = url->host_address();
    if (url->has_port()) {
        auto port = parse_unsigned(url->port());
        if (!port || *port == 0 || *port > 65535) return result::fail("has an invalid port");
        endpoint.port = static_cast<std::uint16_t>(*port);
    }
    endpoint.base_path = url->encoded_path();
    while (endpoint.base_path.ends_with('/')) endpoint.base_path.pop_back();
    return {endpoint, {}};
}

std::string to_yaml(const gateway_config& config) {
    std::ostringstream out;
    const auto& s = config.server;
    out << "server:\n"
        << "  listen: " << s.listen.host << ':' << s.listen.port << '\n'
        << "  workers: " << s.workers << '\n'
        << "  header_limit: " << s.header_limit << '\n'
        << "  body_limit: " << s.body_limit << '\n'
        << "  header_timeout: " << format_duration(s.header_timeout) << '\n'
        << "  body_timeout: " << format_duration(s.body_timeout) << '\n'
        << "  keep_alive_timeout: " << format_duration(s.keep_alive_timeout) << '\n'
        << "  write_timeout: " << format_duration(s.write_timeout) << '\n'
        << "  drain_time: " << format_duration(s.drain_time) << '\n'
        << "  max_requests_per_connection: " << s.max_requests_per_connection << '\n'
        << "  sse_heartbeat: " << format_duration(s.sse_heartbeat) << '\n'
        << "  websocket_tunnel: " << (s.websocket_tunnel ? "true" : "false") << '\n'
        << "  console: " << (s.console ? "true" : "false") << '\n';
    out << "upstreams:\n";
    for (const auto& u : config.upstreams) {
        out << "  - name: " << quoted(u.name) << '\n'
            << "    base_url: " << quoted(u.base_url) << '\n'
            << "    api_key: " << (u.api_key.empty() ? "\"\"" : "\"***\"") << '\n'
            << "    auth: " << (u.auth == auth_mode::forward ? "forward" : "replace") << '\n'
            << "    provider: "
            << (u.provider == provider_kind::openai      ? "openai"
                : u.provider == provider_kind::anthropic ? "anthropic"
                                                         : "gemini")
            << '\n'
            << "    tool_calling: "
            << (u.tool_calling == tool_calling_mode::native ? "native" : "json") << '\n'
            << "    models: [";
        for (std::size_t i = 0; i < u.models.size(); ++i)
            out << (i ? ", " : "") << quoted(u.models[i]);
        out << "]\n";
        if (!u.model_map.empty()) {
            out << "    model_map:\n";
            for (const auto& [from, to] : u.model_map)
                out << "      " << quoted(from) << ": " << quoted(to) << '\n';
        }
        out << "    connect_timeout: " << format_duration(u.connect_timeout) << '\n'
            << "    first_byte_timeout: " << format_duration(u.first_byte_timeout) << '\n'
            << "    idle_timeout: " << format_duration(u.idle_timeout) << '\n'
            << "    max_idle_connections: " << u.max_idle_connections << '\n'
            << "    pool_idle_timeout: " << format_duration(u.pool_idle_timeout) << '\n'
            << "    ca_file: " << quoted(u.ca_file) << '\n'
            << "    tls_insecure: " << (u.tls_insecure ? "true" : "false") << '\n'
            << "    json_schema: " << (u.json_schema ? "true" : "false") << '\n'
            << "    context_budget: " << u.context_budget << '\n';
    }
    out << "logging:\n"
        << "  level: " << level_name(config.logging.level) << '\n'
        << "  access_log: " << (config.logging.access_log ? "true" : "false") << '\n';
    const auto& c = config.context;
    auto list = [&](const std::vector<std::string>& items, bool secret) {
        out << '[';
        for (std::size_t i = 0; i < items.size(); ++i)
            out << (i ? ", " : "") << quoted(secret ? hashed_key(items[i]) : items[i]);
        out << "]\n";
    };
    out << "context:\n"
        << "  data_dir: " << quoted(c.data_dir) << '\n'
        << "  workspaces: ";
    list(c.workspaces, false);
    out << "  api_keys: ";
    list(c.api_keys, true);
    out << "  prompts_dir: " << quoted(c.prompts_dir) << '\n'
        << "  workflows_dir: " << quoted(c.workflows_dir) << '\n'
        << "  default_prompt: " << quoted(c.default_prompt) << '\n'
        << "  max_steps: " << c.max_steps << '\n'
        << "  max_wall_time: " << format_duration(c.max_wall_time) << '\n'
        << "  max_retries: " << c.max_retries << '\n'
        << "  identical_call_warn: " << c.identical_call_warn << '\n'
        << "  identical_call_stop: " << c.identical_call_stop << '\n'
        << "  max_tool_errors: " << c.max_tool_errors << '\n'
        << "  approval_timeout: " << format_duration(c.approval_timeout) << '\n'
        << "  model_retries: " << c.model_retries << '\n'
        << "  max_message_bytes: " << c.max_message_bytes << '\n'
        << "  max_watchers_per_run: " << c.max_watchers_per_run << '\n'
        << "  event_excerpt_bytes: " << c.event_excerpt_bytes << '\n'
        << "  approvals: {";
    for (std::size_t i = 0; i < c.approvals.size(); ++i) {
        auto policy = c.approvals[i].second;
        out << (i ? ", " : "") << quoted(c.approvals[i].first) << ": "
            << (policy == approval_policy::ask      ? "ask"
                : policy == approval_policy::always ? "always"
                                                    : "never");
    }
    out << "}\n";
    return out.str();
}

}  // namespace gateway::config
