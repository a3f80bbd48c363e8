#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::observability {

// Prometheus metrics kept in process memory and rendered in the text exposition format 0.0.4.
// A family has a name, help text and label names; each distinct set of label values is one
// series, created on first use and never removed. Updating a series is a few relaxed atomic
// operations; finding it takes a shared lock and one ordered-map lookup, so hot paths may keep
// the reference. Label sets are bounded: past `max_series` distinct sets a family puts new ones
// in a single series whose every label is "other" (a client choosing model names cannot grow
// the scrape without bound), and label values are bounded in size: past 256 bytes a value is cut,
// and control characters (but the newline, which the format escapes) and invalid UTF-8 become '?'
// (a client's model name can neither forge a line nor shift labels into another series).
// Thread-safe.

class counter {
public:
    void inc(double by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
    double value() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0};
};

class gauge {
public:
    void add(double by) { value_.fetch_add(by, std::memory_order_relaxed); }
    void set(double to) { value_.store(to, std::memory_order_relaxed); }
    double value() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0};
};

class histogram {
public:
    explicit histogram(const std::vector<double>& bounds);
    void observe(double value);

    const std::vector<double>& bounds() const { return *bounds_; }
    // Cumulative count of observations <= bounds()[i]; i == bounds().size() is the total.
    std::uint64_t cumulative(std::size_t i) const;
    double sum() const { return sum_.load(std::memory_order_relaxed); }

private:
    const std::vector<double>* bounds_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bucket, last is +Inf
    std::atomic<double> sum_{0};
};

class family_base {
public:
    family_base(std::string name, std::string help, std::vector<std::string> labels,
                std::size_t max_series);
    virtual ~family_base() = default;
    const std::string& name() const { return name_; }
    // Appends this family's # HELP, # TYPE and sample lines.
    virtual void render(std::string& out) const = 0;

protected:
    // The key of a label set: values joined with '\x1f'; the overflow key once the family is full.
    void key_of(std::initializer_list<std::string_view> values, std::string& key) const;
    // The family's # HELP and # TYPE lines.
    void write_header(std::string& out, std::string_view type) const;
    void write_labels(std::string& out, std::string_view key, std::string_view extra_name = {},
                      std::string_view extra_value = {}) const;

    std::string name_;
    std::string help_;
    std::vector<std::string> labels_;
    std::size_t max_series_;
};

template <class Series>
class family : public family_base {
public:
    using maker = std::function<std::unique_ptr<Series>()>;
    family(
        std::string name, std::string help, std::vector<std::string> labels,
        maker make = [] { return std::make_unique<Series>(); }, std::size_t max_series = 1000)
        : family_base(std::move(name), std::move(help), std::move(labels), max_series),
          make_(std::move(make)) {}

    // The series for these label values (as many as the family has label names).
    Series& with(std::initializer_list<std::string_view> values = {});
    void render(std::string& out) const override;

private:
    maker make_;
    mutable std::shared_mutex mutex_;
    std::map<std::string, std::unique_ptr<Series>, std::less<>> series_;
};

// Every metric the gateway exports, in one place so their names and labels read as a list.
// Names follow Prometheus conventions; model traffic uses the OpenTelemetry GenAI semantic
// conventions (gen_ai.client.token.usage -> gen_ai_client_token_usage, ...).
struct gateway_metrics {
    gateway_metrics();

    // HTTP. route: passthrough | context | console | admin | other; method; status: 2xx ...
    family<histogram> http_duration;
    family<gauge> http_open_connections;
    // Upstream connections, per upstream: open (in use or idle) and idle in the pool.
    family<gauge> upstream_open;
    family<gauge> upstream_idle;
    family<counter> upstream_connect_failures;  // upstream, reason: refused|timeout|tls|dns
    family<counter> upstream_timeouts;          // upstream, phase: connect|first_byte|idle
    family<counter> upstream_resolutions;       // upstream: host name lookups (not IP literals)
    // Routes (docs/routing.md).
    family<counter> route_attempts;      // upstream, outcome: success|failed|unusable|not_judged
    family<counter> route_fallbacks;     // route, upstream, reason: an attempt after the first
    family<counter> route_cooldowns;     // upstream: a target cooled after a failure
    family<gauge> route_targets_out;     // upstream, state: cooled|unusable, at the scrape
    family<counter> midstream_failures;  // upstream: an answer that failed after it was relayed

    // Model traffic: upstream, provider, requested model (gen_ai_request_model).
    family<histogram> token_usage;  // + gen_ai_token_type: input|output
    family<histogram> operation_duration;
    family<histogram> time_to_first_token;  // streams only
    family<counter> usage_reports;          // + source: body|stream|estimate|agent|none
    // Money (pricing::cost): upstream, model (the name the upstream heard).
    family<counter> cost_usd;           // USD of the requests priced, estimates included
    family<counter> unpriced_requests;  // answered requests whose model has no price
    // Per virtual key (only when metrics.key_labels is on): key, gen_ai_token_type.
    family<counter> key_tokens;
    family<counter> key_requests;

    // Limits: kind (requests|tokens|parallel|budget) refused; backend errors.
    family<counter> limit_refusals;
    family<counter> limit_backend_errors;

    // The response cache: lookups by result (hit|miss|skip), answers stored, entries evicted
    // to stay within cache.max_bytes, the bytes held (memory backend), backend errors (Redis).
    family<counter> cache_lookups;
    family<counter> cache_stores;
    family<counter> cache_evictions;
    family<gauge> cache_bytes;
    family<counter> cache_backend_errors;

    // Guardrails (docs/operations.md): hits by guardrail, rule, stage (request|response|
    // tool_result) and action (mask|block|log). Never the matched text.
    family<counter> guardrail_hits;

    // Traces (tracing.otlp_endpoint): spans the collector took, spans dropped by reason
    // (queue_full: more finished than the queue holds; export_failed: the collector did not
    // take them).
    family<counter> trace_spans_exported;
    family<counter> trace_spans_dropped;
    // /admin/log followers dropped because their queue of access lines passed its bound (a
    // client that stopped reading).
    family<counter> log_followers_dropped;

    // Agent runs.
    family<counter> runs_finished;    // outcome: completed|failed|cancelled
    family<gauge> runs_active;        //
    family<counter> agent_steps;      //
    family<counter> agent_reasks;     // failure class
    family<counter> tool_calls;       // tool, outcome: ok|error|rejected
    family<histogram> approval_wait;  // seconds from asking to a decision
    family<gauge> event_watchers;     // open /context/runs/{id}/events streams

    // The store's threads (thread: store-write|store-read): work posted and not yet done, and
    // the write transactions committed with the events they held.
    family<gauge> store_queue;
    family<counter> store_transactions;
    family<counter> store_events;

    // The whole exposition, every family in declaration order.
    std::string render() const;

    bool key_labels = false;  // metrics.key_labels
    // metrics.enabled: when off, per-request observations on the hot path are skipped.
    bool on = true;

private:
    std::vector<const family_base*> all_;
};

// The process's metrics. Like the log, one per process: every module reports to it.
gateway_metrics& metrics();

// "2xx" for 204 and so on; "other" for 0.
std::string_view status_class(unsigned status);

}  // namespace gateway::observability
