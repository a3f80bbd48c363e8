#include "gateway/context/event_stream.hpp"

#include "gateway/agent/run_state.hpp"
#include "gateway/http/response.hpp"
#include "gateway/http/streaming.hpp"
#include "gateway/io/write_all.hpp"
#include "gateway/observability/metrics.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/chunk_encode.hpp>

#include <algorithm>
#include <memory>
#include <utility>

namespace gateway::context {

namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);
// A stream reads the store in pages of at most this many events or bytes (events are bounded
// themselves: see context.event_excerpt_bytes).
constexpr std::size_t events_per_page = 64;
constexpr std::size_t page_bytes = 256 * 1024;

// The events as SSE frames: the id is the event's sequence number, the data its JSON (one line).
event_streams::shared_frames render(const std::vector<store::event_record>& events) {
    auto out = std::make_shared<event_streams::event_frames>();
    out->first = events.front().seq;
    out->last = events.back().seq;
    for (const auto& e : events) {
        auto& b = out->bytes;
        b += "id: ";
        b += std::to_string(e.seq);
        b += "\nevent: ";
        b += e.type;
        b += "\ndata: ";
        b += e.data;
        b += "\n\n";
        out->ends = out->ends || agent::is_final_event(e.type);
    }
    return out;
}

}  // namespace

// Follows one run for a stream, on the stream's own executor: the frames of each commit are
// queued as the run's channel hands them over (rendered once for all streams, not copied), so a
// caught-up stream writes them without reading the store; a stream that falls behind (its queue
// full) goes back to the store. Leaves the channel when it goes out of scope, whichever way the
// stream ends.
class event_streams::watch {
public:
    watch(event_streams& streams, std::string run_id, net::any_io_executor executor)
        : streams_(streams),
          run_id_(std::move(run_id)),
          executor_(std::move(executor)),
          shared_(std::make_shared<shared>(executor_)) {
        streams_.join(run_id_, this, [s = shared_, ex = executor_](shared_frames f) {
            net::post(ex, [s, f = std::move(f)] {
                // No frames: events were committed elsewhere (another replica); read the store.
                if (!f) {
                    s->overflowed = true;
                    s->woken = true;
                    s->timer.cancel();
                    return;
                }
                s->queued_events += static_cast<std::size_t>(f->last - f->first + 1);
                if (s->queued_events > events_per_page)
                    s->overflowed = true;
                else
                    s->queued.push_back(std::move(f));
                s->woken = true;
                s->timer.cancel();
            });
        });
    }
    ~watch() { streams_.leave(run_id_, this); }
    watch(const watch&) = delete;
    watch& operator=(const watch&) = delete;

    // The queued frames that follow `after` without a gap, moved into `page`. False when there
    // are none: then behind() says whether the store must be read (the queue overflowed, or what
    // it holds does not follow on).
    bool take(std::int64_t after, std::vector<shared_frames>& page) {
        auto& s = *shared_;
        behind_ = false;
        auto overflowed = std::exchange(s.overflowed, false);
        auto queued = std::exchange(s.queued, {});
        s.queued_events = 0;
        if (overflowed) {
            behind_ = true;
            return false;
        }
        std::erase_if(queued, [after](const shared_frames& f) { return f->last <= after; });
        if (queued.empty()) return false;
        if (queued.front()->first != after + 1) {
            behind_ = true;
            return false;
        }
        page = std::move(queued);
        return true;
    }
    bool behind() const { return behind_; }

    // Waits for a commit (one may have come already), `deadline`, or an interrupt; true when
    // woken (by a commit or an interrupt), false when the deadline passed.
    net::awaitable<bool> wait(std::chrono::steady_clock::time_point deadline) {
        if (!shared_->woken) {
            shared_->timer.expires_at(deadline);
            [[maybe_unused]] auto [ec] = co_await shared_->timer.async_wait(use_ec);
        }
        bool woken = shared_->woken;
        shared_->woken = false;
        co_return woken;
    }

    // Ends a wait early, or the next one if none is under way; callable from any thread.
    std::function<void()> interrupter() const {
        return [s = shared_, ex = executor_] {
            net::post(ex, [s] {
                s->woken = true;
                s->timer.cancel();
            });
        };
    }

private:
    // What the channel hands over, touched only on the stream's executor.
    struct shared {
        explicit shared(const net::any_io_executor& ex) : timer(ex) {}
        net::steady_timer timer;
        std::vector<shared_frames> queued;  // in commit order
        std::size_t queued_events = 0;
        bool overflowed = false;
        bool woken = false;
    };
    event_streams& streams_;
    std::string run_id_;
    net::any_io_executor executor_;
    std::shared_ptr<shared> shared_;
    bool behind_ = false;
};

// Registers a watch so that a draining worker can end its wait; removed however it ends.
class event_streams::registration {
public:
    registration(event_streams& streams, const watch& w) : streams_(streams), key_(&w) {
        std::lock_guard lock(streams_.mutex_);
        streams_.open_[key_] = w.interrupter();
    }
    ~registration() {
        std::lock_guard lock(streams_.mutex_);
        streams_.open_.erase(key_);
    }
    registration(const registration&) = delete;
    registration& operator=(const registration&) = delete;

private:
    event_streams& streams_;
    const void* key_;
};

event_streams::event_streams(const config::context_config& limits, store::run_store& store,
                             agent::run_journal& journal)
    : limits_(limits), store_(store), journal_(journal) {}

void event_streams::join(const std::string& run_id, const void* key,
                         std::function<void(shared_frames)> deliver) {
    std::lock_guard lock(mutex_);
    auto& ch = channels_[run_id];
    ch.streams[key] = std::move(deliver);
    // Locks are taken in this order only (the journal calls its subscribers unlocked).
    if (ch.subscription == 0)
        ch.subscription =
            journal_.subscribe(run_id, [this, run_id](auto events) { fan_out(run_id, *events); });
}

void event_streams::leave(const std::string& run_id, const void* key) {
    std::lock_guard lock(mutex_);
    auto it = channels_.find(run_id);
    if (it == channels_.end()) return;
    it->second.streams.erase(key);
    if (!it->second.streams.empty()) return;
    journal_.unsubscribe(run_id, it->second.subscription);
    channels_.erase(it);
}

// On the engine thread, after a commit: renders once, outside the lock, and posts the frames to
// every stream of the run.
void event_streams::fan_out(const std::string& run_id,
                            const std::vector<store::event_record>& events) {
    // A nudge (no events) tells every stream to read the store.
    auto frames = events.empty() ? shared_frames() : render(events);
    std::lock_guard lock(mutex_);
    auto it = channels_.find(run_id);
    if (it == channels_.end()) return;
    for (auto& [key, deliver] : it->second.streams) deliver(frames);
}

http::reply event_streams::stream(std::string run_id, std::int64_t after) {
    // The place is taken now and given back when the stream (or the reply) goes away.
    {
        std::lock_guard lock(mutex_);
        auto& count = per_run_[run_id];
        if (count >= limits_.max_watchers_per_run)
            return http::reply::error(
                errc::too_many_streams,
                "Run " + run_id + " already has " + std::to_string(limits_.max_watchers_per_run) +
                    " open event streams (context.max_watchers_per_run); close one first.");
        ++count;
    }
    observability::metrics().event_watchers.with().add(1);
    auto place = std::shared_ptr<void>(nullptr, [this, run_id](void*) {
        observability::metrics().event_watchers.with().add(-1);
        std::lock_guard lock(mutex_);
        if (--per_run_[run_id] == 0) per_run_.erase(run_id);
    });
    return http::reply::streamed([this, run_id, after, place](http::request_context& ctx) {
        return serve(ctx, run_id, after);
    });
}

net::awaitable<void> event_streams::serve(http::request_context& ctx, const std::string& run_id,
                                          std::int64_t after) {
    watch w(*this, run_id, ctx.stream.get_executor());
    registration registered(*this, w);
    bool chunked = ctx.req.version() >= 11;
    http::body_stream body(ctx);
    const std::vector<std::pair<std::string, std::string>> fields{
        {"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}};
    auto begun = co_await body.begin(200, fields);
    if (!begun) co_return;
    // A client that hangs up gives its place back at once, not at the next heartbeat.
    auto winner = co_await (pump(ctx, w, run_id, after, chunked) || http::client_leaves(ctx));
    bool alive = winner.index() == 0 && std::get<0>(winner);
    if (!alive) {
        ctx.keep_alive = false;
        co_return;
    }
    co_await body.end();
}

// Writes the run's events after `after`, page by page, then each new one as it is committed,
// until the run has ended and every event went out (true), or a write fails (false). Frames go
// out as one chunk per page (raw on HTTP/1.0, where the close ends the body).
net::awaitable<bool> event_streams::pump(http::request_context& ctx, watch& w,
                                         const std::string& run_id, std::int64_t after,
                                         bool chunked) {
    co_await net::this_coro::throw_if_cancelled(false);
    // Cancelled when the client hung up: waits and writes then end early, and the loop stops.
    auto heartbeat = http::heartbeat(ctx.server);
    // One write per page: the frames as they are, behind one chunk header.
    std::vector<net::const_buffer> buffers;
    auto send = [&](const std::vector<shared_frames>& page) -> net::awaitable<bool> {
        buffers.clear();
        std::size_t size = 0;
        for (const auto& f : page) {
            buffers.push_back(net::buffer(f->bytes));
            size += f->bytes.size();
        }
        ctx.bytes_sent += size;
        boost::system::error_code ec;
        if (chunked) {
            auto chunk = bhttp::make_chunk(buffers);
            ec = co_await io::write_all(ctx.stream, ctx.deadline, ctx.server.write_timeout, chunk);
        } else {
            ec =
                co_await io::write_all(ctx.stream, ctx.deadline, ctx.server.write_timeout, buffers);
        }
        co_return !ec;
    };
    static const std::vector<shared_frames> keep_alive{
        std::make_shared<event_frames>(event_frames{0, 0, ": keep-alive\n\n", false})};
    // Behind: the events to send next are in the store (at the start, after a full page, after
    // the queue overflowed); caught up: they come through the watch's queue.
    bool behind = true;
    bool idle = false;  // the last wait ended without a commit
    std::vector<shared_frames> page;
    while (true) {
        if (ctx.draining || closing_) co_return true;  // resumed elsewhere with Last-Event-ID
        page.clear();
        bool read_store = behind;
        if (!behind && !w.take(after, page)) read_store = w.behind();
        if (read_store) {
            // The status first: once it is final, every event of the run is in the store.
            auto status = co_await store_.run_status(run_id);
            auto stored = co_await store_.events_after(run_id, after, events_per_page, page_bytes);
            behind = !stored.empty();  // read on until a page comes back empty
            // Caught up with a run that has ended (or is gone: its chat deleted): done.
            if (stored.empty() && (!status || is_final(*status))) co_return true;
            if (!stored.empty()) page.push_back(render(stored));
        }
        auto hung_up = co_await http::cancelled();
        if (hung_up) co_return false;
        if (!page.empty()) {
            auto sent = co_await send(page);
            if (!sent) co_return false;
            after = page.back()->last;
            bool ended = std::any_of(page.begin(), page.end(),
                                     [](const shared_frames& f) { return f->ends; });
            if (ended) co_return true;  // the run's last event went out
            idle = false;
            continue;  // there may be more
        }
        if (idle) {
            // Nothing for a whole heartbeat: look in the store again (the run may be gone).
            behind = true;
            auto alive = co_await send(keep_alive);
            if (!alive) co_return false;
        }
        bool committed = co_await w.wait(std::chrono::steady_clock::now() + heartbeat);
        hung_up = co_await http::cancelled();
        if (hung_up) co_return false;
        idle = !committed && !ctx.draining && !closing_;
    }
}

net::awaitable<void> event_streams::wait_until_ended(std::string run_id,
                                                     std::chrono::steady_clock::time_point until) {
    auto executor = co_await net::this_coro::executor;
    watch w(*this, run_id, executor);
    while (std::chrono::steady_clock::now() < until) {
        auto status = co_await store_.run_status(run_id);
        if (!status || is_final(*status)) co_return;
        co_await w.wait(until);
    }
}

net::awaitable<std::vector<store::event_record>> event_streams::next_events(
    std::string run_id, std::int64_t after, std::chrono::steady_clock::time_point until) {
    auto executor = co_await net::this_coro::executor;
    // Subscribed before the store is read: a commit between the read and the wait still wakes.
    watch w(*this, run_id, executor);
    registration registered(*this, w);
    for (;;) {
        auto status = co_await store_.run_status(run_id);
        auto stored = co_await store_.events_after(run_id, after, events_per_page, page_bytes);
        if (!stored.empty() || !status || is_final(*status) || closing_ ||
            std::chrono::steady_clock::now() >= until)
            co_return stored;
        co_await w.wait(until);
    }
}

void event_streams::end_all() {
    std::lock_guard lock(mutex_);
    closing_ = true;
    for (auto& [key, wake] : open_) wake();
}

}  // namespace gateway::context
