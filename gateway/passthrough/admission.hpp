#pragma once

#include "gateway/config/config.hpp"
#include "gateway/http/context.hpp"
#include "gateway/http/reply.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gateway::passthrough {

namespace net = boost::asio;

// What a request asks of the models, as far as the gateway can tell before forwarding it
// (models_of reads it from the path, a JSON or multipart body, or a batch).
struct requested_models {
    std::vector<std::string> names;  // every model the request names
    bool established = false;        // `names` is all of them
    bool model_less = false;         // the request uses no model by nature (a listing, a file)
    bool tunnel = false;             // a WebSocket tunnel: its frames are not read
};

// The price of one target a request may reach: the model that target hears, at its upstream's
// price (null: the gateway has none). Points into the price table of the configuration serving
// the request, which outlives it.
struct target_price {
    std::string upstream;
    std::string model;
    const config::price_entry* price = nullptr;
};

// How the admission learns those prices when it needs them (a key with a USD budget): looking
// them up takes a price per target and copies names, work a request through a key without one
// does not do.
using price_lookup = std::function<std::vector<target_price>()>;

// What a request used, as settlement found it: its tokens (nullopt: unknown) and what it cost
// (nullopt: unknown, or its model had no price). A request refused or failed before the model ran
// used nothing: 0 of both.
struct request_usage {
    std::optional<std::uint64_t> tokens;
    std::optional<double> usd;
};

// Who a request came as, once identified: the key's id and name (for the access log, the
// ledger and metrics), and what the admission keeps of it for admit() (opaque here).
struct caller {
    std::string key_id;
    std::string key_name;
    std::shared_ptr<const void> key;
    std::vector<std::string> models;  // the key's model globs (empty: every model), for listings
    std::string team;                 // the key's team ("" for none): guardrails select by it
};

// A request let in: handed back to settle() when it ends (`claim` is the admission's own).
struct ticket {
    caller who;
    std::shared_ptr<void> claim;
};

// Who may use /v1 and how much: the passthrough asks, admin/ answers (its gatekeeper, over the
// virtual keys and their limits). identify() reads the request head, admit() decides with the
// destination known, settle() gives back what the answer did not use. Thread-safe.
class admission {
public:
    virtual ~admission() = default;

    // false while no virtual key was ever configured: every request goes on as before.
    virtual bool active() const = 0;

    // The caller the request head presents; the reply refusing it (401) otherwise.
    virtual std::variant<caller, http::reply> identify(const http::request& req,
                                                       std::int64_t now_ms) const = 0;

    // Lets the caller's request for `asked` in (counted against its limits), or the reply
    // refusing it (403 for a model it may not use, 429 past a limit). `prices` gives the price of
    // each target the request may reach (a route's targets, or the one upstream); none when it
    // costs nothing whatever it names (a model listing, counting tokens).
    virtual net::awaitable<std::variant<ticket, http::reply>> admit(caller who,
                                                                    const http::request& req,
                                                                    const requested_models& asked,
                                                                    const price_lookup& prices) = 0;

    // The request ended having used `used`.
    virtual net::awaitable<void> settle(ticket admitted, request_usage used) = 0;
};

}  // namespace gateway::passthrough
