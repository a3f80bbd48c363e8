#pragma once

#include "gateway/config/config.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::observability {

// Process-wide log level and format; set once by the composition root before threads start.
void set_level(config::log_level level);
void set_format(config::log_format format);
bool enabled(config::log_level level);

// Writes one line to stderr with a single write(2), so lines from different threads never
// interleave and no lock is taken: "<ISO time> <level> <message>", or with `format: json`
// {"time":"…","level":"info","msg":"…"}. Thread-safe.
void log(config::log_level level, std::string_view message);

inline void log_debug(std::string_view m) {
    log(config::log_level::debug, m);
}
inline void log_info(std::string_view m) {
    log(config::log_level::info, m);
}
inline void log_warn(std::string_view m) {
    log(config::log_level::warn, m);
}
inline void log_error(std::string_view m) {
    log(config::log_level::error, m);
}

// What a coroutine or thread threw that nobody could catch (it should have handled it): logged
// as an error naming `what`. Nothing when `e` is null.
void log_stray(std::exception_ptr e, std::string_view what);

// One finished request, for the access line.
struct access_entry {
    std::string_view request_id;
    std::string_view method;
    std::string_view path;  // the request target
    unsigned status = 0;
    std::size_t bytes = 0;            // body bytes sent
    std::int64_t duration_us = 0;     // first request byte to the end of the response
    std::int64_t first_byte_us = -1;  // to the status line; -1: nothing was sent
    std::string_view upstream;
    int attempts = 0;        // a routed request's attempts (0: not routed)
    std::string_view cache;  // the response cache's result: hit | miss | skip ("": not used)
    std::string_view model;
    std::string_view key_id;
    std::int64_t input_tokens = -1;  // -1: not reported
    std::int64_t output_tokens = -1;
    // What the answer cost (cost_text): "0.000123", "unpriced", or "" (nothing priced);
    // `cost_estimated`: priced from the gateway's estimate of the usage.
    std::string_view cost;
    bool cost_estimated = false;
};

// The access line at info level: text "GET /v1/models 200 bytes=… time_ms=… …" or, with
// `format: json`, an object with every field of `entry` (type "access"). The path's secret
// query values (`key=`, `api_key=`, `access_token=`…) are written as REDACTED; in text, values a
// client chose (path, model, ids) have control characters, spaces and backslashes escaped as
// \xNN, and log() escapes control characters in every message, so no line can be forged.
void log_access(const access_entry& entry);

// The access lines as they happen, for whoever follows them (/admin/log): each entry fed is put,
// as its JSON access line (whatever logging.format says, and even with access_log off), in the
// queue of every follower that exists, for it to take (lines fed before it began are not). A
// follower's queue holds at most follow_queue_bytes of lines (or one line, when that line alone
// is longer): a follower that does not take them fast enough (a client that stopped reading) is
// dropped — its queue emptied, nothing queued for it any more — and take() says so, for the stream
// to end with a reason. Thread-safe; feeding costs nothing while nobody follows.
inline constexpr std::size_t follow_queue_bytes = 1024 * 1024;

class access_follower {
public:
    // What take() hands over: the lines queued since the last take, oldest first; `dropped` once
    // the queue went past its bound (the lines that were queued then are gone, no more come).
    struct batch {
        std::deque<std::string> lines;
        bool dropped = false;
    };

    access_follower();
    ~access_follower();
    access_follower(const access_follower&) = delete;
    access_follower& operator=(const access_follower&) = delete;
    batch take();
    // The bytes of the lines queued and not taken (for tests: never past the bound).
    std::size_t queued_bytes() const;

private:
    friend void feed_access(const access_entry& entry);
    std::deque<std::string> queue_;  // guarded by the feed's mutex, as are the two below
    std::size_t bytes_ = 0;
    bool dropped_ = false;
};
void feed_access(const access_entry& entry);
bool access_followed();

// `target` with the values of secret-bearing query parameters replaced by "REDACTED".
std::string redacted_target(std::string_view target);

// `text` as a JSON string literal (quotes included) appended to `out`.
void append_json_string(std::string& out, std::string_view text);

}  // namespace gateway::observability
