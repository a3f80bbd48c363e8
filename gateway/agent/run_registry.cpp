#include "gateway/agent/run_registry.hpp"

#include "gateway/clock.hpp"
#include "gateway/ids.hpp"
#include "gateway/io/offload.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/run_events.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <random>
#include <set>

namespace gateway::agent {

namespace json = boost::json;

namespace {

// How the context budget (tokens) is turned into bytes: see agent_loop.
constexpr std::size_t bytes_per_token = 4;

// What a task of the engine's groups threw (each handles its own failures; this is the last
// word when one did not).
void log_task_failure(const std::string& task, std::exception_ptr e) {
    observability::log_stray(e, task);
}

// The run's invoke_agent span (GenAI conventions): under `parent` when a traced request started
// it, else the root of a trace of its own.
observability::span agent_span(const live_run& run, const observability::trace_context* parent) {
    auto s = observability::start_span("invoke_agent", observability::span_kind::internal, parent);
    s.set("gen_ai.operation.name", "invoke_agent");
    s.set("gen_ai.agent.name", "contextgate");
    s.set("gen_ai.conversation.id", run.chat.id);
    s.set("gen_ai.request.model", run.chat.model);
    s.set("contextgate.run_id", run.record.id);
    if (run.state.workflow) s.set("contextgate.workflow", run.state.workflow->id);
    return s;
}

// How the run left this process: its status and steps; an error when it failed. A run stopped
// with the engine (resumed at the next start) just ends its span.
void end_agent_span(live_run& run) {
    auto& s = run.trace;
    if (!s.recording()) return;
    s.set("contextgate.run.steps", static_cast<std::int64_t>(run.record.step));
    if (run.ended && !run.stopping) {
        s.set("contextgate.run.status", std::string(status_name(run.ended->status)));
        if (run.ended->status == run_status::failed) s.fail("run_failed", run.ended->error);
    } else {
        s.set("contextgate.run.status", "stopped");
    }
    s.end();
}

}  // namespace

run_registry::run_registry(net::io_context& engine, const config::context_config& limits,
                           store::state_store& store, run_journal& journal, tool_runner& runner,
                           approval_gate& gate, agent_loop& loop, const system_prompts& prompts,
                           model_port& model)
    : limits_(limits),
      store_(store),
      journal_(journal),
      runner_(runner),
      gate_(gate),
      loop_(loop),
      prompts_(prompts),
      model_(model),
      replicas_(store.replicas()),
      io_(engine),
      work_(engine.get_executor()),
      lease_timer_(engine),
      tasks_(engine.get_executor(), log_task_failure),
      drives_(engine.get_executor(), log_task_failure) {
    if (replicas_) link_.emplace(engine, *replicas_, journal);
}

run_registry::~run_registry() {
    stop();
}

std::string run_registry::system_prompt(const store::chat_record& chat, tools::role role) const {
    return prompts_.build(chat.system_prompt, role, model_.upstream_for(chat.model));
}

std::size_t run_registry::live_runs() const {
    return live_;
}

void run_registry::start(resumer workflows) {
    workflows_ = std::move(workflows);
    thread_ = std::thread([this] {
        io::name_this_thread("engine");
        io::yield_to_workers();
        io_.run();
    });
    if (link_)
        // Before resume(): the claimed runs' waiting commands are served as they are adopted.
        link_->start([this](std::string run_id,
                            run_command command) { return apply(run_id, std::move(command)); },
                     [this](const std::string& run_id) { return runs_.count(run_id) > 0; },
                     [this] {
                         std::vector<std::string> ids;
                         for (auto& [id, run] : runs_) ids.push_back(id);
                         return ids;
                     });
    auto resumed = net::co_spawn(io_, resume(), net::use_future);
    resumed.get();
    if (replicas_) net::post(io_, [this] { tasks_.spawn("run leases", keep_leases()); });
}

void run_registry::quiesce() {
    if (!thread_.joinable()) return;
    stopping_ = true;
    net::post(io_, [this] {
        lease_timer_.cancel();
        if (link_) link_->stop();
    });
}

void run_registry::stop() {
    if (!thread_.joinable()) return;
    quiesce();
    net::post(io_, [this] {
        tasks_.cancel();
        model_.shutdown();
        for (auto& [id, run] : runs_) {
            run->stopping = true;
            run->canceller.cancel();
            run->wake.cancel();
            run->wall.cancel();
        }
    });
    work_.reset();
    thread_.join();
    if (replicas_) {
        // The runs stopped where they stand: another replica may take them over at once.
        try {
            io::run_blocking(replicas_->release_leases());
        } catch (const std::exception& e) {
            observability::log_warn(std::string("cannot give up the runs' leases (they expire "
                                                "on their own): ") +
                                    e.what());
        }
    }
}

net::awaitable<started_run> run_registry::start_chat_run(store::chat_record chat,
                                                         std::string content, parent_trace parent) {
    auto role = tools::parse_role(chat.role).value_or(tools::role::editor);
    // Only the newest earlier turns that can fit the upstream's context budget are loaded.
    auto budget = model_.upstream_for(chat.model).context_budget * bytes_per_token;
    auto fixed = system_prompt(chat, role).size() + content.size();
    auto history_bytes = budget == 0 ? SIZE_MAX : budget > fixed ? budget - fixed : 0;
    auto history = co_await store_.recent_messages(chat.id, history_bytes);
    preparer prepare = [history = std::move(history), content](live_run& run, json::object& started,
                                                               run_journal::batch& b) {
        auto left_out = history.left_out;
        for (const auto& m : history.messages) {
            auto who = providers::parse_role(m.role).value_or(providers::role::user);
            if (run.conversation.empty() && who != providers::role::user) {
                ++left_out;  // the kept history starts with a user turn
                continue;
            }
            run.conversation.push_back(message::of_text(who, m.content));
        }
        run.state.turn_start = run.conversation.size();
        run.state.left_out = left_out;
        run.conversation.push_back(user_text(content));
        b.chat_message(providers::role::user, content);
        started["content"] = content;
    };
    driver chat_driver = [this](live_run& run) { return loop_.run(run); };
    auto started = co_await start_run(std::move(chat), role, std::move(prepare), chat_driver,
                                      std::move(parent));
    co_return started;
}

net::awaitable<started_run> run_registry::start_run(store::chat_record chat, tools::role role,
                                                    preparer prepare, driver drive,
                                                    parent_trace parent) {
    auto admitted = co_await net::co_spawn(
        io_, admit(std::move(chat), role, std::move(prepare), std::move(drive), std::move(parent)),
        net::use_awaitable);
    co_return admitted;
}

// Engine thread: reserves the chat's one live run, stores the run with its run.started event and
// launches it.
net::awaitable<started_run> run_registry::admit(store::chat_record chat, tools::role role,
                                                preparer prepare, driver drive,
                                                parent_trace parent) {
    // A run started now would begin after the others were told to stop, and keep the engine
    // from ending.
    if (stopping_)
        co_return refusal{errc::shutting_down,
                          "The gateway is stopping; start the run again in a moment."};
    for (auto it = chats_.find(chat.id); it != chats_.end(); it = chats_.find(chat.id)) {
        // A run whose end is being stored holds the chat only until it lands: whoever read
        // that end from the store may send the next message at once.
        auto held = runs_.find(it->second);
        if (held == runs_.end() || !held->second->ended || held->second->stopping ||
            held->second->on_way.empty() || held->second->on_way.back()->finished)
            co_return refusal{errc::run_in_progress,
                              "Chat " + chat.id + " already has a run in progress (" + it->second +
                                  "); wait for it, or cancel it."};
        auto ending = held->second;
        co_await run_journal::landed(*ending);
        if (stopping_)
            co_return refusal{errc::shutting_down,
                              "The gateway is stopping; start the run again in a moment."};
    }
    auto run = std::make_shared<live_run>(io_.get_executor());
    auto now = now_ms();
    run->record = {new_id("run"),
                   chat.id,
                   run_status::running,
                   0,
                   static_cast<int>(limits_.max_steps),
                   "",
                   "",
                   "",
                   now,
                   now};
    auto id = run->record.id;
    chats_[chat.id] = id;
    runs_[id] = run;
    ++live_;
    observability::metrics().runs_active.with().add(1);
    run->chat = std::move(chat);
    run->role = role;
    run->system_prompt = system_prompt(run->chat, role);
    json::object started{{"chat_id", run->chat.id}};
    auto b = journal_.begin(*run);
    prepare(*run, started, b);
    b.event(event::run_started, std::move(started));
    std::optional<refusal> taken;
    try {
        co_await journal_.checkpoint(*run, std::move(b));
    } catch (const store::live_run_exists&) {
        // Another replica started one meanwhile: the database keeps to one per chat.
        taken = refusal{errc::run_in_progress, "Chat " + run->chat.id +
                                                   " already has a run in progress; wait for it, "
                                                   "or cancel it."};
    } catch (...) {
        release(*run);
        throw;
    }
    if (taken) {
        release(*run);
        co_return *taken;
    }
    run->stored = true;
    run->trace = agent_span(*run, parent ? &*parent : nullptr);
    drives_.spawn("run " + run->record.id, this->drive(run, std::move(drive)));
    co_return id;
}

net::awaitable<void> run_registry::drive(std::shared_ptr<live_run> run, driver drive) {
    // The chat is free before anyone hears that its run ended.
    std::function<void()> released = [this, run] { release(*run); };
    std::string failure;
    try {
        if (auto unusable = runner_.open_workspace(*run))
            run->end(run_status::failed, "", "The chat's workspace cannot be used: " + *unusable);
        else if (!run->ended)
            co_await drive(*run);
        if (run->ended && !run->stopping)
            co_await journal_.finish(*run, released);
        else
            // Stopped (or left) with a step's result held back (run_journal::defer): stored, so
            // that a restart resumes after that call instead of making it again. A run another
            // replica took cannot write: the store refuses with lease_lost.
            co_await journal_.flush(*run);
    } catch (const store::lease_lost& e) {
        // Another replica claimed the run (this one missed its renewals): it drives it now, and
        // this one writes nothing more.
        observability::log_warn("run " + run->record.id + ": " + e.what() + "; stopped here");
        run->stopping = true;
    } catch (const std::exception& e) {
        failure = e.what();
    }
    if (!failure.empty() && !run->stopping) {
        observability::log_error("run " + run->record.id + ": " + failure);
        run->end(run_status::failed, "", "internal error: " + failure);
        try {
            // A commit that failed is not retried; the end is recorded if the store takes it.
            co_await journal_.forget_failure(*run);
            co_await journal_.finish(*run, released);
        } catch (const std::exception& e) {
            observability::log_error("run " + run->record.id +
                                     ": cannot record the failure: " + e.what());
        }
    }
    end_agent_span(*run);
    try {
        // Nothing of the run is still on its way to the store when it leaves (a commit send()
        // started, after a failure or a lost lease that skipped the final commit).
        co_await journal_.settle(*run);
    } catch (const std::exception& e) {
        observability::log_error("run " + run->record.id + ": a last write failed: " + e.what());
    }
    release(*run);
}

void run_registry::release(const live_run& run) {
    if (runs_.erase(run.record.id) == 0) return;
    if (auto it = chats_.find(run.chat.id); it != chats_.end() && it->second == run.record.id)
        chats_.erase(it);
    --live_;
    observability::metrics().runs_active.with().add(-1);
}

net::awaitable<std::optional<refusal>> run_registry::decide(std::string run_id, std::string call_id,
                                                            decision d) {
    auto refused = co_await net::co_spawn(
        io_, decide_here(std::move(run_id), std::move(call_id), std::move(d), true),
        net::use_awaitable);
    co_return refused;
}

net::awaitable<std::optional<refusal>> run_registry::cancel(std::string run_id) {
    auto refused =
        co_await net::co_spawn(io_, cancel_here(std::move(run_id), true), net::use_awaitable);
    co_return refused;
}

namespace {

// Whether a stored run is driven by some replica (not ended).
bool unfinished(const std::optional<store::run_record>& run) {
    return run && !is_final(run->status);
}

}  // namespace

// Engine thread. `forward`: a run driven by another replica gets the decision through the store
// (false when this replica applies a request it was handed).
net::awaitable<std::optional<refusal>> run_registry::decide_here(std::string run_id,
                                                                 std::string call_id, decision d,
                                                                 bool forward) {
    if (auto it = runs_.find(run_id); it != runs_.end()) {
        auto run = it->second;  // kept alive while the decision is stored
        auto refused = co_await gate_.decide(*run, call_id, d);
        if (!refused || refused->code != errc::call_not_pending) co_return refused;
    } else if (replicas_ && forward) {
        auto stored = co_await store_.run(run_id);
        if (unfinished(stored)) {
            // Named before the co_await: GCC 12 mishandles a temporary in a coroutine's arguments.
            run_command command = decide_command{call_id, std::move(d)};
            auto answer = co_await link_->ask_owner(run_id, std::move(command));
            co_return answer;
        }
    }
    // Not live, or not awaiting this call: the store says why.
    auto stored = co_await store_.run(run_id);
    if (!stored) co_return refusal{errc::not_found, "No run " + run_id + "."};
    auto call = co_await store_.tool_call(call_id);
    if (!call || call->run_id != run_id)
        co_return refusal{errc::not_found, "Run " + run_id + " has no call " + call_id + "."};
    co_return refusal{errc::call_not_pending,
                      "Call " + call_id + " is not awaiting approval (it is " +
                          std::string(status_name(call->status)) + "; the run is " +
                          std::string(status_name(stored->status)) + ")."};
}

net::awaitable<std::optional<refusal>> run_registry::cancel_here(std::string run_id, bool forward) {
    if (auto it = runs_.find(run_id); it != runs_.end()) {
        auto& run = *it->second;
        run.cancel_requested = true;
        run.canceller.cancel();
        run.wake.cancel();
        co_return std::nullopt;
    }
    auto stored = co_await store_.run(run_id);
    if (!stored) co_return refusal{errc::not_found, "No run " + run_id + "."};
    if (replicas_ && forward && unfinished(stored)) {
        run_command command = cancel_command{};
        auto answer = co_await link_->ask_owner(run_id, std::move(command));
        co_return answer;
    }
    co_return refusal{errc::run_ended, "Run " + run_id + " has already ended (" +
                                           std::string(status_name(stored->status)) + ")."};
}

net::awaitable<std::variant<json::object, refusal>> run_registry::undo(std::string run_id) {
    using outcome = std::variant<json::object, refusal>;
    auto on_engine = [this, run_id]() -> net::awaitable<outcome> {
        if (runs_.count(run_id))
            co_return refusal{errc::run_in_progress,
                              "Run " + run_id +
                                  " is still going; wait for it, or cancel it, before undoing "
                                  "its writes."};
        auto stored = co_await store_.run(run_id);
        if (!stored) co_return refusal{errc::not_found, "No run " + run_id + "."};
        auto backup = co_await store_.last_backup(run_id);
        if (!backup)
            co_return refusal{errc::nothing_to_undo,
                              "Run " + run_id + " has no write left to undo."};
        auto chat = co_await store_.chat(stored->chat_id);
        // A view of the ended run, to reach its workspace and announce to its watchers.
        live_run view(io_.get_executor());
        view.chat = chat.value_or(store::chat_record{});
        view.record = std::move(*stored);
        view.last_event = co_await store_.last_event(run_id);
        if (auto unusable = runner_.open_workspace(view))
            co_return refusal{errc::conflict, "The chat's workspace cannot be used: " + *unusable};
        auto restored = co_await runner_.restore(view, *backup);
        if (!restored.ok) co_return refusal{errc::conflict, restored.text};
        backup->undone_at = now_ms();
        json::object undone{
            {"call_id", backup->call_id},
            {"path", backup->path.empty() ? json::value(nullptr) : json::value(backup->path)}};
        if (auto* diff = restored.data.if_contains("diff")) undone["diff"] = *diff;
        auto b = journal_.begin(view);
        b.backup(*backup);
        b.event(event::write_undone, undone);
        co_await journal_.record(view, std::move(b));
        co_return undone;
    };
    auto result = co_await net::co_spawn(io_, on_engine(), net::use_awaitable);
    co_return result;
}

net::awaitable<void> run_registry::announce(std::string run_id, std::string type,
                                            json::object data) {
    co_await net::co_spawn(io_,
                           announce_here(std::move(run_id), std::move(type), std::move(data), true),
                           net::use_awaitable);
}

net::awaitable<void> run_registry::announce_here(std::string run_id, std::string type,
                                                 json::object data, bool forward) {
    if (auto live = runs_.find(run_id); live != runs_.end()) {
        auto b = journal_.begin(*live->second);
        b.event(type, data);
        co_await journal_.record(*live->second, std::move(b));
        co_return;
    }
    auto stored = co_await store_.run(run_id);
    if (!stored) co_return;
    if (replicas_ && forward && unfinished(stored)) {
        // Its events are numbered by the replica driving it.
        run_command command = announce_command{std::move(type), std::move(data)};
        co_await link_->ask_owner(run_id, std::move(command));
        co_return;
    }
    // A view of the ended run, as undo() makes.
    live_run view(io_.get_executor());
    view.record = std::move(*stored);
    view.last_event = co_await store_.last_event(run_id);
    auto b = journal_.begin(view);
    b.event(type, data);
    co_await journal_.record(view, std::move(b));
}

net::awaitable<command_answer> run_registry::apply(std::string run_id, run_command command) {
    if (auto* d = std::get_if<decide_command>(&command)) {
        auto refused = co_await decide_here(std::move(run_id), std::move(d->call_id),
                                            std::move(d->choice), false);
        co_return refused;
    }
    if (std::holds_alternative<cancel_command>(command)) {
        auto refused = co_await cancel_here(std::move(run_id), false);
        co_return refused;
    }
    auto& a = std::get<announce_command>(command);
    co_await announce_here(std::move(run_id), std::move(a.type), std::move(a.data), false);
    co_return std::nullopt;
}

net::awaitable<void> run_registry::keep_leases() {
    auto period = replicas_->lease_timeout() / 4;
    while (!stopping_) {
        try {
            // Only runs stored before the renewal is sent can be missing from its answer for
            // the right reason: one admitted meanwhile may not be committed when it runs.
            std::set<std::string> asked;
            for (auto& [id, run] : runs_)
                if (run->stored) asked.insert(id);
            auto held = co_await replicas_->renew_leases();
            std::set<std::string> still(held.begin(), held.end());
            for (auto& [id, run] : runs_) {
                if (!asked.count(id) || still.count(id) || run->ended || run->stopping) continue;
                observability::log_warn("run " + id +
                                        ": its lease was taken by another replica; stopped here");
                run->stopping = true;
                run->canceller.cancel();
                run->wake.cancel();
                run->wall.cancel();
            }
            // A replica that is stopping takes nothing new (see adopt()).
            if (stopping_) break;
            auto claimed = co_await replicas_->claim_runs();
            for (auto& record : claimed) {
                auto id = record.id;
                observability::log_info("run " + id + ": taken over from a replica that stopped");
                co_await adopt(std::move(record));
                co_await link_->serve(id);
            }
        } catch (const std::exception& e) {
            observability::log_warn(std::string("run leases: ") + e.what());
        }
        if (stopping_) break;
        lease_timer_.expires_after(period);
        [[maybe_unused]] auto [ec] =
            co_await lease_timer_.async_wait(net::as_tuple(net::use_awaitable));
    }
}

// Engine thread: every run stored as running or awaiting approval (with replicas: every one
// whose lease expired) is rebuilt from the store and launched again.
net::awaitable<void> run_registry::resume() {
    std::vector<store::run_record> unfinished;
    if (replicas_) {
        auto claimed = co_await replicas_->claim_runs();
        unfinished = std::move(claimed);
    } else {
        auto stored = co_await store_.unfinished_runs();
        unfinished = std::move(stored);
    }
    for (auto& record : unfinished) {
        auto id = record.id;
        co_await adopt(std::move(record));
        // Decisions posted while no replica drove it wait in the store.
        if (replicas_) co_await link_->serve(id);
    }
}

// Engine thread: rebuilds the run from the store (state, conversation, last event, its pending
// call) and launches it.
net::awaitable<void> run_registry::adopt(store::run_record record) {
    auto chat = co_await store_.chat(record.chat_id);
    if (!chat || runs_.count(record.id)) co_return;  // deleted with its chat; or already here
    auto run = std::make_shared<live_run>(io_.get_executor());
    run->chat = *chat;
    run->role = tools::parse_role(chat->role).value_or(tools::role::editor);
    run->last_event = co_await store_.last_event(record.id);
    auto rows = co_await store_.run_messages(record.id);
    std::optional<std::int64_t> unreadable;
    for (const auto& row : rows) {
        auto m = message_of_row(row);
        if (!m) {
            unreadable = row.seq;
            break;
        }
        run->conversation.push_back(std::move(*m));
    }
    run->stored_messages = rows.size();
    auto state = parse_state(record.state);
    run->record = std::move(record);
    driver drive = [this](live_run& r) { return loop_.run(r); };
    if (!state) {
        run->end(run_status::failed, "",
                 "The run's stored state cannot be read (" + state.error().message() +
                     "); it cannot go on.");
    } else if (unreadable) {
        run->end(run_status::failed, "",
                 "Message " + std::to_string(*unreadable) +
                     " of the run's stored conversation cannot be read; it cannot go on.");
    } else {
        run->state = std::move(*state);
        if (run->state.pending) {
            auto call = co_await store_.tool_call(run->state.pending->call_id);
            run->call = std::move(call);
        }
        if (run->state.workflow) drive = workflows_(*run);
    }
    run->system_prompt = system_prompt(run->chat, run->role);
    // Stopping meanwhile: the run stays as stored (its lease is given up at stop) for the next
    // start or another replica.
    if (stopping_) co_return;
    run->stored = true;
    auto id = run->record.id;
    chats_[run->chat.id] = id;
    runs_[id] = run;
    ++live_;
    observability::metrics().runs_active.with().add(1);
    observability::log_info("run " + id + ": resumed (" +
                            std::string(status_name(run->record.status)) + ")");
    run->trace = agent_span(*run, nullptr);
    run->trace.set("contextgate.resumed", true);
    drives_.spawn("run " + run->record.id, this->drive(run, std::move(drive)));
}

}  // namespace gateway::agent
