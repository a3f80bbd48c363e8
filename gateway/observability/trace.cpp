#include "gateway/observability/trace.hpp"

#include "gateway/ids.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

namespace gateway::observability {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using clock_type = std::chrono::system_clock;

// The spans of one export request; a full batch is sent without waiting for the interval.
constexpr std::size_t batch_size = 512;
constexpr std::size_t content_limit = 16 * 1024;

std::uint64_t unix_nanos() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch())
            .count());
}

template <std::size_t N>
void fill_random(std::array<std::uint8_t, N>& id) {
    // A valid id is never all zeros.
    do unique_bytes(id.data(), N);
    while (std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; }));
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;  // W3C: lowercase only
}

template <std::size_t N>
bool read_hex(std::string_view text, std::array<std::uint8_t, N>& out) {
    if (text.size() != 2 * N) return false;
    bool any = false;
    for (std::size_t i = 0; i < N; ++i) {
        int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
        any = any || out[i] != 0;
    }
    return any;
}

// ---- OTLP protobuf (opentelemetry/proto/collector/trace/v1/trace_service.proto and the
// messages it holds), written field by field.

void varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

enum wire : std::uint32_t { wire_varint = 0, wire_i64 = 1, wire_len = 2, wire_i32 = 5 };

void tag(std::string& out, std::uint32_t field, wire type) {
    varint(out, (static_cast<std::uint64_t>(field) << 3) | type);
}
void bytes_field(std::string& out, std::uint32_t field, std::string_view bytes) {
    tag(out, field, wire_len);
    varint(out, bytes.size());
    out.append(bytes);
}
void fixed64_field(std::string& out, std::uint32_t field, std::uint64_t v) {
    tag(out, field, wire_i64);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void fixed32_field(std::string& out, std::uint32_t field, std::uint32_t v) {
    tag(out, field, wire_i32);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void varint_field(std::string& out, std::uint32_t field, std::uint64_t v) {
    tag(out, field, wire_varint);
    varint(out, v);
}
template <std::size_t N>
std::string_view id_bytes(const std::array<std::uint8_t, N>& id) {
    return {reinterpret_cast<const char*>(id.data()), N};
}

// AnyValue: string_value 1, bool_value 2, int_value 3, double_value 4, array_value 5.
std::string any_value(const attribute_value& value) {
    std::string out;
    if (const auto* s = std::get_if<std::string>(&value)) {
        bytes_field(out, 1, *s);
    } else if (const auto* b = std::get_if<bool>(&value)) {
        varint_field(out, 2, *b ? 1 : 0);
    } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
        varint_field(out, 3, static_cast<std::uint64_t>(*i));
    } else if (const auto* d = std::get_if<double>(&value)) {
        std::uint64_t bits;
        std::memcpy(&bits, d, sizeof bits);
        fixed64_field(out, 4, bits);
    } else {
        std::string array;  // ArrayValue: values 1
        for (const auto& item : std::get<std::vector<std::string>>(value))
            bytes_field(array, 1, any_value(item));
        bytes_field(out, 5, array);
    }
    return out;
}

// KeyValue: key 1, value 2.
std::string key_value(std::string_view key, const attribute_value& value) {
    std::string out;
    bytes_field(out, 1, key);
    bytes_field(out, 2, any_value(value));
    return out;
}

// Span: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5, kind 6,
// start_time_unix_nano 7, end_time_unix_nano 8, attributes 9, status 15 (message 2, code 3),
// flags 16.
std::string span_message(const span_record& s) {
    std::string out;
    bytes_field(out, 1, id_bytes(s.context.trace_id));
    bytes_field(out, 2, id_bytes(s.context.span_id));
    if (!s.context.state.empty()) bytes_field(out, 3, s.context.state);
    if (std::any_of(s.parent.begin(), s.parent.end(), [](std::uint8_t b) { return b != 0; }))
        bytes_field(out, 4, id_bytes(s.parent));
    bytes_field(out, 5, s.name);
    varint_field(out, 6, static_cast<std::uint64_t>(s.kind));
    fixed64_field(out, 7, s.start_ns);
    fixed64_field(out, 8, s.end_ns);
    for (const auto& a : s.attributes) bytes_field(out, 9, key_value(a.key, a.value));
    if (s.error) {
        std::string status;
        if (!s.status_message.empty()) bytes_field(status, 2, s.status_message);
        varint_field(status, 3, 2);  // STATUS_CODE_ERROR
        bytes_field(out, 15, status);
    }
    fixed32_field(out, 16, s.context.sampled ? 1 : 0);  // the W3C trace flags
    return out;
}

// ---- The tracer: settings, the queue, the exporter's thread.

struct tracer_state {
    std::atomic<bool> on{false};
    config::tracing_config settings;

    std::mutex mutex;
    std::condition_variable wake;
    std::vector<span_record> queue;  // finished, not yet taken
    bool stopping = false;
    std::chrono::steady_clock::time_point stop_by;  // stopping: what is left then is dropped
    std::thread thread;
};

tracer_state& tracer() {
    static tracer_state state;
    return state;
}

void count_dropped(std::string_view reason, std::size_t n) {
    metrics().trace_spans_dropped.with({reason}).inc(static_cast<double>(n));
}

// Posts batches to the collector over one kept-alive connection (TLS for https), each exchange
// bounded in time. Used by the exporter's thread only.
class otlp_client {
public:
    explicit otlp_client(const config::tracing_config& settings)
        : settings_(settings), tls_(net::ssl::context::tls_client) {
        if (settings.endpoint.tls) {
            tls_.set_options(net::ssl::context::no_sslv2 | net::ssl::context::no_sslv3 |
                             net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1);
            boost::system::error_code ec;
            if (settings.ca_file.empty())
                tls_.set_default_verify_paths(ec);
            else
                tls_.load_verify_file(settings.ca_file, ec);
            if (ec)
                log_warn("tracing: cannot load the CA " +
                         (settings.ca_file.empty() ? std::string("store") : settings.ca_file) +
                         ": " + ec.message());
            tls_.set_verify_mode(net::ssl::verify_peer);
        }
    }

    // True once the collector took `body` (a 2xx) within `limit` for each step (connect,
    // handshake, the exchange); else `why` says what failed.
    bool post(const std::string& body, std::chrono::milliseconds limit, std::string& why) {
        limit_ = limit;
        for (int attempt = 0; attempt < 2; ++attempt) {
            // A kept connection the collector closed meanwhile fails at once: once more anew.
            bool reused = connected_;
            auto future = net::co_spawn(io_, exchange(body), net::use_future);
            io_.restart();
            io_.run();
            std::pair<unsigned, std::string> outcome;
            try {
                outcome = future.get();
            } catch (const std::exception& e) {
                outcome = {0, std::string("cannot export: ") + e.what()};
            }
            auto [status, error] = std::move(outcome);
            if (!error.empty()) {
                close();
                why = error;
                if (reused) continue;
                return false;
            }
            if (status / 100 == 2) return true;
            why = "the collector answered " + std::to_string(status);
            return false;
        }
        return false;
    }

private:
    using plain_stream = beast::tcp_stream;
    using secure_stream = beast::ssl_stream<beast::tcp_stream>;

    net::awaitable<std::pair<unsigned, std::string>> exchange(const std::string& body) {
        const auto& at = settings_.endpoint;
        try {
            if (!connected_) co_await connect();
            bhttp::request<bhttp::string_body> req{bhttp::verb::post, at.base_path, 11};
            req.set(bhttp::field::host, at.host);
            req.set(bhttp::field::content_type, "application/x-protobuf");
            req.set(bhttp::field::user_agent, "contextgate");
            for (const auto& [name, value] : settings_.headers) req.set(name, value);
            req.body() = body;
            req.prepare_payload();
            bhttp::response<bhttp::string_body> res;
            if (secure_) {
                beast::get_lowest_layer(*secure_).expires_after(limit_);
                co_await bhttp::async_write(*secure_, req, net::use_awaitable);
                co_await bhttp::async_read(*secure_, buffer_, res, net::use_awaitable);
            } else {
                plain_->expires_after(limit_);
                co_await bhttp::async_write(*plain_, req, net::use_awaitable);
                co_await bhttp::async_read(*plain_, buffer_, res, net::use_awaitable);
            }
            if (!res.keep_alive()) close();
            co_return std::pair<unsigned, std::string>{res.result_int(), ""};
        } catch (const boost::system::system_error& e) {
            co_return std::pair<unsigned, std::string>{
                0, "cannot reach " + settings_.otlp_endpoint + ": " + e.code().message()};
        }
    }

    net::awaitable<void> connect() {
        const auto& at = settings_.endpoint;
        net::ip::tcp::resolver resolver(io_);
        auto found =
            co_await resolver.async_resolve(at.host, std::to_string(at.port), net::use_awaitable);
        buffer_.clear();
        if (at.tls) {
            secure_.emplace(io_, tls_);
            // SNI names a host; an IP address is not sent as one.
            boost::system::error_code not_ip;
            net::ip::make_address(at.host, not_ip);
            if (not_ip && !SSL_set_tlsext_host_name(secure_->native_handle(), at.host.c_str()))
                throw boost::system::system_error(boost::system::error_code(
                    static_cast<int>(::ERR_get_error()), net::error::get_ssl_category()));
            secure_->set_verify_callback(net::ssl::host_name_verification(at.host));
            auto& lowest = beast::get_lowest_layer(*secure_);
            lowest.expires_after(limit_);
            co_await lowest.async_connect(found, net::use_awaitable);
            co_await secure_->async_handshake(net::ssl::stream_base::client, net::use_awaitable);
        } else {
            plain_.emplace(io_);
            plain_->expires_after(limit_);
            co_await plain_->async_connect(found, net::use_awaitable);
        }
        connected_ = true;
    }

    void close() {
        plain_.reset();
        secure_.reset();
        connected_ = false;
    }

    const config::tracing_config& settings_;
    net::io_context io_;
    net::ssl::context tls_;
    std::optional<plain_stream> plain_;
    std::optional<secure_stream> secure_;
    beast::flat_buffer buffer_;
    bool connected_ = false;
    std::chrono::milliseconds limit_{10'000};
};

void export_loop() {
    auto& t = tracer();
    io::name_this_thread("trace-export");
    otlp_client client(t.settings);
    auto interval = t.settings.export_interval;
    auto last_warning = std::chrono::steady_clock::time_point{};
    std::unique_lock lock(t.mutex);
    for (;;) {
        t.wake.wait_for(lock, interval, [&] { return t.stopping || t.queue.size() >= batch_size; });
        if (t.queue.empty()) {
            if (t.stopping) return;
            continue;
        }
        // Each step of a post gets 10 s; while stopping, what is left of `within`.
        auto limit = std::chrono::milliseconds(10'000);
        if (t.stopping) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                t.stop_by - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                count_dropped("export_failed", t.queue.size());
                t.queue.clear();
                return;
            }
            limit = std::min(limit, left);
        }
        std::vector<span_record> batch;
        if (t.queue.size() <= batch_size) {
            batch.swap(t.queue);
        } else {
            batch.assign(std::make_move_iterator(t.queue.begin()),
                         std::make_move_iterator(t.queue.begin() + batch_size));
            t.queue.erase(t.queue.begin(), t.queue.begin() + batch_size);
        }
        lock.unlock();
        auto body = encode_spans(batch, t.settings.service_name);
        std::string why;
        if (client.post(body, limit, why)) {
            metrics().trace_spans_exported.with().inc(static_cast<double>(batch.size()));
        } else {
            count_dropped("export_failed", batch.size());
            // Once a minute at most: a collector that is down must not flood the log.
            auto now = std::chrono::steady_clock::now();
            if (now - last_warning > std::chrono::minutes(1)) {
                last_warning = now;
                log_warn("tracing: " + std::to_string(batch.size()) +
                         " spans not exported: " + why);
            }
        }
        lock.lock();
    }
}

void queue_span(std::unique_ptr<span_record> record) {
    auto& t = tracer();
    if (!t.on.load(std::memory_order_relaxed)) return;
    record->end_ns = std::max(unix_nanos(), record->start_ns);
    std::size_t waiting = 0;  // 0: the queue was full
    {
        std::lock_guard lock(t.mutex);
        if (t.stopping) return;  // ended as the tracer stopped: not recorded, as after the stop
        if (t.queue.size() < t.settings.max_queue_spans) {
            t.queue.push_back(std::move(*record));
            waiting = t.queue.size();
        }
    }
    if (waiting == 0) {
        count_dropped("queue_full", 1);
        return;
    }
    if (waiting == batch_size) t.wake.notify_one();
}

// TraceIdRatioBased: the trace id's last 8 bytes against tracing.sample_ratio, so that every
// party sampling by ratio decides a trace alike.
bool sampled_at_ratio(const std::array<std::uint8_t, 16>& trace_id) {
    std::uint64_t low = 0;
    for (int i = 8; i < 16; ++i) low = (low << 8) | trace_id[i];
    auto ratio = tracer().settings.sample_ratio;
    return ratio >= 1.0 || static_cast<double>(low >> 11) < ratio * static_cast<double>(1ULL << 53);
}

std::unique_ptr<span_record> new_record(std::string name, span_kind kind) {
    auto record = std::make_unique<span_record>();
    record->name = std::move(name);
    record->kind = kind;
    record->start_ns = unix_nanos();
    fill_random(record->context.span_id);
    record->context.sampled = true;
    return record;
}

}  // namespace

std::optional<trace_context> parse_traceparent(std::string_view header,
                                               std::string_view tracestate) {
    // version "-" trace-id "-" parent-id "-" flags; a later version may append "-…".
    if (header.size() < 55 || header[2] != '-' || header[35] != '-' || header[52] != '-')
        return std::nullopt;
    auto version = header.substr(0, 2);
    if (hex_digit(version[0]) < 0 || hex_digit(version[1]) < 0 || version == "ff")
        return std::nullopt;
    if (version == "00" ? header.size() != 55 : header.size() > 55 && header[55] != '-')
        return std::nullopt;
    trace_context out;
    if (!read_hex(header.substr(3, 32), out.trace_id) ||
        !read_hex(header.substr(36, 16), out.span_id))
        return std::nullopt;
    // The flags byte: "sampled" is its lowest bit, in the second hex digit.
    int flags_high = hex_digit(header[53]), flags_low = hex_digit(header[54]);
    if (flags_high < 0 || flags_low < 0) return std::nullopt;
    out.sampled = (flags_low & 1) != 0;
    out.state = std::string(tracestate.substr(0, 512));
    return out;
}

std::string traceparent(const trace_context& context) {
    return "00-" + to_hex(context.trace_id.data(), 16) + "-" + to_hex(context.span_id.data(), 8) +
           (context.sampled ? "-01" : "-00");
}

std::string trace_fields(const trace_context& context) {
    auto fields = "traceparent: " + traceparent(context) + "\r\n";
    if (!context.state.empty()) fields += "tracestate: " + context.state + "\r\n";
    return fields;
}

span& span::operator=(span&& other) noexcept {
    if (this != &other) {
        end();
        record_ = std::move(other.record_);
        on_parents_word_ = other.on_parents_word_;
    }
    return *this;
}

span::~span() {
    end();
}

span span::child(std::string name, span_kind kind) const {
    if (!record_) return {};
    auto record = new_record(std::move(name), kind);
    record->context.trace_id = record_->context.trace_id;
    record->context.state = record_->context.state;
    record->parent = record_->context.span_id;
    return span(std::move(record), false);
}

void span::set(std::string_view key, std::string value) {
    if (record_) record_->attributes.push_back({std::string(key), std::move(value)});
}
void span::set(std::string_view key, std::int64_t value) {
    if (record_) record_->attributes.push_back({std::string(key), value});
}
void span::set(std::string_view key, double value) {
    if (record_) record_->attributes.push_back({std::string(key), value});
}
void span::set(std::string_view key, bool value) {
    if (record_) record_->attributes.push_back({std::string(key), value});
}
void span::set(std::string_view key, std::vector<std::string> value) {
    if (record_) record_->attributes.push_back({std::string(key), std::move(value)});
}

void span::rename(std::string name) {
    if (record_) record_->name = std::move(name);
}

void span::fail(std::string_view type, std::string message) {
    if (!record_) return;
    record_->error = true;
    record_->status_message = std::move(message);
    set("error.type", std::string(type));
}

void span::end() {
    if (record_) queue_span(std::move(record_));
}

void span::caller_refused() {
    if (record_ && on_parents_word_ && !sampled_at_ratio(record_->context.trace_id))
        record_.reset();
}

span start_span(std::string name, span_kind kind, const trace_context* parent) {
    auto& t = tracer();
    if (!t.on.load(std::memory_order_relaxed)) return {};
    if (parent && !parent->sampled) return {};
    std::array<std::uint8_t, 16> trace_id{};
    if (parent) {
        trace_id = parent->trace_id;
    } else {
        fill_random(trace_id);
        if (!sampled_at_ratio(trace_id)) return {};
    }
    auto record = new_record(std::move(name), kind);
    record->context.trace_id = trace_id;
    if (parent) {
        record->parent = parent->span_id;
        record->context.state = parent->state;
    }
    return span(std::move(record), parent != nullptr);
}

bool tracing() {
    return tracer().on.load(std::memory_order_relaxed);
}

bool capture_content() {
    return tracer().settings.capture_content;
}

std::string bounded_content(std::string_view text) {
    if (text.size() <= content_limit) return std::string(text);
    std::size_t cut = content_limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + "…[cut]";
}

void start_tracing(const config::tracing_config& tracing) {
    auto& t = tracer();
    if (tracing.otlp_endpoint.empty() || t.thread.joinable()) return;
    t.settings = tracing;
    {
        std::lock_guard lock(t.mutex);
        t.stopping = false;
        t.queue.clear();
    }
    t.on.store(true, std::memory_order_relaxed);
    t.thread = std::thread(export_loop);
    std::ostringstream ratio;
    ratio << tracing.sample_ratio;
    log_info("tracing: spans go to " + tracing.otlp_endpoint + " (" + tracing.endpoint.base_path +
             "), sample_ratio " + ratio.str());
}

void stop_tracing(std::chrono::milliseconds within) {
    auto& t = tracer();
    if (!t.thread.joinable()) return;
    t.on.store(false, std::memory_order_relaxed);
    {
        std::lock_guard lock(t.mutex);
        t.stopping = true;
        t.stop_by = std::chrono::steady_clock::now() + within;
    }
    t.wake.notify_one();
    // The exporter sends what is queued, each step of a post bounded by what is left of
    // `within`, then ends.
    t.thread.join();
}

std::string encode_spans(const std::vector<span_record>& spans, std::string_view service) {
    std::string resource;  // Resource: attributes 1
    bytes_field(resource, 1, key_value("service.name", std::string(service)));
    bytes_field(resource, 1, key_value("telemetry.sdk.name", std::string("contextgate")));
    bytes_field(resource, 1, key_value("telemetry.sdk.language", std::string("cpp")));
    std::string scope;  // InstrumentationScope: name 1
    bytes_field(scope, 1, "contextgate");
    std::string scope_spans;  // ScopeSpans: scope 1, spans 2
    bytes_field(scope_spans, 1, scope);
    for (const auto& s : spans) bytes_field(scope_spans, 2, span_message(s));
    std::string resource_spans;  // ResourceSpans: resource 1, scope_spans 2
    bytes_field(resource_spans, 1, resource);
    bytes_field(resource_spans, 2, scope_spans);
    std::string request;  // ExportTraceServiceRequest: resource_spans 1
    bytes_field(request, 1, resource_spans);
    return request;
}

}  // namespace gateway::observability
