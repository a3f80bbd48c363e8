#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/connection.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <memory>
#include <utility>
#include <vector>

namespace gateway::upstream {

namespace aws {
class credentials_provider;
}
class token_source;

// Idle keep-alive connections to one upstream, owned by one worker thread (so no lock): the most
// recently used connection is reused first, connections idle longer than pool_idle_timeout or
// beyond max_idle_connections are closed. Not thread-safe by design.
class pool {
public:
    // `aws_credentials`: what a Bedrock upstream's requests are signed with; `tokens`: the access
    // tokens a Vertex AI or Entra ID Azure upstream's requests carry (each null for the others).
    pool(const config::upstream_config& upstream, std::shared_ptr<net::ssl::context> tls_context,
         std::shared_ptr<aws::credentials_provider> aws_credentials = {},
         std::shared_ptr<token_source> tokens = {});
    ~pool();
    pool(pool&& other) noexcept
        : upstream_(other.upstream_),
          tls_context_(std::move(other.tls_context_)),
          aws_credentials_(std::move(other.aws_credentials_)),
          tokens_(std::move(other.tokens_)),
          resolved_(std::move(other.resolved_)),
          resolved_until_(other.resolved_until_),
          resolving_(std::move(other.resolving_)),
          idle_(std::move(other.idle_)),
          closed_(other.closed_),
          idle_gauge_(other.idle_gauge_),
          counted_idle_(std::exchange(other.counted_idle_, 0)) {}
    pool& operator=(pool&&) = delete;

    // An idle connection that still looks alive, or null. `probe`: ask the socket even when the
    // connection came back within the last second (for a request that must not go twice).
    std::unique_ptr<connection> take(bool probe = false);

    // A new, unopened connection for this upstream.
    std::unique_ptr<connection> make(net::any_io_executor executor) const;

    // The upstream's addresses for a new connection: resolved at most once per `resolve_ttl` on
    // this worker, and a lookup that is running is waited for rather than run again, so a storm
    // of new connections to a host name resolves it once (the resolver runs one getaddrinfo at a
    // time, on a thread of its own). A failed lookup is not kept.
    static constexpr auto resolve_ttl = std::chrono::seconds(30);
    net::awaitable<resolution> resolve(net::any_io_executor executor);

    // Keeps a connection whose last response was read completely and allowed keep-alive;
    // closes it instead once the pool was closed.
    void give_back(std::unique_ptr<connection> conn);

    // Closes every idle connection and keeps none from now on (the process is draining: a pooled
    // connection, and the deadline timer it may still hold, would only keep its thread alive).
    void close_all() {
        closed_ = true;
        idle_.clear();
        count_idle();
    }

    const config::upstream_config& upstream() const { return *upstream_; }
    // A Bedrock upstream's credentials, shared by every worker's pool; null for the others.
    aws::credentials_provider* aws_credentials() const { return aws_credentials_.get(); }
    // A Vertex AI or Entra ID Azure upstream's access tokens, shared by every worker's pool; null
    // for the others.
    token_source* tokens() const { return tokens_.get(); }
    // Whether the gateway authorises this upstream's requests with credentials of its own (one of
    // the two above): the client's own credentials never go there (upstream::authorize).
    bool holds_credentials() const { return aws_credentials_ || tokens_; }

private:
    void sweep(std::chrono::steady_clock::time_point now);
    void count_idle();  // the idle gauge follows idle_.size()

    const config::upstream_config* upstream_;
    std::shared_ptr<net::ssl::context> tls_context_;
    std::shared_ptr<aws::credentials_provider> aws_credentials_;
    std::shared_ptr<token_source> tokens_;
    // The addresses resolved last and until when they serve, and the lookup under way (its
    // waiters wait on `done`, which the lookup cancels when it ends).
    struct lookup {
        explicit lookup(net::any_io_executor e) : done(e) {}
        net::steady_timer done;
        resolution result;
        bool finished = false;
    };
    std::vector<net::ip::tcp::endpoint> resolved_;
    std::chrono::steady_clock::time_point resolved_until_{};
    std::shared_ptr<lookup> resolving_;
    std::vector<std::unique_ptr<connection>> idle_;  // oldest first
    bool closed_ = false;
    observability::gauge* idle_gauge_;
    std::size_t counted_idle_ = 0;
};

}  // namespace gateway::upstream
