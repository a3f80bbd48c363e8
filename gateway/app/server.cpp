#include "gateway/app/server.hpp"

#include "gateway/admin/api.hpp"
#include "gateway/admin/budget_alerts.hpp"
#include "gateway/admin/gatekeeper.hpp"
#include "gateway/admin/key_ring.hpp"
#include "gateway/admin/limiter.hpp"
#include "gateway/admin/redis_limiter.hpp"
#include "gateway/admin/teams.hpp"
#include "gateway/admin/usage_ledger.hpp"
#include "gateway/auth/roles.hpp"
#include "gateway/auth/sessions.hpp"
#include "gateway/auth/sign_in.hpp"
#include "gateway/clock.hpp"
#include "gateway/console/assets.hpp"
#include "gateway/console/console.hpp"
#include "gateway/context/api.hpp"
#include "gateway/context/mcp_endpoint.hpp"
#include "gateway/context/mcp_servers.hpp"
#include "gateway/error.hpp"
#include "gateway/http/listener.hpp"
#include "gateway/http/response.hpp"
#include "gateway/ids.hpp"
#include "gateway/io/offload.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/mcp/hub.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/observability/trace.hpp"
#include "gateway/passthrough/handler.hpp"
#include "gateway/store/state_store.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/asio/post.hpp>

#include <filesystem>
#include <latch>

namespace gateway::app {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

net::awaitable<void> healthz(http::request_context& ctx) {
    co_await http::write_response(ctx, 200, "application/json", R"({"status":"ok"})");
}

net::awaitable<void> readyz(http::request_context& ctx) {
    if (ctx.draining)
        co_await http::write_response(ctx, 503, "application/json", R"({"status":"draining"})");
    else
        co_await http::write_response(ctx, 200, "application/json", R"({"status":"ready"})");
}

net::awaitable<void> metrics_page(http::request_context& ctx) {
    auto text = observability::metrics().render();
    ctx.status = 200;
    co_await http::write_response(ctx, 200, "text/plain; version=0.0.4; charset=utf-8", text);
}

// Answers 405 for methods the gateway does not serve on a path it owns, instead of forwarding.
// A handler that only computes its reply (the MCP server views), written as the API's are.
net::awaitable<void> mcp_reply(http::request_context& ctx, net::awaitable<http::reply> answer) {
    auto r = co_await std::move(answer);
    co_await http::write_reply(ctx, std::move(r));
}

net::awaitable<void> not_allowed(http::request_context& ctx) {
    co_await http::write_error(ctx, errc::method_not_allowed);
}

}  // namespace

struct server::v1_face {
    v1_face(std::shared_ptr<const generation> g, const config::gateway_config& running,
            passthrough::admission* gate, upstream::usage_sink* ledger,
            guardrails::model_caller* moderation)
        : built_from(std::move(g)),
          handler(running.server, built_from->config.upstreams, *built_from->routing,
                  built_from->tls_contexts, built_from->aws_credentials, built_from->token_sources,
                  gate, ledger,
                  passthrough::cache_setup{built_from->cache.get(), &built_from->config.cache},
                  built_from->prices.get(),
                  passthrough::guard_setup{built_from->guardrails.get(), built_from->webhooks.get(),
                                           moderation}) {}

    std::shared_ptr<const generation> built_from;
    passthrough::handler handler;
};

struct server::v1_slot {
    std::shared_ptr<v1_face> now;
    std::vector<std::weak_ptr<v1_face>> before;

    // Each face that may still serve a request: the current one and those retired whose last
    // request has not ended.
    template <class F>
    void each(F f) {
        std::erase_if(before, [](const auto& w) { return w.expired(); });
        if (now) f(now->handler);
        for (auto& w : before)
            if (auto face = w.lock()) f(face->handler);
    }
};

server::server(config::gateway_config config)
    : config_(std::move(config)), replica_(random_id("replica-", 6)) {}

server::~server() {
    stop();
    wait();
    // The generations go before the workers: what they hold (the Redis cache's connections, the
    // handlers' pools) lives on the workers' io_contexts. The engine let go of its own in wait().
    slots_.clear();
    std::lock_guard lock(current_mutex_);
    generation_.reset();
}

std::string server::reload_workflows() {
    return context_ ? context_->reload_workflows() : std::string();
}

std::shared_ptr<const generation> server::current() const {
    std::lock_guard lock(current_mutex_);
    return generation_;
}

std::shared_ptr<server::v1_face> server::make_face(std::shared_ptr<const generation> g) {
    return std::make_shared<v1_face>(std::move(g), config_, gate_.get(), &context_->ledger(),
                                     &context_->moderation());
}

namespace {

// Anthropic and Gemini always want a key; the agent's calls and requests translated from another
// dialect carry none but the upstream's own.
void warn_of_missing_keys(const std::vector<config::upstream_config>& upstreams) {
    for (const auto& up : upstreams)
        if ((up.provider == config::provider_kind::anthropic ||
             up.provider == config::provider_kind::gemini) &&
            up.host == config::hosting::direct && up.api_key.empty())
            observability::log_warn(
                "upstream `" + up.name + "` (" +
                std::string(providers::provider_name(up.provider)) +
                ") has no api_key: the agent's calls and requests translated to it from another "
                "dialect reach it without a key and will be refused; set `api_key` (e.g. "
                "${" +
                (up.provider == config::provider_kind::anthropic ? "ANTHROPIC_API_KEY"
                                                                 : "GEMINI_API_KEY") +
                "})");
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

}  // namespace

reload_outcome server::reload(config::gateway_config next) {
    reload_outcome outcome;
    std::lock_guard lock(reload_mutex_);
    outcome.generation = generation_ ? generation_->number : 0;
    if (stopping_ || !generation_) {
        outcome.error = stopping_ ? "the gateway is stopping" : "the gateway has not started";
        return outcome;
    }
    outcome.restart_needed = keep_restart_sections(config_, next);
    auto built = build_generation(std::move(next), generation_.get(), replica_);
    if (!built) {
        outcome.error = built.error;
        return outcome;
    }
    auto g = std::move(*built.value);
    // Keys first: a request admitted by a key the new file removed is refused from here on.
    for (const auto& name : keys_->declare(g->config.admin.keys))
        observability::log_warn("virtual key `" + name +
                                "` has the secret of another key; it is not used");
    teams_->declare(g->config.teams);
    gate_->configure(g->config.admin);
    // A key or team new to the limiter, or whose budget period changed, starts from what it
    // spent.
    try {
        io::run_blocking(context_->ledger().flush());
        io::run_blocking(
            admin::seed_from_store(*limiter_, context_->store(), keys_->all(), now_ms()));
        io::run_blocking(
            admin::seed_teams_from_store(*limiter_, context_->store(), *teams_, *keys_, now_ms()));
    } catch (const std::exception& e) {
        observability::log_warn(std::string("cannot read the keys' spend from the store: ") +
                                e.what());
    }
    context_->use(g);
    // Each worker switches on its own thread, between two requests; the retired face closes its
    // idle connections and ends with the last request it serves.
    std::latch switched(static_cast<std::ptrdiff_t>(slots_.size()));
    for (std::size_t i = 0; i < slots_.size(); ++i)
        net::post(workers_[i]->io(), [this, slot = slots_[i].get(), g, &switched] {
            auto before = std::exchange(slot->now, make_face(g));
            before->handler.close_idle();
            slot->before.push_back(before);
            switched.count_down();
        });
    switched.wait();
    std::shared_ptr<generation> before;
    {
        std::lock_guard current(current_mutex_);
        before = std::exchange(generation_, g);
    }
    // The retired generation's background work (active probes, model-list asks) ends here, off
    // the workers' threads; the requests it still serves finish on it.
    before->routing->stop();
    outcome.applied = true;
    outcome.generation = g->number;
    warn_of_missing_keys(g->config.upstreams);
    observability::log_info("configuration reloaded (generation " + std::to_string(g->number) +
                            "): " + std::to_string(g->config.upstreams.size()) + " upstream(s), " +
                            std::to_string(g->config.routes.size()) + " route(s), " +
                            std::to_string(g->config.admin.keys.size()) + " declared key(s)" +
                            (outcome.restart_needed.empty() ? std::string()
                                                            : "; needs a restart to change: " +
                                                                  joined(outcome.restart_needed)));
    return outcome;
}

reload_outcome server::reload_file() {
    reload_outcome outcome;
    auto loaded = config::load_file(config_.source);
    if (!loaded) {
        outcome.error = loaded.error;
        outcome.generation = current()->number;
    } else {
        outcome = reload(std::move(*loaded.value));
    }
    if (!outcome.applied)
        observability::log_error("configuration not reloaded, the running one stays: " +
                                 outcome.error);
    outcome.workflows_error = reload_workflows();
    return outcome;
}

net::awaitable<http::reply> server::reload_request(http::request_context&) {
    auto outcome = co_await io::run_on(reloads_.get_executor(), [this] { return reload_file(); });
    if (!outcome.applied) co_return http::reply::error(errc::invalid_config, outcome.error);
    boost::json::array restart;
    for (const auto& name : outcome.restart_needed) restart.emplace_back(name);
    boost::json::object body{{"reloaded", true},
                             {"generation", outcome.generation},
                             {"restart_needed", std::move(restart)}};
    if (!outcome.workflows_error.empty()) body["workflows_error"] = outcome.workflows_error;
    co_return http::reply::json(200, body);
}

namespace {

// The address to listen on: an IP literal, or the first address a host name resolves to.
config::parsed<tcp::endpoint> listen_endpoint(const config::listen_address& listen) {
    boost::system::error_code ec;
    auto address = net::ip::make_address(listen.host, ec);
    if (ec) {
        net::io_context resolve_io;
        tcp::resolver resolver(resolve_io);
        auto results = resolver.resolve(listen.host, std::to_string(listen.port), ec);
        if (ec || results.empty())
            return config::parsed<tcp::endpoint>::fail("cannot resolve listen address `" +
                                                       listen.host + "`: " + ec.message());
        address = results.begin()->endpoint().address();
    }
    return {tcp::endpoint(address, listen.port), {}};
}

}  // namespace

// Operations: metrics, virtual keys with their limits (shared by replicas through Redis or
// seeded from the store), the response cache and the admin API. The error, or "".
std::string server::start_operations() {
    auto& metrics = observability::metrics();
    metrics.on = config_.metrics.enabled;
    metrics.key_labels = config_.metrics.key_labels;
    keys_ = std::make_unique<admin::key_ring>(config_.admin.keys);
    teams_ = std::make_unique<admin::team_book>(config_.teams);
    auto adopt_keys = [this] {
        for (const auto& name : keys_->adopt(io::run_blocking(context_->store().keys())))
            observability::log_warn("virtual key `" + name +
                                    "` has the secret of another key; it is not used");
        teams_->adopt(io::run_blocking(context_->store().teams()));
    };
    if (auto* replicas = context_->store().replicas())
        // A key made, changed or revoked on another replica holds here as soon as the store's
        // notification arrives (read on the listener's thread, which blocks nothing else).
        replicas->on_keys_changed([adopt_keys] {
            try {
                adopt_keys();
            } catch (const std::exception& e) {
                observability::log_warn(std::string("cannot read the virtual keys: ") + e.what());
            }
        });
    // Read after the callback is in place, so a key made meanwhile is not missed.
    try {
        adopt_keys();
    } catch (const std::exception& e) {
        return std::string("cannot read the virtual keys: ") + e.what();
    }
    if (config_.limits.backend == config::limits_backend::redis)
        // limits.redis_url was read when the first generation was built (its health share).
        limiter_ = std::make_unique<admin::redis_limiter>(config_.limits);
    else
        limiter_ = std::make_unique<admin::memory_limiter>();
    // Budgets survive a restart: each key starts its period with what the store recorded.
    io::run_blocking(admin::seed_from_store(*limiter_, context_->store(), keys_->all(), now_ms()));
    io::run_blocking(
        admin::seed_teams_from_store(*limiter_, context_->store(), *teams_, *keys_, now_ms()));
    alerts_ = std::make_unique<admin::budget_alerts>(config_.admin.budget_alerts);
    gate_ = std::make_unique<admin::gatekeeper>(*keys_, *teams_, *limiter_, config_.admin,
                                                alerts_.get());
    // The cookie is Secure when the browser reaches the gateway over https (the callback's
    // address says how; TLS may end at a proxy in front).
    bool secure = config_.auth.oidc.redirect_url.starts_with("https://");
    sessions_ = std::make_unique<auth::sessions>(config_.auth, config_.admin.api_key, secure,
                                                 context_->store());
    sign_in_ = std::make_unique<auth::sign_in>(config_.auth, *sessions_, context_->store());
    if (!config_.admin.api_key.empty() || !config_.auth.oidc.issuer.empty())
        admin_ = std::make_unique<admin::api>(
            *keys_, *teams_, context_->store(), context_->ledger(), *limiter_, [this] {
                auto g = current();
                return std::shared_ptr<upstream::routing>(g, g->routing.get());
            });
    return {};
}

// Metrics on an address of their own (metrics.listen: a port only the scraper reaches), served by
// a worker of their own. The error, or "".
std::string server::listen_for_metrics(const http::handler& scrape) {
    if (!config_.metrics.enabled || !config_.metrics.listen) return {};
    const auto& where = *config_.metrics.listen;
    boost::system::error_code address_ec;
    auto metrics_address = net::ip::make_address(where.host, address_ec);
    if (address_ec) return "metrics.listen: `" + where.host + "` is not an IP address";
    std::vector<http::route> routes{{"GET", "/metrics", false, scrape}};
    auto w = std::make_unique<http::worker>(config_.server, false, http::router(std::move(routes)));
    tcp::endpoint bound;
    if (auto bind_ec = w->listen(tcp::endpoint(metrics_address, where.port), bound); bind_ec)
        return "cannot listen on metrics.listen " + where.host + ":" + std::to_string(where.port) +
               ": " + bind_ec.message();
    metrics_port_ = bound.port();
    workers_.push_back(std::move(w));
    return {};
}

// One worker: the route table over this worker's /v1 handler (`forward`), the Context API, the
// console, MCP and the admin API, the guards every request head passes, and the drain hooks.
std::unique_ptr<http::worker> server::make_worker(v1_slot& slot, const http::handler& scrape) {
    auto& api = context_->api();
    auto* mcp = &context_->mcp();
    auto* mcp_server = context_->mcp_endpoint();
    // The face current when a request arrives serves it to its end, a reload notwithstanding.
    auto forward = [slot = &slot](http::request_context& c) {
        auto face = slot->now;
        auto& handler = face->handler;
        return handler(c, std::move(face));
    };
    // The route table, aligned so it reads like the API reference.
    auto& sign_in = *sign_in_;
    // clang-format off
    using a = context::api;
    using s = auth::sign_in;
    std::vector<http::route> routes{
        {"GET",    "/healthz",                                false, healthz},
        {"GET",    "/readyz",                                 false, readyz},
        {"GET",    "/v1/system-prompts",                      false, api.route(&a::list_prompts)},
        {"GET",    "/v1/system-prompts/{id}",                 false, api.route(&a::get_prompt)},
        {"GET",    "/v1/system-prompts/{id}/enhanced",        false, api.route(&a::get_enhanced_prompt)},
        {"*",      "/v1/system-prompts",                      true,  not_allowed},
        {"GET",    "/context/workspaces",                     false, api.route(&a::list_workspaces)},
        {"POST",   "/context/chats",                          false, api.route(&a::create_chat)},
        {"GET",    "/context/chats",                          false, api.route(&a::list_chats)},
        {"GET",    "/context/chats/{id}",                     false, api.route(&a::get_chat)},
        {"GET",    "/context/chats/{id}/messages",            false, api.route(&a::list_messages)},
        {"DELETE", "/context/chats/{id}",                     false, api.route(&a::delete_chat)},
        {"PATCH",  "/context/chats/{id}",                     false, api.route(&a::patch_chat)},
        {"POST",   "/context/chats/{id}/messages",            false, api.route(&a::post_message)},
        {"PUT",    "/context/chats/{id}/document",            false, api.route(&a::put_document)},
        {"GET",    "/context/chats/{id}/document",            false, api.route(&a::get_document)},
        {"GET",    "/context/chats/{id}/sessions",            false, api.route(&a::list_sessions)},
        {"GET",    "/context/sessions/{id}",                  false, api.route(&a::get_session)},
        {"POST",   "/context/sessions/{id}/accept",           false, api.route(&a::accept_session)},
        {"POST",   "/context/sessions/{id}/reject",           false, api.route(&a::reject_session)},
        {"GET",    "/context/runs/{id}",                      false, api.route(&a::get_run)},
        {"GET",    "/context/runs/{id}/calls/{call_id}",      false, api.route(&a::get_call)},
        {"GET",    "/context/runs/{id}/events",               false, api.route(&a::run_events)},
        {"POST",   "/context/runs/{id}/cancel",               false, api.route(&a::cancel_run)},
        {"POST",   "/context/runs/{id}/undo",                 false, api.route(&a::undo_run)},
        {"POST",   "/context/runs/{id}/approvals/{call_id}",  false, api.route(&a::decide)},
        {"GET",    "/context/workflows",                      false, api.route(&a::list_workflows)},
        {"GET",    "/context/workflows/categories",           false, api.route(&a::workflow_categories)},
        {"GET",    "/context/workflows/{id}",                 false, api.route(&a::get_workflow)},
        {"POST",   "/context/workflows/{id}/runs",            false, api.route(&a::start_workflow)},
        {"GET",    "/context/mcp/servers",                    false, [mcp](http::request_context& c) { return mcp_reply(c, context::list_mcp_servers(*mcp, c)); }},
        {"POST",   "/context/mcp/servers/{name}/refresh",     false, [mcp](http::request_context& c) { return mcp_reply(c, context::refresh_mcp_server(*mcp, c)); }},
        {"GET",    "/auth/config",                            false, sign_in.route(&s::settings)},
        {"GET",    "/auth/login",                             false, sign_in.route(&s::login)},
        {"GET",    "/auth/callback",                          false, sign_in.route(&s::callback)},
        {"POST",   "/auth/logout",                            false, sign_in.route(&s::logout)},
        {"GET",    "/auth/me",                                false, sign_in.route(&s::me)},
        {"*",      "/v1/",                                    true,  forward},
        {"*",      "/v1beta/",                                true,  forward},
        {"*",      "/bedrock/",                               true,  forward},
        {"*",      "/vertex/",                                true,  forward},
    };
    // clang-format on
    if (config_.server.console) {
        // Public files (the key is asked for by the page and sent only to /context).
        auto serve = [site = &console_](http::request_context& c) { return site->serve(c); };
        routes.push_back({"GET", "/console", false, serve});
        routes.push_back({"HEAD", "/console", false, serve});
        routes.push_back({"GET", "/console/", true, serve});
        routes.push_back({"HEAD", "/console/", true, serve});
    }
    if (config_.metrics.enabled && !config_.metrics.listen)
        routes.push_back({"GET", "/metrics", false, scrape});
    // Checked on the head of every request, before its body is read and before its route
    // is looked up: Host and Origin on every path (DNS rebinding, cross-site pages), then
    // the keys under each prefix, then JSON bodies for the gateway's own APIs (/mcp
    // answers that in JSON-RPC's envelope itself).
    std::vector<http::guard> guards{origins_->as_guard(), api.guard("/context"),
                                    api.guard("/v1/system-prompts")};
    // What a signed-in user's role may do on the Context API (auth/roles.hpp): a viewer reads.
    guards.push_back(
        {"/context",
         [](const boost::beast::http::request_header<>& head, const auth::principal* who) {
             return !who || auth::context_refusal(*who, head.method_string()).empty();
         },
         errc::forbidden,
         "The Context API is read-only for the role `viewer`: only GET is allowed."});
    if (mcp_server) {
        using m = context::mcp_endpoint;
        routes.push_back({"POST", "/mcp", false, mcp_server->route(&m::post)});
        routes.push_back({"GET", "/mcp", false, mcp_server->route(&m::get)});
        routes.push_back({"DELETE", "/mcp", false, mcp_server->route(&m::remove)});
        guards.push_back(api.guard("/mcp"));
    }
    if (admin_) {
        // clang-format off
        using k = admin::api;
        std::vector<http::route> admin_routes{
            {"POST",   "/admin/keys",      false, admin_->route(&k::create_key)},
            {"GET",    "/admin/keys",      false, admin_->route(&k::list_keys)},
            {"GET",    "/admin/keys/{id}", false, admin_->route(&k::get_key)},
            {"PATCH",  "/admin/keys/{id}", false, admin_->route(&k::update_key)},
            {"DELETE", "/admin/keys/{id}", false, admin_->route(&k::delete_key)},
            {"GET",    "/admin/usage",     false, admin_->route(&k::usage)},
            {"GET",    "/admin/health",    false, admin_->route(&k::health)},
            {"GET",    "/admin/log",       false, admin_->route(&k::request_log)},
            {"POST",   "/admin/reload",    false, admin_->route([this](http::request_context& c) { return reload_request(c); })},
            {"GET",    "/admin/teams",        false, admin_->route(&k::list_teams)},
            {"POST",   "/admin/teams",        false, admin_->route(&k::create_team)},
            {"PATCH",  "/admin/teams/{name}", false, admin_->route(&k::update_team)},
            {"DELETE", "/admin/teams/{name}", false, admin_->route(&k::delete_team)},
            {"GET",    "/admin/users",        false, admin_->route(&k::list_users)},
            {"PATCH",  "/admin/users/{id}",   false, admin_->route(&k::update_user)},
            {"GET",    "/admin/audit",        false, admin_->route(&k::audit)},
        };
        // clang-format on
        for (auto& r : admin_routes) routes.push_back(std::move(r));
        guards.push_back(admin_->guard());
    }
    // A signed-in user's cookie is no answer to a cross-site page's POST (auth/sessions.hpp).
    guards.push_back({"",
                      [](const boost::beast::http::request_header<>& head,
                         const auth::principal* who) { return auth::csrf_satisfied(head, who); },
                      errc::forbidden,
                      "A change made with a sign-in session needs the `X-CSRF-Token` header "
                      "(the `csrf` of GET /auth/me)."});
    for (std::string_view own : {"/context", "/v1/system-prompts", "/admin", "/auth"})
        guards.push_back(http::json_body_guard(own));
    // Who asks, for the faces that care: the admin API, the Context API (its prompts under /v1
    // too: the console's chats list them) and sign-in.
    http::identification identify{
        {"/admin", "/context", "/v1/system-prompts", "/auth"},
        [sessions = sessions_.get()](const auto& head) { return sessions->principal_of(head); }};
    auto w = std::make_unique<http::worker>(
        config_.server, config_.logging.access_log,
        http::router(std::move(routes), std::move(guards), std::move(identify)));
    w->on_drain_over([slot = &slot] { slot->each([](auto& h) { h.stop_waiting(); }); });
    w->on_drain([slot = &slot, &api, mcp_server] {
        slot->each([](auto& h) { h.close_idle(); });
        api.end_streams();
        if (mcp_server) mcp_server->end_streams();
    });
    return w;
}

std::string server::start() {
    auto built = build_generation(config_, nullptr, replica_);
    if (!built) return built.error;
    generation_ = std::move(*built.value);
    // Before the engine resumes runs: their spans are recorded too.
    if (!config_.tracing.otlp_endpoint.empty() && !observability::tracing()) {
        observability::start_tracing(config_.tracing);
        tracing_ = true;
    }
    auto started = context_service::start(config_, generation_);
    if (!started) return started.error;
    context_ = std::move(*started.value);

    if (auto problem = start_operations(); !problem.empty()) return problem;

    const auto& listen = config_.server.listen;
    auto allowed_hosts = config_.server.allowed_hosts;
    for (const auto& h : config_.mcp.allowed_hosts) allowed_hosts.push_back(h);
    origins_ = std::make_unique<http::origin_rule>(allowed_hosts, listen.host);
    auto endpoint = listen_endpoint(listen);
    if (!endpoint) return endpoint.error;
    auto at = *endpoint.value;

    unsigned count = config_.server.workers ? config_.server.workers
                                            : std::max(1u, std::thread::hardware_concurrency());
    // The scrape: the gauges read from state (the route targets skipped now) are set first.
    auto scrape = [this](http::request_context& ctx) {
        current()->routing->health().show_out();
        return metrics_page(ctx);
    };
    for (unsigned i = 0; i < count; ++i) {
        auto slot = std::make_unique<v1_slot>();
        slot->now = make_face(generation_);
        auto w = make_worker(*slot, scrape);
        slots_.push_back(std::move(slot));
        if (workers_.empty()) {
            tcp::endpoint bound;
            if (auto bind_ec = w->listen(at, bound); bind_ec)
                return "cannot listen on " + listen.host + ":" + std::to_string(at.port()) + ": " +
                       bind_ec.message() +
                       (bind_ec == net::error::address_in_use
                            ? " (another process, perhaps another contextgate, holds it)"
                            : "");
            port_ = bound.port();
        } else if (auto share_ec = w->share_listener(*workers_.front()); share_ec) {
            return "cannot share the listening socket with worker " + std::to_string(i) + ": " +
                   share_ec.message();
        }
        workers_.push_back(std::move(w));
    }
    std::vector<http::worker*> sharing;
    for (auto& w : workers_) sharing.push_back(w.get());
    if (sharing.size() > 1)
        for (auto* w : sharing) w->balance_with(sharing);
    if (auto problem = listen_for_metrics(scrape); !problem.empty()) return problem;
    for (std::size_t i = 0; i < workers_.size(); ++i) {
        workers_[i]->start();
        threads_.emplace_back([worker = workers_[i].get(), i] {
            io::name_this_thread("worker-" + std::to_string(i));
            worker->io().run();
        });
    }
    // Said at start, and again at each reload.
    warn_of_missing_keys(config_.upstreams);
    return {};
}

std::vector<std::size_t> server::connections_per_worker() const {
    std::vector<std::size_t> loads;
    for (std::size_t i = 0; i < slots_.size() && i < workers_.size(); ++i)
        loads.push_back(workers_[i]->load());
    return loads;
}

void server::stop() {
    {
        // A reload under way finishes first (its switch needs the workers running).
        std::lock_guard lock(reload_mutex_);
        stopping_ = true;
    }
    for (auto& w : workers_) net::post(w->io(), [worker = w.get()] { worker->drain(); });
    // In-flight requests that wait on the engine (a decision forwarded to another replica) end
    // now instead of holding the drain.
    if (context_) context_->quiesce();
}

void server::wait() {
    for (auto& t : threads_)
        if (t.joinable()) t.join();
    // Runs stop where they stand, resumable from the store at the next start.
    if (context_) context_->stop();
    reloads_.join();
    // The budget alerts the last requests raised go out before the process ends.
    if (alerts_) alerts_->stop();
    // What the requests and runs recorded goes to the collector before the process ends.
    if (tracing_) {
        observability::stop_tracing();
        tracing_ = false;
    }
}

}  // namespace gateway::app
