#pragma once

#include "gateway/config/config.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gateway::observability {

// OpenTelemetry traces (docs/operations.md "Tracing"). A span is recorded only when tracing is
// on and its trace is sampled; otherwise it is an empty handle whose calls do nothing, so the
// code that makes spans needs no branch of its own and a request that is not traced pays a
// pointer test per call. Finished spans go to a bounded queue that a thread of their own sends to
// the collector as OTLP/HTTP protobuf in batches; a full queue drops (and counts) spans rather
// than wait.

// A position in a trace, as W3C Trace Context carries it.
struct trace_context {
    std::array<std::uint8_t, 16> trace_id{};
    std::array<std::uint8_t, 8> span_id{};
    bool sampled = false;
    std::string state;  // tracestate, carried along unchanged
};

// `traceparent` (version 00, or a later one read as 00 says to), with `tracestate` kept;
// nullopt when it is malformed or an id is all zeros.
std::optional<trace_context> parse_traceparent(std::string_view header,
                                               std::string_view tracestate = {});
// "00-<trace id>-<span id>-<flags>".
std::string traceparent(const trace_context& context);
// "traceparent: …\r\n", and "tracestate: …\r\n" when it has one: the fields of a request made
// within the span `context`.
std::string trace_fields(const trace_context& context);

enum class span_kind { internal = 1, server = 2, client = 3 };

using attribute_value =
    std::variant<std::string, std::int64_t, double, bool, std::vector<std::string>>;

struct span_attribute {
    std::string key;
    attribute_value value;
};

// A span as it is exported: ids, name, kind, times (Unix nanoseconds), attributes and status.
struct span_record {
    trace_context context;                 // its trace and its own id
    std::array<std::uint8_t, 8> parent{};  // all zeros: a root
    std::string name;
    span_kind kind = span_kind::internal;
    std::uint64_t start_ns = 0;
    std::uint64_t end_ns = 0;
    std::vector<span_attribute> attributes;
    bool error = false;  // status ERROR (else UNSET)
    std::string status_message;
};

// One span being recorded, or nothing (not traced). Move-only; ends when destroyed if end() was
// not called. Used by one thread at a time.
class span {
public:
    span() = default;
    span(span&& other) noexcept = default;
    span& operator=(span&& other) noexcept;
    ~span();

    bool recording() const { return record_ != nullptr; }
    // Its trace and id (a child's parent, the traceparent sent upstream); null when not
    // recording.
    const trace_context* context() const { return record_ ? &record_->context : nullptr; }
    // A span of the same trace under this one; not recording when this one is not.
    span child(std::string name, span_kind kind) const;

    void set(std::string_view key, std::string value);
    void set(std::string_view key, std::string_view value) { set(key, std::string(value)); }
    void set(std::string_view key, const char* value) { set(key, std::string(value)); }
    void set(std::string_view key, std::int64_t value);
    void set(std::string_view key, int value) { set(key, static_cast<std::int64_t>(value)); }
    void set(std::string_view key, double value);
    void set(std::string_view key, bool value);
    void set(std::string_view key, std::vector<std::string> value);
    void rename(std::string name);
    // Status ERROR with `message`, and the error.type attribute `type` (a low-cardinality class:
    // "timeout", "503", "client_gone").
    void fail(std::string_view type, std::string message = {});
    // Finishes it now and queues it for export.
    void end();
    // The gateway's own admission refused the request for its credentials (no valid key, or a
    // key not allowed what it asked): a caller the gateway did not let in cannot make it export
    // spans by sending a sampled traceparent. A span recording on its parent's sampled flag stops
    // recording (and is never exported) unless the gateway's own sampler, tracing.sample_ratio
    // judged on the trace id, would have recorded that trace; a span the gateway sampled itself
    // is kept. Called before the span has children.
    void caller_refused();

private:
    friend span start_span(std::string name, span_kind kind, const trace_context* parent);
    span(std::unique_ptr<span_record> record, bool on_parents_word)
        : record_(std::move(record)), on_parents_word_(on_parents_word) {}
    std::unique_ptr<span_record> record_;
    bool on_parents_word_ = false;  // recorded because a caller's traceparent said sampled
};

// A span the gateway starts on its own (a request's SERVER span, an agent run): in `parent`'s
// trace when one is given (a client's traceparent), recorded when it says sampled (until
// caller_refused() says the caller was not let in); otherwise the start of a new trace, recorded
// with probability tracing.sample_ratio. Not recording while tracing is off.
span start_span(std::string name, span_kind kind, const trace_context* parent = nullptr);

// Whether tracing is on (tracing.otlp_endpoint set and the exporter started).
bool tracing();
// tracing.capture_content: spans may carry prompts, answers and tool arguments.
bool capture_content();
// Content for an attribute: at most 16 KiB of it (cut at a UTF-8 boundary, marked).
std::string bounded_content(std::string_view text);

// Starts the exporter's thread; spans are recorded from now on. Once, before the workers start.
void start_tracing(const config::tracing_config& tracing);
// Sends what is queued (waiting at most `within` for the collector) and stops the thread.
// Within the drain's grace: a collector that hangs cannot hold the process past its watchdog.
void stop_tracing(std::chrono::milliseconds within = std::chrono::milliseconds(2000));

// The OTLP ExportTraceServiceRequest (protobuf) holding `spans` under one resource with
// service.name `service`: what the exporter posts. For tests too.
std::string encode_spans(const std::vector<span_record>& spans, std::string_view service);

}  // namespace gateway::observability
