#include "gateway/agent/replica_link.hpp"

#include "gateway/observability/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>

namespace gateway::agent {

namespace json = boost::json;

replica_link::replica_link(net::io_context& engine, store::replica_coordination& replicas,
                           run_journal& journal)
    : io_(engine),
      replicas_(replicas),
      journal_(journal),
      tasks_(engine.get_executor(), [](const std::string& task, std::exception_ptr e) {
          observability::log_stray(e, task);
      }) {}

void replica_link::start(applier apply, drives is_driven, driven all_driven) {
    apply_ = std::move(apply);
    is_driven_ = std::move(is_driven);
    all_driven_ = std::move(all_driven);
    store::replica_signals signals;
    signals.events = [this](const std::string& run_id, std::int64_t) { journal_.nudge(run_id); };
    signals.requests = [this](const std::string& run_id) {
        net::post(io_, [this, run_id] {
            if (!stopping_) tasks_.spawn("run " + run_id + ": serving commands", serve(run_id));
        });
    };
    signals.answered = [this](std::int64_t id) {
        net::post(io_, [this, id] {
            if (auto it = asking_.find(id); it != asking_.end()) it->second->cancel();
        });
    };
    signals.reconnected = [this] {
        journal_.nudge("");
        net::post(io_, [this] {
            if (stopping_) return;
            for (auto& id : all_driven_())
                tasks_.spawn("run " + id + ": serving commands", serve(id));
            for (auto& [id, timer] : asking_) timer->cancel();
        });
    };
    replicas_.listen(std::move(signals));
}

void replica_link::stop() {
    // Commands being applied finish (a decision half stored would help no one); waits for
    // answers end now, and nothing new is served.
    stopping_ = true;
    for (auto& [id, timer] : asking_) timer->cancel();
}

net::awaitable<command_answer> replica_link::ask_owner(std::string run_id, run_command command) {
    store::run_request request{0, run_id, std::string(kind_of(command)),
                               json::serialize(json::value_from(command))};
    auto id = co_await replicas_.post_request(std::move(request));
    // The owner answers within moments; a dead owner's run is claimed within the lease timeout
    // and its new owner answers then.
    auto deadline =
        std::chrono::steady_clock::now() + replicas_.lease_timeout() + std::chrono::seconds(5);
    auto timer = std::make_shared<net::steady_timer>(io_);
    asking_[id] = timer;
    std::optional<std::string> answer;
    while (!stopping_) {
        answer = co_await replicas_.take_answer(id);
        if (answer || std::chrono::steady_clock::now() >= deadline) break;
        // Woken by the answer's notification (or a reconnect, after which it looks again).
        timer->expires_at(deadline);
        [[maybe_unused]] auto [ec] = co_await timer->async_wait(net::as_tuple(net::use_awaitable));
    }
    asking_.erase(id);
    if (!answer) {
        auto withdrawn = co_await replicas_.withdraw_request(id);
        if (!withdrawn) answer = co_await replicas_.take_answer(id);
    }
    if (!answer)
        co_return refusal{errc::replica_unreachable, "The gateway replica driving run " + run_id +
                                                         " did not answer in time; try again."};
    json::error_code ec;
    auto parsed = json::parse(*answer, ec);
    if (ec) co_return std::nullopt;
    co_return answer_of(parsed);
}

net::awaitable<void> replica_link::serve(std::string run_id) {
    if (!is_driven_(run_id)) co_return;  // driven elsewhere, or not yet adopted here
    if (auto busy = serving_.find(run_id); busy != serving_.end()) {
        busy->second = true;  // asked again: the loop below looks once more
        co_return;
    }
    serving_[run_id] = true;
    while (serving_[run_id] && !stopping_) {
        serving_[run_id] = false;
        try {
            auto pending = co_await replicas_.pending_requests(run_id);
            for (auto& request : pending) {
                json::error_code ec;
                auto body = json::parse(request.body, ec);
                // A replica of the version before commands were typed sent the kind apart.
                if (!ec && body.is_object() && !body.as_object().contains("kind"))
                    body.as_object()["kind"] = request.kind;
                auto command =
                    ec ? json::result<run_command>(ec) : json::try_value_to<run_command>(body);
                command_answer answer;
                if (command)
                    answer = co_await apply_(run_id, std::move(*command));
                else
                    answer = refusal{errc::bad_request, "Unknown command `" + request.kind +
                                                            "` for run " + run_id +
                                                            " (a replica of another version?)."};
                auto text = json::serialize(answer_json(answer));
                co_await replicas_.answer_request(request.id, std::move(text));
            }
        } catch (const std::exception& e) {
            observability::log_warn("run " + run_id + ": cannot answer its requests: " + e.what());
        }
    }
    serving_.erase(run_id);
}

}  // namespace gateway::agent
