#include "gateway/mcp/stdio_transport.hpp"

#include "gateway/observability/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gateway::mcp {

namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);
constexpr std::size_t stderr_tail_bytes = 2048;

// The environment for the child: ours, with `extra` set over it.
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
    std::vector<std::string> out;
    for (char** e = environ; e && *e; ++e) {
        std::string_view entry(*e);
        auto name = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const auto& [key, value] : extra) replaced = replaced || key == name;
        if (!replaced) out.emplace_back(entry);
    }
    for (const auto& [key, value] : extra) out.push_back(key + "=" + value);
    return out;
}

std::string exit_text(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
    return "ended";
}

}  // namespace

struct stdio_transport::state {
    explicit state(net::any_io_executor executor)
        : in(executor), out(executor), err(executor), timer(executor) {}
    // The last word: a child still running when nothing refers to it any more (the gateway
    // stops) is killed and reaped, never left behind.
    ~state() {
        if (pid <= 0 || reaped) return;
        ::kill(-pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }

    std::string label, command;
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;
    std::size_t max_line = 0;
    net::posix::stream_descriptor in, out, err;  // the child's stdin, stdout, stderr
    net::steady_timer timer;                     // reaping
    transport_events events;
    pid_t pid = 0;
    bool reaped = false;
    int status = 0;
    bool closed = false;
    bool writing = false;
    std::deque<std::string> queue;
    std::string stderr_tail;

    // Waits up to `grace` for the process to end on its own, then kills its group. Once.
    net::awaitable<void> reap(std::chrono::milliseconds grace) {
        if (pid <= 0 || reaped) co_return;
        auto until = std::chrono::steady_clock::now() + grace;
        for (;;) {
            auto done = ::waitpid(pid, &status, WNOHANG);
            if (done == pid || (done < 0 && errno != EINTR)) break;
            if (std::chrono::steady_clock::now() >= until) {
                ::kill(-pid, SIGKILL);
                while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
                }
                break;
            }
            timer.expires_after(20ms);
            co_await timer.async_wait(use_ec);
        }
        reaped = true;
    }

    // The connection ended by itself (EOF, a bad line): tell the client once, with the status.
    net::awaitable<void> ended(std::string why) {
        if (closed) co_return;
        closed = true;
        in.close();
        out.close();
        co_await reap(2000ms);
        auto text = "the server " + (why.empty() ? exit_text(status) : why);
        if (!stderr_tail.empty()) text += "; its last output: " + stderr_tail;
        auto events_now = std::move(events);
        events = {};
        if (events_now.closed) events_now.closed(std::move(text));
    }
};

namespace {

net::awaitable<void> read_messages(std::shared_ptr<stdio_transport::state> s) {
    std::array<char, 16 * 1024> chunk;
    std::string line;
    for (;;) {
        auto [ec, n] = co_await s->out.async_read_some(net::buffer(chunk), use_ec);
        if (s->closed) co_return;
        std::string_view got(chunk.data(), n);
        while (!got.empty()) {
            auto newline = got.find('\n');
            line.append(got.substr(0, newline));
            if (line.size() > s->max_line) {
                co_await s->ended("sent a message longer than " + std::to_string(s->max_line) +
                                  " bytes");
                co_return;
            }
            if (newline == std::string_view::npos) break;
            got.remove_prefix(newline + 1);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.find_first_not_of(" \t") == std::string::npos) {
                line.clear();
                continue;
            }
            json::error_code parse_ec;
            json::parse_options options;
            options.max_depth = 64;
            auto value = json::parse(line, parse_ec, {}, options);
            if (parse_ec || !value.is_object())
                observability::log_warn("mcp " + s->label +
                                        ": not a JSON-RPC message: " + line.substr(0, 200));
            else if (s->events.message)
                s->events.message(std::move(value.as_object()));
            line.clear();
            if (s->closed) co_return;
        }
        if (ec) {
            co_await s->ended("");
            co_return;
        }
    }
}

net::awaitable<void> read_stderr(std::shared_ptr<stdio_transport::state> s) {
    std::array<char, 4096> chunk;
    for (;;) {
        auto [ec, n] = co_await s->err.async_read_some(net::buffer(chunk), use_ec);
        if (n > 0) {
            std::string_view got(chunk.data(), n);
            observability::log_debug("mcp " + s->label + " stderr: " + std::string(got));
            s->stderr_tail.append(got);
            if (s->stderr_tail.size() > stderr_tail_bytes)
                s->stderr_tail.erase(0, s->stderr_tail.size() - stderr_tail_bytes);
        }
        if (ec) {
            while (!s->stderr_tail.empty() && (s->stderr_tail.back() == '\n'))
                s->stderr_tail.pop_back();
            co_return;
        }
    }
}

net::awaitable<void> reap_later(std::shared_ptr<stdio_transport::state> s) {
    co_await s->reap(2000ms);
}

net::awaitable<void> write_queue(std::shared_ptr<stdio_transport::state> s) {
    while (!s->queue.empty() && !s->closed) {
        auto line = std::move(s->queue.front());
        s->queue.pop_front();
        auto [ec, n] = co_await net::async_write(s->in, net::buffer(line), use_ec);
        (void)n;
        if (ec) break;  // the process is going; the reader reports it
    }
    s->writing = false;
}

}  // namespace

stdio_transport::stdio_transport(io::task_group& tasks, std::string label, std::string command,
                                 std::vector<std::string> args,
                                 std::vector<std::pair<std::string, std::string>> env,
                                 std::size_t max_line_bytes)
    : state_(std::make_shared<state>(tasks.executor())), tasks_(tasks) {
    state_->label = std::move(label);
    state_->command = std::move(command);
    state_->args = std::move(args);
    state_->env = std::move(env);
    state_->max_line = max_line_bytes;
}

stdio_transport::~stdio_transport() {
    close();
}

net::awaitable<std::string> stdio_transport::open(transport_events events) {
    auto& s = *state_;
    int in_pipe[2], out_pipe[2], err_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0) co_return std::string("pipe: ") + std::strerror(errno);
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
        ::close(in_pipe[0]);
        ::close(in_pipe[1]);
        co_return std::string("pipe: ") + std::strerror(errno);
    }
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
        for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) ::close(fd);
        co_return std::string("pipe: ") + std::strerror(errno);
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    // Its own process group: a launcher (npx, a shell) and what it starts are stopped together.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setpgroup(&attributes, 0);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
    std::vector<std::string> argv_text{s.command};
    argv_text.insert(argv_text.end(), s.args.begin(), s.args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    auto env_text = child_environment(s.env);
    std::vector<char*> envp;
    for (auto& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
    int spawned =
        ::posix_spawnp(&s.pid, s.command.c_str(), &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (spawned != 0) {
        for (int fd : {in_pipe[1], out_pipe[0], err_pipe[0]}) ::close(fd);
        s.pid = 0;
        co_return "cannot start `" + s.command + "`: " + std::strerror(spawned);
    }
    s.in.assign(in_pipe[1]);
    s.out.assign(out_pipe[0]);
    s.err.assign(err_pipe[0]);
    s.events = std::move(events);
    tasks_.spawn("MCP server " + s.label + ": reading", read_messages(state_));
    tasks_.spawn("MCP server " + s.label + ": its stderr", read_stderr(state_));
    co_return std::string();
}

void stdio_transport::send(json::object message) {
    auto& s = *state_;
    if (s.closed || !s.in.is_open()) return;
    auto line = json::serialize(message);
    line += '\n';
    s.queue.push_back(std::move(line));
    if (s.writing) return;
    s.writing = true;
    tasks_.spawn("MCP server " + s.label + ": writing", write_queue(state_));
}

int stdio_transport::pid() const {
    return state_->pid;
}

void stdio_transport::close() {
    auto& s = *state_;
    s.events = {};
    if (s.closed) return;
    s.closed = true;
    boost::system::error_code ignored;
    s.in.close(ignored);  // EOF on its stdin: the polite way to ask a stdio server to stop
    s.out.close(ignored);
    s.err.close(ignored);
    if (s.pid <= 0 || s.reaped) return;
    ::kill(-s.pid, SIGTERM);
    tasks_.spawn("MCP server " + s.label + ": reaping", reap_later(state_));
}

}  // namespace gateway::mcp
