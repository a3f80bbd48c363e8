#include "gateway/agent/model_switch.hpp"

#include <boost/asio/post.hpp>

#include <utility>

namespace gateway::agent {

void model_switch::use(std::shared_ptr<model_port> client, guardrails_in_force guards) {
    std::shared_ptr<model_port> before;
    {
        std::lock_guard lock(mutex_);
        if (shut_) client->shutdown();
        before = std::exchange(client_, std::move(client));
        guards_ = std::move(guards);
    }
    // Its pooled connections belong to the engine's thread: they are closed there, once the
    // calls still using it have ended.
    if (before)
        boost::asio::post(engine_, [before = std::move(before)]() mutable {
            before->shutdown();
            before.reset();
        });
}

std::shared_ptr<model_port> model_switch::now() const {
    std::lock_guard lock(mutex_);
    return client_;
}

boost::asio::awaitable<model_result<model_answer>> model_switch::converse(
    providers::request request, std::string request_id, call_canceller& cancel, retry_hook on_retry,
    text_hook on_text, const observability::trace_context* trace) {
    auto client = now();
    co_return co_await client->converse(std::move(request), std::move(request_id), cancel,
                                        std::move(on_retry), std::move(on_text), trace);
}

guardrails_in_force model_switch::guardrails() const {
    std::lock_guard lock(mutex_);
    return guards_;
}

config::upstream_config model_switch::upstream_for(std::string_view model) const {
    return now()->upstream_for(model);
}

void model_switch::shutdown() {
    std::lock_guard lock(mutex_);
    shut_ = true;
    if (client_) client_->shutdown();
}

void model_switch::release() {
    std::shared_ptr<model_port> before;
    guardrails_in_force guards;
    std::lock_guard lock(mutex_);
    before = std::move(client_);
    // The guardrails' hold keeps the client's generation too, whose sockets (the Redis cache's)
    // belong to the workers: it goes now, with the client, not when the context service does.
    guards = std::exchange(guards_, {});
}

}  // namespace gateway::agent
