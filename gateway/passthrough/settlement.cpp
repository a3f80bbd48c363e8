// Settlement's money step for the /v1 face (docs/operations.md "Prices and cost"): the cost of the
// answer the client got, from the usage settled for it, at the price of the upstream that answered
// and the model it heard.
#include "gateway/passthrough/handler.hpp"

#include "gateway/observability/metrics.hpp"
#include "gateway/pricing/cost.hpp"
#include "gateway/pricing/price_table.hpp"
#include "gateway/providers/usage_observer.hpp"

namespace gateway::passthrough {

std::optional<request_cost> cost_of(const exchange_state& state) {
    if (!state.price || !state.used.known) return std::nullopt;
    return pricing::cost(state.used, state.price->price, state.usage_source == "estimate");
}

void cost_in_head(const http::request_context& ctx, exchange_state& state,
                  const providers::usage& reported, std::uint64_t delivered_bytes) {
    if (!state.price) return;
    auto settled = providers::settled_usage(reported, delivered_bytes, ctx.req.body().size(), true);
    state.cost_text = cost_text(pricing::cost(settled.used, state.price->price, settled.estimated));
    state.fields.cost = state.cost_text;
}

void settle_cost(http::request_context& ctx, const exchange_state& state) {
    if (!state.answered || ctx.status / 100 != 2) return;
    ctx.cost = cost_of(state);
    if (!ctx.cost) return;
    if (!ctx.cost->priced) {
        if (state.price->unpriced) state.price->unpriced->inc();
    } else if (state.price->usd) {
        state.price->usd->inc(ctx.cost->usd);
    }
}

std::optional<model_price> handler::price_of(std::size_t upstream, std::string_view model) {
    if (!prices_ || model.empty()) return std::nullopt;
    auto& known = priced_[upstream];
    if (auto it = known.find(model); it != known.end()) return it->second;
    const auto& name = upstreams_[upstream].name;
    model_price p{prices_->find(name, model)};
    auto& m = observability::metrics();
    if (m.on) {
        p.usd = &m.cost_usd.with({name, std::string(model)});
        p.unpriced = &m.unpriced_requests.with({name, std::string(model)});
    }
    // Model names come from clients: past a bound, prices are looked up each time instead.
    if (known.size() < 1000) known.emplace(std::string(model), p);
    return p;
}

}  // namespace gateway::passthrough
