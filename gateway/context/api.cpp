#include "gateway/context/api.hpp"

#include "gateway/agent/enhanced_prompt.hpp"
#include "gateway/agent/excerpt.hpp"
#include "gateway/error.hpp"
#include "gateway/http/response.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <openssl/crypto.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>

namespace gateway::context {

namespace json = boost::json;
namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);
// An event stream reads the store in pages of at most this many events or bytes (events are
// bounded themselves: see context.event_excerpt_bytes).
constexpr std::size_t events_per_page = 64;
constexpr std::size_t page_bytes = 256 * 1024;

// Reads the client while its event stream runs: bytes are kept as the start of a next request
// (up to header_limit). Returns when the client hangs up (end of stream or an error); cancelled
// when the stream ends first.
net::awaitable<void> client_leaves(http::request_context& ctx) {
    co_await net::this_coro::throw_if_cancelled(false);
    auto& socket = ctx.stream.socket();
    while (ctx.buffer.size() < ctx.server.header_limit) {
        auto [ec, n] = co_await socket.async_read_some(ctx.buffer.prepare(4096), use_ec);
        if (ec) co_return;
        ctx.buffer.commit(n);
    }
    net::steady_timer never(socket.get_executor(), std::chrono::steady_clock::time_point::max());
    co_await never.async_wait(use_ec);
}

net::awaitable<void> write_json(http::request_context& ctx, unsigned status,
                                const json::value& body) {
    co_await http::write_response(ctx, status, "application/json", json::serialize(body));
}

errc errc_for(unsigned status) {
    switch (status) {
        case 401: return errc::unauthorized;
        case 404: return errc::not_found;
        case 409: return errc::conflict;
        default: return errc::bad_request;
    }
}

net::awaitable<void> write_refusal(http::request_context& ctx, unsigned status,
                                   std::string_view message) {
    co_await http::write_error(ctx, errc_for(status), message);
}

// The request body as a JSON object, or an error message.
std::optional<json::object> body_object(const http::request& req, std::string& error) {
    if (req.body().empty()) return json::object();
    json::error_code ec;
    auto value = json::parse(req.body(), ec);
    if (ec) {
        error = "The body is not valid JSON: " + ec.message();
        return std::nullopt;
    }
    if (!value.is_object()) {
        error = "The body must be a JSON object.";
        return std::nullopt;
    }
    return std::move(value.as_object());
}

// A string member, "" when absent; `error` is set when present with another type.
std::string string_member(const json::object& o, std::string_view key, std::string& error) {
    auto* v = o.if_contains(key);
    if (!v || v->is_null()) return {};
    if (!v->is_string()) {
        error = "`" + std::string(key) + "` must be a string.";
        return {};
    }
    return std::string(v->as_string());
}

std::string query_value(std::string_view target, std::string_view name) {
    auto q = target.find('?');
    if (q == std::string_view::npos) return {};
    auto query = target.substr(q + 1);
    while (!query.empty()) {
        auto amp = query.find('&');
        auto pair = query.substr(0, amp);
        auto eq = pair.find('=');
        if (pair.substr(0, eq) == name && eq != std::string_view::npos)
            return std::string(pair.substr(eq + 1));
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
    return {};
}

json::value json_or_string(const std::string& text) {
    if (text.empty()) return nullptr;
    json::error_code ec;
    auto value = json::parse(text, ec);
    return ec ? json::value(json::string(text)) : value;
}

json::object chat_json(const store::chat_record& c) {
    return {{"id", c.id},
            {"object", "chat"},
            {"created_at", c.created_at},
            {"system_prompt", c.system_prompt},
            {"model", c.model},
            {"workspace", c.workspace.empty() ? json::value(nullptr) : json::value(c.workspace)},
            {"role", c.role}};
}

json::object tool_call_json(const store::tool_call_record& t) {
    return {{"id", t.id},
            {"step", t.step},
            {"tool", t.tool},
            {"parameters", json_or_string(t.parameters)},
            {"status", t.status},
            {"preview", t.preview.empty() ? json::value(nullptr) : json::value(t.preview)},
            {"result", json_or_string(t.result)},
            {"created_at", t.created_at}};
}

// `item` with its long strings cut to `limit` bytes; when any was, `truncated` lists them and
// `full` names the resource that has them whole.
json::value excerpt_of(json::object item, std::size_t limit, const std::string& full) {
    json::value v(std::move(item));
    auto cut = agent::cut_long_strings(v, limit);
    if (!cut.empty()) {
        json::array pointers;
        for (auto& p : cut) pointers.emplace_back(p);
        v.as_object()["truncated"] = std::move(pointers);
        v.as_object()["full"] = full;
    }
    return v;
}

// A run as the API shows it. Its tool calls are excerpts (each names its own URL for the whole
// call); `whole` keeps the run's own input and output whole, else they are cut too (in the chat
// view, where the messages carry them).
json::value run_json(store::store& store, const store::run_record& r, std::size_t limit,
                     bool whole) {
    json::array calls;
    json::value pending = nullptr;
    auto run_url = "/context/runs/" + r.id;
    for (const auto& t : store.tool_calls(r.id)) {
        auto call = excerpt_of(tool_call_json(t), limit, run_url + "/calls/" + t.id);
        if (t.status == "awaiting_approval") pending = call;
        calls.push_back(std::move(call));
    }
    json::object run{{"id", r.id},
                     {"object", "run"},
                     {"chat_id", r.chat_id},
                     {"status", r.status},
                     {"step", r.step},
                     {"max_steps", r.max_steps},
                     {"output", r.output.empty() ? json::value(nullptr) : json::value(r.output)},
                     {"error", r.error.empty() ? json::value(nullptr) : json::value(r.error)},
                     {"created_at", r.created_at},
                     {"updated_at", r.updated_at}};
    if (whole) {
        auto input = store.run_input(r.id);
        run["input"] = input ? json::value(*input) : json::value(nullptr);
    }
    auto shown = whole ? json::value(std::move(run)) : excerpt_of(std::move(run), limit, run_url);
    shown.as_object()["pending_approval"] = std::move(pending);
    shown.as_object()["tool_calls"] = std::move(calls);
    return shown;
}

json::object message_json(const store::message_record& m) {
    return {{"id", m.id},
            {"role", m.role},
            {"content", m.content},
            {"run_id", m.run_id},
            {"created_at", m.created_at}};
}

// `?limit=` (1 to 500, default 50) and `?before=` (a message id) of a message page; the error
// when they are not numbers in range.
std::string page_of(std::string_view target, std::size_t& limit, std::int64_t& before) {
    limit = 50;
    before = 0;
    auto number = [](const std::string& text, std::int64_t& out) {
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        return ec == std::errc{} && end == text.data() + text.size();
    };
    if (auto text = query_value(target, "limit"); !text.empty()) {
        std::int64_t n = 0;
        if (!number(text, n) || n < 1 || n > 500) return "`limit` must be a number from 1 to 500.";
        limit = static_cast<std::size_t>(n);
    }
    if (auto text = query_value(target, "before"); !text.empty())
        if (!number(text, before) || before < 1) return "`before` must be a message id.";
    return {};
}

json::object workflow_json(const workflows::workflow& w) {
    return {{"id", w.id},
            {"object", "workflow"},
            {"name", w.name},
            {"description", w.description},
            {"category", w.category},
            {"parameters", w.parameters}};
}

std::string_view kind_name(workflows::step::kind k) {
    switch (k) {
        case workflows::step::kind::tool: return "tool";
        case workflows::step::kind::prompt: return "prompt";
        case workflows::step::kind::agent: return "agent";
    }
    return "";
}

json::object prompt_json(const prompts::prompt& p) {
    return {{"id", p.id}, {"object", "system_prompt"}, {"title", p.title},
            {"description", p.description}};
}

std::string sse_frame(const store::event_record& e) {
    std::string frame = "id: " + std::to_string(e.seq) + "\nevent: " + e.type + "\ndata: ";
    frame += e.data;  // serialized JSON: one line
    frame += "\n\n";
    return frame;
}

}  // namespace

// Wakes a handler, on its own executor, after each event of one run; unsubscribes when it goes
// out of scope, whichever way the handler ends.
class run_watch {
public:
    run_watch(agent::run_engine& engine, std::string run_id, net::any_io_executor executor)
        : engine_(engine),
          run_id_(std::move(run_id)),
          executor_(std::move(executor)),
          shared_(std::make_shared<shared>(executor_)) {
        handle_ = engine_.subscribe(run_id_, [s = shared_, ex = executor_] {
            net::post(ex, [s] {
                s->pending = true;
                s->timer.cancel();
            });
        });
    }
    ~run_watch() { engine_.unsubscribe(run_id_, handle_); }
    run_watch(const run_watch&) = delete;
    run_watch& operator=(const run_watch&) = delete;

    // Forgets the events seen so far: call before reading the store.
    void rearm() { shared_->pending = false; }

    // Waits for an event (one may have come since rearm()), `deadline`, or interrupt(); true when
    // an event came.
    net::awaitable<bool> wait(std::chrono::steady_clock::time_point deadline) {
        if (shared_->pending) co_return true;
        shared_->timer.expires_at(deadline);
        [[maybe_unused]] auto [ec] = co_await shared_->timer.async_wait(use_ec);
        co_return shared_->pending;
    }

    // Ends a wait early; callable from any thread.
    std::function<void()> interrupter() const {
        return [s = shared_, ex = executor_] { net::post(ex, [s] { s->timer.cancel(); }); };
    }

private:
    struct shared {
        explicit shared(const net::any_io_executor& ex) : timer(ex) {}
        net::steady_timer timer;
        bool pending = false;
    };
    agent::run_engine& engine_;
    std::string run_id_;
    net::any_io_executor executor_;
    std::shared_ptr<shared> shared_;
    std::uint64_t handle_ = 0;
};

api::api(const config::gateway_config& config, store::store& store, agent::run_engine& engine,
         const tools::registry& tools, const tools::workspace_roots& roots,
         const workflows::registry& workflows)
    : config_(config),
      store_(store),
      engine_(engine),
      tools_(tools),
      roots_(roots),
      workflows_(workflows) {
    for (const auto& key : config.context.api_keys) key_hashes_.push_back(config::hashed_key(key));
}

bool api::authorized(const bhttp::request_header<>& head) const {
    if (key_hashes_.empty()) return true;
    std::string_view header = head[bhttp::field::authorization];
    if (header.size() < 7 || !boost::beast::iequals(header.substr(0, 7), "bearer ")) return false;
    auto token = header.substr(7);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    if (token.empty()) return false;
    auto presented = config::key_digest(token);
    bool match = false;
    for (const auto& stored : key_hashes_)
        match |= stored.size() == presented.size() &&
                 CRYPTO_memcmp(stored.data(), presented.data(), stored.size()) == 0;
    return match;
}

http::handler api::route(method m) {
    return [this, m](http::request_context& ctx) { return (this->*m)(ctx); };
}

http::guard api::guard(std::string_view prefix) const {
    return {prefix, [this](const bhttp::request_header<>& head) { return authorized(head); },
            errc::unauthorized,
            "A valid gateway API key is required: send `Authorization: Bearer <key>`."};
}

net::awaitable<void> api::list_prompts(http::request_context& ctx) {
    json::array data;
    for (const auto& p : engine_.prompts()) data.push_back(prompt_json(p));
    json::object reply{{"object", "list"}, {"data", std::move(data)}};
    co_await write_json(ctx, 200, reply);
}

net::awaitable<void> api::get_prompt(http::request_context& ctx) {
    const auto* p = engine_.find_prompt(ctx.path_params[0]);
    if (!p) {
        co_await write_refusal(ctx, 404, "No system prompt `" + ctx.path_params[0] + "`.");
        co_return;
    }
    auto body = prompt_json(*p);
    body["content"] = p->body;
    co_await write_json(ctx, 200, body);
}

net::awaitable<void> api::get_enhanced_prompt(http::request_context& ctx) {
    const auto* p = engine_.find_prompt(ctx.path_params[0]);
    if (!p) {
        co_await write_refusal(ctx, 404, "No system prompt `" + ctx.path_params[0] + "`.");
        co_return;
    }
    auto role_name = query_value(ctx.req.target(), "role");
    if (role_name.empty()) role_name = "editor";
    auto role = tools::parse_role(role_name);
    if (!role) {
        co_await write_refusal(ctx, 400, "`role` must be `reader` or `editor`.");
        co_return;
    }
    auto body = prompt_json(*p);
    body["role"] = role_name;
    body["content"] = agent::enhanced_prompt(*p, tools_, *role);
    co_await write_json(ctx, 200, body);
}

net::awaitable<void> api::create_chat(http::request_context& ctx) {
    std::string error;
    auto body = body_object(ctx.req, error);
    store::chat_record chat;
    if (body) {
        chat.system_prompt = string_member(*body, "system_prompt", error);
        chat.model = string_member(*body, "model", error);
        chat.workspace = string_member(*body, "workspace", error);
        chat.role = string_member(*body, "role", error);
    }
    if (error.empty() && chat.model.empty())
        error = "`model` is required: the model the agent loop asks.";
    if (chat.system_prompt.empty()) chat.system_prompt = config_.context.default_prompt;
    if (error.empty() && !engine_.find_prompt(chat.system_prompt)) {
        std::string ids;
        for (const auto& p : engine_.prompts()) ids += (ids.empty() ? "" : ", ") + p.id;
        error = "No system prompt `" + chat.system_prompt + "`; available: " + ids + ".";
    }
    if (chat.role.empty()) chat.role = "editor";
    if (error.empty() && !tools::parse_role(chat.role))
        error = "`role` must be `reader` or `editor`.";
    if (error.empty() && body && body->contains("workspace") && !body->at("workspace").is_null()) {
        // Opened here only to be checked; every run opens it again.
        auto opened = roots_.open(chat.workspace);
        error = opened.error;
        chat.workspace = opened.path;
    }
    if (!error.empty()) {
        co_await write_refusal(ctx, 400, error);
        co_return;
    }
    chat.id = agent::make_id("chat");
    chat.created_at = store::store::now_ms();
    store_.insert_chat(chat);
    co_await write_json(ctx, 201, chat_json(chat));
}

net::awaitable<void> api::list_chats(http::request_context& ctx) {
    json::array data;
    for (const auto& c : store_.chats()) data.push_back(chat_json(c));
    json::object reply{{"object", "list"}, {"data", std::move(data)}};
    co_await write_json(ctx, 200, reply);
}

// The chat with one page of its messages (the newest, or those before `?before=`) and the runs
// those messages belong to, as excerpts.
net::awaitable<void> api::get_chat(http::request_context& ctx) {
    auto chat = store_.chat(ctx.path_params[0]);
    if (!chat) {
        co_await write_refusal(ctx, 404, "No chat " + ctx.path_params[0] + ".");
        co_return;
    }
    std::size_t limit = 0;
    std::int64_t before = 0;
    if (auto error = page_of(ctx.req.target(), limit, before); !error.empty()) {
        co_await write_refusal(ctx, 400, error);
        co_return;
    }
    bool older = false;
    auto page = store_.message_page(chat->id, before, limit, older);
    auto body = chat_json(*chat);
    json::array messages;
    std::vector<std::string> run_ids;
    for (const auto& m : page) {
        messages.push_back(message_json(m));
        if (!m.run_id.empty() && std::find(run_ids.begin(), run_ids.end(), m.run_id) == run_ids.end())
            run_ids.push_back(m.run_id);
    }
    json::array runs;
    for (const auto& r : store_.runs_of_chat(chat->id))
        if (std::find(run_ids.begin(), run_ids.end(), r.id) != run_ids.end())
            runs.push_back(run_json(store_, r, config_.context.event_excerpt_bytes, false));
    body["messages"] = std::move(messages);
    body["has_more"] = older;
    body["next_before"] = older ? json::value(page.front().id) : json::value(nullptr);
    body["runs"] = std::move(runs);
    co_await write_json(ctx, 200, body);
}

net::awaitable<void> api::list_messages(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    if (!store_.chat(id)) {
        co_await write_refusal(ctx, 404, "No chat " + id + ".");
        co_return;
    }
    std::size_t limit = 0;
    std::int64_t before = 0;
    if (auto error = page_of(ctx.req.target(), limit, before); !error.empty()) {
        co_await write_refusal(ctx, 400, error);
        co_return;
    }
    bool older = false;
    auto page = store_.message_page(id, before, limit, older);
    json::array data;
    for (const auto& m : page) data.push_back(message_json(m));
    json::object reply{{"object", "list"},
                       {"data", std::move(data)},
                       {"has_more", older},
                       {"next_before", older ? json::value(page.front().id) : json::value(nullptr)}};
    co_await write_json(ctx, 200, reply);
}

net::awaitable<void> api::delete_chat(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    for (const auto& r : store_.runs_of_chat(id))
        if (!agent::is_final_status(r.status)) {
            co_await write_refusal(ctx, 409,
                                   "Chat " + id + " has a run in progress (" + r.id +
                                       "); cancel it first.");
            co_return;
        }
    if (!store_.delete_chat(id)) {
        co_await write_refusal(ctx, 404, "No chat " + id + ".");
        co_return;
    }
    json::object reply{{"id", id}, {"object", "chat"}, {"deleted", true}};
    co_await write_json(ctx, 200, reply);
}

net::awaitable<void> api::post_message(http::request_context& ctx) {
    auto chat = store_.chat(ctx.path_params[0]);
    if (!chat) {
        co_await write_refusal(ctx, 404, "No chat " + ctx.path_params[0] + ".");
        co_return;
    }
    std::string error;
    auto body = body_object(ctx.req, error);
    std::string content;
    if (body) content = string_member(*body, "content", error);
    if (error.empty() && content.empty()) error = "`content` is required: the user's message.";
    if (!error.empty()) {
        co_await write_refusal(ctx, 400, error);
        co_return;
    }
    if (content.size() > config_.context.max_message_bytes) {
        co_await http::write_error(
            ctx, errc::message_too_large,
            "The message is " + std::to_string(content.size()) + " bytes, over the gateway's "
            "limit of " + std::to_string(config_.context.max_message_bytes) +
            " (context.max_message_bytes); put large texts in the workspace or the document.");
        co_return;
    }
    std::string run_id;
    if (auto refused = engine_.start_run(*chat, content, run_id)) {
        co_await write_refusal(ctx, refused.status, refused.message);
        co_return;
    }
    if (ctx.req[bhttp::field::accept].find("text/event-stream") != std::string_view::npos) {
        co_await stream_events(ctx, run_id, 0);
        co_return;
    }
    json::object reply{{"run_id", run_id}, {"chat_id", chat->id},
                                     {"status", "running"}};
    co_await write_json(ctx, 202, reply);
}

net::awaitable<void> api::put_document(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    if (!store_.chat(id)) {
        co_await write_refusal(ctx, 404, "No chat " + id + ".");
        co_return;
    }
    std::string error;
    auto body = body_object(ctx.req, error);
    std::string name, content;
    if (body) {
        name = string_member(*body, "name", error);
        content = string_member(*body, "content", error);
        if (error.empty() && !body->contains("content")) error = "`content` is required.";
    }
    if (!error.empty()) {
        co_await write_refusal(ctx, 400, error);
        co_return;
    }
    if (name.empty()) name = "untitled";
    auto version = store_.put_document(id, name, content);
    json::object reply{{"chat_id", id}, {"name", name}, {"version", version},
                                     {"size", content.size()}};
    co_await write_json(ctx, 200, reply);
}

net::awaitable<void> api::get_document(http::request_context& ctx) {
    auto document = store_.document(ctx.path_params[0]);
    if (!document) {
        co_await write_refusal(ctx, 404, "Chat " + ctx.path_params[0] + " has no document.");
        co_return;
    }
    json::object reply{{"chat_id", document->chat_id},
                                     {"name", document->name},
                                     {"content", document->content},
                                     {"version", document->version},
                                     {"updated_at", document->updated_at}};
    co_await write_json(ctx, 200, reply);
}

net::awaitable<void> api::get_run(http::request_context& ctx) {
    auto run = store_.run(ctx.path_params[0]);
    if (!run) {
        co_await write_refusal(ctx, 404, "No run " + ctx.path_params[0] + ".");
        co_return;
    }
    co_await write_json(ctx, 200, run_json(store_, *run, config_.context.event_excerpt_bytes, true));
}

net::awaitable<void> api::get_call(http::request_context& ctx) {
    const auto& run_id = ctx.path_params[0];
    auto call = store_.tool_call(ctx.path_params[1]);
    if (!call || call->run_id != run_id) {
        co_await write_refusal(ctx, 404, "Run " + run_id + " has no call " + ctx.path_params[1] + ".");
        co_return;
    }
    auto body = tool_call_json(*call);
    body["object"] = "tool_call";
    body["run_id"] = run_id;
    co_await write_json(ctx, 200, body);
}

net::awaitable<void> api::run_events(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    if (!store_.run(id)) {
        co_await write_refusal(ctx, 404, "No run " + id + ".");
        co_return;
    }
    std::string last = std::string(ctx.req["last-event-id"]);
    if (last.empty()) last = query_value(ctx.req.target(), "last_event_id");
    std::int64_t after = 0;
    if (!last.empty()) {
        auto [end, ec] = std::from_chars(last.data(), last.data() + last.size(), after);
        if (ec != std::errc{} || end != last.data() + last.size() || after < 0) {
            co_await write_refusal(ctx, 400, "`Last-Event-ID` must be an event id (a number).");
            co_return;
        }
    }
    co_await stream_events(ctx, id, after);
}

// Writes the run's events after `after` as SSE, then each new one as it is stored, until the run
// has ended and every event went out. A `: keep-alive` comment goes out while nothing happens,
// which is also how a client that went away is noticed.
net::awaitable<void> api::stream_events(http::request_context& ctx, const std::string& run_id,
                                        std::int64_t after) {
    // At most max_watchers_per_run streams per run: each costs a subscription and a page.
    bool admitted = false;
    {
        std::lock_guard lock(streams_mutex_);
        auto& count = watchers_[run_id];
        admitted = count < config_.context.max_watchers_per_run;
        if (admitted) ++count;
    }
    if (!admitted) {
        co_await http::write_error(
            ctx, errc::too_many_streams,
            "Run " + run_id + " already has " + std::to_string(config_.context.max_watchers_per_run) +
                " open event streams (context.max_watchers_per_run); close one first.");
        co_return;
    }
    run_watch watch(engine_, run_id, ctx.stream.get_executor());
    // Registered so that a draining worker can end the stream; removed however the handler ends.
    struct registration {
        api& self;
        const void* key;
        const std::string& run;
        registration(api& a, const run_watch& w, const std::string& r) : self(a), key(&w), run(r) {
            std::lock_guard lock(self.streams_mutex_);
            self.streams_[key] = w.interrupter();
        }
        ~registration() {
            std::lock_guard lock(self.streams_mutex_);
            self.streams_.erase(key);
            if (--self.watchers_[run] == 0) self.watchers_.erase(run);
        }
    } registered(*this, watch, run_id);
    bool chunked = ctx.req.version() >= 11;
    if (!chunked || ctx.draining) ctx.keep_alive = false;
    std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        "x-request-id: " + ctx.request_id + "\r\n";
    head += chunked ? "Transfer-Encoding: chunked\r\n" : "";
    head += ctx.keep_alive ? "\r\n" : "Connection: close\r\n\r\n";
    ctx.response_started = true;
    ctx.status = 200;
    ctx.deadline.arm(ctx.server.write_timeout);
    auto [head_ec, head_n] = co_await net::async_write(ctx.stream, net::buffer(head), use_ec);
    if (head_ec) {
        ctx.keep_alive = false;
        co_return;
    }
    // A client that hangs up gives its place back at once, not at the next heartbeat.
    auto winner = co_await (pump_events(ctx, watch, run_id, after, chunked) || client_leaves(ctx));
    bool alive = winner.index() == 0 && std::get<0>(winner);
    if (!alive) {
        ctx.keep_alive = false;
        co_return;
    }
    if (chunked) {
        ctx.deadline.arm(ctx.server.write_timeout);
        auto [ec, n] = co_await net::async_write(ctx.stream, bhttp::make_chunk_last(), use_ec);
        if (ec) ctx.keep_alive = false;
    }
}

// Writes the run's events after `after`, page by page from the store, then each new one as it
// is stored, until the run has ended and every event went out (true), or a write fails (false).
// A `: keep-alive` comment goes out while nothing happens. Frames go out as one chunk per page
// (raw on HTTP/1.0, where the close ends the body). A client that stops reading fails the write
// after write_timeout and is dropped: nothing beyond one page is ever held for it.
net::awaitable<bool> api::pump_events(http::request_context& ctx, run_watch& watch,
                                      const std::string& run_id, std::int64_t after,
                                      bool chunked) {
    co_await net::this_coro::throw_if_cancelled(false);
    // Cancelled when the client hung up: every wait and write then ends early, and the loop stops.
    auto cancelled = [&]() -> net::awaitable<bool> {
        auto state = co_await net::this_coro::cancellation_state;
        co_return state.cancelled() != net::cancellation_type::none;
    };
    auto heartbeat = ctx.server.sse_heartbeat.count() > 0 ? ctx.server.sse_heartbeat
                                                          : config::duration(15s);
    auto send = [&](std::string bytes) -> net::awaitable<bool> {
        ctx.deadline.arm(ctx.server.write_timeout);
        ctx.bytes_sent += bytes.size();
        boost::system::error_code ec;
        if (chunked) {
            auto [e, n] = co_await net::async_write(ctx.stream,
                                                    bhttp::make_chunk(net::buffer(bytes)), use_ec);
            ec = e;
        } else {
            auto [e, n] = co_await net::async_write(ctx.stream, net::buffer(bytes), use_ec);
            ec = e;
        }
        co_return !ec;
    };
    while (true) {
        if (ctx.draining || closing_) co_return true;  // resumed elsewhere with Last-Event-ID
        watch.rearm();
        // The status first: once it is final, every event of the run is stored.
        auto status = store_.run_status(run_id);
        bool ended = !status || agent::is_final_status(*status);
        std::string frames;
        {
            auto page = store_.events_after(run_id, after, events_per_page, page_bytes);
            for (const auto& e : page) {
                frames += sse_frame(e);
                after = e.seq;
            }
        }
        if (!frames.empty()) {
            auto sent = co_await send(std::move(frames));
            if (!sent) co_return false;
            continue;  // there may be more pages
        }
        if (ended) co_return true;
        bool event = co_await watch.wait(std::chrono::steady_clock::now() + heartbeat);
        auto hung_up = co_await cancelled();
        if (hung_up) co_return false;
        if (!event && !ctx.draining && !closing_) {
            auto sent = co_await send(": keep-alive\n\n");
            if (!sent) co_return false;
        }
    }
}

// Grouped by category (alphabetical), each group in file order: what a frontend renders as menus
// and forms.
net::awaitable<void> api::list_workflows(http::request_context& ctx) {
    auto all = workflows_.all();
    std::map<std::string, json::array> groups;
    for (const auto& w : *all) groups[w.category].push_back(workflow_json(w));
    json::array categories;
    for (auto& [name, items] : groups)
        categories.push_back(json::object{{"category", name}, {"workflows", std::move(items)}});
    json::object reply{{"object", "list"}, {"categories", std::move(categories)}};
    co_await write_json(ctx, 200, reply);
}

net::awaitable<void> api::workflow_categories(http::request_context& ctx) {
    auto all = workflows_.all();
    std::map<std::string, int> counts;
    for (const auto& w : *all) ++counts[w.category];
    json::array data;
    for (const auto& [name, count] : counts)
        data.push_back(json::object{{"category", name}, {"workflows", count}});
    json::object reply{{"object", "list"}, {"data", std::move(data)}};
    co_await write_json(ctx, 200, reply);
}

net::awaitable<void> api::get_workflow(http::request_context& ctx) {
    auto all = workflows_.all();
    const auto* w = workflows::registry::find(all, ctx.path_params[0]);
    if (!w) {
        co_await write_refusal(ctx, 404, "No workflow `" + ctx.path_params[0] + "`.");
        co_return;
    }
    auto body = workflow_json(*w);
    json::array steps;
    for (const auto& s : w->steps) {
        json::object step{{"id", s.id}, {"kind", kind_name(s.what)}};
        if (s.what == workflows::step::kind::tool) step["tool"] = s.tool;
        if (!s.when.empty()) step["when"] = s.when;
        steps.push_back(std::move(step));
    }
    body["steps"] = std::move(steps);
    co_await write_json(ctx, 200, body);
}

// Starts a workflow in a chat (which gives it its model, workspace and document), with
// `parameters` checked against the workflow's schema (defaults applied; a 400 names the failing
// path) or with free-text `input` the run turns into parameters.
net::awaitable<void> api::start_workflow(http::request_context& ctx) {
    auto all = workflows_.all();
    const auto* found = workflows::registry::find(all, ctx.path_params[0]);
    if (!found) {
        co_await write_refusal(ctx, 404, "No workflow `" + ctx.path_params[0] + "`.");
        co_return;
    }
    std::string error;
    auto body = body_object(ctx.req, error);
    std::string chat_id, input;
    std::optional<json::object> parameters;
    if (body) {
        chat_id = string_member(*body, "chat_id", error);
        input = string_member(*body, "input", error);
        if (auto* p = body->if_contains("parameters"); p && !p->is_null()) {
            if (p->is_object())
                parameters = p->as_object();
            else
                error = "`parameters` must be an object.";
        }
    }
    if (error.empty() && chat_id.empty())
        error = "`chat_id` is required: the chat whose model, workspace and document the "
                "workflow uses.";
    if (error.empty() && parameters.has_value() == !input.empty())
        error = "Give either `parameters` or `input` (free text), not both and not neither.";
    if (error.empty() && input.size() > config_.context.max_message_bytes) {
        co_await http::write_error(ctx, errc::message_too_large,
                                   "`input` is " + std::to_string(input.size()) +
                                       " bytes, over context.max_message_bytes (" +
                                       std::to_string(config_.context.max_message_bytes) + ").");
        co_return;
    }
    if (error.empty() && parameters) {
        parameters = workflows::with_defaults(*found, std::move(*parameters));
        if (auto problem = found->schema->validate(*parameters); !problem.empty())
            error = "Invalid parameters for workflow `" + found->id + "` at " + problem;
    }
    if (!error.empty()) {
        co_await write_refusal(ctx, 400, error);
        co_return;
    }
    auto chat = store_.chat(chat_id);
    if (!chat) {
        co_await write_refusal(ctx, 404, "No chat " + chat_id + ".");
        co_return;
    }
    std::string run_id;
    auto definition = std::shared_ptr<const workflows::workflow>(all, found);
    if (auto refused = engine_.start_workflow(*chat, definition, parameters, input, run_id)) {
        co_await write_refusal(ctx, refused.status, refused.message);
        co_return;
    }
    if (ctx.req[bhttp::field::accept].find("text/event-stream") != std::string_view::npos) {
        co_await stream_events(ctx, run_id, 0);
        co_return;
    }
    json::object reply{{"run_id", run_id}, {"chat_id", chat->id}, {"workflow", found->id},
                       {"status", "running"}};
    co_await write_json(ctx, 202, reply);
}

void api::end_streams() {
    std::lock_guard lock(streams_mutex_);
    closing_ = true;
    for (auto& [key, wake] : streams_) wake();
}

net::awaitable<void> api::cancel_run(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    run_watch watch(engine_, id, ctx.stream.get_executor());
    auto refused = engine_.cancel(id);
    // Answer once the run has stopped (a model call is cut at once), or after 10 s with the
    // state it has then.
    auto until = std::chrono::steady_clock::now() + 10s;
    while (!refused && std::chrono::steady_clock::now() < until) {
        watch.rearm();
        auto status = store_.run_status(id);
        if (!status || agent::is_final_status(*status)) break;
        co_await watch.wait(until);
    }
    if (refused) {
        co_await write_refusal(ctx, refused.status, refused.message);
        co_return;
    }
    auto run = store_.run(id);
    co_await write_json(ctx, 200, run_json(store_, *run, config_.context.event_excerpt_bytes, true));
}

net::awaitable<void> api::decide(http::request_context& ctx) {
    const auto& run_id = ctx.path_params[0];
    const auto& call_id = ctx.path_params[1];
    std::string error;
    auto body = body_object(ctx.req, error);
    agent::decision d;
    if (body) {
        auto verdict = string_member(*body, "decision", error);
        if (error.empty() && verdict != "approve" && verdict != "reject")
            error = "`decision` must be `approve` or `reject`.";
        d.approve = verdict == "approve";
        d.feedback = string_member(*body, "feedback", error);
        auto scope = string_member(*body, "scope", error);
        if (error.empty() && !scope.empty() && scope != "once" && scope != "run")
            error = "`scope` must be `once` or `run`.";
        d.whole_run = scope == "run";
        if (auto* p = body->if_contains("parameters"); p && !p->is_null()) {
            if (!p->is_object())
                error = "`parameters` must be an object.";
            else if (!d.approve)
                error = "`parameters` can only come with `approve`.";
            else
                d.parameters = p->as_object();
        }
    }
    if (!error.empty()) {
        co_await write_refusal(ctx, 400, error);
        co_return;
    }
    bool approve = d.approve;
    if (auto refused = engine_.decide(run_id, call_id, std::move(d))) {
        co_await write_refusal(ctx, refused.status, refused.message);
        co_return;
    }
    json::object reply{{"run_id", run_id}, {"call_id", call_id},
                                     {"decision", approve ? "approve" : "reject"}};
    co_await write_json(ctx, 200, reply);
}

}  // namespace gateway::context
