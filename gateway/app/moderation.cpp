#include "gateway/app/moderation.hpp"

#include "gateway/agent/model_port.hpp"
#include "gateway/ids.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>
#include <variant>

namespace gateway::app {

namespace net = boost::asio;

namespace {

// One moderation call on the engine's thread: the deadline cancels it through the port's own
// canceller, which closes the connection in use (the port's calls know no other cancellation).
// The timer's handler may run after the call has ended (both were ready at once): it shares the
// canceller and is told the call is over.
net::awaitable<guardrails::model_said> ask_on_engine(agent::model_port& models,
                                                     providers::request request,
                                                     config::duration timeout) {
    struct call {
        agent::call_canceller cancel;
        bool over = false;
    };
    auto state = std::make_shared<call>();
    net::steady_timer deadline(co_await net::this_coro::executor, timeout);
    deadline.async_wait([state](boost::system::error_code ec) {
        if (!ec && !state->over) state->cancel.cancel();
    });
    auto result = co_await models.converse(std::move(request), random_id("guard-", 8),
                                           state->cancel, agent::retry_hook{});
    state->over = true;
    deadline.cancel();
    if (state->cancel.cancelled()) co_return guardrails::model_said{{}, "no answer in time"};
    if (auto* failed = std::get_if<agent::model_failure>(&result))
        co_return guardrails::model_said{{}, failed->message};
    co_return guardrails::model_said{std::get<agent::model_answer>(result).reply.content.text(),
                                     {}};
}

}  // namespace

net::awaitable<guardrails::model_said> engine_moderation::answer(std::string model,
                                                                 std::string instructions,
                                                                 std::string text,
                                                                 config::duration timeout) {
    providers::request request;
    request.model = std::move(model);
    request.system = std::move(instructions);
    request.messages.push_back(providers::message::of_text(providers::role::user, std::move(text)));
    auto said = co_await net::co_spawn(engine_, ask_on_engine(models_, std::move(request), timeout),
                                       net::use_awaitable);
    co_return said;
}

}  // namespace gateway::app
