#include "gateway/config/config.hpp"

#include "gateway/config/schema.hpp"

#include <openssl/sha.h>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <cctype>
#include <charconv>
#include <chrono>
#include <ctime>
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

bool valid_key_name(std::string_view name) {
    return !name.empty() && name.size() <= 64 &&
           name.find_first_not_of(
               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
               "0123456789_-.") == std::string_view::npos;
}

namespace {

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

}  // namespace

std::string format_duration(duration d) {
    auto ms = d.count();
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

std::string quoted(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::optional<std::int64_t> parse_time(std::string_view text) {
    auto number = [&](std::size_t at, std::size_t digits, int& out) {
        if (at + digits > text.size()) return false;
        auto [end, ec] = std::from_chars(text.data() + at, text.data() + at + digits, out);
        return ec == std::errc() && end == text.data() + at + digits;
    };
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!number(0, 4, year) || text.size() < 10 || text[4] != '-' || !number(5, 2, month) ||
        text[7] != '-' || !number(8, 2, day))
        return std::nullopt;
    std::int64_t offset_ms = 0, fraction_ms = 0;
    if (text.size() > 10) {
        if ((text[10] != 'T' && text[10] != ' ') || !number(11, 2, hour) || text.size() < 19 ||
            text[13] != ':' || !number(14, 2, minute) || text[16] != ':' || !number(17, 2, second))
            return std::nullopt;
        std::size_t at = 19;
        if (at < text.size() && text[at] == '.') {
            std::size_t start = ++at;
            while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
            if (at == start) return std::nullopt;
            auto digits = text.substr(start, std::min<std::size_t>(3, at - start));
            int value = 0;
            std::from_chars(digits.data(), digits.data() + digits.size(), value);
            for (auto n = digits.size(); n < 3; ++n) value *= 10;
            fraction_ms = value;
        }
        if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
            ++at;
        } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
            int oh = 0, om = 0;
            if (!number(at + 1, 2, oh) || at + 3 >= text.size() || text[at + 3] != ':' ||
                !number(at + 4, 2, om))
                return std::nullopt;
            offset_ms = (oh * 60 + om) * 60'000LL * (text[at] == '+' ? 1 : -1);
            at += 6;
        } else {
            return std::nullopt;
        }
        if (at != text.size()) return std::nullopt;
    }
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
        return std::nullopt;
    std::chrono::year_month_day date{std::chrono::year(year), std::chrono::month(month),
                                     std::chrono::day(day)};
    if (!date.ok()) return std::nullopt;
    auto days = std::chrono::sys_days(date).time_since_epoch().count();
    return days * 86'400'000LL + (hour * 3600LL + minute * 60LL + second) * 1000 + fraction_ms -
           offset_ms;
}

std::string format_time(std::int64_t unix_ms) {
    auto seconds = static_cast<std::time_t>(unix_ms / 1000 - (unix_ms % 1000 < 0 ? 1 : 0));
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    auto n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(text, n);
}

std::optional<std::uint64_t> parse_usd(std::string_view text) {
    constexpr std::uint64_t nano_per_usd = 1'000'000'000;
    auto point = text.find('.');
    auto whole = text.substr(0, point);
    auto fraction = point == text.npos ? std::string_view() : text.substr(point + 1);
    if (whole.empty() || whole.size() > 7 || fraction.size() > 9 ||
        (point != text.npos && fraction.empty()))
        return std::nullopt;
    auto digits = [](std::string_view part) {
        return part.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (!digits(whole) || !digits(fraction)) return std::nullopt;
    std::uint64_t dollars = 0;
    std::from_chars(whole.data(), whole.data() + whole.size(), dollars);
    std::uint64_t nano = 0;
    for (std::size_t i = 0; i < 9; ++i)
        nano =
            nano * 10 + (i < fraction.size() ? static_cast<std::uint64_t>(fraction[i] - '0') : 0);
    // A million dollars keeps every sum of budgets exact below 2^53 nano-dollars, which the
    // limiter's Redis scripts count in (Lua's numbers are doubles).
    if (dollars > 1'000'000 || (dollars == 1'000'000 && nano > 0)) return std::nullopt;
    return dollars * nano_per_usd + nano;
}

std::string usd_text(std::uint64_t nano) {
    auto fraction = std::to_string(1'000'000'000 + nano % 1'000'000'000).substr(1);
    while (fraction.size() > 2 && fraction.back() == '0') fraction.pop_back();
    return std::to_string(nano / 1'000'000'000) + "." + fraction;
}

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

std::string mask_url_password(const std::string& url) {
    auto scheme = url.find("://");
    auto at = url.find('@');
    if (scheme == std::string::npos || at == std::string::npos || at < scheme) return url;
    auto colon = url.find(':', scheme + 3);
    if (colon == std::string::npos || colon > at) return url;
    return url.substr(0, colon + 1) + "***" + url.substr(at);
}

const char* approval_name(approval_policy policy) {
    return policy == approval_policy::ask      ? "ask"
           : policy == approval_policy::always ? "always"
                                               : "never";
}

const char* route_strategy_name(route_strategy s) {
    switch (s) {
        case route_strategy::priority:
            return "priority";
        case route_strategy::weighted:
            return "weighted";
        case route_strategy::least_busy:
            return "least_busy";
        case route_strategy::latency:
            return "latency";
    }
    return "priority";
}

const char* provider_kind_name(provider_kind p) {
    switch (p) {
        case provider_kind::openai:
            return "openai";
        case provider_kind::anthropic:
            return "anthropic";
        case provider_kind::gemini:
            return "gemini";
        case provider_kind::bedrock:
            return "bedrock";
    }
    return "openai";
}

std::vector<std::string> differing_sections(const gateway_config& a, const gateway_config& b) {
    std::vector<std::string> differ;
    auto compare = [&](std::string_view name, auto print) {
        std::ostringstream one, other;
        print(one, a);
        print(other, b);
        if (one.str() != other.str()) differ.emplace_back(name);
    };
    auto section = [](const auto& member, const auto& fields) {
        return [member, fields](std::ostringstream& out, const gateway_config& c) {
            schema::print(out, c.*member, fields(), "");
        };
    };
    auto list = [](const auto& member, const auto& fields) {
        return [member, fields](std::ostringstream& out, const gateway_config& c) {
            for (const auto& item : c.*member) schema::print(out, item, fields(), "  ", "- ");
        };
    };
    compare("server", section(&gateway_config::server, server_fields));
    compare("upstreams", list(&gateway_config::upstreams, upstream_fields));
    compare("routes", list(&gateway_config::routes, route_fields));
    compare("health", section(&gateway_config::health, health_fields));
    compare("logging", section(&gateway_config::logging, logging_fields));
    compare("metrics", section(&gateway_config::metrics, metrics_fields));
    compare("admin", section(&gateway_config::admin, admin_fields));
    compare("limits", section(&gateway_config::limits, limits_fields));
    compare("cache", section(&gateway_config::cache, cache_fields));
    compare("tracing", section(&gateway_config::tracing, tracing_fields));
    compare("context", section(&gateway_config::context, context_fields));
    compare("mcp_servers", list(&gateway_config::mcp_servers, mcp_server_fields));
    compare("mcp", section(&gateway_config::mcp, mcp_serve_fields));
    compare("pricing", section(&gateway_config::pricing, pricing_fields));
    compare("auth", section(&gateway_config::auth, auth_fields));
    compare("teams", list(&gateway_config::teams, team_fields));
    compare("guardrails", list(&gateway_config::guardrails, guardrail_fields));
    return differ;
}

std::string to_yaml(const gateway_config& config) {
    std::ostringstream out;
    out << "server:\n";
    schema::print(out, config.server, server_fields(), "  ");
    out << "upstreams:\n";
    for (const auto& u : config.upstreams) schema::print(out, u, upstream_fields(), "    ", "  - ");
    out << "routes:" << (config.routes.empty() ? " []" : "") << '\n';
    for (const auto& r : config.routes) schema::print(out, r, route_fields(), "    ", "  - ");
    out << "health:\n";
    schema::print(out, config.health, health_fields(), "  ");
    out << "logging:\n";
    schema::print(out, config.logging, logging_fields(), "  ");
    out << "metrics:\n";
    schema::print(out, config.metrics, metrics_fields(), "  ");
    out << "admin:\n";
    schema::print(out, config.admin, admin_fields(), "  ");
    out << "limits:\n";
    schema::print(out, config.limits, limits_fields(), "  ");
    out << "cache:\n";
    schema::print(out, config.cache, cache_fields(), "  ");
    out << "tracing:\n";
    schema::print(out, config.tracing, tracing_fields(), "  ");
    out << "context:\n";
    schema::print(out, config.context, context_fields(), "  ");
    out << "mcp_servers:" << (config.mcp_servers.empty() ? " []" : "") << '\n';
    for (const auto& m : config.mcp_servers)
        schema::print(out, m, mcp_server_fields(), "    ", "  - ");
    out << "mcp:\n";
    schema::print(out, config.mcp, mcp_serve_fields(), "  ");
    out << "pricing:\n";
    schema::print(out, config.pricing, pricing_fields(), "  ");
    out << "auth:\n";
    schema::print(out, config.auth, auth_fields(), "  ");
    out << "teams:" << (config.teams.empty() ? " []" : "") << '\n';
    for (const auto& t : config.teams) schema::print(out, t, team_fields(), "    ", "  - ");
    out << "guardrails:" << (config.guardrails.empty() ? " []" : "") << '\n';
    for (const auto& g : config.guardrails)
        schema::print(out, g, guardrail_fields(), "    ", "  - ");
    return out.str();
}

}  // namespace gateway::config
