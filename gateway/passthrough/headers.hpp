#pragma once

#include "gateway/config/config.hpp"
#include "gateway/http/context.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/fields.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace gateway::passthrough {

// The one key rule of every path to an upstream (forwarded bytes, translated requests, the
// WebSocket tunnel): the upstream gets its own `api_key` instead of the client's key under
// `auth: replace`, and whenever a virtual key authenticated the client, wherever it was sent
// (a header or `?key=`) — a virtual key never leaves the gateway.
inline bool upstream_key_replaces_client(const config::upstream_config& up, bool virtual_key) {
    return up.auth == config::auth_mode::replace || virtual_key;
}

// The provider a client's forwarded credential was presented for: the provider of every target
// of `route` when they share one (a model that lives with one provider; a model without a route
// of the configuration is such a route), else the provider whose dialect the client speaks
// (`spoken`). A forwarded credential only ever reaches targets of that provider; the others use
// their own api_key, or cannot be used for the request.
config::provider_kind forwarded_provider(const config::route_config& route,
                                         const std::vector<config::upstream_config>& upstreams,
                                         config::provider_kind spoken);

// The key a request the gateway encodes itself (a translation) carries to `up`, and whose it is:
// the upstream's own under upstream_key_replaces_client (`virtual_key`: a virtual key
// authenticated the client); else the key the client presented in `req` in any of the dialects'
// places when `may_forward` (the target is of forwarded_provider()); else the upstream's own;
// else none (empty).
struct upstream_key {
    std::string value;
    upstream::credential whose = upstream::credential::none;
};
upstream_key translated_key(const http::request& req, bool virtual_key,
                            const config::upstream_config& up, bool may_forward);

// Whose credential the target hears for a forwarded request (upstream_request_head's choice):
// the upstream's own under upstream_key_replaces_client (none if it has none); the client's when
// it sent the field of the upstream's provider (or Gemini's `?key=`); the upstream's own when it
// has one; else the client's if it presented anything (Authorization of any scheme, a key
// field), or none.
upstream::credential forwarded_credential(const http::request& req,
                                          const config::upstream_config& up, bool virtual_key);

// Connection, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade (RFC 9110 7.6.1).
bool is_hop_by_hop(std::string_view name);

// Whether an answer's Content-Type is text/event-stream. Its fields are walked in order: Beast's
// lookup by name costs a case-insensitive tree search (about 600 instructions per answer).
template <class Fields>
bool is_event_stream(const Fields& fields) {
    for (const auto& f : fields)
        if (f.name() == boost::beast::http::field::content_type)
            return boost::beast::iequals(f.value().substr(0, 17), "text/event-stream");
    return false;
}

// Whether an answer's Content-Type is AWS's binary event stream (Bedrock's streaming answers).
template <class Fields>
bool is_aws_event_stream(const Fields& fields) {
    for (const auto& f : fields)
        if (f.name() == boost::beast::http::field::content_type)
            return boost::beast::iequals(f.value().substr(0, 34),
                                         "application/vnd.amazon.eventstream");
    return false;
}

// A non-owning reference to a visitor called with (field, name, value), valid for the call it is
// passed to. A std::function would allocate for the forwarding lambdas (they capture more than
// two pointers) on every proxied request.
class field_visitor {
public:
    template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, field_visitor>)
        field_visitor(F&& f)  // NOLINT: converting, as a std::function would be
        : object_(const_cast<void*>(static_cast<const void*>(&f))),
          call_([](void* o, boost::beast::http::field field, std::string_view name,
                   std::string_view value) {
              (*static_cast<std::remove_reference_t<F>*>(o))(field, name, value);
          }) {}

    void operator()(boost::beast::http::field field, std::string_view name,
                    std::string_view value) const {
        call_(object_, field, name, value);
    }

private:
    void* object_;
    void (*call_)(void*, boost::beast::http::field, std::string_view, std::string_view);
};

// Calls `visit(field, name, value)` for every end-to-end field of `from`, in order, with the
// sender's spelling of the name. Skips hop-by-hop fields, fields named in `from`'s Connection
// header, and `Host` and `Content-Length`, which every forwarded message sets for itself.
void for_each_end_to_end(const boost::beast::http::fields& from, field_visitor visit);

// The request head as the upstream sees it: same method, `target` below base_path (the client's
// path after its /v1 or /v1beta, with the query; upstream::wire_target's for `model`, the name
// the upstream hears, on a host with paths of its own), and end-to-end headers; Host, x-request-id,
// Content-Length (of the client's body: a body sent instead must be as long) and (per `auth`) the
// key field of the upstream's provider set by the gateway. Written as bytes: building a Beast
// message would allocate a node per header only to serialize it again. With `attempt` (the
// attempt's traced CLIENT span) its traceparent and tracestate go instead of the client's.
std::string upstream_request_head(const http::request_context& ctx,
                                  const config::upstream_config& up, std::string_view target,
                                  std::string_view model, bool upgrade, bool virtual_key = false,
                                  const observability::trace_context* attempt = nullptr);

}  // namespace gateway::passthrough
