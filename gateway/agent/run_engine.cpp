#include "gateway/agent/run_engine.hpp"

#include "gateway/agent/enhanced_prompt.hpp"
#include "gateway/agent/excerpt.hpp"
#include "gateway/agent/run_state.hpp"
#include "gateway/agent/tool_call_parser.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/workspace.hpp"
#include "gateway/tools/workspace_roots.hpp"
#include "gateway/workflows/template.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cerrno>
#include <cstring>
#include <random>

#include <sys/stat.h>

namespace gateway::agent {

namespace json = boost::json;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);
// How the context budget (in tokens) is turned into bytes of request: a deliberately rough
// estimate, since no tokenizer is at hand.
constexpr std::size_t bytes_per_token = 4;

std::int64_t int_of(const json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    return v && v->is_int64() ? v->as_int64() : 0;
}

bool bool_of(const json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    return v && v->is_bool() && v->as_bool();
}

std::string string_of(const json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

json::array& array_of(json::object& o, std::string_view key) {
    auto& v = o[key];
    if (!v.is_array()) v = json::array();
    return v.as_array();
}

json::object message(std::string_view role, std::string_view content) {
    return {{"role", role}, {"content", content}};
}

std::string duration_text(config::duration d) {
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
    return std::to_string(seconds) + " s";
}

// What the model reads after a call: the result, or the failure with its code.
std::string result_message(std::string_view tool, const tools::tool_result& result) {
    if (result.ok) return "Result of `" + std::string(tool) + "`:\n" + result.text;
    return "`" + std::string(tool) + "` failed with " + result.error_code + ": " + result.text;
}

// The normalised call, as it goes into the history: the model learns the clean form.
std::string call_text(std::string_view tool, const json::object& parameters, bool terminate) {
    return json::serialize(
        json::object{{"tool", tool}, {"parameters", parameters}, {"terminate", terminate}});
}

// With a json_schema upstream the model's final answer arrives as {"answer": "…"}.
std::optional<std::string> schema_answer(std::string_view content) {
    json::error_code ec;
    auto value = json::parse(content, ec);
    if (ec || !value.is_object()) return std::nullopt;
    const auto& o = value.as_object();
    auto* answer = o.if_contains("answer");
    if (!answer || !answer->is_string() || o.contains("tool")) return std::nullopt;
    return std::string(answer->as_string());
}

// response_format for a json_schema upstream: one branch per tool the role may use, each pinning
// the tool's name and its parameter schema, and one branch for the final answer.
json::object response_format(const tools::registry& tools, tools::role role) {
    json::array branches;
    for (const auto* t : tools.for_role(role)) {
        auto name = t->spec().name;
        branches.push_back(json::object{
            {"type", "object"},
            {"properties",
             {{"tool", {{"const", name}}},
              {"parameters", tools.schema(name)},
              {"terminate", {{"type", "boolean"}}}}},
            {"required", json::array{"tool", "parameters", "terminate"}},
            {"additionalProperties", false}});
    }
    branches.push_back(json::object{{"type", "object"},
                                    {"properties", {{"answer", {{"type", "string"}}}}},
                                    {"required", json::array{"answer"}},
                                    {"additionalProperties", false}});
    return {{"type", "json_schema"},
            {"json_schema",
             {{"name", "agent_reply"}, {"strict", false}, {"schema", {{"oneOf", branches}}}}}};
}

constexpr std::string_view schema_note =
    "\n\nYour replies are constrained to JSON. A tool call is the object described above; a final "
    "answer is {\"answer\": \"<your answer>\"}.";

}  // namespace


std::string make_id(std::string_view prefix) {
    thread_local std::mt19937_64 generator{std::random_device{}()};
    static constexpr char hex[] = "0123456789abcdef";
    std::string id(prefix);
    id += '_';
    for (int half = 0; half < 2; ++half) {
        auto bits = generator();
        for (int i = 0; i < 12; ++i) id += hex[(bits >> (i * 4)) & 0xf];
    }
    return id;
}

// One live run: its loop state (engine thread only) and the part the HTTP threads touch.
//
// `conversation` is what follows the system prompt (user, assistant, tool results); it only
// grows, so it is stored message by message (store::append_run_message), not with the state.
// `state`, stored with the run so a restart resumes it where it stood:
//   failed          the malformed replies and their feedback since the last good one
//   retries         malformed replies in a row
//   last_call, identical   the previous call's signature and how often it came in a row
//   tool_errors     failing tool calls in a row
//   approved_tools  tools approved with scope "run"
//   active_ms       wall time spent, excluding time awaiting approval
//   final_request   the step cap was reached and the final answer asked for
//   pending         the call being decided or run: call_id, tool, parameters, terminate,
//                   asked (approval.required sent), requested_at (Unix ms)
//   turn_start      chat runs: where the current turn starts in `conversation` (after the history)
//   left_out        earlier messages of the chat not loaded (over the context budget)
//   first_sent      the first history message still sent (older ones trimmed during the run)
//   trim_reported   how many left-out messages context.trimmed has announced
//   segment_start, turns, turn_limit, workflow   workflow runs (see run_workflow)
struct run_engine::live_run {
    explicit live_run(const net::any_io_executor& ex) : wake(ex), wall(ex) {}
    store::chat_record chat;
    tools::role role = tools::role::editor;
    store::run_record record;
    json::object state;
    json::array conversation;
    std::size_t stored_messages = 0;      // how much of `conversation` is in the store
    std::string serialized;               // the system prompt and conversation as JSON, for requests
    std::size_t serialized_from = 0;      // the first message of `conversation` in `serialized`
    std::size_t serialized_messages = 0;  // how much of `conversation` is in `serialized`
    std::string system_prompt;
    std::shared_ptr<const workflows::workflow> definition;  // workflow runs only
    std::shared_ptr<tools::workspace> files;  // the chat's workspace, opened for this run
    net::steady_timer wake;  // approval waits; cancelled to wake the loop
    net::steady_timer wall;  // the wall-time limit while the model is asked
    call_canceller canceller;
    bool wall_hit = false;
    bool batching = false;
    // How the loop ended (set by end()); drive() records it with finish(). Empty when the
    // engine stopped the loop: the run stays as stored.
    struct ending {
        std::string status, output, error;
    };
    std::optional<ending> ended;  // inside checkpoint(): notify after the commit
    clock::time_point segment_start = clock::now();

    struct {  // under run_engine::mutex_
        bool cancel = false;
        std::string awaiting_call;
        std::string awaiting_tool;
        std::optional<decision> decided;
    } shared;

    config::duration spent() const {
        return config::duration(int_of(state, "active_ms")) +
               std::chrono::duration_cast<config::duration>(clock::now() - segment_start);
    }
    // Banks the active time so far (before a pause or a checkpoint).
    void bank_time() {
        state["active_ms"] = spent().count();
        segment_start = clock::now();
    }
};

run_engine::run_engine(const config::gateway_config& config, store::store& store,
                       const tools::registry& tools, const tools::workspace_roots& roots,
                       std::vector<prompts::prompt> prompts,
                       const passthrough::model_router& router,
                       const std::vector<std::shared_ptr<net::ssl::context>>& tls_contexts)
    : config_(config),
      store_(store),
      tools_(tools),
      prompts_(std::move(prompts)),
      work_(io_.get_executor()),
      model_(config, router, tls_contexts, io_.get_executor()),
      roots_(roots) {}

run_engine::~run_engine() { stop(); }

const prompts::prompt* run_engine::find_prompt(std::string_view id) const {
    for (const auto& p : prompts_)
        if (p.id == id) return &p;
    return nullptr;
}

std::string run_engine::system_prompt(const store::chat_record& chat) const {
    return system_prompt(chat, tools::parse_role(chat.role).value_or(tools::role::editor));
}

std::string run_engine::system_prompt(const store::chat_record& chat, tools::role role) const {
    const auto* base = find_prompt(chat.system_prompt);
    prompts::prompt fallback{chat.system_prompt, "", "", "", ""};
    auto text = enhanced_prompt(base ? *base : fallback, tools_, role);
    if (model_.upstream_for(chat.model).json_schema) text += schema_note;
    return text;
}

void run_engine::start() {
    for (const auto* status : {"running", "awaiting_approval"}) {
        for (auto& record : store_.runs_with_status(status)) {
            auto chat = store_.chat(record.chat_id);
            if (!chat) continue;  // deleted with its chat
            auto run = std::make_shared<live_run>(io_.get_executor());
            run->chat = *chat;
            run->role = tools::parse_role(chat->role).value_or(tools::role::editor);
            json::error_code ec;
            auto state = json::parse(record.state, ec);
            if (!ec && state.is_object()) run->state = std::move(state.as_object());
            for (auto& [role, content] : store_.run_messages(record.id))
                run->conversation.push_back(message(role, content));
            run->stored_messages = run->conversation.size();
            run->record = std::move(record);
            run->system_prompt = system_prompt(run->chat);
            if (auto* wf = run->state.if_contains("workflow")) {
                auto id = string_of(wf->as_object(), "id");
                auto all = workflows_ ? workflows_->all() : nullptr;
                const auto* found = all ? workflows::registry::find(all, id) : nullptr;
                if (found) run->definition = std::shared_ptr<const workflows::workflow>(all, found);
                if (!found) {
                    // Resumed into the loop it fails there, with a message for the human.
                    observability::log_warn("run " + run->record.id + ": workflow `" + id +
                                            "` no longer exists");
                }
            }
            observability::log_info("run " + run->record.id + ": resumed (" + status + ")");
            std::lock_guard lock(mutex_);
            runs_[run->record.id] = run;
        }
    }
    std::vector<std::shared_ptr<live_run>> resumed;
    {
        std::lock_guard lock(mutex_);
        for (auto& [id, run] : runs_) resumed.push_back(run);
    }
    for (auto& run : resumed) launch(run);
    thread_ = std::thread([this] { io_.run(); });
}

void run_engine::stop() {
    if (!thread_.joinable()) return;
    net::post(io_, [this] {
        stopping_ = true;
        // Pooled model connections hold deadline timers that would keep this thread running.
        model_.close_idle();
        std::lock_guard lock(mutex_);
        for (auto& [id, run] : runs_) {
            run->canceller.cancel();
            run->wake.cancel();
            run->wall.cancel();
        }
    });
    work_.reset();
    thread_.join();
    tool_pool_.join();
}

std::size_t run_engine::live_runs() const {
    std::lock_guard lock(mutex_);
    return runs_.size();
}

void run_engine::launch(std::shared_ptr<live_run> run) {
    net::co_spawn(io_, drive(std::move(run)), net::detached);
}

// Reserves the chat's one live run, stores it with its run.started event — `prepare` fills in the
// run and the event inside the same transaction — and launches it.
refusal run_engine::begin_run(const store::chat_record& chat, tools::role role,
                              const std::function<void(live_run&, json::object&)>& prepare,
                              std::string& run_id) {
    auto run = std::make_shared<live_run>(io_.get_executor());
    run_id = make_id("run");
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, other] : runs_)
            if (other->chat.id == chat.id)
                return {409, "Chat " + chat.id + " already has a run in progress (" + id +
                                 "); wait for it, or cancel it."};
        runs_[run_id] = run;  // reserved: a second message now sees it
    }
    run->chat = chat;
    run->role = role;
    run->system_prompt = system_prompt(chat, role);
    auto now = store::store::now_ms();
    run->record = {run_id, chat.id, "running", 0, static_cast<int>(config_.context.max_steps),
                   "", "", "", now, now};
    try {
        store_.atomically([&] {
            json::object started{{"type", "run.started"}, {"run_id", run_id},
                                 {"step", 0}, {"max_steps", run->record.max_steps},
                                 {"chat_id", chat.id}};
            prepare(*run, started);
            run->record.state = json::serialize(run->state);
            store_.save_run(run->record);
            store_conversation(*run);
            store_.append_event(run_id, "run.started", json::serialize(started));
        });
    } catch (...) {
        std::lock_guard lock(mutex_);
        runs_.erase(run_id);
        throw;
    }
    launch(run);
    return {};
}

refusal run_engine::start_run(const store::chat_record& chat, const std::string& content,
                              std::string& run_id) {
    auto role = tools::parse_role(chat.role).value_or(tools::role::editor);
    auto prepare = [&](live_run& run, json::object& started) {
        // Only the newest turns that can fit the upstream's context budget are loaded.
        auto budget = model_.upstream_for(chat.model).context_budget * bytes_per_token;
        auto fixed = run.system_prompt.size() + content.size();
        auto history_bytes = budget == 0 ? SIZE_MAX : budget > fixed ? budget - fixed : 0;
        std::size_t left_out = 0;
        for (const auto& m : store_.recent_messages(chat.id, history_bytes, left_out)) {
            if (run.conversation.empty() && m.role == "assistant") {
                ++left_out;  // the kept history starts with a user turn
                continue;
            }
            run.conversation.push_back(message(m.role, m.content));
        }
        run.state["turn_start"] = static_cast<std::int64_t>(run.conversation.size());
        run.state["left_out"] = static_cast<std::int64_t>(left_out);
        run.conversation.push_back(message("user", content));
        store_.add_message({0, chat.id, run.record.id, "user", content, store::store::now_ms()});
        started["content"] = content;
    };
    return begin_run(chat, role, prepare, run_id);
}

refusal run_engine::decide(const std::string& run_id, const std::string& call_id, decision d) {
    std::shared_ptr<live_run> run;
    {
        std::lock_guard lock(mutex_);
        if (auto it = runs_.find(run_id); it != runs_.end()) run = it->second;
        if (run && !run->shared.awaiting_call.empty() && run->shared.awaiting_call == call_id) {
            if (run->shared.decided)
                return {409, "Call " + call_id + " has been decided already."};
            if (d.parameters) {
                auto problem = tools_.validate(run->shared.awaiting_tool, *d.parameters);
                if (!problem.empty())
                    return {400, "Invalid parameters for `" + run->shared.awaiting_tool +
                                     "` at " + problem};
            }
            store_.save_approval({call_id, run_id, d.approve ? "approve" : "reject",
                                  d.parameters ? json::serialize(*d.parameters) : "",
                                  d.feedback, d.whole_run ? "run" : "once",
                                  store::store::now_ms()});
            run->shared.decided = std::move(d);
        } else {
            run = nullptr;
        }
    }
    if (run) {
        net::post(io_, [run] { run->wake.cancel(); });
        return {};
    }
    auto stored = store_.run(run_id);
    if (!stored) return {404, "No run " + run_id + "."};
    auto call = store_.tool_call(call_id);
    if (!call || call->run_id != run_id) return {404, "Run " + run_id + " has no call " + call_id + "."};
    return {409, "Call " + call_id + " is not awaiting approval (it is " + call->status +
                     "; the run is " + stored->status + ")."};
}

refusal run_engine::cancel(const std::string& run_id) {
    std::shared_ptr<live_run> run;
    {
        std::lock_guard lock(mutex_);
        if (auto it = runs_.find(run_id); it != runs_.end()) run = it->second;
        if (run) run->shared.cancel = true;
    }
    if (run) {
        net::post(io_, [run] {
            run->canceller.cancel();
            run->wake.cancel();
        });
        return {};
    }
    auto stored = store_.run(run_id);
    if (!stored) return {404, "No run " + run_id + "."};
    return {409, "Run " + run_id + " has already ended (" + stored->status + ")."};
}

std::uint64_t run_engine::subscribe(const std::string& run_id, std::function<void()> wake) {
    std::lock_guard lock(mutex_);
    auto handle = next_subscriber_++;
    subscribers_[run_id][handle] = std::move(wake);
    return handle;
}

void run_engine::unsubscribe(const std::string& run_id, std::uint64_t handle) {
    std::lock_guard lock(mutex_);
    auto it = subscribers_.find(run_id);
    if (it == subscribers_.end()) return;
    it->second.erase(handle);
    if (it->second.empty()) subscribers_.erase(it);
}

void run_engine::notify(const std::string& run_id) {
    std::vector<std::function<void()>> wakers;
    {
        std::lock_guard lock(mutex_);
        if (auto it = subscribers_.find(run_id); it != subscribers_.end())
            for (auto& [handle, wake] : it->second) wakers.push_back(wake);
    }
    for (auto& wake : wakers) wake();
}

void run_engine::emit(live_run& run, std::string type, json::object data) {
    // Every watcher replays every event: long texts (a file's content, a preview diff) are cut
    // to an excerpt, and the event names the resource that keeps the whole.
    json::value extra(std::move(data));
    auto cut = cut_long_strings(extra, config_.context.event_excerpt_bytes);
    // The fields every event has come first, so a frame reads well in a terminal too.
    json::object event{{"type", type},
                       {"run_id", run.record.id},
                       {"step", run.record.step},
                       {"max_steps", run.record.max_steps}};
    for (auto& [key, value] : extra.as_object()) event[key] = std::move(value);
    if (!cut.empty()) {
        json::array pointers;
        for (auto& p : cut) pointers.emplace_back(p);
        event["truncated"] = std::move(pointers);
        if (auto* call = event.if_contains("call_id"); call && call->is_string())
            event["full"] = "/context/runs/" + run.record.id + "/calls/" +
                            std::string(call->as_string());
        else if (type == "document.updated")
            event["full"] = "/context/chats/" + run.chat.id + "/document";
        else
            event["full"] = "/context/runs/" + run.record.id;
    }
    store_.append_event(run.record.id, type, json::serialize(event));
    if (!run.batching) notify(run.record.id);
}

void run_engine::checkpoint(live_run& run, const std::function<void()>& also) {
    run.bank_time();
    run.record.state = json::serialize(run.state);
    run.record.updated_at = store::store::now_ms();
    run.batching = true;
    try {
        store_.atomically([&] {
            store_.save_run(run.record);
            store_conversation(run);
            if (also) also();
        });
    } catch (...) {
        run.batching = false;
        throw;
    }
    run.batching = false;
    if (is_final_status(run.record.status)) {
        // The chat is free before anyone hears that its run ended: a client that sees the final
        // event and sends the next message at once must not be told the run is still live.
        std::lock_guard lock(mutex_);
        runs_.erase(run.record.id);
    }
    notify(run.record.id);
}

void run_engine::store_conversation(live_run& run) {
    auto& c = run.conversation;
    for (; run.stored_messages < c.size(); ++run.stored_messages) {
        const auto& m = c[run.stored_messages].as_object();
        store_.append_run_message(run.record.id, static_cast<std::int64_t>(run.stored_messages),
                                  std::string(m.at("role").as_string()),
                                  std::string(m.at("content").as_string()));
    }
}

void run_engine::end(live_run& run, std::string status, std::string output, std::string error) {
    run.ended = live_run::ending{std::move(status), std::move(output), std::move(error)};
}

void run_engine::finish(live_run& run, std::string status, std::string output, std::string error) {
    run.record.status = status;
    run.record.output = output;
    run.record.error = error;
    run.state.erase("pending");
    {
        std::lock_guard lock(mutex_);
        run.shared.awaiting_call.clear();
    }
    checkpoint(run, [&] {
        if (status == "completed") {
            store_.add_message({0, run.chat.id, run.record.id, "assistant", output,
                                store::store::now_ms()});
            emit(run, "message", {{"role", "assistant"}, {"content", output}});
            emit(run, "run.completed", {{"output", output}});
        } else if (status == "failed") {
            emit(run, "run.failed", {{"error", error}});
        } else {
            emit(run, "run.cancelled", {});
        }
    });
    observability::log_info("run " + run.record.id + ": " + status +
                            (error.empty() ? "" : ": " + error));
}

std::shared_ptr<tools::workspace> run_engine::open_workspace(const std::string& path,
                                                             std::string& error) {
    auto opened = roots_.open(path);
    if (!opened) {
        error = opened.error;
        return nullptr;
    }
    struct stat info {};
    if (::fstat(opened.fd.get(), &info) != 0) {
        error = "The workspace " + path + " cannot be inspected: " + std::strerror(errno);
        return nullptr;
    }
    std::lock_guard lock(workspaces_mutex_);
    auto& slot = workspaces_[opened.path];
    if (!slot.files || slot.device != info.st_dev || slot.inode != info.st_ino) {
        slot.device = info.st_dev;
        slot.inode = info.st_ino;
        slot.files = tools::workspace::adopt(opened.path, std::move(opened.fd));
        // First use in this process: what a killed earlier process left behind goes, off the
        // engine's thread.
        net::post(tool_pool_, [files = slot.files] {
            if (auto removed = files->remove_debris())
                observability::log_info("workspace " + files->root() + ": removed " +
                                        std::to_string(removed) +
                                        " temporary file(s) left by an interrupted write");
        });
    }
    return slot.files;
}

config::approval_policy run_engine::policy_for(const std::string& tool,
                                               const json::object& parameters) {
    for (const auto& [name, policy] : config_.context.approvals)
        if (name == tool) return policy;
    const auto* t = tools_.find(tool);
    return t && t->needs_approval_for(parameters) ? config::approval_policy::ask
                                                  : config::approval_policy::always;
}

// Written as text: the system prompt and the conversation only grow, so their serialized form is
// kept and extended instead of serializing a 50 KB conversation again at every step.
std::string run_engine::request_body(live_run& run) {
    auto& prefix = run.serialized;
    auto extend = [&] {
        // A new segment, or older turns left out: the prefix starts elsewhere now.
        auto from = std::max(static_cast<std::size_t>(int_of(run.state, "segment_start")),
                             static_cast<std::size_t>(int_of(run.state, "first_sent")));
        if (run.serialized_from != from || prefix.empty()) {
            prefix = json::serialize(message("system", run.system_prompt));
            run.serialized_from = from;
            run.serialized_messages = from;
        }
        for (; run.serialized_messages < run.conversation.size(); ++run.serialized_messages) {
            prefix += ',';
            prefix += json::serialize(run.conversation[run.serialized_messages]);
        }
    };
    extend();
    if (trim_history(run, prefix.size())) extend();
    std::string body = "{\"model\":" + json::serialize(json::value(run.chat.model));
    body += ",\"messages\":[";
    body += prefix;
    for (const auto& m : array_of(run.state, "failed")) {
        body += ',';
        body += json::serialize(m);
    }
    body += ']';
    if (model_.upstream_for(run.chat.model).json_schema) {
        body += ",\"response_format\":";
        body += json::serialize(response_format(tools_, run.role));
    }
    body += '}';
    return body;
}

// Keeps a chat run's request within its upstream's context budget: the chat's earlier turns
// (before `turn_start`) are left out, oldest first, until the system prompt, what is left of
// them and the current turn fit; the current turn is never cut. A `context.trimmed` event says
// how much was left out, counting what never left the store at the start. True when the
// request's messages changed.
bool run_engine::trim_history(live_run& run, std::size_t request_bytes) {
    auto& s = run.state;
    auto budget = model_.upstream_for(run.chat.model).context_budget * bytes_per_token;
    if (!s.contains("turn_start")) return false;  // workflow segments hold the current turn only
    auto turn_start = static_cast<std::size_t>(int_of(s, "turn_start"));
    auto first = static_cast<std::size_t>(int_of(s, "first_sent"));
    bool changed = false;
    if (budget > 0 && request_bytes > budget && first < turn_start) {
        auto excess = request_bytes - budget;
        while (first < turn_start && excess > 0) {
            auto size = json::serialize(run.conversation[first]).size() + 1;
            excess = excess > size ? excess - size : 0;
            ++first;
        }
        // The kept history starts with a user turn, as every provider expects.
        while (first < turn_start && run.conversation[first].at("role") == "assistant") ++first;
        s["first_sent"] = static_cast<std::int64_t>(first);
        changed = true;
    }
    auto left_out = int_of(s, "left_out") + static_cast<std::int64_t>(first);
    if (left_out > int_of(s, "trim_reported")) {
        s["trim_reported"] = left_out;
        emit(run, "context.trimmed",
             {{"left_out_messages", left_out},
              {"kept_messages", static_cast<std::int64_t>(turn_start - first)},
              {"budget_tokens", model_.upstream_for(run.chat.model).context_budget}});
    }
    return changed;
}

net::awaitable<tools::tool_result> run_engine::execute(live_run& run, const std::string& tool,
                                                       const json::object& parameters,
                                                       tools::mode how) {
    tools::tool_context context;
    context.files = run.files.get();
    auto stored = store_.document(run.chat.id);
    std::optional<tools::open_document> document;
    if (stored) document = tools::open_document{stored->name, stored->content, {}, {}};
    if (document) context.document = &*document;
    auto role = run.role;
    auto result = co_await net::co_spawn(
        tool_pool_,
        [&]() -> net::awaitable<tools::tool_result> {
            co_return tools_.execute(tool, parameters, context, how, role);
        },
        net::use_awaitable);
    if (how == tools::mode::execute && document && document->content != stored->content) {
        auto version = store_.put_document(run.chat.id, document->name, document->content);
        json::object data{{"name", document->name},
                          {"version", version},
                          {"content", document->content}};
        if (auto* diff = result.data.if_contains("diff")) data["diff"] = *diff;
        emit(run, "document.updated", std::move(data));
    }
    co_return result;
}

net::awaitable<void> run_engine::drive(std::shared_ptr<live_run> run) {
    std::string failure;
    try {
        std::string unusable;
        if (!run->chat.workspace.empty()) run->files = open_workspace(run->chat.workspace, unusable);
        if (!unusable.empty())
            end(*run, "failed", "", "The chat's workspace cannot be used: " + unusable);
        else if (run->state.contains("workflow"))
            co_await run_workflow(*run);
        else
            co_await loop(*run);
        if (run->ended) finish(*run, run->ended->status, run->ended->output, run->ended->error);
    } catch (const std::exception& e) {
        failure = e.what();
    }
    if (!failure.empty()) {
        observability::log_error("run " + run->record.id + ": " + failure);
        try {
            finish(*run, "failed", "", "internal error: " + failure);
        } catch (const std::exception& e) {
            observability::log_error("run " + run->record.id + ": cannot record the failure: " +
                                     e.what());
        }
    }
    std::lock_guard lock(mutex_);
    runs_.erase(run->record.id);
}

// One model call under the run's wall-time limit, with upstream retries reported as
// model.retry. On failure (cancelled, timed out, upstream error) the run's ending is set and the
// result is empty.
net::awaitable<std::optional<model_reply>> run_engine::ask_model(live_run& run, std::string body) {
    const auto& limits = config_.context;
    run.wall_hit = false;
    run.wall.expires_after(limits.max_wall_time - run.spent());
    run.wall.async_wait([&run](boost::system::error_code ec) {
        if (ec) return;
        run.wall_hit = true;
        run.canceller.cancel();
    });
    auto on_retry = [&](const model_retry& retry) {
        emit(run, "model.retry",
             {{"reason", "UPSTREAM_ERROR"},
              {"message", retry.why + "; retrying in " + std::to_string(retry.wait.count()) +
                              " ms (" + std::to_string(retry.attempt) + " of " +
                              std::to_string(retry.of) + ")"},
              {"attempt", retry.attempt}});
    };
    auto reply = co_await model_.complete(run.chat.model, std::move(body), run.record.id,
                                          run.canceller, on_retry);
    run.wall.cancel();
    if (reply.cancelled) {
        if (stopping_) co_return std::nullopt;
        if (run.wall_hit)
            end(run, "failed", "", "The run exceeded its wall-time limit of " +
                                       duration_text(limits.max_wall_time) + ".");
        else
            end(run, "cancelled", "", "");
        co_return std::nullopt;
    }
    if (!reply.ok) {
        end(run, "failed", "", "The model call failed: " + reply.error);
        co_return std::nullopt;
    }
    co_return reply;
}

net::awaitable<void> run_engine::loop(live_run& run) {
    const auto& limits = config_.context;
    auto& s = run.state;
    run.segment_start = clock::now();
    for (;;) {
        if (stopping_) co_return;  // left as stored: start() resumes it
        bool cancel;
        {
            std::lock_guard lock(mutex_);
            cancel = run.shared.cancel;
        }
        if (cancel) {
            end(run, "cancelled", "", "");
            co_return;
        }
        if (s.contains("pending")) {
            if (!co_await resolve_pending(run)) co_return;
            continue;
        }
        if (run.spent() >= limits.max_wall_time) {
            end(run, "failed", "", "The run exceeded its wall-time limit of " +
                                          duration_text(limits.max_wall_time) + ".");
            co_return;
        }
        // Turns of this agent segment (a chat run is one segment; a workflow's agent steps each
        // start one) against its limit; record.step counts every turn of the run.
        auto limit = s.contains("turn_limit") ? int_of(s, "turn_limit") : run.record.max_steps;
        auto turns = s.contains("turns") ? int_of(s, "turns") : run.record.step;
        bool final_request = bool_of(s, "final_request");
        if (!final_request && array_of(s, "failed").empty()) {
            if (turns >= limit) {
                final_request = true;
                s["final_request"] = true;
                run.conversation.push_back(message(
                    "user", "You have reached the limit of " + std::to_string(limit) +
                                " tool steps. Do not call any more tools. Reply now with your "
                                "final answer in plain text: what you did, and what is left to "
                                "do."));
            } else {
                ++run.record.step;
                s["turns"] = turns + 1;
            }
        }
        emit(run, "model.requested", {{"attempt", int_of(s, "retries") + 1}});
        auto answered = co_await ask_model(run, request_body(run));
        if (!answered) co_return;
        const auto& reply = *answered;
        parsed_reply parsed;
        if (auto answer = model_.upstream_for(run.chat.model).json_schema
                              ? schema_answer(reply.content)
                              : std::nullopt) {
            parsed.answer = *answer;
        } else {
            parsed = parse_reply(reply.content, reply.finish_reason, tools_, run.role);
        }
        if (final_request) {
            if (parsed.what == parsed_reply::kind::final_answer) {
                run.conversation.push_back(message("assistant", parsed.answer));
                end(run, "completed", parsed.answer, "");
            } else {
                end(run, "failed", "",
                       "The run reached its limit of " + std::to_string(limit) +
                           " steps and the model did not give a final answer.");
            }
            co_return;
        }
        if (parsed.what == parsed_reply::kind::final_answer) {
            s["failed"] = json::array();
            s["retries"] = 0;
            run.conversation.push_back(message("assistant", parsed.answer));
            end(run, "completed", parsed.answer, "");
            co_return;
        }
        if (parsed.what == parsed_reply::kind::malformed) {
            auto retries = int_of(s, "retries") + 1;
            s["retries"] = retries;
            auto reason = std::string(failure_name(parsed.reason));
            if (retries > static_cast<std::int64_t>(limits.max_retries)) {
                end(run, "failed", "",
                       "The model's reply was malformed " + std::to_string(retries) +
                           " times in a row; the last time: " + reason + ": " + parsed.message);
                co_return;
            }
            // A truncated reply is not sent back whole: the model should not continue it.
            auto said = parsed.reason == failure::truncated
                            ? reply.content.substr(0, 200) + " […cut off]"
                            : reply.content;
            auto& failed = array_of(s, "failed");
            failed.push_back(message("assistant", said));
            failed.push_back(message("user", parsed.message));
            checkpoint(run, [&] {
                emit(run, "model.retry",
                     {{"reason", reason}, {"message", parsed.message}, {"attempt", retries}});
            });
            continue;
        }

        // A valid call: the failed attempts leave the history.
        s["failed"] = json::array();
        s["retries"] = 0;
        const auto& call = parsed.call;
        auto signature = call.tool + json::serialize(call.parameters);
        auto identical = string_of(s, "last_call") == signature ? int_of(s, "identical") + 1 : 1;
        s["last_call"] = signature;
        s["identical"] = identical;
        if (identical >= static_cast<std::int64_t>(limits.identical_call_stop)) {
            end(run, "failed", "",
                   "The model made the same call to `" + call.tool + "` " +
                       std::to_string(identical) + " times in a row.");
            co_return;
        }
        auto call_id = make_id("call");
        run.conversation
            .push_back(message("assistant", call_text(call.tool, call.parameters, call.terminate)));
        s["pending"] = json::object{{"call_id", call_id},
                                    {"tool", call.tool},
                                    {"parameters", call.parameters},
                                    {"terminate", call.terminate},
                                    {"asked", false}};
        checkpoint(run, [&] {
            store_.save_tool_call({call_id, run.record.id, run.record.step, call.tool,
                                   json::serialize(call.parameters), "pending", "",
                                   store::store::now_ms()});
            emit(run, "tool.call",
                 {{"call_id", call_id},
                  {"tool", call.tool},
                  {"parameters", call.parameters},
                  {"terminate", call.terminate}});
        });
    }
}

// The pending call: decides on approval, waits for the human when asked, runs it. False when
// the run ended (or the engine stops).
net::awaitable<bool> run_engine::resolve_pending(live_run& run) {
    // Re-read on every use: writes to the state may move its members.
    auto pending = [&]() -> json::object& { return run.state["pending"].as_object(); };
    auto call_id = string_of(pending(), "call_id");
    auto tool = string_of(pending(), "tool");
    auto parameters = pending()["parameters"].as_object();
    if (!bool_of(pending(), "asked")) {
        bool approved_for_run = false;
        for (const auto& name : array_of(run.state, "approved_tools"))
            approved_for_run = approved_for_run || name == json::value(tool);
        auto policy = policy_for(tool, parameters);
        if (policy == config::approval_policy::never) {
            co_return co_await deliver(
                run, tools::tool_result::failure(
                         tools::code::permission_denied, "`" + tool +
                                                  "` is switched off on this gateway. Use "
                                                  "another tool, or give your final answer."));
        }
        if (policy == config::approval_policy::always || approved_for_run)
            co_return co_await run_call(run);
        auto preview = co_await execute(run, tool, parameters, tools::mode::preview);
        // A write that would fail anyway is reported at once: no human needed to learn that.
        if (!preview.ok) co_return co_await deliver(run, preview);
        pending()["asked"] = true;
        pending()["requested_at"] = store::store::now_ms();
        run.record.status = "awaiting_approval";
        {
            std::lock_guard lock(mutex_);
            run.shared.awaiting_call = call_id;
            run.shared.awaiting_tool = tool;
            run.shared.decided.reset();
        }
        json::value diff = "";
        if (auto* d = preview.data.if_contains("diff")) diff = *d;
        std::string diff_text = diff.is_string() ? std::string(diff.as_string()) : "";
        checkpoint(run, [&] {
            save_call(call_id, "awaiting_approval", nullptr, nullptr, &diff_text);
            emit(run, "approval.required",
                 {{"call_id", call_id},
                  {"tool", tool},
                  {"parameters", parameters},
                  {"preview", diff},
                  {"summary", preview.text}});
        });
    } else {
        // Resumed after a restart: the decision may have been stored before the crash.
        std::lock_guard lock(mutex_);
        run.shared.awaiting_call = call_id;
        run.shared.awaiting_tool = tool;
        if (auto stored = store_.approval(call_id)) {
            decision d;
            d.approve = stored->decision == "approve";
            d.feedback = stored->feedback;
            d.whole_run = stored->scope == "run";
            if (!stored->parameters.empty()) {
                json::error_code ec;
                auto edited = json::parse(stored->parameters, ec);
                if (!ec && edited.is_object()) d.parameters = edited.as_object();
            }
            run.shared.decided = std::move(d);
        }
    }

    // Waiting for the human: approval time does not count against the wall-time limit.
    run.bank_time();
    auto deadline = int_of(pending(), "requested_at") +
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        config_.context.approval_timeout)
                        .count();
    std::optional<decision> decided;
    for (;;) {
        bool cancel;
        {
            std::lock_guard lock(mutex_);
            cancel = run.shared.cancel;
            decided = run.shared.decided;
        }
        if (stopping_) co_return false;
        if (cancel) {
            save_call(call_id, "cancelled");
            end(run, "cancelled", "", "");
            co_return false;
        }
        if (decided) break;
        auto left = deadline - store::store::now_ms();
        if (left <= 0) {
            save_call(call_id, "expired");
            end(run, "failed", "",
                   "No decision on `" + tool + "` (" + call_id + ") within " +
                       duration_text(config_.context.approval_timeout) +
                       "; nothing was changed.");
            co_return false;
        }
        run.wake.expires_after(std::chrono::milliseconds(left));
        [[maybe_unused]] auto [ec] = co_await run.wake.async_wait(use_ec);
    }
    run.segment_start = clock::now();
    {
        std::lock_guard lock(mutex_);
        run.shared.awaiting_call.clear();
        run.shared.decided.reset();
    }
    run.record.status = "running";
    if (decided->parameters) pending()["parameters"] = *decided->parameters;
    if (decided->approve && decided->whole_run) array_of(run.state, "approved_tools").push_back(json::string(tool));
    json::object resolved{{"call_id", call_id},
                          {"tool", tool},
                          {"decision", decided->approve ? "approve" : "reject"},
                          {"scope", decided->whole_run ? "run" : "once"}};
    if (!decided->feedback.empty()) resolved["feedback"] = decided->feedback;
    if (decided->parameters) resolved["parameters"] = *decided->parameters;
    checkpoint(run, [&] {
        save_call(call_id, decided->approve ? "approved" : "rejected",
                  decided->parameters ? &*decided->parameters : nullptr);
        emit(run, "approval.resolved", std::move(resolved));
    });
    if (decided->approve) co_return co_await run_call(run);
    std::string denial = "The user denied this operation.";
    if (!decided->feedback.empty()) denial += " Their feedback: " + decided->feedback;
    auto rejected = tools::tool_result::failure(tools::code::denied_by_user, denial);
    co_return co_await deliver(run, rejected);
}

net::awaitable<bool> run_engine::run_call(live_run& run) {
    const auto& pending = run.state["pending"].as_object();
    auto tool = string_of(pending, "tool");
    auto parameters = pending.at("parameters").as_object();
    auto result = co_await execute(run, tool, parameters, tools::mode::execute);
    co_return co_await deliver(run, result);
}

// Hands a call's outcome to the model (and the event stream), then applies the limits that
// depend on it. False when the run ended here.
net::awaitable<bool> run_engine::deliver(live_run& run, const tools::tool_result& result) {
    const auto& limits = config_.context;
    auto& s = run.state;
    auto pending = s["pending"].as_object();
    auto call_id = string_of(pending, "call_id");
    auto tool = string_of(pending, "tool");
    s.erase("pending");
    bool denied = result.error_code == tools::code::denied_by_user;
    if (auto step_id = string_of(pending, "workflow_step"); !step_id.empty())
        co_return deliver_step(run, step_id, call_id, tool, result);
    auto errors = result.ok || denied ? 0 : int_of(s, "tool_errors") + 1;
    s["tool_errors"] = errors;
    auto text = denied ? result.text : result_message(tool, result);
    auto identical = int_of(s, "identical");
    if (identical >= static_cast<std::int64_t>(limits.identical_call_warn))
        text += "\n\nNote: this is call number " + std::to_string(identical) + " to `" + tool +
                "` with the same parameters in a row; the result will not change. Change your "
                "approach or give your final answer.";
    run.conversation.push_back(message("user", text));
    checkpoint(run, [&] {
        record_result(run, call_id, tool, result);
    });
    if (bool_of(pending, "terminate") && !denied) {
        end(run, result.ok ? "completed" : "failed", result.ok ? result.text : "",
               result.ok ? "" : result_message(tool, result));
        co_return false;
    }
    if (errors >= static_cast<std::int64_t>(limits.max_tool_errors)) {
        end(run, "failed", "",
               std::to_string(errors) + " tool calls failed in a row; the last: " +
                   result_message(tool, result));
        co_return false;
    }
    co_return true;
}

// Updates a stored tool call: its status, and the human's edited parameters or the outcome
// when given.
void run_engine::save_call(const std::string& call_id, std::string_view status,
                           const json::object* edited, const tools::tool_result* result,
                           const std::string* preview) {
    auto record = store_.tool_call(call_id);
    if (!record) return;
    record->status = status;
    if (edited) record->parameters = json::serialize(*edited);
    if (preview) record->preview = *preview;
    if (result)
        record->result = json::serialize(json::object{{"ok", result->ok},
                                                      {"error_code", result->error_code},
                                                      {"text", result->text},
                                                      {"data", result->data}});
    store_.save_tool_call(*record);
}

// A call's outcome, stored and announced as tool.result; inside the caller's checkpoint.
void run_engine::record_result(live_run& run, const std::string& call_id, const std::string& tool,
                               const tools::tool_result& result) {
    bool denied = result.error_code == tools::code::denied_by_user;
    save_call(call_id, denied ? "rejected" : result.ok ? "done" : "failed", nullptr, &result);
    emit(run, "tool.result",
         {{"call_id", call_id},
          {"tool", tool},
          {"ok", result.ok},
          {"error_code", result.error_code},
          {"text", result.text},
          {"data", result.data}});
}

// A workflow tool step's outcome: recorded as the step's output, or the end of the run.
bool run_engine::deliver_step(live_run& run, const std::string& step_id,
                              const std::string& call_id, const std::string& tool,
                              const tools::tool_result& result) {
    auto& wf = run.state["workflow"].as_object();
    bool denied = result.error_code == tools::code::denied_by_user;
    if (result.ok) {
        wf["outputs"].as_object()[step_id] =
            json::object{{"output", result.text}, {"data", result.data}};
        wf["phase"] = "";
        wf["next"] = int_of(wf, "next") + 1;
    }
    checkpoint(run, [&] {
        record_result(run, call_id, tool, result);
        if (result.ok) emit(run, "step.completed", {{"step_id", step_id}, {"output", result.text}});
    });
    if (result.ok) return true;
    end(run, "failed", "",
        "Step `" + step_id + "`: " +
            (denied ? "`" + tool + "` was not approved. " + result.text
                    : result_message(tool, result)));
    return false;
}

// A workflow run: its steps in order, each recorded in state["workflow"] (next step, phase of
// the current one, outputs so far), so a restart resumes at the step it stood on.
net::awaitable<void> run_engine::run_workflow(live_run& run) {
    auto& s = run.state;
    auto wf = [&]() -> json::object& { return s["workflow"].as_object(); };
    if (!run.definition) {
        end(run, "failed", "", "The workflow `" + string_of(wf(), "id") + "` no longer exists.");
        co_return;
    }
    const auto& definition = *run.definition;
    run.segment_start = clock::now();
    for (;;) {
        if (stopping_) co_return;
        bool cancel;
        {
            std::lock_guard lock(mutex_);
            cancel = run.shared.cancel;
        }
        if (cancel) {
            end(run, "cancelled", "", "");
            co_return;
        }
        if (string_of(wf(), "phase") == "extract") {
            if (!co_await extract_parameters(run)) co_return;
            continue;
        }
        auto next = static_cast<std::size_t>(int_of(wf(), "next"));
        if (next >= definition.steps.size()) break;
        const auto& step = definition.steps[next];
        auto phase = string_of(wf(), "phase");
        workflows::step_outputs outputs;
        for (const auto& [id, value] : wf()["outputs"].as_object()) {
            const auto& o = value.as_object();
            workflows::step_output out;
            out.output = string_of(o, "output");
            if (auto* d = o.if_contains("data"); d && d->is_object()) out.data = d->as_object();
            out.skipped = bool_of(o, "skipped");
            outputs[id] = std::move(out);
        }
        const auto& params = wf()["parameters"].as_object();
        auto fail = [&](const std::string& why) { end(run, "failed", "", "Step `" + step.id + "`: " + why); };

        if (phase.empty()) {
            if (!step.when.empty()) {
                auto condition = workflows::render(step.when, params, outputs);
                if (!condition) {
                    fail(condition.error);
                    co_return;
                }
                if (!workflows::truthy(*condition.value)) {
                    wf()["outputs"].as_object()[step.id] = json::object{{"skipped", true}};
                    wf()["next"] = static_cast<std::int64_t>(next + 1);
                    checkpoint(run, [&] { emit(run, "step.skipped", {{"step_id", step.id}}); });
                    continue;
                }
            }
            json::object started{{"step_id", step.id},
                                 {"index", static_cast<std::int64_t>(next + 1)},
                                 {"of", static_cast<std::int64_t>(definition.steps.size())}};
            if (step.what == workflows::step::kind::tool) {
                auto rendered = workflows::render_value(step.parameters, params, outputs);
                if (!rendered) {
                    fail(rendered.error);
                    co_return;
                }
                if (auto problem = tools_.validate(step.tool, *rendered.value); !problem.empty()) {
                    fail("invalid parameters for `" + step.tool + "` at " + problem);
                    co_return;
                }
                auto call_id = make_id("call");
                auto parameters = rendered.value->as_object();
                s["pending"] = json::object{{"call_id", call_id},   {"tool", step.tool},
                                            {"parameters", parameters}, {"terminate", false},
                                            {"asked", false},       {"workflow_step", step.id}};
                wf()["phase"] = "tool";
                checkpoint(run, [&] {
                    emit(run, "step.started", std::move(started));
                    store_.save_tool_call({call_id, run.record.id, run.record.step, step.tool,
                                           json::serialize(parameters), "pending", "",
                                           store::store::now_ms()});
                    emit(run, "tool.call", {{"call_id", call_id},
                                            {"tool", step.tool},
                                            {"parameters", parameters},
                                            {"terminate", false}});
                });
                continue;
            }
            auto text = workflows::render(step.text, params, outputs);
            if (!text) {
                fail(text.error);
                co_return;
            }
            if (step.what == workflows::step::kind::prompt) {
                wf()["phase"] = "prompt";
                wf()["text"] = *text.value;
            } else {
                // An agent step: a fresh segment of the conversation, its own role and limit.
                auto role = tools::parse_role(step.role).value_or(tools::role::editor);
                wf()["phase"] = "agent";
                wf()["role"] = step.role;
                s["segment_start"] = static_cast<std::int64_t>(run.conversation.size());
                s["turns"] = 0;
                s["turn_limit"] = static_cast<std::int64_t>(
                    step.max_steps ? step.max_steps : config_.context.max_steps);
                s["failed"] = json::array();
                s["retries"] = 0;
                s["identical"] = 0;
                s["tool_errors"] = 0;
                s.erase("final_request");
                run.role = role;
                run.system_prompt = system_prompt(run.chat, role);
                run.conversation.push_back(message("user", *text.value));
            }
            checkpoint(run, [&] { emit(run, "step.started", std::move(started)); });
            continue;
        }
        if (phase == "tool") {
            if (!s.contains("pending")) {  // cannot happen: the call and phase are saved together
                fail("the tool call was lost");
                co_return;
            }
            if (!co_await resolve_pending(run)) co_return;
            continue;
        }
        std::string output;
        if (phase == "prompt") {
            emit(run, "model.requested", {{"attempt", 1}, {"step_id", step.id}});
            const auto* base = find_prompt(run.chat.system_prompt);
            json::array messages;
            if (base) messages.push_back(message("system", base->body));
            messages.push_back(message("user", string_of(wf(), "text")));
            auto body = json::serialize(
                json::object{{"model", run.chat.model}, {"messages", std::move(messages)}});
            auto reply = co_await ask_model(run, std::move(body));
            if (!reply) co_return;
            output = reply->content;
        } else {  // agent
            run.role = tools::parse_role(string_of(wf(), "role")).value_or(tools::role::editor);
            run.system_prompt = system_prompt(run.chat, run.role);
            co_await loop(run);
            if (!run.ended) co_return;  // stopping
            if (run.ended->status != "completed") {
                run.ended->error = "Step `" + step.id + "`: " + run.ended->error;
                co_return;
            }
            output = run.ended->output;
            run.ended.reset();
        }
        wf()["outputs"].as_object()[step.id] = json::object{{"output", output}};
        wf()["phase"] = "";
        wf()["next"] = static_cast<std::int64_t>(next + 1);
        wf().erase("text");
        checkpoint(run, [&] { emit(run, "step.completed", {{"step_id", step.id}, {"output", output}}); });
    }
    // The output of a workflow is its last step's that ran.
    std::string output;
    for (const auto& st : definition.steps) {
        const auto& o = wf()["outputs"].as_object();
        if (auto* v = o.if_contains(st.id); v && !bool_of(v->as_object(), "skipped"))
            output = string_of(v->as_object(), "output");
    }
    end(run, "completed", output, "");
}

// A workflow started from free text: one model call turns it into parameters, constrained to
// the workflow's schema when the upstream supports json_schema; defaults are applied and the
// result validated. Missing or invalid parameters end the run with what to provide.
net::awaitable<bool> run_engine::extract_parameters(live_run& run) {
    auto& s = run.state;
    const auto& definition = *run.definition;
    auto input = string_of(s["workflow"].as_object(), "input");
    std::string fields;
    if (auto* properties = definition.parameters.if_contains("properties"))
        for (const auto& [name, schema] : properties->as_object()) {
            fields += "- " + std::string(name);
            if (auto* d = schema.as_object().if_contains("description"); d && d->is_string())
                fields += ": " + std::string(d->as_string());
            fields += "\n";
        }
    json::array messages{
        message("system",
                "You turn a user's request into the parameters of the workflow \"" +
                    definition.name + "\" (" + definition.description +
                    "). Reply with one JSON object and nothing else. Its JSON Schema:\n" +
                    json::serialize(definition.parameters) + "\nFields:\n" + fields +
                    "Leave out what the request does not say; never invent a value."),
        message("user", input)};
    json::object body{{"model", run.chat.model}, {"messages", std::move(messages)}};
    if (model_.upstream_for(run.chat.model).json_schema)
        body["response_format"] = json::object{
            {"type", "json_schema"},
            {"json_schema", {{"name", "parameters"}, {"schema", definition.parameters}}}};
    emit(run, "model.requested", {{"attempt", 1}, {"purpose", "parameters"}});
    auto reply = co_await ask_model(run, json::serialize(body));
    if (!reply) co_return false;
    auto text = std::string_view(reply->content);
    auto open = text.find('{');
    auto close = text.rfind('}');
    json::error_code ec;
    json::value parsed;
    if (open != std::string_view::npos && close != std::string_view::npos && close > open)
        parsed = json::parse(text.substr(open, close - open + 1), ec);
    if (ec || !parsed.is_object()) {
        end(run, "failed", "",
            "Could not read the workflow's parameters from your request. Please give them "
            "directly:\n" + fields);
        co_return false;
    }
    auto parameters = workflows::with_defaults(definition, parsed.as_object());
    if (auto problem = definition.schema->validate(parameters); !problem.empty()) {
        end(run, "failed", "",
            "Your request does not give all the workflow needs (" + problem +
                "). Please say:\n" + fields);
        co_return false;
    }
    auto& wf = s["workflow"].as_object();
    wf["parameters"] = parameters;
    wf["phase"] = "";
    checkpoint(run, [&] { emit(run, "workflow.parameters", {{"parameters", parameters}}); });
    co_return true;
}

refusal run_engine::start_workflow(const store::chat_record& chat,
                                   std::shared_ptr<const workflows::workflow> definition,
                                   std::optional<json::object> parameters, const std::string& input,
                                   std::string& run_id) {
    auto prepare = [&](live_run& run, json::object& started) {
        run.definition = definition;
        json::object wf{{"id", definition->id},
                        {"parameters", parameters ? json::value(*parameters) : json::value(json::object())},
                        {"next", 0},
                        {"phase", parameters ? "" : "extract"},
                        {"outputs", json::object()}};
        if (!parameters) wf["input"] = input;
        run.state["workflow"] = std::move(wf);
        started["workflow"] = definition->id;
        if (parameters)
            started["parameters"] = *parameters;
        else
            started["input"] = input;
    };
    return begin_run(chat, tools::role::editor, prepare, run_id);
}

}  // namespace gateway::agent
