#pragma once

#include "gateway/agent/model_port.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <mutex>

namespace gateway::agent {

// The engine's model port across configuration reloads: each call goes to the model client of
// the configuration current when it starts, and keeps that client (and the configuration it
// reads) alive until it ends; a reload puts the next client with use(). Thread-safe.
class model_switch final : public model_port {
public:
    // `engine`: where the clients' connections live; a client put aside is released there.
    explicit model_switch(boost::asio::any_io_executor engine) : engine_(std::move(engine)) {}

    // The client new calls go to from now on, and the guardrails of its configuration. After
    // shutdown() it is shut down at once.
    void use(std::shared_ptr<model_port> client, guardrails_in_force guards = {});

    boost::asio::awaitable<model_result<model_answer>> converse(
        providers::request request, std::string request_id, call_canceller& cancel,
        retry_hook on_retry, text_hook on_text = {},
        const observability::trace_context* trace = nullptr) override;
    config::upstream_config upstream_for(std::string_view model) const override;
    void shutdown() override;
    guardrails_in_force guardrails() const override;
    // Lets go of the current client at once, on the calling thread: the engine has stopped and
    // no call is left (what the client and the guardrails hold must go before the gateway's
    // workers do).
    void release();

private:
    std::shared_ptr<model_port> now() const;

    boost::asio::any_io_executor engine_;
    mutable std::mutex mutex_;
    std::shared_ptr<model_port> client_;
    guardrails_in_force guards_;
    bool shut_ = false;
};

}  // namespace gateway::agent
