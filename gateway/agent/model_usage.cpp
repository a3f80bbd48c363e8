#include "gateway/agent/model_usage.hpp"

#include "gateway/json_fields.hpp"

#include <boost/json/error.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace gateway::agent {

namespace {

// Every field with its stored name, so that writing and reading cannot disagree.
constexpr std::array<std::pair<std::string_view, std::int64_t model_usage::*>, 9> stored_fields{{
    {"calls", &model_usage::calls},
    {"input_tokens", &model_usage::input_tokens},
    {"output_tokens", &model_usage::output_tokens},
    {"cache_read_tokens", &model_usage::cache_read_tokens},
    {"cache_write_tokens", &model_usage::cache_write_tokens},
    {"reasoning_tokens", &model_usage::reasoning_tokens},
    {"usd_nano", &model_usage::usd_nano},
    {"unpriced_calls", &model_usage::unpriced_calls},
    {"estimated_calls", &model_usage::estimated_calls},
}};

}  // namespace

model_usage model_usage::of_call(const providers::usage& used, const request_cost& cost) {
    auto count = [](std::int64_t n) { return std::max<std::int64_t>(n, 0); };
    model_usage u;
    u.calls = 1;
    u.input_tokens = count(used.input);
    u.output_tokens = count(used.output);
    u.cache_read_tokens = count(used.cache_read);
    u.cache_write_tokens = count(used.cache_write) + count(used.cache_write_1h);
    u.reasoning_tokens = count(used.reasoning);
    if (cost.priced)
        u.usd_nano = nano_usd(cost.usd);
    else
        u.unpriced_calls = 1;
    if (cost.estimated) u.estimated_calls = 1;
    return u;
}

model_usage& model_usage::operator+=(const model_usage& more) {
    for (auto [name, field] : stored_fields) this->*field += more.*field;
    return *this;
}

json::object tokens_json(const model_usage& u) {
    return {{"input_tokens", u.input_tokens},
            {"output_tokens", u.output_tokens},
            {"cache_read_tokens", u.cache_read_tokens},
            {"cache_write_tokens", u.cache_write_tokens},
            {"reasoning_tokens", u.reasoning_tokens}};
}

json::value cost_usd_json(const model_usage& u) {
    if (u.calls > 0 && u.unpriced_calls == u.calls) return nullptr;
    return static_cast<double>(u.usd_nano) / 1e9;
}

void tag_invoke(const json::value_from_tag&, json::value& v, const model_usage& u) {
    json::object o;
    for (auto [name, field] : stored_fields) o[name] = u.*field;
    v = std::move(o);
}

boost::system::result<model_usage> tag_invoke(const json::try_value_to_tag<model_usage>&,
                                              const json::value& v) {
    const auto* o = v.if_object();
    if (!o) return make_error_code(json::error::not_object);
    model_usage u;
    for (auto [name, field] : stored_fields) {
        const auto* member = o->if_contains(name);
        if (!member) continue;
        auto n = integer_of(member, 0);
        if (!n) return make_error_code(json::error::not_number);
        u.*field = *n;
    }
    return u;
}

}  // namespace gateway::agent
