#pragma once

#include "gateway/config/config.hpp"
#include "gateway/io/task_group.hpp"
#include "gateway/pricing/price_table.hpp"
#include "gateway/providers/model_lists.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

// The model catalogue (docs/routing.md, "Which model goes where"): which model names the
// gateway serves, and what `GET /v1/models` lists. A model is served when a route or an
// upstream's `models` glob takes it; the listing is made of the routes' names, the names the
// upstreams declare (`models` without wildcards, `model_map`) and, for an upstream with a glob,
// its own model list, asked of it and kept for `model_list_ttl`, cut to the names its globs take.
namespace gateway::upstream {

namespace net = boost::asio;

class pool;
class connection;

// How long a listing waits for an upstream's first list, and how long the list's pages may take
// each (the answer's head, then each read of its body).
struct catalog_settings {
    config::duration first_wait{3'000};
    config::duration list_timeout{10'000};
};

class model_catalog {
public:
    using models = std::vector<providers::listed_model>;
    // One optional list per upstream, by index: nullopt where none is known.
    using lists = std::vector<std::optional<models>>;

    // Who asks an upstream for its model list. `gateway`: the catalogue, with the upstream's own
    // api_key (none when it has none), and keeps it; `client`: each listing, with the client's
    // credentials, as a request forwarded to it would (an OpenAI-compatible upstream under
    // `auth: forward` without an api_key: its list is the client's to see); `none`: it is not
    // asked (no glob in its `models`, `model_list_ttl: 0`, or a Bedrock upstream).
    enum class source { none, gateway, client };

    // `upstreams` and `routes` outlive the catalogue. Starts nothing: the thread that asks the
    // upstreams starts with the first listing.
    model_catalog(const std::vector<config::upstream_config>& upstreams,
                  const std::vector<config::route_config>& routes, catalog_settings settings = {});
    ~model_catalog();
    model_catalog(const model_catalog&) = delete;
    model_catalog& operator=(const model_catalog&) = delete;

    // Whether a request that names `model` has somewhere to go: a route's glob or an
    // upstream's `models` glob takes it. Immutable; any thread.
    bool serves(std::string_view model) const;

    source source_of(std::size_t upstream) const { return sources_[upstream]; }

    // The lists of the upstreams the catalogue asks itself (source `gateway`): a list younger
    // than its model_list_ttl as it is; an older one as it is, while a new one is asked for in
    // the background; none yet: the first ask is waited for, first_wait at most (only the
    // first: once it ended, failed or not, no listing waits again). A failed ask keeps the
    // list before it and is logged. Any thread: the work is done on the catalogue's own thread.
    net::awaitable<lists> fetched();

    // What a client may call: the routes' names, then, upstream by upstream, its declared names
    // and its list (`listed`, by index) cut to the names its globs take; each name once, and
    // only those `allowed` takes (a virtual key's model globs; empty: every name). With
    // `prices`, each carries what a request for it is charged: its upstream's price of the name
    // that upstream hears (after its model_map); a route's, the price its targets share (none
    // when they differ: which one answers decides).
    models merge(const lists& listed, const std::vector<std::string>& allowed,
                 const pricing::price_table* prices = nullptr) const;

    // Every model name the catalogue knows now (declared, in the lists it keeps, and in the
    // last list a client was given of an upstream of source `client`), for the names nearest
    // to an unknown one. Any thread.
    std::vector<std::string> known_names() const;
    // The names a listing was given by upstream `index` (source `client`), for known_names.
    void remember(std::size_t index, const models& listed);

    // Cancels the asks in flight and joins the thread; a listing after it gets no list. Safe
    // to call twice, and when nothing started.
    void stop();

private:
    struct slot;
    // Starts the thread once; false after stop().
    // Starts the thread at the first call. While the returned hold lives, the thread runs on: a
    // listing keeps it until its gather has run, so that a stop() coming between this call and
    // the spawn cannot leave the listing waiting on a thread that ended. Nullopt once stopped.
    using hold = net::executor_work_guard<net::io_context::executor_type>;
    std::optional<hold> start();
    // On the catalogue's thread.
    net::awaitable<lists> gather();
    net::awaitable<void> refresh(std::size_t index);
    // One ask of an upstream's list, all its pages: "" or what failed.
    net::awaitable<std::string> ask(std::size_t index, models& out);

    const std::vector<config::upstream_config>& upstreams_;
    const std::vector<config::route_config>& routes_;
    catalog_settings settings_;
    std::vector<source> sources_;  // by upstream index

    std::mutex start_mutex_;  // start() and stop(), from any thread
    bool started_ = false;
    std::atomic<bool> stopped_{false};
    net::io_context io_;
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
    // The asks, owned here: stop() cancels them and the thread runs until they have ended.
    io::task_group tasks_;
    std::vector<std::unique_ptr<slot>> slots_;  // by upstream index; the thread's only
    std::thread thread_;

    mutable std::mutex names_mutex_;
    std::vector<std::vector<std::string>> listed_names_;  // by upstream index, for known_names
};

}  // namespace gateway::upstream
