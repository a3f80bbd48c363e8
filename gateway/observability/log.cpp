#include "gateway/observability/log.hpp"

#include "gateway/observability/metrics.hpp"
#include "gateway/secret_names.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <ctime>
#include <deque>
#include <mutex>
#include <string>

namespace gateway::observability {

namespace {

std::atomic<int> current_level{static_cast<int>(config::log_level::info)};
std::atomic<bool> json_format{false};

const char* name(config::log_level level, bool lower) {
    switch (level) {
        case config::log_level::debug:
            return lower ? "debug" : "DEBUG";
        case config::log_level::info:
            return lower ? "info" : "INFO";
        case config::log_level::warn:
            return lower ? "warn" : "WARN";
        case config::log_level::error:
            return lower ? "error" : "ERROR";
    }
    return lower ? "info" : "INFO";
}

// "2026-11-23T10:00:00.123Z"
void append_stamp(std::string& line) {
    auto now = std::chrono::system_clock::now();
    auto seconds = std::chrono::system_clock::to_time_t(now);
    auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char stamp[40];
    std::size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    n += std::snprintf(stamp + n, sizeof stamp - n, ".%03dZ", static_cast<int>(millis.count()));
    line.append(stamp, n);
}

void emit(std::string& line) {
    line += '\n';
    // A failed write to stderr has nowhere to be reported.
    [[maybe_unused]] auto written = ::write(STDERR_FILENO, line.data(), line.size());
}

// `{"time":"…","level":"…"` — the opening every JSON line shares.
void open_json(std::string& line, config::log_level level) {
    line += "{\"time\":\"";
    append_stamp(line);
    line += "\",\"level\":\"";
    line += name(level, true);
    line += '"';
}

void json_field(std::string& line, std::string_view key, std::string_view value) {
    line += ",\"";
    line += key;
    line += "\":";
    append_json_string(line, value);
}

void json_field(std::string& line, std::string_view key, std::int64_t value) {
    line += ",\"";
    line += key;
    line += "\":";
    line += std::to_string(value);
}

}  // namespace

void set_level(config::log_level level) {
    current_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

void set_format(config::log_format format) {
    json_format.store(format == config::log_format::json, std::memory_order_relaxed);
}

bool enabled(config::log_level level) {
    return static_cast<int>(level) >= current_level.load(std::memory_order_relaxed);
}

void append_json_string(std::string& out, std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    for (unsigned char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20) {
                    out += "\\u00";
                    out += hex[c >> 4];
                    out += hex[c & 0xf];
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    out += '"';
}

namespace {

// Text for a text line with control characters as \xNN, so it can never end the line. A value a
// client chose (a model name, a path, a request id) also has space and backslash escaped, so it
// cannot pass for another field; a message keeps its words.
void append_escaped_text(std::string& line, std::string_view text, bool value) {
    static constexpr char hex[] = "0123456789abcdef";
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7f || (value && (c == ' ' || c == '\\'))) {
            line += "\\x";
            line += hex[c >> 4];
            line += hex[c & 0xf];
        } else {
            line += static_cast<char>(c);
        }
    }
}

void append_text_value(std::string& line, std::string_view text) {
    append_escaped_text(line, text, true);
}

}  // namespace

std::string redacted_target(std::string_view target) {
    auto q = target.find('?');
    if (q == std::string_view::npos) return std::string(target);
    std::string out(target.substr(0, q + 1));
    auto query = target.substr(q + 1);
    bool first = true;
    while (true) {
        auto amp = query.find('&');
        auto pair = query.substr(0, amp);
        if (!first) out += '&';
        first = false;
        auto eq = pair.find('=');
        auto name = pair.substr(0, eq);
        // The name as sent, percent-decoded ("%6Bey" is `key` to the upstream too).
        if (eq != std::string_view::npos && names_a_secret(percent_decoded(name))) {
            out += name;
            out += "=REDACTED";
        } else {
            out += pair;
        }
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return out;
}

void log(config::log_level level, std::string_view message) {
    if (!enabled(level)) return;
    std::string line;
    line.reserve(message.size() + 64);
    if (json_format.load(std::memory_order_relaxed)) {
        open_json(line, level);
        json_field(line, "msg", message);
        line += '}';
    } else {
        append_stamp(line);
        line += ' ';
        line += name(level, false);
        line += ' ';
        append_escaped_text(line, message, false);
    }
    emit(line);
}

namespace {

// The access line as a JSON object (the `format: json` line, and what /admin/log follows).
void write_access_json(std::string& line, const access_entry& e) {
    open_json(line, config::log_level::info);
    json_field(line, "type", "access");
    json_field(line, "request_id", e.request_id);
    json_field(line, "method", e.method);
    json_field(line, "path", redacted_target(e.path));
    json_field(line, "status", e.status);
    json_field(line, "bytes", static_cast<std::int64_t>(e.bytes));
    json_field(line, "duration_ms", e.duration_us / 1000);
    line += ",\"duration_us\":" + std::to_string(e.duration_us);
    if (e.first_byte_us >= 0) json_field(line, "ttfb_us", e.first_byte_us);
    if (!e.upstream.empty()) json_field(line, "upstream", e.upstream);
    if (e.attempts > 0) json_field(line, "attempts", static_cast<std::int64_t>(e.attempts));
    if (!e.cache.empty()) json_field(line, "cache", e.cache);
    if (!e.model.empty()) json_field(line, "model", e.model);
    if (!e.key_id.empty()) json_field(line, "key_id", e.key_id);
    if (e.input_tokens >= 0) json_field(line, "input_tokens", e.input_tokens);
    if (e.output_tokens >= 0) json_field(line, "output_tokens", e.output_tokens);
    if (e.cost == "unpriced") {
        line += ",\"cost_usd\":null,\"unpriced\":true";
    } else if (!e.cost.empty()) {
        line += ",\"cost_usd\":";  // a plain decimal: a JSON number as it is
        line += e.cost;
    }
    if (!e.cost.empty() && e.cost_estimated) line += ",\"cost_estimated\":true";
    line += '}';
}

// The followers of the access lines (/admin/log), each with its own bounded queue.
std::atomic<int> followers{0};
std::mutex feed_mutex;
std::vector<access_follower*> following;  // guarded by feed_mutex

}  // namespace

access_follower::access_follower() {
    std::lock_guard lock(feed_mutex);
    following.push_back(this);
    followers.fetch_add(1);
}

access_follower::~access_follower() {
    std::lock_guard lock(feed_mutex);
    std::erase(following, this);
    followers.fetch_sub(1);
}

access_follower::batch access_follower::take() {
    std::lock_guard lock(feed_mutex);
    batch out;
    out.lines.swap(queue_);
    out.dropped = dropped_;
    bytes_ = 0;
    return out;
}

std::size_t access_follower::queued_bytes() const {
    std::lock_guard lock(feed_mutex);
    return bytes_;
}

void feed_access(const access_entry& e) {
    if (followers.load(std::memory_order_relaxed) == 0) return;
    std::string line;
    line.reserve(256);
    write_access_json(line, e);
    std::size_t dropped = 0;
    {
        std::lock_guard lock(feed_mutex);
        for (auto* f : following) {
            if (f->dropped_) continue;
            // Past the bound: the client is not reading. Its lines are let go rather than held
            // for a reader that may never come back (each follower holds a copy of every line).
            if (!f->queue_.empty() && f->bytes_ + line.size() > follow_queue_bytes) {
                f->dropped_ = true;
                std::deque<std::string>().swap(f->queue_);
                f->bytes_ = 0;
                ++dropped;
                continue;
            }
            f->queue_.push_back(line);
            f->bytes_ += line.size();
        }
    }
    if (dropped > 0) metrics().log_followers_dropped.with().inc(static_cast<double>(dropped));
}

bool access_followed() {
    return followers.load(std::memory_order_relaxed) > 0;
}

void log_access(const access_entry& e) {
    if (!enabled(config::log_level::info)) return;
    std::string line;
    line.reserve(256);
    if (json_format.load(std::memory_order_relaxed)) {
        write_access_json(line, e);
    } else {
        append_stamp(line);
        line += " INFO ";
        line += e.method;
        line += ' ';
        append_text_value(line, redacted_target(e.path));
        line += ' ';
        line += std::to_string(e.status);
        line += " bytes=" + std::to_string(e.bytes);
        line += " time_ms=" + std::to_string(e.duration_us / 1000) + "." +
                std::to_string(e.duration_us % 1000 / 100);
        if (e.first_byte_us >= 0)
            line += " ttfb_ms=" + std::to_string(e.first_byte_us / 1000) + "." +
                    std::to_string(e.first_byte_us % 1000 / 100);
        auto field = [&line](std::string_view name, std::string_view value) {
            if (value.empty()) return;
            line += name;
            append_text_value(line, value);
        };
        field(" upstream=", e.upstream);
        if (e.attempts > 0) line += " attempts=" + std::to_string(e.attempts);
        field(" cache=", e.cache);
        field(" model=", e.model);
        field(" key=", e.key_id);
        if (e.input_tokens >= 0 || e.output_tokens >= 0)
            line += " tokens=" + std::to_string(std::max<std::int64_t>(e.input_tokens, 0)) + "/" +
                    std::to_string(std::max<std::int64_t>(e.output_tokens, 0));
        if (!e.cost.empty()) {
            line += " cost=";
            line += e.cost;
            if (e.cost_estimated) line += " cost_estimated=true";
        }
        line += " id=";
        append_text_value(line, e.request_id);
    }
    emit(line);
}

void log_stray(std::exception_ptr e, std::string_view what) {
    if (!e) return;
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        log_error(std::string(what) + " ended by exception: " + ex.what());
    } catch (...) {
        log_error(std::string(what) + " ended by an exception that is not std::exception");
    }
}

}  // namespace gateway::observability
