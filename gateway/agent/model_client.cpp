#include "gateway/agent/model_client.hpp"

#include "gateway/clock.hpp"
#include "gateway/error.hpp"
#include "gateway/io/relay_buffer.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/pricing/cost.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/providers/usage_observer.hpp"
#include "gateway/sse/event_parser.hpp"
#include "gateway/upstream/attempt_loop.hpp"
#include "gateway/upstream/authorize.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace gateway::agent {

using namespace std::chrono_literals;

namespace {

constexpr std::size_t max_response_bytes = 32 * 1024 * 1024;

// A model's text may hold NUL characters (garbage output); no store keeps them
// (store::check_stored_text), so each becomes U+FFFD before the run records the reply.
void replace_nul(std::string& text) {
    for (auto at = text.find('\0'); at != std::string::npos; at = text.find('\0', at + 3))
        text.replace(at, 1, "\xEF\xBF\xBD");
}

// The bytes of content a reply carried (its text, reasoning and call arguments): what an
// estimate of the usage counts as output when the upstream reported none, as /v1 counts the
// content it relayed.
std::uint64_t content_bytes(const providers::reply& reply) {
    std::uint64_t bytes = 0;
    for (const auto& p : reply.content.parts) {
        if (p.what == providers::part::kind::tool_call)
            bytes += boost::json::serialize(p.call.arguments).size();
        else if (p.what == providers::part::kind::text ||
                 p.what == providers::part::kind::reasoning)
            bytes += p.text.size();
    }
    return bytes;
}

}  // namespace

// The error code for an upstream's error answer.
errc code_of_status(unsigned status) {
    switch (status) {
        case 400:
            return errc::bad_request;
        case 401:
            return errc::unauthorized;
        case 403:
            return errc::forbidden;
        case 404:
            return errc::not_found;
        case 413:
            return errc::body_too_large;
        case 429:
            return errc::rate_limited;
        default:
            return errc::upstream_bad_response;
    }
}

struct model_client::attempt_result {
    upstream::failure transport;
    unsigned status = 0;
    std::string retry_after_ms;
    std::string retry_after;
    std::string body;                        // an error answer's body
    std::string error_type;                  // its x-amzn-ErrorType (Bedrock's error name)
    providers::reply reply;                  // a 2xx answer's reply, streamed or whole
    upstream::clock::duration first_byte{};  // request sent -> response head
    std::string unreadable;                  // why a 2xx answer is not a reply
    bool told = false;                       // some text of this attempt was told to the hook
};

namespace {

// Reads a streamed 2xx answer: its events decoded by its dialect, the text told to the hook
// after each upstream read, the reply assembled.
net::awaitable<upstream::failure> read_stream(upstream::connection& conn,
                                              upstream::response_parser& parser,
                                              const providers::adapter& adapter,
                                              const text_hook& on_text, config::duration idle,
                                              providers::reply& out, bool& told) {
    // A provider may send a whole call in one event (Gemini does): as large as a reply may be.
    providers::stream_reader reader(adapter, max_response_bytes);
    providers::reply_builder builder;
    io::relay_buffer buffer;
    std::vector<providers::stream_delta> deltas;
    std::size_t total = 0;
    auto bad_response = [](std::string detail) {
        return upstream::failure{make_error_code(errc::upstream_bad_response), std::move(detail)};
    };
    while (!parser.is_done()) {
        auto [n, failed] = co_await upstream::read_piece(conn, parser, buffer.buffer(), idle);
        total += n;
        if (!failed && total > max_response_bytes)
            failed = bad_response("the streamed reply is too large");
        deltas.clear();
        std::string broken;
        if (!failed && !reader.feed({buffer.data(), n}, deltas, broken))
            co_return bad_response("the upstream's stream failed: " + broken);
        std::string text;
        for (const auto& d : deltas) {
            if (d.what == providers::stream_delta::kind::text) text += d.text;
            builder.add(d);
        }
        if (!text.empty() && on_text) {
            told = true;
            co_await on_text(std::move(text), false);
        }
        if (failed) co_return failed;
    }
    deltas.clear();
    std::string incomplete;
    if (!reader.finish(deltas, incomplete)) co_return bad_response(incomplete);
    for (const auto& d : deltas) builder.add(d);
    std::string bad;
    out = builder.take(bad);
    if (!bad.empty()) co_return bad_response(bad);
    co_return upstream::failure{};
}

}  // namespace

model_client::model_client(
    const std::vector<config::upstream_config>& upstreams, unsigned model_retries,
    upstream::routing& routing, const pricing::price_table* prices,
    const std::vector<std::shared_ptr<net::ssl::context>>& tls_contexts,
    const std::vector<std::shared_ptr<upstream::aws::credentials_provider>>& aws_credentials,
    const std::vector<std::shared_ptr<upstream::token_source>>& token_sources,
    net::any_io_executor executor, upstream::usage_sink* ledger)
    : upstreams_(upstreams),
      model_retries_(model_retries),
      routing_(routing),
      prices_(prices),
      executor_(std::move(executor)),
      ledger_(ledger) {
    pools_.reserve(upstreams.size());
    for (std::size_t i = 0; i < upstreams.size(); ++i)
        pools_.emplace_back(upstreams[i], tls_contexts[i], aws_credentials[i], token_sources[i]);
}

config::upstream_config model_client::upstream_for(std::string_view model) const {
    config::route_config scratch;
    return upstreams_[routing_.table().route(model, scratch).targets.front().index];
}

void model_client::shutdown() {
    for (auto& p : pools_) p.close_all();
}

net::awaitable<model_client::attempt_result> model_client::attempt(
    upstream::pool& pool, const std::string& head, const std::string& body, call_canceller& cancel,
    const streaming& stream, config::duration first_byte, std::function<bool()> resend) {
    const auto& up = pool.upstream();
    attempt_result result;
    std::optional<upstream::response_parser> parser;
    upstream::exchange_hooks hooks{
        [&cancel](upstream::connection* c) {
            cancel.on_cancel(c ? std::function<void()>([c] { c->close(); }) : nullptr);
        },
        [&cancel] { return cancel.cancelled(); }, first_byte, std::move(resend)};
    auto sent = upstream::clock::now();
    auto started =
        co_await upstream::start_exchange(pool, executor_, head, body, parser, false, false, hooks);
    result.first_byte = upstream::clock::now() - sent;
    if (!started.conn) {
        result.transport = started.failed;
        co_return result;
    }
    auto& res = parser->get();
    result.status = res.result_int();
    result.retry_after_ms = res["retry-after-ms"];
    result.retry_after = res["retry-after"];
    result.error_type = res["x-amzn-ErrorType"];
    bool success = result.status >= 200 && result.status < 300;
    // The Content-Type says what came back: some servers and proxies ignore `stream: true` and
    // answer one whole JSON reply, which is read as that.
    bool event_stream = stream.adapter->streams_as(res[boost::beast::http::field::content_type]);
    if (success && event_stream) {
        result.transport =
            co_await read_stream(*started.conn, *parser, *stream.adapter, stream.on_text,
                                 up.idle_timeout, result.reply, result.told);
    } else {
        result.transport = co_await upstream::read_body(*started.conn, *parser, result.body,
                                                        max_response_bytes, up.idle_timeout);
        if (success && !result.transport) {
            if (!stream.adapter->decode(result.body, result.reply, result.unreadable)) {
                if (stream.on_text) result.unreadable.insert(0, "its whole reply to a stream: ");
            } else if (auto text = result.reply.content.text(); !text.empty() && stream.on_text) {
                result.told = true;
                co_await stream.on_text(std::move(text), false);
            }
        }
    }
    cancel.on_cancel(nullptr);
    if (!result.transport && res.keep_alive() && !cancel.cancelled())
        pool.give_back(std::move(started.conn));
    co_return result;
}

// The agent's side of the attempt loop (upstream::run_attempts) for one model call: an attempt
// is the request said in the target's dialect, its answer decoded whole (its text told as it
// streams). A reply is committed once decoded; an error answer that is the request's own (another
// 4xx) is committed as the call's failure; everything else is held for the next target.
class model_client::call_attempts final : public upstream::attempt_face {
public:
    call_attempts(model_client& client, providers::request& request, std::string request_id,
                  call_canceller& cancel, const retry_hook& on_retry, const text_hook& on_text,
                  const observability::trace_context* trace, upstream::attempt_plan& plan,
                  bool own_route)
        : client_(client),
          request_(request),
          client_model_(request.model),
          request_id_(std::move(request_id)),
          cancel_(cancel),
          on_retry_(on_retry),
          on_text_(on_text),
          trace_(trace),
          plan_(plan),
          own_route_(own_route),
          last{errc::upstream_unreachable, false,
               "no target of model `" + client_model_ + "` can be used"} {}

    bool stopped() const override { return cancel_.cancelled(); }

    net::awaitable<bool> again(const config::route_target&, config::duration wait) override {
        // The same target again (nothing else is left): after a backoff, or its retry-after.
        observability::log_warn("run " + request_id_ + ": " + last.message + "; retrying in " +
                                std::to_string(wait.count()) + " ms");
        if (on_retry_) {
            model_retry retry{plan_.attempts() - 1, attempts_allowed() - 1, last.message, wait};
            co_await on_retry_(std::move(retry));
        }
        if (!cancel_.cancelled()) {
            net::steady_timer timer(client_.executor_, wait);
            cancel_.on_cancel([&timer] { timer.cancel(); });
            [[maybe_unused]] auto [ec] =
                co_await timer.async_wait(net::as_tuple(net::use_awaitable));
            cancel_.on_cancel(nullptr);
        }
        co_return !cancel_.cancelled();
    }

    net::awaitable<void> fall_back(const config::route_target& target) override {
        // Another target: at once, told like a retry.
        if (!on_retry_) co_return;
        model_retry retry{plan_.attempts() - 1, attempts_allowed() - 1,
                          last.message + "; trying upstream `" +
                              client_.pools_[target.index].upstream().name + "`",
                          config::duration(0)};
        co_await on_retry_(std::move(retry));
    }

    net::awaitable<upstream::attempt_outcome> attempt(
        const config::route_target& target, const upstream::attempt_terms& terms) override;

private:
    using outcome = upstream::attempt_outcome;
    int attempts_allowed() const { return static_cast<int>(plan_.route().max_attempts); }

    model_client& client_;
    providers::request& request_;
    std::string client_model_;
    std::string request_id_;
    call_canceller& cancel_;
    const retry_hook& on_retry_;
    const text_hook& on_text_;
    const observability::trace_context* trace_;
    upstream::attempt_plan& plan_;
    bool own_route_;

public:
    // Declared last: initialized after what they are made of.
    model_failure last;                  // what the call fails with when no reply comes
    std::optional<model_answer> answer;  // the committed reply, settled
};

net::awaitable<upstream::attempt_outcome> model_client::call_attempts::attempt(
    const config::route_target& target, const upstream::attempt_terms& terms) {
    auto& pool = client_.pools_[target.index];
    const auto& up = pool.upstream();
    // The target's own name for the model, if it gives one, through its upstream's model_map,
    // as on /v1.
    auto heard = upstream::upstream_model(up, upstream::target_model(target, client_model_));
    const auto& adapter = providers::adapter_for(up, heard);
    request_.model = heard;
    std::string refused;
    auto body = adapter.encode(request_, refused);
    if (body.empty()) {
        last = {errc::bad_request, false, "upstream `" + up.name + "`: " + refused};
        co_return outcome{outcome::end::skipped};  // another dialect may say it
    }
    std::string fields;
    if (pool.holds_credentials()) {
        // Signed over the final body (or the access token), for this attempt.
        auto signed_fields = co_await upstream::authorize(pool, adapter.target(request_), body);
        if (!signed_fields.error.empty()) {
            last = {errc::upstream_credentials, false, signed_fields.error};
            co_return outcome{
                outcome::end::held, upstream::verdict::failed, {}, {}, signed_fields.error};
        }
        fields = std::move(signed_fields.fields);
    } else {
        fields = providers::auth_fields_of(up, adapter, up.api_key);
    }
    if (trace_) fields += observability::trace_fields(*trace_);
    auto head = upstream::json_post_head(up, adapter.target(request_), request_.model,
                                         request_.stream, fields, request_id_, body.size());
    streaming stream{&adapter, on_text_};
    auto started = std::chrono::steady_clock::now();
    auto result = co_await client_.attempt(pool, head, body, cancel_, stream,
                                           plan_.first_byte_timeout(up.first_byte_timeout),
                                           [this] { return plan_.spend_resend(); });
    // Text told by a failed attempt is withdrawn: the next attempt tells it again.
    if (result.told && (result.transport || cancel_.cancelled()))
        co_await on_text_(std::string(), true);
    if (cancel_.cancelled()) co_return outcome{outcome::end::stopped};
    if (result.transport) {
        auto code = errc::upstream_unreachable;
        if (result.transport.ec.category() == gateway_category())
            code = static_cast<errc>(result.transport.ec.value());
        last = {code, false, "upstream `" + up.name + "`: " + result.transport.detail};
        co_return outcome{
            outcome::end::held, upstream::verdict::failed, {}, {}, result.transport.detail};
    }
    // The gateway makes the agent's calls with the upstream's own key (or none it was given): a
    // refusal is about the gateway's configuration, never about a caller.
    bool error_answer = result.status / 100 != 2;
    providers::provider_error error;
    if (error_answer)
        error = providers::error_of(adapter, result.status, result.error_type, result.body);
    // Bedrock's status misleads a route (a model's failure is its 424): judged by what its
    // error type says.
    bool by_type = error_answer && adapter.kind() == providers::provider::bedrock;
    auto judged = upstream::judge_status(by_type ? error.status : result.status, result.body,
                                         upstream::credential::gateway);
    if (judged == upstream::verdict::success) {
        if (!result.unreadable.empty()) {
            // A 2xx that is no reply is not retried: the server would answer it again.
            last = {errc::upstream_bad_response, false,
                    "upstream `" + up.name + "`: " + result.unreadable};
            co_return outcome{
                outcome::end::committed, upstream::verdict::failed, {}, {}, result.unreadable};
        }
        auto& reply = result.reply;
        for (auto& p : reply.content.parts)
            if (p.what == providers::part::kind::text) replace_nul(p.text);
        auto settled = client_.account(up, heard, reply, body.size(), started);
        answer = model_answer{std::move(reply), std::move(settled)};
        co_return outcome{outcome::end::committed, judged, std::nullopt, result.first_byte};
    }
    last = {code_of_status(result.status), false,
            "upstream `" + up.name + "` answered " + std::to_string(result.status) + ": " +
                error.message};
    if (judged == upstream::verdict::key_refused && own_route_)
        observability::log_warn("upstream `" + up.name + "` refused its key for model `" + heard +
                                "` (" + std::to_string(result.status) +
                                "); it is left out for health.max_cooldown");
    auto asked = upstream::retry_after(result.retry_after_ms, result.retry_after);
    bool moves = judged == upstream::verdict::context_window && terms.may_move;
    auto said = "answered " + std::to_string(result.status);
    if (upstream::tries_another(judged) || moves)
        co_return outcome{outcome::end::held, judged, asked, {}, said};
    // The request's own fault: no other target would take it.
    co_return outcome{outcome::end::committed, judged, asked, {}, said};
}

net::awaitable<model_result<model_answer>> model_client::converse(
    providers::request request, std::string request_id, call_canceller& cancel, retry_hook on_retry,
    text_hook on_text, const observability::trace_context* trace) {
    // A model no route and no upstream takes fails the call with that reason (it went to the
    // first upstream, whose error said nothing of it).
    if (!routing_.catalog().serves(request.model))
        co_return model_failure{errc::model_not_found, false,
                                "The model `" + request.model +
                                    "` does not exist on this gateway: no route and no "
                                    "upstream's `models` take it (GET /v1/models lists them)."};
    config::route_config scratch;
    const auto& route = routing_.table().route(request.model, scratch);
    // Without a route of its own a model's upstream is tried once and retried model_retries
    // times, as before routes, and is never kept out (as on /v1: with nothing to choose between
    // there is nothing to keep out; a refused key fails the call); its attempts are told to the
    // upstream's health all the same. A route says its own max_attempts.
    bool own_route = &route != &scratch;
    if (!own_route) scratch.max_attempts = 1 + model_retries_;
    auto plan = own_route ? upstream::attempt_plan(route, routing_.health())
                          : upstream::attempt_plan(route, routing_.health(),
                                                   upstream::attempt_plan::reporting{});
    request.stream = static_cast<bool>(on_text);
    request.include_usage = request.stream;
    call_attempts attempts(*this, request, std::move(request_id), cancel, on_retry, on_text, trace,
                           plan, own_route);
    auto ended = co_await upstream::run_attempts(plan, attempts);
    if (ended == upstream::attempts_end::stopped)
        co_return model_failure{errc::run_ended, true, "cancelled"};
    if (attempts.answer) co_return std::move(*attempts.answer);
    co_return attempts.last;
}

settled_call model_client::account(const config::upstream_config& up, const std::string& model,
                                   const providers::reply& reply, std::size_t request_bytes,
                                   std::chrono::steady_clock::time_point started) {
    const auto& used = reply.used;
    // Charged as /v1 charges a whole answer: the reported usage, or, when there is none, the
    // estimate from the request's bytes and the reply's content.
    auto charged = providers::settled_usage(used, content_bytes(reply), request_bytes, true);
    // The price of the configuration this client was built with: a call that started before a
    // reload is priced by the table it started with.
    const auto* price = prices_ ? prices_->find(up.name, model) : nullptr;
    settled_call settled{up.name, model, charged.used,
                         pricing::cost(charged.used, price, charged.estimated)};
    auto& m = observability::metrics();
    auto provider = providers::provider_name(up.provider);
    auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
    m.operation_duration.with({up.name, provider, model}).observe(seconds.count());
    m.usage_reports.with({up.name, used.known ? "agent" : "none"}).inc();
    if (used.unreadable)
        observability::log_warn("upstream `" + up.name + "` reported a token figure for `" + model +
                                "` that is no count (negative, not finite, or past 2^40); it "
                                "counted 0");
    if (used.known) {
        m.token_usage.with({up.name, provider, model, "input"})
            .observe(static_cast<double>(used.input));
        m.token_usage.with({up.name, provider, model, "output"})
            .observe(static_cast<double>(used.output));
    }
    if (settled.cost.priced)
        m.cost_usd.with({up.name, model}).inc(settled.cost.usd);
    else
        m.unpriced_requests.with({up.name, model}).inc();
    if (ledger_)
        ledger_->record(upstream::usage_record_of("context", model, up.name, settled.used,
                                                  settled.cost, now_ms()));
    return settled;
}

}  // namespace gateway::agent
