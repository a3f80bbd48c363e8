#pragma once

// The guardrails' model checks (guardrails/model_check.hpp) over the agent's model port: the
// moderation call goes through the configuration's routes and attempt loop as the agent's model
// turns do, on the engine's thread (its model clients are that thread's), and is settled as they
// are (usage ledger key "context"). Part of the composition root.
#include "gateway/guardrails/model_check.hpp"

#include <boost/asio/any_io_executor.hpp>

namespace gateway::agent {
class model_port;
}

namespace gateway::app {

class engine_moderation final : public guardrails::model_caller {
public:
    // `models` is the engine's model switch (the client of the configuration in force), used on
    // `engine` only; both outlive this object.
    engine_moderation(agent::model_port& models, boost::asio::any_io_executor engine)
        : models_(models), engine_(std::move(engine)) {}

    // Thread-safe: the call runs on the engine's thread and its answer comes back to the
    // caller's executor. A call that outlasts `timeout` is cancelled (its connection closed).
    boost::asio::awaitable<guardrails::model_said> answer(std::string model,
                                                          std::string instructions,
                                                          std::string text,
                                                          config::duration timeout) override;

private:
    agent::model_port& models_;
    boost::asio::any_io_executor engine_;
};

}  // namespace gateway::app
