#include "gateway/http/origin_rule.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/string.hpp>

#include <algorithm>

namespace gateway::http {

namespace {

namespace bhttp = beast::http;

// Host names are ASCII: lowered without the locale's tolower, which every request's Host met.
std::string lower(std::string_view text) {
    std::string out(text);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// The host of "name", "name:port" or "[v6]:port", in lower case, without brackets; "" when the
// authority is malformed.
std::string host_part(std::string_view authority) {
    if (authority.starts_with('[')) {
        auto close = authority.find(']');
        if (close == std::string_view::npos) return {};
        auto rest = authority.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') return {};
        return lower(authority.substr(1, close - 1));
    }
    auto colon = authority.find(':');
    if (colon != std::string_view::npos && authority.find(':', colon + 1) == std::string_view::npos)
        authority = authority.substr(0, colon);
    return lower(authority);
}

bool is_ip_literal(const std::string& host) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(host, ec);
    return !ec;
}

bool is_loopback_name(const std::string& host) {
    if (host == "localhost" || host.ends_with(".localhost")) return true;
    boost::system::error_code ec;
    auto address = boost::asio::ip::make_address(host, ec);
    return !ec && address.is_loopback();
}

// The authority of "scheme://authority[/path]"; "" when `origin` is not of that form.
std::string_view origin_authority(std::string_view origin) {
    auto scheme = origin.find("://");
    if (scheme == std::string_view::npos) return {};
    auto authority = origin.substr(scheme + 3);
    return authority.substr(0, authority.find('/'));
}

// The default port of an origin's scheme, so that "http://h" and Host "h:80" are one origin.
std::string_view default_port(std::string_view origin) {
    if (boost::beast::iequals(origin.substr(0, 8), "https://")) return "443";
    return "80";
}

// The port of "name:port" or "[v6]:port", or `fallback` when it names none.
std::string_view port_part(std::string_view authority, std::string_view fallback) {
    auto bracket = authority.rfind(']');
    auto colon = authority.rfind(':');
    if (colon == std::string_view::npos) return fallback;
    if (bracket != std::string_view::npos)
        return colon > bracket ? authority.substr(colon + 1) : fallback;
    if (authority.find(':') != colon) return fallback;  // a bare v6 address: no port
    return authority.substr(colon + 1);
}

}  // namespace

origin_rule::origin_rule(const std::vector<std::string>& allowed, std::string_view listen_host) {
    for (const auto& name : allowed) {
        if (name == "*") any_ = true;
        // Written as names, with or without a port ("gateway.example.com:443"): the name counts.
        else if (auto host = host_part(name); !host.empty())
            names_.push_back(std::move(host));
    }
    if (listen_host != "0.0.0.0" && listen_host != "::" && !listen_host.empty())
        names_.push_back(host_part(listen_host));
}

bool origin_rule::listed(std::string_view host) const {
    return any_ || std::find(names_.begin(), names_.end(), host) != names_.end();
}

bool origin_rule::allowed_host(std::string_view authority) const {
    auto host = host_part(authority);
    if (host.empty()) return false;
    // The listed names first: the usual Host is the listen address, found without parsing it.
    return listed(host) || is_ip_literal(host) || is_loopback_name(host);
}

bool origin_rule::allowed_origin(std::string_view origin, std::string_view host) const {
    auto authority = origin_authority(origin);
    if (authority.empty()) return false;  // also "null" (a sandboxed page)
    auto name = host_part(authority);
    if (name.empty()) return false;
    if (is_loopback_name(name) || listed(name)) return true;
    // Same origin: the page was served by this very name and port.
    auto fallback = default_port(origin);
    return !host.empty() && name == host_part(host) &&
           port_part(authority, fallback) == port_part(host, fallback);
}

bool origin_rule::allows(const bhttp::request_header<>& head) const {
    // The first Host and every Origin, found in one pass over the fields by their enum: a lookup
    // by name compares names case-insensitively, and every request is checked.
    std::string_view host;
    bool host_seen = false;
    std::string_view origin;
    std::size_t origins = 0;
    for (const auto& f : head) {
        if (f.name() == bhttp::field::host && !host_seen) {
            host = f.value();
            host_seen = true;
        } else if (f.name() == bhttp::field::origin) {
            origin = f.value();
            ++origins;
        }
    }
    // HTTP/1.0 without Host: a browser always sends one.
    if (!host.empty() && !allowed_host(host)) return false;
    if (origins == 0) return true;
    if (origins > 1) return false;
    return allowed_origin(origin, host);
}

guard origin_rule::as_guard() const {
    return {"",
            [this](const bhttp::request_header<>& head, const auth::principal*) {
                return allows(head);
            },
            errc::forbidden,
            "The Host or Origin header names a host this gateway does not answer to (DNS "
            "rebinding and cross-site protection); list it in `server.allowed_hosts`."};
}

guard json_body_guard(std::string_view prefix) {
    auto allow = [](const bhttp::request_header<>& head, const auth::principal*) {
        auto verb = head.method();
        if (verb != bhttp::verb::post && verb != bhttp::verb::put && verb != bhttp::verb::patch &&
            verb != bhttp::verb::delete_)
            return true;
        auto length = head[bhttp::field::content_length];
        bool body = head.find(bhttp::field::transfer_encoding) != head.end() ||
                    (!length.empty() && length != "0");
        if (!body) return true;
        std::string_view type = head[bhttp::field::content_type];
        type = type.substr(0, type.find(';'));
        while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
        auto slash = type.find('/');
        if (slash == std::string_view::npos) return false;
        auto subtype = type.substr(slash + 1);
        return boost::beast::iequals(type.substr(0, slash), "application") &&
               (boost::beast::iequals(subtype, "json") ||
                (subtype.size() > 5 &&
                 boost::beast::iequals(subtype.substr(subtype.size() - 5), "+json")));
    };
    return {prefix, allow, errc::unsupported_media_type,
            "The gateway's API takes JSON: send the body with `Content-Type: application/json`."};
}

}  // namespace gateway::http
