// The catalogue's face of the /v1 handler: GET /v1/models (and Gemini's and Bedrock's model
// lists) answered by the gateway from what it serves, and the 404 for a model that no route and no
// upstream takes, in the client's dialect.
#include "gateway/passthrough/handler.hpp"

#include "gateway/config/glob.hpp"
#include "gateway/http/request_values.hpp"
#include "gateway/http/response.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/passthrough/headers.hpp"
#include "gateway/providers/bedrock.hpp"
#include "gateway/providers/model_lists.hpp"
#include "gateway/upstream/exchange.hpp"
#include "gateway/upstream/model_router.hpp"

namespace gateway::passthrough {

// GET /v1/models: the catalogue's lists (asked with the gateway's own key, kept), and those of the
// upstreams whose list is the client's to see, asked now with the client's headers as a
// forwarded request would be; merged, cut to the caller's key, each with its price. An upstream
// that cannot answer is left out and logged; when it was the only one asked and nothing else is
// listed, its answer (or the gateway's 502) is the client's, as a forwarded listing's would have
// been.
net::awaitable<void> handler::list_models(http::request_context& ctx, const destination& where,
                                          const std::vector<std::string>& allowed) {
    if (where.call.dialect == config::provider_kind::bedrock) {
        // Answered from what the gateway serves: its Bedrock upstreams' profiles, its routes'.
        auto body =
            providers::bedrock::inference_profiles(upstreams_, routing_.table().routes(), allowed,
                                                   http::query_value(ctx.req.target(), "type"));
        ctx.status = 200;
        auto ec = co_await http::write_response(ctx, 200, "application/json", body);
        if (ec) ctx.keep_alive = false;
        co_return;
    }
    auto& catalog = routing_.catalog();
    auto listed = co_await catalog.fetched();
    bool asked = false;
    bool answered = false;
    std::optional<std::pair<unsigned, std::string>> refused;  // the first upstream refusal
    upstream::failure unreachable;
    std::string_view target = ctx.req.target();
    std::string query(target.substr(std::min(target.find('?'), target.size())));
    for (std::size_t i = 0; i < pools_.size(); ++i) {
        if (catalog.source_of(i) != upstream::model_catalog::source::client) continue;
        asked = true;
        auto& pool = pools_[i];
        const auto& up = pool.upstream();
        // A client of another dialect presented no key for this upstream: asked with none.
        auto head =
            where.call.dialect == config::provider_kind::openai
                ? upstream_request_head(ctx, up, "/models" + query, {}, false, !ctx.key_id.empty())
                : "GET " + up.endpoint.base_path +
                      "/models HTTP/1.1\r\nHost: " + upstream::host_header(up.endpoint) +
                      "\r\nAccept: application/json\r\nx-request-id: " + ctx.request_id +
                      "\r\n\r\n";
        std::optional<upstream::response_parser> parser;
        upstream::exchange_hooks hooks;
        auto started = co_await upstream::start_exchange(pool, ctx.stream.get_executor(), head, {},
                                                         parser, false, false, hooks);
        std::string body;
        upstream::failure failed = started.failed;
        if (started.conn)
            failed = co_await upstream::read_body(*started.conn, *parser, body, 8 << 20,
                                                  up.idle_timeout);
        unsigned status = failed ? 0 : parser->get().result_int();
        upstream::model_catalog::models models;
        std::string next;
        std::string error;
        if (!failed && status == 200 &&
            providers::read_model_page(up.provider, body, models, next, error)) {
            if (parser->get().keep_alive()) pool.give_back(std::move(started.conn));
            catalog.remember(i, models);
            listed[i] = std::move(models);
            answered = true;
            continue;
        }
        observability::log_warn("request " + ctx.request_id + ": upstream `" + up.name +
                                "` did not list its models: " +
                                (failed          ? failed.detail
                                 : status != 200 ? "it answered " + std::to_string(status)
                                                 : error));
        if (failed && !unreachable) unreachable = failed;
        if (!failed && status != 200 && !refused) refused.emplace(status, std::move(body));
    }
    auto models = catalog.merge(listed, allowed, prices_);
    if (models.empty() && asked && !answered) {
        if (refused) {
            ctx.status = refused->first;
            auto ec = co_await http::write_response(ctx, refused->first, "application/json",
                                                    refused->second);
            if (ec) ctx.keep_alive = false;
        } else if (unreachable) {
            co_await http::write_error(ctx, unreachable.ec, unreachable.detail);
        }
        if (refused || unreachable) co_return;
    }
    auto body = providers::model_list_answer(where.call.dialect, models, ctx.req.target());
    ctx.status = 200;
    auto ec = co_await http::write_response(ctx, 200, "application/json", body);
    if (ec) ctx.keep_alive = false;
}

net::awaitable<void> handler::refuse_unknown_model(http::request_context& ctx,
                                                   const destination& where,
                                                   const std::vector<std::string>& allowed) {
    auto names = routing_.catalog().known_names();
    std::vector<std::string_view> candidates;
    for (const auto& n : names) {
        bool taken = allowed.empty();
        for (const auto& glob : allowed) taken = taken || config::glob_match(glob, n);
        if (taken) candidates.push_back(n);
    }
    auto nearest = http::nearest_names(where.model, candidates, 3);
    std::string message = "The model `" + where.model + "` does not exist on this gateway";
    if (nearest.empty()) {
        message += "; GET /v1/models lists the models it serves.";
    } else {
        message += "; did you mean ";
        for (std::size_t i = 0; i < nearest.size(); ++i)
            message += (i == 0                    ? ""
                        : i + 1 == nearest.size() ? " or "
                                                  : ", ") +
                       ("`" + std::string(nearest[i]) + "`");
        message += "?";
    }
    ctx.model = where.model;
    ctx.status = 404;
    auto body = providers::model_not_found_body(where.call.dialect, message);
    auto ec = co_await http::write_response(ctx, 404, "application/json", body);
    if (ec) ctx.keep_alive = false;
}

}  // namespace gateway::passthrough
