#pragma once

#include "gateway/config/config.hpp"
#include "gateway/io/task_group.hpp"
#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <string>
#include <string_view>
#include <thread>
#include <vector>

// Active health probes (docs/routing.md), opt-in: each upstream whose probe interval is set
// (health.probe_interval, or its own probe_interval) is asked for its model list with the
// gateway's own key (an Entra ID Azure upstream's: its access token) — OpenAI-compatible `GET
// {base_url}/models`, Anthropic `GET /v1/models`, Gemini `GET {base_url}/models` — at once and then
// once per interval, on a new connection. A connect error, a timeout, 408, 429, a 5xx or a 401 (the
// gateway's key refused) leaves the upstream down on the health board; any other answer restores
// it: the server answers, with the gateway's key. Probes tell the Health page; routes keep choosing
// by what requests saw.
namespace gateway::upstream {

namespace net = boost::asio;

class prober {
public:
    // Starts a probe loop per upstream to probe, on a thread of its own. `upstreams` and
    // `board` outlive the prober. `tokens` holds, by upstream index, the access tokens an
    // upstream's requests carry (null, or missing, for one that has none).
    prober(const std::vector<config::upstream_config>& upstreams,
           const config::health_config& settings, health_board& board,
           const std::vector<std::shared_ptr<token_source>>& tokens = {});
    ~prober();
    prober(const prober&) = delete;
    prober& operator=(const prober&) = delete;

    // Cancels every probe (one in flight ends at once, untold) and waits for them to end; the
    // thread is joined. Safe to call twice.
    void stop();

    // The request a probe of `u` sends: GET of its model list, below its base path, with the
    // gateway's key (none when it has none), `authorization` (authorize()'s fields, for an
    // upstream the gateway holds the tokens of) and the fields its dialect needs.
    static std::string request_head(const config::upstream_config& u,
                                    std::string_view authorization = {});
    // What a probe's answer with `status` says of the upstream: "" (it answers) or the failure.
    static std::string judge(unsigned status);

private:
    net::awaitable<void> keep_probing(std::size_t index, config::duration interval);
    // One probe: "" or what failed.
    net::awaitable<std::string> probe(std::size_t index);

    const std::vector<config::upstream_config>& upstreams_;
    config::health_config settings_;
    health_board& board_;
    net::io_context io_;
    // The probe loops, owned here: stop() cancels them and the thread runs until they end.
    io::task_group tasks_;
    // One per upstream, by index: its address, TLS context and access tokens.
    std::vector<pool> pools_;
    std::thread thread_;
};

}  // namespace gateway::upstream
