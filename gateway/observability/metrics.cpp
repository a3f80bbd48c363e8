#include "gateway/observability/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>
#include <type_traits>

namespace gateway::observability {

namespace {

constexpr char separator = '\x1f';
constexpr std::string_view overflow_value = "other";
// The longest label value kept (a model name past it is cut); the edge refuses longer names.
constexpr std::size_t max_label_bytes = 256;

// Buckets. Seconds for HTTP (Prometheus' client defaults, widened for long completions); the
// GenAI conventions' advisory boundaries for tokens, operation duration and time to first token.
const std::vector<double> http_seconds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                       0.5,    1,     2.5,    5,     10,   30,    60,   120, 300};
const std::vector<double> token_counts{1,     4,     16,     64,      256,     1024,    4096,
                                       16384, 65536, 262144, 1048576, 4194304, 16777216};
const std::vector<double> operation_seconds{0.01, 0.02, 0.04, 0.08,  0.16,  0.32,  0.64,
                                            1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92};
const std::vector<double> first_token_seconds{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                              0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0};
const std::vector<double> approval_seconds{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600};

void append_number(std::string& out, double value) {
    if (std::isinf(value)) {
        out += value > 0 ? "+Inf" : "-Inf";
        return;
    }
    if (std::isnan(value)) {
        out += "NaN";
        return;
    }
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, end);
}

// HELP text escapes backslash and newline; label values also escape the double quote.
void append_escaped(std::string& out, std::string_view text, bool quote) {
    for (char c : text) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else if (quote && c == '"')
            out += "\\\"";
        else
            out += c;
    }
}

template <class Series>
auto maker_of(const std::vector<double>& bounds) {
    return [b = &bounds] { return std::make_unique<Series>(*b); };
}

}  // namespace

histogram::histogram(const std::vector<double>& bounds)
    : bounds_(&bounds), buckets_(new std::atomic<std::uint64_t>[bounds.size() + 1]) {
    for (std::size_t i = 0; i <= bounds.size(); ++i) buckets_[i].store(0);
}

void histogram::observe(double value) {
    std::size_t i = 0;
    while (i < bounds_->size() && value > (*bounds_)[i]) ++i;
    buckets_[i].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
}

std::uint64_t histogram::cumulative(std::size_t i) const {
    std::uint64_t total = 0;
    for (std::size_t b = 0; b <= i && b <= bounds_->size(); ++b)
        total += buckets_[b].load(std::memory_order_relaxed);
    return total;
}

family_base::family_base(std::string name, std::string help, std::vector<std::string> labels,
                         std::size_t max_series)
    : name_(std::move(name)),
      help_(std::move(help)),
      labels_(std::move(labels)),
      max_series_(max_series) {}

namespace {

void append_label_value(std::string& key, std::string_view value) {
    // Plain values (every one the gateway makes itself) are copied as they are.
    bool plain =
        value.size() <= max_label_bytes && std::all_of(value.begin(), value.end(), [](char c) {
            auto u = static_cast<unsigned char>(c);
            return u >= 0x20 && u < 0x7f;
        });
    if (plain) {
        key += value;
        return;
    }
    // Client-chosen text (a model name): control characters but the newline (which the format
    // escapes; the key's separator, CR and NUL among them) and bytes that are not UTF-8 become '?',
    // and the value is cut at max_label_bytes on a character boundary, so that what Prometheus'
    // text format carries is what was meant and a label can never move into another series.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < value.size();) {
        auto c = static_cast<unsigned char>(value[i]);
        std::size_t length = c < 0x80           ? 1
                             : (c >> 5) == 0x6  ? 2
                             : (c >> 4) == 0xe  ? 3
                             : (c >> 3) == 0x1e ? 4
                                                : 0;
        bool valid = length > 0 && i + length <= value.size();
        for (std::size_t k = 1; valid && k < length; ++k)
            valid = (static_cast<unsigned char>(value[i + k]) & 0xc0) == 0x80;
        if (!valid) length = 1;
        if (kept + length > max_label_bytes) break;
        if (!valid || (c < 0x20 && c != '\n') || c == 0x7f)
            key += '?';
        else
            key.append(value.data() + i, length);
        kept += length;
        i += length;
    }
}

}  // namespace

void family_base::key_of(std::initializer_list<std::string_view> values, std::string& key) const {
    key.clear();
    std::size_t i = 0;
    for (auto v : values) {
        if (i++) key += separator;
        append_label_value(key, v);
    }
    // A missing value is empty; a surplus one is a bug caught in tests by the rendered output.
    for (; i < labels_.size(); ++i) key += separator;
}

void family_base::write_labels(std::string& out, std::string_view key, std::string_view extra_name,
                               std::string_view extra_value) const {
    if (labels_.empty() && extra_name.empty()) return;
    out += '{';
    bool first = true;
    std::size_t start = 0;
    for (const auto& label : labels_) {
        auto end = key.find(separator, start);
        auto value = key.substr(start, end == std::string_view::npos ? key.npos : end - start);
        start = end == std::string_view::npos ? key.size() : end + 1;
        if (!first) out += ',';
        first = false;
        out += label;
        out += "=\"";
        append_escaped(out, value, true);
        out += '"';
    }
    if (!extra_name.empty()) {
        if (!first) out += ',';
        out += extra_name;
        out += "=\"";
        out += extra_value;
        out += '"';
    }
    out += '}';
}

template <class Series>
Series& family<Series>::with(std::initializer_list<std::string_view> values) {
    thread_local std::string key;
    key_of(values, key);
    {
        std::shared_lock lock(mutex_);
        if (auto it = series_.find(key); it != series_.end()) return *it->second;
    }
    std::unique_lock lock(mutex_);
    if (auto it = series_.find(key); it != series_.end()) return *it->second;
    if (series_.size() >= max_series_) {
        std::string overflow;
        for (std::size_t i = 0; i < labels_.size(); ++i) {
            if (i) overflow += separator;
            overflow += overflow_value;
        }
        auto& slot = series_[overflow];
        if (!slot) slot = make_();
        return *slot;
    }
    auto& slot = series_[key];
    slot = make_();
    return *slot;
}

void family_base::write_header(std::string& out, std::string_view type) const {
    out += "# HELP " + name_ + ' ';
    append_escaped(out, help_, false);
    out += "\n# TYPE " + name_ + ' ';
    out += type;
    out += '\n';
}

template <class Series>
void family<Series>::render(std::string& out) const {
    constexpr bool is_histogram = std::is_same_v<Series, histogram>;
    write_header(out, is_histogram                      ? "histogram"
                      : std::is_same_v<Series, counter> ? "counter"
                                                        : "gauge");
    std::shared_lock lock(mutex_);
    for (const auto& [key, series] : series_) {
        if constexpr (!is_histogram) {
            out += name_;
            write_labels(out, key);
            out += ' ';
            append_number(out, series->value());
            out += '\n';
        } else {
            const auto& bounds = series->bounds();
            // _count is the +Inf bucket as written, so the two agree while others observe.
            std::uint64_t total = 0;
            for (std::size_t i = 0; i <= bounds.size(); ++i) {
                total = series->cumulative(i);
                std::string le;
                if (i < bounds.size())
                    append_number(le, bounds[i]);
                else
                    le = "+Inf";
                out += name_ + "_bucket";
                write_labels(out, key, "le", le);
                out += ' ';
                append_number(out, static_cast<double>(total));
                out += '\n';
            }
            out += name_ + "_sum";
            write_labels(out, key);
            out += ' ';
            append_number(out, series->sum());
            out += '\n';
            out += name_ + "_count";
            write_labels(out, key);
            out += ' ';
            append_number(out, static_cast<double>(total));
            out += '\n';
        }
    }
}

template class family<counter>;
template class family<gauge>;
template class family<histogram>;

gateway_metrics::gateway_metrics()
    : http_duration("contextgate_http_request_duration_seconds",
                    "Time from a request's first byte to the end of its response.",
                    {"route", "method", "status"}, maker_of<histogram>(http_seconds)),
      http_open_connections("contextgate_http_open_connections", "Open client connections.", {}),
      upstream_open("contextgate_upstream_connections",
                    "Upstream connections open (in use or pooled), per upstream.", {"upstream"}),
      upstream_idle("contextgate_upstream_idle_connections",
                    "Upstream connections idle in the pools, per upstream.", {"upstream"}),
      upstream_connect_failures("contextgate_upstream_connect_failures_total",
                                "Failed attempts to open an upstream connection.",
                                {"upstream", "reason"}),
      upstream_timeouts("contextgate_upstream_timeouts_total",
                        "Upstream deadlines that passed, by phase.", {"upstream", "phase"}),
      upstream_resolutions("contextgate_upstream_resolutions_total",
                           "Host name lookups of upstreams (each worker keeps an answer 30 s).",
                           {"upstream"}),
      route_attempts("contextgate_route_attempts_total",
                     "Attempts at route targets, by how they ended.", {"upstream", "outcome"}),
      route_fallbacks("contextgate_route_fallbacks_total",
                      "Attempts after a request's first, by route, the target tried and why the "
                      "attempt before it ended.",
                      {"route", "upstream", "reason"}),
      route_cooldowns("contextgate_route_cooldowns_total", "Route targets cooled after a failure.",
                      {"upstream"}),
      route_targets_out("contextgate_route_targets_out",
                        "Route targets skipped now: cooled, or their key refused.",
                        {"upstream", "state"}),
      midstream_failures("contextgate_midstream_failures_total",
                         "Answers that failed after the client had received part of them.",
                         {"upstream"}),
      token_usage("gen_ai_client_token_usage", "Tokens used per model request, as reported.",
                  {"upstream", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_token_type"},
                  maker_of<histogram>(token_counts)),
      operation_duration("gen_ai_client_operation_duration_seconds",
                         "Duration of model requests, until the last byte of the answer.",
                         {"upstream", "gen_ai_provider_name", "gen_ai_request_model"},
                         maker_of<histogram>(operation_seconds)),
      time_to_first_token("gen_ai_server_time_to_first_token_seconds",
                          "Time from sending a streamed model request to its first body bytes.",
                          {"upstream", "gen_ai_provider_name", "gen_ai_request_model"},
                          maker_of<histogram>(first_token_seconds)),
      usage_reports("contextgate_model_responses_total",
                    "Model responses by where their token usage came from (body, stream, none).",
                    {"upstream", "source"}),
      cost_usd("contextgate_cost_usd_total",
               "What model requests cost in USD, at the price table's rates (docs/operations.md).",
               {"upstream", "model"}),
      unpriced_requests("contextgate_unpriced_requests_total",
                        "Model requests answered whose model has no price (never counted as $0).",
                        {"upstream", "model"}),
      key_tokens("contextgate_key_tokens_total", "Tokens used per virtual key.",
                 {"key", "gen_ai_token_type"}),
      key_requests("contextgate_key_requests_total", "Requests per virtual key.", {"key"}),
      limit_refusals("contextgate_limit_refusals_total", "Requests refused by a limit.", {"kind"}),
      limit_backend_errors("contextgate_limit_backend_errors_total",
                           "Limit checks the backend (Redis) could not answer; let through.", {}),
      cache_lookups("contextgate_cache_lookups_total",
                    "Response cache lookups by result (hit, miss, skip: not looked up).",
                    {"result"}),
      cache_stores("contextgate_cache_stores_total", "Answers stored in the response cache.", {}),
      cache_evictions("contextgate_cache_evictions_total",
                      "Response cache entries evicted to stay within cache.max_bytes.", {}),
      cache_bytes("contextgate_cache_bytes", "Bytes held by the in-memory response cache.", {}),
      cache_backend_errors("contextgate_cache_backend_errors_total",
                           "Response cache operations the backend (Redis) failed; the request "
                           "went to the upstream.",
                           {}),
      guardrail_hits("contextgate_guardrail_hits_total",
                     "Guardrail hits by guardrail, rule, stage and action taken.",
                     {"guardrail", "rule", "stage", "action"}),
      trace_spans_exported("contextgate_trace_spans_exported_total",
                           "Spans the trace collector took.", {}),
      trace_spans_dropped("contextgate_trace_spans_dropped_total",
                          "Spans not exported, by reason (queue_full, export_failed).", {"reason"}),
      log_followers_dropped("contextgate_log_followers_dropped_total",
                            "/admin/log followers dropped for not reading: their queue of access "
                            "lines passed its bound.",
                            {}),
      runs_finished("contextgate_agent_runs_total", "Agent runs that ended, by outcome.",
                    {"outcome"}),
      runs_active("contextgate_agent_runs_active", "Agent runs running or awaiting approval.", {}),
      agent_steps("contextgate_agent_steps_total",
                  "Turns of the agent loop (model requests, re-asks not counted).", {}),
      agent_reasks("contextgate_agent_reasks_total",
                   "Model outputs sent back for correction, by failure class.", {"reason"}),
      tool_calls("contextgate_agent_tool_calls_total", "Tool calls by tool and outcome.",
                 {"tool", "outcome"}),
      approval_wait("contextgate_agent_approval_wait_seconds",
                    "Time a tool call waited for a human decision.", {},
                    maker_of<histogram>(approval_seconds)),
      event_watchers("contextgate_agent_event_watchers", "Open run event streams.", {}),
      store_queue("contextgate_store_queue",
                  "Pieces of work posted to a store thread and not yet done.", {"thread"}),
      store_transactions("contextgate_store_transactions_total",
                         "Write transactions committed by the store.", {}),
      store_events("contextgate_store_events_total", "Run events committed by the store.", {}) {
    all_ = {&http_duration,
            &http_open_connections,
            &upstream_open,
            &upstream_idle,
            &upstream_connect_failures,
            &upstream_timeouts,
            &upstream_resolutions,
            &route_attempts,
            &route_fallbacks,
            &route_cooldowns,
            &route_targets_out,
            &midstream_failures,
            &token_usage,
            &operation_duration,
            &time_to_first_token,
            &usage_reports,
            &cost_usd,
            &unpriced_requests,
            &key_tokens,
            &key_requests,
            &limit_refusals,
            &limit_backend_errors,
            &cache_lookups,
            &cache_stores,
            &cache_evictions,
            &cache_bytes,
            &cache_backend_errors,
            &guardrail_hits,
            &trace_spans_exported,
            &trace_spans_dropped,
            &log_followers_dropped,
            &runs_finished,
            &runs_active,
            &agent_steps,
            &agent_reasks,
            &tool_calls,
            &approval_wait,
            &event_watchers,
            &store_queue,
            &store_transactions,
            &store_events};
    // Series without labels exist from the start, so a scrape shows them at zero.
    http_open_connections.with();
    runs_active.with();
    agent_steps.with();
    event_watchers.with();
    limit_backend_errors.with();
    cache_stores.with();
    cache_evictions.with();
    cache_bytes.with();
    cache_backend_errors.with();
    trace_spans_exported.with();
    log_followers_dropped.with();
    store_transactions.with();
    store_events.with();
}

std::string gateway_metrics::render() const {
    std::string out;
    out.reserve(16 * 1024);
    for (const auto* f : all_) f->render(out);
    return out;
}

gateway_metrics& metrics() {
    static gateway_metrics instance;
    return instance;
}

std::string_view status_class(unsigned status) {
    static constexpr std::string_view classes[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
    if (status < 100 || status > 599) return "other";
    return classes[status / 100 - 1];
}

}  // namespace gateway::observability
