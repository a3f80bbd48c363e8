#include "gateway/upstream/model_catalog.hpp"

#include "gateway/config/glob.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/upstream/exchange.hpp"
#include "gateway/upstream/model_router.hpp"
#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <set>

namespace gateway::upstream {

namespace {

using namespace net::experimental::awaitable_operators;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);
using steady = std::chrono::steady_clock;

// The most pages one ask reads, and the most bytes a page may hold.
constexpr int max_pages = 100;
constexpr std::size_t max_page_bytes = 8 << 20;

bool is_glob(std::string_view name) {
    return name.find_first_of("*?[") != std::string_view::npos;
}

bool any_match(const std::vector<std::string>& globs, std::string_view name) {
    for (const auto& g : globs)
        if (config::glob_match(g, name)) return true;
    return false;
}

}  // namespace

// What the catalogue keeps of one upstream, on its thread.
struct model_catalog::slot {
    models listed;
    bool known = false;                        // a list arrived once
    bool tried = false;                        // an ask ended once, listed or not
    bool asking = false;                       // an ask is in flight
    steady::time_point at;                     // when the last ask ended
    std::optional<net::steady_timer> arrived;  // the first list's waiters; cancelled when it ends
    std::unique_ptr<upstream::pool> pool;
    connection* in_use = nullptr;  // the ask's connection, closed by stop()
};

model_catalog::model_catalog(const std::vector<config::upstream_config>& upstreams,
                             const std::vector<config::route_config>& routes,
                             catalog_settings settings)
    : upstreams_(upstreams),
      routes_(routes),
      settings_(settings),
      tasks_(io_.get_executor(),
             [](const std::string& task, std::exception_ptr e) {
                 observability::log_stray(e, "model catalogue " + task);
             }),
      listed_names_(upstreams.size()) {
    for (const auto& u : upstreams) {
        bool globbed = false;
        for (const auto& m : u.models) globbed = globbed || is_glob(m);
        // Bedrock lists its models in its control-plane API, on another host and not built
        // yet; Azure's deployments API has no list of deployments in OpenAI's shape, nor
        // Vertex AI's publishers one of the models a project may call: their configured names
        // (and Azure's deployments) are their list.
        if (!globbed || u.model_list_ttl.count() <= 0 ||
            u.provider == config::provider_kind::bedrock || u.host != config::hosting::direct)
            sources_.push_back(source::none);
        else if (u.provider == config::provider_kind::openai &&
                 u.auth == config::auth_mode::forward && u.api_key.empty())
            sources_.push_back(source::client);
        else
            sources_.push_back(source::gateway);
    }
}

model_catalog::~model_catalog() {
    stop();
}

bool model_catalog::serves(std::string_view model) const {
    for (const auto& r : routes_)
        if (config::glob_match(r.model, model)) return true;
    for (const auto& u : upstreams_)
        if (any_match(u.models, model)) return true;
    return false;
}

std::optional<model_catalog::hold> model_catalog::start() {
    std::lock_guard lock(start_mutex_);
    if (stopped_) return std::nullopt;
    if (!started_) {
        started_ = true;
        for (std::size_t i = 0; i < upstreams_.size(); ++i) {
            auto s = std::make_unique<slot>();
            const auto& u = upstreams_[i];
            std::shared_ptr<net::ssl::context> tls;
            if (sources_[i] == source::gateway && u.endpoint.tls) {
                auto context = make_client_context(u);
                if (context)
                    tls = *context.value;
                else
                    observability::log_warn("upstream `" + u.name +
                                            "`: its model list is not asked: " + context.error);
            }
            s->pool = std::make_unique<pool>(u, tls);
            slots_.push_back(std::move(s));
        }
        work_.emplace(io_.get_executor());
        thread_ = std::thread([this] {
            io::name_this_thread("models");
            io_.run();
        });
    }
    return net::make_work_guard(io_);
}

void model_catalog::stop() {
    {
        std::lock_guard lock(start_mutex_);
        stopped_ = true;
    }
    if (!thread_.joinable()) return;
    net::post(io_, [this] {
        tasks_.cancel();
        for (auto& s : slots_) {
            if (s->in_use) s->in_use->close();
            if (s->arrived) s->arrived->cancel();
            s->pool->close_all();
        }
        work_.reset();
    });
    thread_.join();
}

net::awaitable<model_catalog::lists> model_catalog::fetched() {
    bool wanted = false;
    for (auto s : sources_) wanted = wanted || s == source::gateway;
    if (!wanted) co_return lists(upstreams_.size());
    auto running = start();
    if (!running) co_return lists(upstreams_.size());
    auto gathered = co_await net::co_spawn(io_, gather(), net::use_awaitable);
    co_return gathered;
}

net::awaitable<model_catalog::lists> model_catalog::gather() {
    co_await net::this_coro::throw_if_cancelled(false);
    auto now = steady::now();
    lists out(upstreams_.size());
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        auto& s = *slots_[i];
        if (sources_[i] != source::gateway || s.asking || stopped_) continue;
        if (s.tried && now - s.at < upstreams_[i].model_list_ttl) continue;
        s.asking = true;
        if (!s.tried) {
            s.arrived.emplace(io_);
            s.arrived->expires_at(steady::time_point::max());
        }
        tasks_.spawn("list of " + upstreams_[i].name, refresh(i));
    }
    net::steady_timer limit(io_);
    limit.expires_after(settings_.first_wait);
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        auto& s = *slots_[i];
        if (stopped_) break;  // its asks are cancelled: nothing more will arrive
        if (sources_[i] != source::gateway || s.tried || !s.arrived) continue;
        // The first ask of this upstream is in flight: wait for it, within the limit.
        auto ended = co_await (s.arrived->async_wait(use_ec) || limit.async_wait(use_ec));
        if (ended.index() == 1) break;  // the limit came: the others are not waited for either
    }
    for (std::size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i]->known) out[i] = slots_[i]->listed;
    co_return out;
}

net::awaitable<void> model_catalog::refresh(std::size_t index) {
    co_await net::this_coro::throw_if_cancelled(false);
    auto& s = *slots_[index];
    const auto& up = upstreams_[index];
    models got;
    auto failure = co_await ask(index, got);
    s.asking = false;
    s.tried = true;
    s.at = steady::now();
    if (failure.empty()) {
        s.listed = std::move(got);
        s.known = true;
        std::vector<std::string> names;
        for (const auto& m : s.listed) names.push_back(m.id);
        std::lock_guard lock(names_mutex_);
        listed_names_[index] = std::move(names);
    } else if (!stopped_) {
        observability::log_warn("upstream `" + up.name + "` did not list its models: " + failure +
                                (s.known ? "; /v1/models keeps the list it gave before"
                                         : "; /v1/models leaves it out"));
    }
    if (s.arrived) {
        s.arrived->cancel();
        s.arrived.reset();
    }
}

net::awaitable<std::string> model_catalog::ask(std::size_t index, models& out) {
    auto& s = *slots_[index];
    const auto& up = upstreams_[index];
    auto executor = co_await net::this_coro::executor;
    std::string page;
    for (int n = 0; n < max_pages; ++n) {
        std::string head =
            "GET " + up.endpoint.base_path + providers::model_list_target(up.provider, page) +
            " HTTP/1.1\r\nHost: " + host_header(up.endpoint) + "\r\nAccept: application/json\r\n" +
            providers::adapter_for(up.provider).auth_fields(up.api_key) + "\r\n";
        std::optional<response_parser> parser;
        exchange_hooks hooks;
        hooks.in_use = [&s](connection* c) { s.in_use = c; };
        hooks.abandoned = [this] { return stopped_.load(); };
        hooks.first_byte_timeout = settings_.list_timeout;
        auto started =
            co_await start_exchange(*s.pool, executor, head, {}, parser, false, false, hooks);
        if (!started.conn)
            co_return started.failed.detail.empty() ? "it could not be reached"
                                                    : started.failed.detail;
        s.in_use = started.conn.get();
        std::string body;
        auto failed = co_await read_body(*started.conn, *parser, body, max_page_bytes,
                                         settings_.list_timeout);
        s.in_use = nullptr;
        if (failed) co_return failed.detail;
        auto status = parser->get().result_int();
        if (status != 200)
            co_return "it answered " + std::to_string(status) + ": " + body.substr(0, 200);
        if (parser->get().keep_alive()) s.pool->give_back(std::move(started.conn));
        std::string next;
        std::string error;
        if (!providers::read_model_page(up.provider, body, out, next, error)) co_return error;
        if (next.empty() || next == page) co_return std::string();
        page = std::move(next);
    }
    co_return std::string();
}

model_catalog::models model_catalog::merge(const lists& listed,
                                           const std::vector<std::string>& allowed,
                                           const pricing::price_table* prices) const {
    models out;
    std::set<std::string, std::less<>> seen;
    auto add = [&](providers::listed_model m) {
        if (!allowed.empty() && !any_match(allowed, m.id)) return;
        if (!seen.insert(m.id).second) return;
        out.push_back(std::move(m));
    };
    auto named = [](std::string id, std::string owner) {
        providers::listed_model m;
        m.id = std::move(id);
        m.owned_by = std::move(owner);
        return m;
    };
    // The price of `model` (a client's name) as upstream `index` serves it.
    auto price = [&](std::size_t index, std::string_view model) -> const config::price_entry* {
        const auto& u = upstreams_[index];
        return prices ? prices->find(u.name, upstream_model(u, model)) : nullptr;
    };
    for (const auto& r : routes_) {
        if (is_glob(r.model)) continue;
        auto m = named(r.model, "contextgate");
        for (const auto& t : r.targets) {
            const auto* p = price(t.index, t.model.empty() ? r.model : t.model);
            bool agrees = p && (!m.price || (p->rates == m.price->rates &&
                                             p->long_context == m.price->long_context));
            m.price = agrees ? p : nullptr;
            if (!agrees) break;
        }
        add(std::move(m));
    }
    for (std::size_t i = 0; i < upstreams_.size(); ++i) {
        const auto& u = upstreams_[i];
        auto named_here = [&](const std::string& id) {
            auto m = named(id, u.name);
            m.price = price(i, id);
            return m;
        };
        for (const auto& m : u.models)
            if (!is_glob(m)) add(named_here(m));
        for (const auto& [from, to] : u.model_map)
            if (any_match(u.models, from)) add(named_here(from));
        for (const auto& [model, deployment] : u.deployments)
            if (any_match(u.models, model)) add(named_here(model));
        if (i >= listed.size() || !listed[i]) continue;
        for (const auto& m : *listed[i]) {
            if (!any_match(u.models, m.id)) continue;
            auto copy = m;
            if (copy.owned_by.empty()) copy.owned_by = u.name;
            copy.price = price(i, m.id);
            add(std::move(copy));
        }
    }
    return out;
}

void model_catalog::remember(std::size_t index, const models& listed) {
    std::vector<std::string> names;
    for (const auto& m : listed) names.push_back(m.id);
    std::lock_guard lock(names_mutex_);
    listed_names_[index] = std::move(names);
}

std::vector<std::string> model_catalog::known_names() const {
    std::vector<std::string> names;
    for (const auto& r : routes_)
        if (!is_glob(r.model)) names.push_back(r.model);
    for (const auto& u : upstreams_) {
        for (const auto& m : u.models)
            if (!is_glob(m)) names.push_back(m);
        for (const auto& [from, to] : u.model_map) names.push_back(from);
    }
    {
        std::lock_guard lock(names_mutex_);
        for (const auto& list : listed_names_) names.insert(names.end(), list.begin(), list.end());
    }
    // Only what a request could name: a listed name its upstream's globs do not take is none.
    std::erase_if(names, [this](const std::string& n) { return !serves(n); });
    return names;
}

}  // namespace gateway::upstream
