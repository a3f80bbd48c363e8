#include "gateway/passthrough/headers.hpp"

#include "gateway/append.hpp"
#include "gateway/http/context.hpp"
#include "gateway/http/credentials.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/secret_names.hpp"
#include "gateway/upstream/authorize.hpp"
#include "gateway/upstream/connection.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/beast/core/string.hpp>

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

namespace gateway::passthrough {

namespace http = boost::beast::http;

namespace {

bool iequals(std::string_view a, std::string_view b) {
    return boost::beast::iequals(a, b);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// `target` without its `access_token` query parameters (the name percent-decoded, as Google
// reads it): Google's APIs take an OAuth token there as they take one in Authorization.
std::string without_access_token(std::string_view target) {
    auto q = target.find('?');
    std::string out(target.substr(0, q));
    if (q == std::string_view::npos) return out;
    char separator = '?';
    for (auto query = target.substr(q + 1); !query.empty();) {
        auto pair = query.substr(0, query.find('&'));
        query.remove_prefix(std::min(query.size(), pair.size() + 1));
        if (gateway::percent_decoded(pair.substr(0, pair.find('='))) == "access_token") continue;
        out += separator;
        out += pair;
        separator = '&';
    }
    return out;
}

}  // namespace

config::provider_kind forwarded_provider(const config::route_config& route,
                                         const std::vector<config::upstream_config>& upstreams,
                                         config::provider_kind spoken) {
    std::optional<config::provider_kind> one;
    for (const auto* list : {&route.targets, &route.on_context_window})
        for (const auto& t : *list) {
            auto p = upstreams[t.index].provider;
            if (one && *one != p) return spoken;
            one = p;
        }
    return one.value_or(spoken);
}

upstream_key translated_key(const gateway::http::request& req, bool virtual_key,
                            const config::upstream_config& up, bool may_forward) {
    using upstream::credential;
    auto own = [&]() -> upstream_key {
        return {up.api_key, up.api_key.empty() ? credential::none : credential::gateway};
    };
    if (upstream_key_replaces_client(up, virtual_key) || !may_forward) return own();
    auto presented = gateway::http::presented_key_of(req.base());
    if (presented.value.empty()) return own();
    return {std::move(presented.value), credential::client};
}

upstream::credential forwarded_credential(const gateway::http::request& req,
                                          const config::upstream_config& up, bool virtual_key) {
    using upstream::credential;
    if (upstream::authorized_by_gateway(up)) return credential::gateway;
    if (upstream_key_replaces_client(up, virtual_key))
        return up.api_key.empty() ? credential::none : credential::gateway;
    auto [key_name, prefix] = providers::key_field_of(up, providers::adapter_for(up.provider));
    // Azure takes a key as `api-key` and an Entra ID token as Authorization: either is the
    // credential the client sent for it.
    bool own_field =
        req.find(key_name) != req.end() ||
        (up.host == config::hosting::azure && req.find(http::field::authorization) != req.end());
    std::string_view target = req.target();
    if (own_field ||
        (up.provider == config::provider_kind::gemini &&
         target.find('?') != std::string_view::npos && gateway::http::has_query_key(target)))
        return credential::client;
    if (!up.api_key.empty()) return credential::gateway;
    bool presented = req.find(http::field::authorization) != req.end() ||
                     !gateway::http::presented_key_of(req.base()).value.empty();
    return presented ? credential::client : credential::none;
}

bool is_hop_by_hop(std::string_view name) {
    static constexpr std::string_view names[] = {"connection", "keep-alive",        "te",
                                                 "trailer",    "transfer-encoding", "upgrade"};
    for (auto n : names)
        if (iequals(name, n)) return true;
    return name.size() >= 6 && iequals(name.substr(0, 6), "proxy-");
}

namespace {

// The same for a field Beast has already named: the six hop-by-hop names are told by their
// enum, and only the proxy- prefix is compared (a request's dozen fields, each once).
bool is_hop_by_hop(http::field f, std::string_view name) {
    switch (f) {
        case http::field::connection:
        case http::field::keep_alive:
        case http::field::te:
        case http::field::trailer:
        case http::field::transfer_encoding:
        case http::field::upgrade:
            return true;
        default:
            return name.size() >= 6 && iequals(name.substr(0, 6), "proxy-");
    }
}

}  // namespace

void for_each_end_to_end(const http::fields& from, field_visitor visit) {
    // Fields named by Connection are hop-by-hop for this message only (RFC 9110 7.6.1).
    std::vector<std::string_view> named;
    auto [first, last] = from.equal_range(http::field::connection);
    for (auto it = first; it != last; ++it) {
        std::string_view list = it->value();
        while (!list.empty()) {
            auto comma = list.find(',');
            auto token = trim(list.substr(0, comma));
            if (!token.empty()) named.push_back(token);
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        }
    }
    for (const auto& f : from) {
        std::string_view name = f.name_string();
        if (is_hop_by_hop(f.name(), name) || f.name() == http::field::host ||
            f.name() == http::field::content_length)
            continue;
        bool listed = false;
        for (auto n : named) listed = listed || iequals(n, name);
        if (listed) continue;
        visit(f.name(), name, f.value());
    }
}

// The request head as the upstream sees it: same method, `target` below base_path (the client's
// path after its /v1 or /v1beta, with the query), and end-to-end headers; Host, x-request-id,
// Content-Length and (per `auth`) the key field of the upstream's provider set by the gateway.
// Written as bytes: building a Beast message would allocate a node per header only to
// serialize it again. The body is sent after it untouched.
std::string upstream_request_head(const gateway::http::request_context& ctx,
                                  const config::upstream_config& up, std::string_view target,
                                  std::string_view model, bool upgrade, bool virtual_key,
                                  const observability::trace_context* attempt) {
    const auto& req = ctx.req;
    auto [key_name, key_prefix] = providers::key_field_of(up, providers::adapter_for(up.provider));
    bool azure = up.host == config::hosting::azure;
    bool replace = upstream_key_replaces_client(up, virtual_key);
    bool gateway_auth = upstream::authorized_by_gateway(up);
    // Gemini's REST convention puts the key in the query: a replaced key goes from there too, and
    // from a gateway-authorised upstream's query any access token of the client's.
    std::string without_key;
    if ((replace || gateway_auth) && target.find('?') != std::string_view::npos &&
        gateway::http::has_query_key(target)) {
        without_key = gateway::http::without_query_key(target);
        target = without_key;
    }
    std::string without_token;
    if (gateway_auth && target.find('?') != std::string_view::npos) {
        without_token = without_access_token(target);
        target = without_token;
    }
    std::string head;
    head.reserve(512);  // under 1 KiB: glibc serves it from its per-thread cache
    append(head, {req.method_string(), " ", up.endpoint.base_path});
    upstream::append_wire_target(head, up, model, target);
    append(head, {" HTTP/1.1\r\nHost: "});
    upstream::append_host_header(head, up.endpoint);
    append(head, {"\r\n"});
    bool client_auth = false;
    bool bedrock = up.provider == config::provider_kind::bedrock;
    for_each_end_to_end(req, [&](boost::beast::http::field f, std::string_view name,
                                 std::string_view value) {
        // Beast knows none of the names compared below (only Expect, Authorization and
        // Content-Type, by their field): a field it knows is not compared with them.
        bool unnamed = f == boost::beast::http::field::unknown;
        // Expect was answered by the gateway, which forwards the whole body at once.
        if (f == boost::beast::http::field::expect ||
            (unnamed && boost::beast::iequals(name, "x-request-id")))
            return;
        if (attempt && unnamed &&
            (boost::beast::iequals(name, "traceparent") ||
             boost::beast::iequals(name, "tracestate")))
            return;
        if (virtual_key && (f == boost::beast::http::field::authorization ||
                            (unnamed && (boost::beast::iequals(name, "x-api-key") ||
                                         boost::beast::iequals(name, "x-goog-api-key")))))
            return;
        // An upstream the gateway authorises (upstream::authorize: Bedrock's signature, Vertex's
        // and Entra ID's tokens) hears only that: the client's own credentials never go there,
        // nor the project Google would bill for the gateway's token.
        if (gateway_auth && (f == boost::beast::http::field::authorization ||
                             (unnamed && (boost::beast::iequals(name, "x-api-key") ||
                                          boost::beast::iequals(name, "api-key") ||
                                          boost::beast::iequals(name, "x-goog-api-key") ||
                                          boost::beast::iequals(name, "x-goog-user-project")))))
            return;
        // Bedrock's signature covers the Content-Type it writes; AWS fields never go there.
        if (bedrock &&
            (f == boost::beast::http::field::content_type ||
             (unnamed && name.size() >= 6 && boost::beast::iequals(name.substr(0, 6), "x-amz-"))))
            return;
        if (boost::beast::iequals(name, key_name) ||
            (azure && f == boost::beast::http::field::authorization)) {
            if (replace) return;
            client_auth = true;
        }
        append(head, {name, ": ", value, "\r\n"});
    });
    if (bedrock) append(head, {"Content-Type: application/json\r\n"});
    append(head, {"x-request-id: ", ctx.request_id, "\r\n"});
    if (attempt) append(head, {observability::trace_fields(*attempt)});
    if (!gateway_auth && !up.api_key.empty() && (replace || !client_auth))
        append(head, {key_name, ": ", key_prefix, up.api_key, "\r\n"});
    if (upgrade)
        append(head, {"Connection: Upgrade\r\nUpgrade: ", req[boost::beast::http::field::upgrade],
                      "\r\n"});
    auto verb = req.method();
    if (!req.body().empty() || verb == boost::beast::http::verb::post ||
        verb == boost::beast::http::verb::put || verb == boost::beast::http::verb::patch) {
        char length[24];
        auto end = std::to_chars(length, length + sizeof length, req.body().size()).ptr;
        append(head, {"Content-Length: ", std::string_view(length, end - length), "\r\n"});
    }
    append(head, {"\r\n"});
    return head;
}

}  // namespace gateway::passthrough
