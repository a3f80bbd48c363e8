#pragma once

#include "gateway/agent/run_journal.hpp"
#include "gateway/config/config.hpp"
#include "gateway/http/reply.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gateway::context {

namespace net = boost::asio;

// The runs' event streams: SSE whose ids are the events' stored sequence numbers, so a client
// that comes back with Last-Event-ID gets exactly what it missed, on any connection and after a
// restart. A stream replays the stored events in bounded pages, then waits for the journal to
// announce new ones (a `: keep-alive` comment while nothing happens) and ends after the run's
// final event. A client that hangs up is noticed at once (the stream reads its socket) and one
// that stops reading is dropped after write_timeout: nothing beyond a page is held for anyone.
// At most context.max_watchers_per_run streams per run. Thread-safe: streams run on the
// workers, wakes come from the engine thread.
class event_streams {
public:
    event_streams(const config::context_config& limits, store::run_store& store,
                  agent::run_journal& journal);

    // The stream of the run's events after `after`, as a reply, or too_many_streams.
    http::reply stream(std::string run_id, std::int64_t after);

    // Waits, on the caller's executor, until the run has ended (its status is final or it is
    // gone) or `until` passes. For cancel, which answers once the run has stopped.
    net::awaitable<void> wait_until_ended(std::string run_id,
                                          std::chrono::steady_clock::time_point until);

    // The run's stored events after `after` (at most a page) as soon as there are any; empty when
    // the run has ended (or is gone) with none left, when `until` passed first, or when the
    // gateway drains (end_all). For a client that follows a run itself (the MCP endpoint)
    // instead of relaying its SSE.
    net::awaitable<std::vector<store::event_record>> next_events(
        std::string run_id, std::int64_t after, std::chrono::steady_clock::time_point until);

    // Ends every open stream (the gateway is draining); clients resume with Last-Event-ID.
    void end_all();

    // A run of consecutive events as SSE frames, rendered once for every stream that sends it.
    struct event_frames {
        std::int64_t first = 0;  // the sequence numbers of the first and last event
        std::int64_t last = 0;
        std::string bytes;
        bool ends = false;  // holds the run's final event
    };
    using shared_frames = std::shared_ptr<const event_frames>;

private:
    class watch;
    class registration;
    // The streams following one run. It subscribes to the journal once, while it has
    // streams, and hands each commit's frames to all of them.
    struct channel {
        std::uint64_t subscription = 0;
        std::map<const void*, std::function<void(shared_frames)>> streams;
    };

    void join(const std::string& run_id, const void* key,
              std::function<void(shared_frames)> deliver);
    void leave(const std::string& run_id, const void* key);
    void fan_out(const std::string& run_id, const std::vector<store::event_record>& events);

    net::awaitable<void> serve(http::request_context& ctx, const std::string& run_id,
                               std::int64_t after);
    net::awaitable<bool> pump(http::request_context& ctx, watch& w, const std::string& run_id,
                              std::int64_t after, bool chunked);

    const config::context_config& limits_;
    store::run_store& store_;
    agent::run_journal& journal_;
    std::mutex mutex_;
    std::map<const void*, std::function<void()>> open_;  // open streams: their wakers
    std::map<std::string, unsigned> per_run_;            // places taken per run (the cap)
    std::map<std::string, channel> channels_;            // runs with streams
    std::atomic<bool> closing_ = false;
};

}  // namespace gateway::context
