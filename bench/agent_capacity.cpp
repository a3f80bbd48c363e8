// How many agent runs one gateway carries (bench/agent_capacity.sh). The real gateway binary runs
// as a child process in front of a scripted model (the test fake, in this process, turn mode: a
// few ms per streamed reply). RUNS slots each run, for SECONDS, one agent run after another in a
// new chat with its own folder: read_file, search_files, append_file (approved by the client as
// soon as asked), then a final answer, with one event stream watching each run. Meanwhile a probe
// sends /v1/chat/completions through the gateway and straight to the model, alternately.
//
// Printed, as one row: runs and steps per second; the gateway's time per step (from the model's
// answer's last byte to the next request of that conversation, at p50 and p99; the approval
// round trip through the client is one of the steps); events and write transactions committed
// per second; the store's write queue (mean and peak); the gateway's peak RSS; /v1 added latency
// before the runs start and while they run. Then the physical limit: the same number of
// transactions, each with the same number of events of the same size, written straight to the
// same kind of database from one thread (SQLite with the store's pragmas; PostgreSQL: the
// DATABASE_URL given).
//
//   agent_capacity GATEWAY_BINARY RUNS [SECONDS=20] [MODEL_MS=3] [DATABASE_URL]
#include "gateway/store/pg_database.hpp"
#include "gateway/store/sqlite_database.hpp"
#include "tests/support/fake_upstream.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace net = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
namespace fs = std::filesystem;
using tcp = net::ip::tcp;
using clock_type = std::chrono::steady_clock;
using net::use_awaitable;
using namespace std::chrono_literals;

extern char** environ;

namespace {

double ms(clock_type::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

// One keep-alive HTTP/1.1 connection, used by one coroutine at a time.
class client {
public:
    client(net::any_io_executor ex, std::uint16_t port) : socket_(ex), port_(port) {}

    net::awaitable<http::response<http::string_body>> call(http::verb verb, std::string target,
                                                           std::string body,
                                                           std::string fake_delay_ms = {}) {
        if (!socket_.is_open()) co_await connect();
        http::request<http::string_body> req{verb, target, 11};
        req.set(http::field::host, "127.0.0.1");
        if (!body.empty()) req.set(http::field::content_type, "application/json");
        if (!fake_delay_ms.empty()) req.set("x-fake-delay-ms", fake_delay_ms);
        req.body() = std::move(body);
        req.prepare_payload();
        co_await http::async_write(socket_, req, use_awaitable);
        http::response<http::string_body> res;
        co_await http::async_read(socket_, buffer_, res, use_awaitable);
        co_return res;
    }

    // GET `target` as an event stream; `on_event(type, data)` for each frame until it returns
    // false or the stream ends.
    template <class OnEvent>
    net::awaitable<void> events(std::string target, OnEvent on_event) {
        co_await connect();
        http::request<http::empty_body> req{http::verb::get, target, 11};
        req.set(http::field::host, "127.0.0.1");
        req.set(http::field::accept, "text/event-stream");
        co_await http::async_write(socket_, req, use_awaitable);
        http::response_parser<http::buffer_body> parser;
        parser.body_limit(boost::none);
        co_await http::async_read_header(socket_, buffer_, parser, use_awaitable);
        std::string pending;
        char chunk[16384];
        while (!parser.is_done()) {
            parser.get().body().data = chunk;
            parser.get().body().size = sizeof chunk;
            boost::system::error_code ec;
            co_await http::async_read_some(socket_, buffer_, parser,
                                           net::redirect_error(use_awaitable, ec));
            if (ec && ec != http::error::need_buffer) break;
            pending.append(chunk, sizeof chunk - parser.get().body().size);
            for (std::size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
                std::string frame = pending.substr(0, end);
                pending.erase(0, end + 2);
                std::string type, data;
                std::istringstream lines(frame);
                for (std::string line; std::getline(lines, line);) {
                    if (line.rfind("event: ", 0) == 0) type = line.substr(7);
                    if (line.rfind("data: ", 0) == 0) data += line.substr(6);
                }
                if (!type.empty() && !on_event(type, data)) {
                    socket_.close();
                    co_return;
                }
            }
        }
        socket_.close();
    }

private:
    net::awaitable<void> connect() {
        if (socket_.is_open()) socket_.close();
        buffer_.clear();
        co_await socket_.async_connect({net::ip::make_address("127.0.0.1"), port_}, use_awaitable);
        socket_.set_option(tcp::no_delay(true));
    }

    tcp::socket socket_;
    std::uint16_t port_;
    boost::beast::flat_buffer buffer_;
};

struct totals {
    std::size_t runs_failed = 0, events = 0, event_bytes = 0;
    std::size_t runs_in_window = 0;  // completed after the warm-up
    std::vector<double> v1_idle_gateway, v1_idle_direct, v1_load_gateway, v1_load_direct;
    std::vector<double> write_queue;
    std::vector<double> approval_round_trip;  // approval.required seen -> the decision's 200
    std::map<std::string, std::vector<double>> gaps;  // "a -> b": between consecutive events
    double rss_peak_mb = 0;
    std::string first_failure;
};

struct scrape {
    double transactions = 0, events = 0, write_queue = 0, cpu = 0;
};

scrape parse_metrics(const std::string& text) {
    scrape s;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        auto value = [&] { return std::stod(line.substr(line.rfind(' ') + 1)); };
        if (line.rfind("contextgate_store_transactions_total ", 0) == 0) s.transactions = value();
        if (line.rfind("contextgate_store_events_total ", 0) == 0) s.events = value();
        if (line.rfind("contextgate_store_queue{thread=\"store-write\"} ", 0) == 0)
            s.write_queue = value();
    }
    return s;
}

// utime + stime of `pid`, in seconds.
double cpu_seconds(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i)
        if (i >= 14) ticks += std::stod(field);
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double rss_mb(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024;
    return 0;
}

// The physical limit: `transactions` transactions of `per_transaction` events of `bytes` each,
// written from this thread; the transactions per second.
double raw_rate(gateway::store::sql_connection& db, std::size_t transactions,
                std::size_t per_transaction, std::size_t bytes) {
    db.execute("DROP TABLE IF EXISTS bench_raw_events");
    db.execute(
        "CREATE TABLE bench_raw_events (run_id TEXT NOT NULL, seq BIGINT NOT NULL, "
        "type TEXT NOT NULL, data TEXT NOT NULL, created_at BIGINT NOT NULL, "
        "PRIMARY KEY (run_id, seq))");
    std::string data(bytes, 'x');
    auto t0 = clock_type::now();
    std::int64_t seq = 0;
    for (std::size_t t = 0; t < transactions; ++t) {
        std::string run = "run-" + std::to_string(t % 1000);
        db.transaction([&] {
            for (std::size_t e = 0; e < per_transaction; ++e)
                db.query(
                    "INSERT INTO bench_raw_events (run_id, seq, type, data, created_at) "
                    "VALUES ($1, $2, $3, $4, $5)",
                    {run, ++seq, "tool.result", data, std::int64_t{1}});
        });
    }
    double seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
    db.execute("DROP TABLE bench_raw_events");
    return static_cast<double>(transactions) / seconds;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: agent_capacity GATEWAY_BINARY RUNS [SECONDS=20] [MODEL_MS=3] "
                     "[DATABASE_URL]\n";
        return 2;
    }
    std::string binary = argv[1];
    int slots = std::atoi(argv[2]);
    int seconds = argc > 3 ? std::atoi(argv[3]) : 20;
    long model_ms = argc > 4 ? std::atol(argv[4]) : 3;
    std::string database_url = argc > 5 ? argv[5] : "";
    std::signal(SIGPIPE, SIG_IGN);

    // The model: turn mode, each reply streamed after MODEL_MS.
    gateway::testing::fake_options fo;
    fo.keep_requests = false;
    gateway::testing::fake_upstream fake(fo);
    auto call = [&](std::string tool, std::string params) {
        gateway::testing::scripted_reply r;
        r.content =
            R"({"tool": ")" + tool + R"(", "parameters": )" + params + R"(, "terminate": false})";
        r.delay_ms = model_ms;
        return r;
    };
    gateway::testing::scripted_reply answer;
    answer.content = "Reviewed notes.md and marked it.";
    answer.delay_ms = model_ms;
    fake.script_by_turn({call("read_file", R"({"path": "notes.md"})"),
                         call("search_files", R"({"pattern": "TODO"})"),
                         call("append_file", R"({"path": "notes.md", "content": "- reviewed\n"})"),
                         answer});

    // One folder per slot, so runs never touch one another's files.
    auto scratch = fs::temp_directory_path() / ("contextgate-capacity-" + std::to_string(getpid()));
    fs::remove_all(scratch);
    for (int s = 0; s < slots; ++s) {
        auto dir = scratch / "workspaces" / ("s" + std::to_string(s));
        fs::create_directories(dir / "src");
        std::ofstream(dir / "notes.md") << "# Notes\n\nTODO: review the parser.\n";
        std::ofstream(dir / "src" / "parser.py")
            << "def parse(text):\n    # TODO: handle errors\n    return text.split()\n";
    }
    std::ofstream(scratch / "gateway.yaml")
        << "server:\n  listen: 127.0.0.1:0\n"
        << "upstreams:\n  - name: model\n    base_url: " << fake.base_url()
        << "\n    max_idle_connections: 4096\n"
        << "logging:\n  access_log: false\n"
        << "context:\n  workspaces: [" << (scratch / "workspaces").string() << "]\n"
        << "  max_steps: 10\n"
        << (database_url.empty() ? "  data_dir: " + (scratch / "data").string() + "\n"
                                 : "  store:\n    type: postgres\n    dsn: " + database_url + "\n");

    // The gateway, its stderr in a file, its port read from there.
    auto log = (scratch / "gateway.err").string();
    std::string config_path = (scratch / "gateway.yaml").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args{binary, "serve", "--config", config_path};
    std::vector<char*> argp;
    for (auto& a : args) argp.push_back(a.data());
    argp.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, binary.c_str(), &actions, nullptr, argp.data(), environ) != 0) {
        std::cerr << "cannot start " << binary << "\n";
        return 1;
    }
    std::uint16_t port = 0;
    for (int i = 0; i < 300 && !port; ++i) {
        std::this_thread::sleep_for(50ms);
        std::ifstream in(log);
        std::string text((std::istreambuf_iterator<char>(in)), {});
        if (auto at = text.find("listening on http://127.0.0.1:"); at != std::string::npos)
            port = static_cast<std::uint16_t>(std::atoi(text.c_str() + at + 30));
    }
    auto stop_gateway = [&] {
        kill(pid, SIGTERM);
        int status = 0;
        waitpid(pid, &status, 0);
    };
    if (!port) {
        std::cerr << "the gateway did not start:\n" << std::ifstream(log).rdbuf();
        stop_gateway();
        return 1;
    }

    net::io_context io;
    totals t;
    auto idle_until = clock_type::now() + 3s;
    auto start = idle_until;
    auto window_start = start + std::chrono::seconds(std::max(2, seconds / 5));
    auto end = start + std::chrono::seconds(seconds);
    scrape at_window_start, at_end;

    // /v1 probe: the same canned completion through the gateway and straight to the model.
    auto probe = [&]() -> net::awaitable<void> {
        auto ex = co_await net::this_coro::executor;
        client gw(ex, port), direct(ex, fake.port());
        std::string body =
            R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]})";
        net::steady_timer timer(ex);
        while (clock_type::now() < end) {
            for (int which = 0; which < 2; ++which) {
                auto t0 = clock_type::now();
                auto& c = which ? direct : gw;
                std::string target = "/v1/chat/completions", no_delay = "0";
                auto res = co_await c.call(http::verb::post, target, body, no_delay);
                double took = ms(clock_type::now() - t0);
                if (res.result_int() != 200) continue;
                bool now_loading = clock_type::now() >= window_start;
                auto& into = which ? (now_loading ? t.v1_load_direct : t.v1_idle_direct)
                                   : (now_loading ? t.v1_load_gateway : t.v1_idle_gateway);
                if (now_loading || clock_type::now() < idle_until) into.push_back(took);
            }
            timer.expires_after(20ms);
            co_await timer.async_wait(use_awaitable);
        }
    };

    // Samples RSS and the store's write queue; scrapes the counters at the window's edges.
    auto sampler = [&]() -> net::awaitable<void> {
        auto ex = co_await net::this_coro::executor;
        client metrics(ex, port);
        net::steady_timer timer(ex);
        bool started = false;
        while (clock_type::now() < end) {
            std::string target = "/metrics";
            auto res = co_await metrics.call(http::verb::get, target, {});
            auto s = parse_metrics(res.body());
            s.cpu = cpu_seconds(pid);
            if (clock_type::now() >= window_start) {
                if (!started) at_window_start = s, started = true;
                t.write_queue.push_back(s.write_queue);
                t.rss_peak_mb = std::max(t.rss_peak_mb, rss_mb(pid));
            }
            at_end = s;
            timer.expires_after(250ms);
            co_await timer.async_wait(use_awaitable);
        }
    };

    // One slot: runs, one after another, until the end.
    auto slot = [&](int s) -> net::awaitable<void> {
        auto ex = co_await net::this_coro::executor;
        net::steady_timer until(ex);
        until.expires_at(start + std::chrono::milliseconds(s % 1000));  // spread the first second
        co_await until.async_wait(use_awaitable);
        client control(ex, port);
        std::string folder = (scratch / "workspaces" / ("s" + std::to_string(s))).string();
        for (int n = 0; clock_type::now() < end; ++n) {
            // Named, not temporaries of the co_await (GCC 12 miscompiles those).
            std::string chats = "/context/chats";
            json::object chat_body{{"model", "bench-model"}, {"workspace", folder}};
            auto chat = co_await control.call(http::verb::post, chats, json::serialize(chat_body));
            if (chat.result_int() != 201) {
                if (t.first_failure.empty()) t.first_failure = "chat: " + chat.body();
                ++t.runs_failed;
                co_return;
            }
            auto chat_id = std::string(json::parse(chat.body()).at("id").as_string());
            auto message = "slot " + std::to_string(s) + " run " + std::to_string(n) +
                           ": review notes.md and mark it reviewed.";
            json::object message_body{{"content", message}};
            auto started =
                co_await control.call(http::verb::post, "/context/chats/" + chat_id + "/messages",
                                      json::serialize(message_body));
            if (started.result_int() != 202) {
                if (t.first_failure.empty()) t.first_failure = "message: " + started.body();
                ++t.runs_failed;
                co_return;
            }
            auto run_id = std::string(json::parse(started.body()).at("run_id").as_string());
            std::string ending, last;
            auto last_at = clock_type::now();
            client watcher(ex, port);
            auto approve = [&, run_id](std::string call_id) -> net::awaitable<void> {
                // At once, on a connection of its own, as a client's approve button would.
                auto asked = clock_type::now();
                client decision(ex, port);
                std::string target = "/context/runs/" + run_id + "/approvals/" + call_id;
                std::string body = R"({"decision":"approve"})";
                auto decided = co_await decision.call(http::verb::post, target, body);
                if (asked >= window_start)
                    t.approval_round_trip.push_back(ms(clock_type::now() - asked));
                if (decided.result_int() != 200 && t.first_failure.empty())
                    t.first_failure = "approval: " + decided.body();
            };
            co_await watcher.events(
                "/context/runs/" + run_id + "/events",
                [&](const std::string& type, const std::string& data) {
                    auto now = clock_type::now();
                    if (std::getenv("AGENT_CAPACITY_TURNS") && now >= window_start && !last.empty())
                        t.gaps[last + " -> " + type].push_back(ms(now - last_at));
                    last = type;
                    last_at = now;
                    ++t.events;
                    t.event_bytes += data.size();
                    if (type == "approval.required")
                        net::co_spawn(
                            ex, approve(std::string(json::parse(data).at("call_id").as_string())),
                            [&](std::exception_ptr e) {
                                if (!e) return;
                                try {
                                    std::rethrow_exception(e);
                                } catch (const std::exception& x) {
                                    if (t.first_failure.empty())
                                        t.first_failure = std::string("approval: ") + x.what();
                                }
                            });
                    if (type.rfind("run.", 0) == 0 && type != "run.started") {
                        ending = type;
                        return false;
                    }
                    return true;
                });
            if (ending == "run.completed") {
                t.runs_in_window += clock_type::now() >= window_start;
            } else {
                ++t.runs_failed;
                if (t.first_failure.empty()) t.first_failure = "run ended with " + ending;
            }
        }
    };

    // A run that never ends must not hang the benchmark: a minute after the end, it stops.
    net::steady_timer give_up(io);
    give_up.expires_at(end + 60s);
    give_up.async_wait([&](boost::system::error_code ec) {
        if (ec) return;
        if (t.first_failure.empty()) t.first_failure = "runs still going a minute after the end";
        io.stop();
    });
    net::co_spawn(io, probe(), net::detached);
    net::co_spawn(io, sampler(), net::detached);
    int live = slots;
    for (int s = 0; s < slots; ++s)
        net::co_spawn(io, slot(s), [&](std::exception_ptr e) {
            if (--live == 0) give_up.cancel();
            if (!e) return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                if (t.first_failure.empty()) t.first_failure = std::string("slot: ") + x.what();
                ++t.runs_failed;
            }
        });
    io.run();
    stop_gateway();

    // The gateway's time per step, from the model's side, for requests in the window.
    std::map<std::string, std::map<std::size_t, gateway::testing::turn_timing>> by_run;
    for (auto& timing : fake.take_turn_timings()) by_run[timing.conversation][timing.turn] = timing;
    std::vector<double> overhead;
    std::map<std::size_t, std::vector<double>> overhead_by_turn;
    std::size_t in_window = 0;  // model round trips: the tool steps and the final answers
    for (auto& [conversation, turns] : by_run)
        for (auto& [turn, timing] : turns) {
            in_window += timing.arrived >= window_start && timing.arrived < end;
            auto previous = turns.find(turn - 1);
            if (turn == 0 || previous == turns.end() || timing.arrived < window_start) continue;
            if (previous->second.answered.time_since_epoch().count() == 0) continue;
            overhead.push_back(ms(timing.arrived - previous->second.answered));
            overhead_by_turn[turn].push_back(overhead.back());
        }

    double window = std::chrono::duration<double>(end - window_start).count();
    double steps = static_cast<double>(in_window) / window;
    double events = (at_end.events - at_window_start.events) / window;
    double transactions = at_end.transactions - at_window_start.transactions;
    double queue_mean = t.write_queue.empty()
                            ? 0
                            : std::accumulate(t.write_queue.begin(), t.write_queue.end(), 0.0) /
                                  static_cast<double>(t.write_queue.size());
    double queue_peak =
        t.write_queue.empty() ? 0 : *std::max_element(t.write_queue.begin(), t.write_queue.end());
    auto added = [](const std::vector<double>& gw, const std::vector<double>& direct, double p) {
        return percentile(gw, p) - percentile(direct, p);
    };

    // The physical limit, for the same transactions.
    std::size_t tx = static_cast<std::size_t>(transactions);
    std::size_t per_tx =
        tx ? static_cast<std::size_t>((at_end.events - at_window_start.events) / transactions + 0.5)
           : 1;
    std::size_t bytes = t.events ? t.event_bytes / t.events : 200;
    double raw = 0;
    if (tx) {
        if (database_url.empty()) {
            auto db = gateway::store::sqlite_database::open(
                (scratch / "raw.db").string(), gateway::store::sqlite_database::access::read_write);
            if (db.value) raw = raw_rate(**db.value, tx, std::max<std::size_t>(per_tx, 1), bytes);
        } else {
            auto db = gateway::store::pg_database::open(database_url);
            if (db.value) raw = raw_rate(**db.value, tx, std::max<std::size_t>(per_tx, 1), bytes);
        }
    }
    fs::remove_all(scratch);

    double cpu_ms_per_step =
        in_window ? 1000 * (at_end.cpu - at_window_start.cpu) / static_cast<double>(in_window) : 0;
    // The columns bench/agent_capacity.sh heads.
    std::printf(
        "%-8s %5d | %6.1f %7.1f %5.2f | %6.2f %7.2f | %7.0f %6.0f %5.1f | %7.0f %4.0f%% | "
        "%5.1f %4.0f | %5.0f | %5.2f %5.2f | %5.2f %5.2f | %zu\n",
        database_url.empty() ? "sqlite" : "postgres", slots,
        static_cast<double>(t.runs_in_window) / window, steps, cpu_ms_per_step,
        percentile(overhead, 0.5), percentile(overhead, 0.99), events, transactions / window,
        transactions ? (at_end.events - at_window_start.events) / transactions : 0.0, raw,
        raw > 0 ? 100 * transactions / window / raw : 0.0, queue_mean, queue_peak, t.rss_peak_mb,
        added(t.v1_idle_gateway, t.v1_idle_direct, 0.5),
        added(t.v1_idle_gateway, t.v1_idle_direct, 0.99),
        added(t.v1_load_gateway, t.v1_load_direct, 0.5),
        added(t.v1_load_gateway, t.v1_load_direct, 0.99), t.runs_failed);
    if (std::getenv("AGENT_CAPACITY_TURNS")) {
        std::fprintf(stderr, "  approval round trip: p50 %.2f ms, p99 %.2f ms\n",
                     percentile(t.approval_round_trip, 0.5),
                     percentile(t.approval_round_trip, 0.99));
        for (auto& [gap, v] : t.gaps)
            std::fprintf(stderr, "  %-40s p50 %.2f ms, p99 %.2f ms (%zu)\n", gap.c_str(),
                         percentile(v, 0.5), percentile(v, 0.99), v.size());
        for (auto& [turn, v] : overhead_by_turn)
            std::fprintf(stderr, "  before turn %zu: p50 %.2f ms, p99 %.2f ms\n", turn,
                         percentile(v, 0.5), percentile(v, 0.99));
    }
    if (!t.first_failure.empty())
        std::fprintf(stderr, "first failure: %s\n", t.first_failure.c_str());
    return 0;
}
