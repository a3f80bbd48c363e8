#include "gateway/upstream/aws_credentials.hpp"

#include "gateway/io/task_group.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/upstream/aws_fetch.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

namespace gateway::upstream::aws {

namespace net = boost::asio;

environment process_environment() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (!value) return std::nullopt;
        return std::string(value);
    };
}

namespace {

using found = config::parsed<source>;
using profile = std::map<std::string, std::string>;  // key -> value
using clock = std::chrono::system_clock;

// A variable's value, "" when it is unset or empty (the SDKs treat both alike).
std::string variable(const environment& env, const std::string& name) {
    auto value = env(name);
    return value ? *value : std::string();
}

std::string_view trim(std::string_view text) {
    auto first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return {};
    auto last = text.find_last_not_of(" \t\r");
    return text.substr(first, last - first + 1);
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// One shared file's profiles by name. In the config file a profile is `[profile NAME]` (or
// `[default]`) and other sections (`[sso-session …]`, `[services …]`) are no profiles; in the
// credentials file a section's name is the profile's. A missing file has none.
struct profile_file {
    std::string path;
    std::map<std::string, profile> profiles;
};

config::parsed<profile_file> read_profiles(const std::string& path, bool is_config_file) {
    using result = config::parsed<profile_file>;
    profile_file out{path, {}};
    std::ifstream in(path);
    if (!in) return {std::move(out), {}};
    std::string line;
    profile* current = nullptr;
    bool in_section = false;
    bool nested = false;  // after `key =` with no value: the indented lines below are its own
    for (int number = 1; std::getline(in, line); ++number) {
        auto where = [&] { return path + ":" + std::to_string(number) + ": "; };
        bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
        auto text = trim(line);
        if (text.empty() || text[0] == '#' || text[0] == ';') continue;
        if (indented && nested) continue;
        nested = false;
        if (text.front() == '[') {
            if (text.back() != ']') return result::fail(where() + "a section without its `]`");
            auto name = std::string(trim(text.substr(1, text.size() - 2)));
            in_section = true;
            current = nullptr;
            if (!is_config_file)
                current = &out.profiles[name];
            else if (name == "default")
                current = &out.profiles["default"];
            else if (name.starts_with("profile ") || name.starts_with("profile\t"))
                current = &out.profiles[std::string(trim(std::string_view(name).substr(8)))];
            continue;
        }
        auto equals = text.find('=');
        if (equals == std::string_view::npos)
            return result::fail(where() + "not `key = value` nor `[section]`");
        if (!in_section) return result::fail(where() + "a key before any `[section]`");
        auto key = lower(trim(text.substr(0, equals)));
        auto value = std::string(trim(text.substr(equals + 1)));
        nested = value.empty();
        if (current) (*current)[key] = std::move(value);
    }
    return {std::move(out), {}};
}

std::string home_file(const environment& env, const std::string& variable_name,
                      const std::string& under_home) {
    auto path = variable(env, variable_name);
    if (!path.empty()) {
        if (path.starts_with("~/") && !variable(env, "HOME").empty())
            path = variable(env, "HOME") + path.substr(1);
        return path;
    }
    auto home = variable(env, "HOME");
    return home.empty() ? std::string() : home + "/.aws/" + under_home;
}

std::string sts_url_for(const settings& s, const environment& env) {
    auto url = variable(env, "AWS_ENDPOINT_URL_STS");
    if (!url.empty()) return url;
    auto region = variable(env, "AWS_REGION");
    if (region.empty()) region = variable(env, "AWS_DEFAULT_REGION");
    if (region.empty()) region = s.region;
    if (region.empty()) region = "us-east-1";
    return "https://sts." + region +
           (region.starts_with("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com");
}

std::string session_name_for(const environment& env, const std::string& configured) {
    if (!configured.empty()) return configured;
    auto named = variable(env, "AWS_ROLE_SESSION_NAME");
    if (!named.empty()) return named;
    auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(clock::now().time_since_epoch());
    return "contextgate-" + std::to_string(seconds.count());
}

source keys_from(std::string origin, std::string id, std::string secret, std::string token) {
    source out;
    out.from = source::kind::keys;
    out.origin = std::move(origin);
    out.keys = credentials{std::move(id), std::move(secret), std::move(token), std::nullopt};
    return out;
}

// The shared files' say: a source, nothing (the chain goes on), or an error.
config::parsed<std::optional<source>> from_shared_files(const settings& s, const environment& env) {
    using result = config::parsed<std::optional<source>>;
    auto named = variable(env, "AWS_PROFILE");
    std::string name = named.empty() ? "default" : named;
    std::string credentials_path = home_file(env, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
    std::string config_path = home_file(env, "AWS_CONFIG_FILE", "config");
    profile merged;
    std::string origin;
    bool exists = false;
    // The credentials file first: its keys win over the config file's.
    for (auto [path, is_config] : {std::pair{config_path, true}, {credentials_path, false}}) {
        if (path.empty()) continue;
        auto file = read_profiles(path, is_config);
        if (!file) return result::fail(file.error);
        auto it = file.value->profiles.find(name);
        if (it == file.value->profiles.end()) continue;
        exists = true;
        for (auto& [key, value] : it->second) merged[key] = value;
        if (it->second.contains("aws_access_key_id") || origin.empty())
            origin = "profile `" + name + "` of " + path;
    }
    if (!exists) {
        if (named.empty()) return {std::optional<source>(), {}};
        return result::fail("AWS_PROFILE names profile `" + name + "`, which neither " +
                            (credentials_path.empty() ? "credentials file" : credentials_path) +
                            " nor " + (config_path.empty() ? "config file" : config_path) + " has");
    }
    auto value = [&](const char* key) {
        auto it = merged.find(key);
        return it == merged.end() ? std::string() : it->second;
    };
    if (!value("aws_access_key_id").empty() || !value("aws_secret_access_key").empty()) {
        if (value("aws_access_key_id").empty() || value("aws_secret_access_key").empty())
            return result::fail(origin +
                                " has one of aws_access_key_id and aws_secret_access_key "
                                "without the other");
        return {keys_from(origin, value("aws_access_key_id"), value("aws_secret_access_key"),
                          value("aws_session_token")),
                {}};
    }
    if (!value("role_arn").empty() && !value("web_identity_token_file").empty()) {
        source out;
        out.from = source::kind::web_identity;
        out.origin = "web identity of " + origin;
        out.token_file = value("web_identity_token_file");
        out.role_arn = value("role_arn");
        out.session_name = session_name_for(env, value("role_session_name"));
        out.sts_url = sts_url_for(s, env);
        return {std::optional<source>(std::move(out)), {}};
    }
    // Ways of the SDKs the gateway does not take: a failure now beats credentials from
    // somewhere else further down the chain.
    for (const char* unsupported :
         {"role_arn", "credential_process", "sso_session", "sso_start_url"})
        if (!value(unsupported).empty())
            return result::fail(origin + " uses `" + unsupported +
                                "`, which the gateway does not support: give the profile keys, "
                                "or use the environment, web identity or the instance's role");
    return {std::optional<source>(), {}};
}

bool fresh(const credentials& keys, clock::time_point now, config::duration early) {
    return !keys.expiration || *keys.expiration - early > now;
}

bool usable(const std::shared_ptr<const credentials>& keys, clock::time_point now) {
    return keys && (!keys->expiration || *keys->expiration > now);
}

}  // namespace

found find_source(const settings& s, const environment& env) {
    const std::string block = "upstream `" + s.upstream + "`: aws: ";
    bool has_keys = !s.access_key_id.empty() || !s.secret_access_key.empty();
    if (has_keys && !s.bearer_token.empty())
        return found::fail(block + "bearer_token and keys both set: one or the other");
    if (has_keys) {
        if (s.access_key_id.empty() || s.secret_access_key.empty())
            return found::fail(block + "access_key_id and secret_access_key go together");
        return {keys_from("the upstream's aws block", s.access_key_id, s.secret_access_key,
                          s.session_token),
                {}};
    }
    if (!s.session_token.empty())
        return found::fail(block + "session_token without access_key_id and secret_access_key");
    auto bearer =
        s.bearer_token.empty() ? variable(env, "AWS_BEARER_TOKEN_BEDROCK") : s.bearer_token;
    if (!bearer.empty()) {
        source out;
        out.from = source::kind::bearer_token;
        out.origin = s.bearer_token.empty() ? "the environment (AWS_BEARER_TOKEN_BEDROCK)"
                                            : "the upstream's aws block (bearer_token)";
        out.bearer_token = std::move(bearer);
        return {std::move(out), {}};
    }

    auto id = variable(env, "AWS_ACCESS_KEY_ID");
    auto secret = variable(env, "AWS_SECRET_ACCESS_KEY");
    if (!id.empty() || !secret.empty()) {
        if (id.empty() || secret.empty())
            return found::fail(
                std::string(id.empty() ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID") +
                " is set without " + (id.empty() ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY"));
        return {keys_from("the environment (AWS_ACCESS_KEY_ID)", id, secret,
                          variable(env, "AWS_SESSION_TOKEN")),
                {}};
    }

    auto shared = from_shared_files(s, env);
    if (!shared) return found::fail(shared.error);
    if (*shared.value) return {std::move(**shared.value), {}};

    auto token_file = variable(env, "AWS_WEB_IDENTITY_TOKEN_FILE");
    auto role = variable(env, "AWS_ROLE_ARN");
    if (!token_file.empty() && !role.empty()) {
        source out;
        out.from = source::kind::web_identity;
        out.origin = "web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN " + role + ")";
        out.token_file = token_file;
        out.role_arn = role;
        out.session_name = session_name_for(env, "");
        out.sts_url = sts_url_for(s, env);
        return {std::move(out), {}};
    }

    if (lower(variable(env, "AWS_EC2_METADATA_DISABLED")) == "true")
        return found::fail(
            "no AWS credentials for upstream `" + s.upstream +
            "`: no aws block, nothing in the environment or the shared files, no web identity, "
            "and AWS_EC2_METADATA_DISABLED turns the instance metadata service off");
    source out;
    out.from = source::kind::instance_metadata;
    out.metadata_url = variable(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
    if (out.metadata_url.empty()) out.metadata_url = "http://169.254.169.254";
    while (out.metadata_url.ends_with('/')) out.metadata_url.pop_back();
    out.origin = "the instance metadata service (" + out.metadata_url + ")";
    return {std::move(out), {}};
}

// What the callers share (under `mutex`) and what the provider's thread alone touches.
struct credentials_provider::state {
    std::mutex mutex;
    std::shared_ptr<const credentials> keys;
    std::string error;  // the last fetch's failure; "" after a success
    std::chrono::steady_clock::time_point failed_at;
    bool started = false;
    bool stopped = false;

    net::io_context io;
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
    // The fetch, owned here: stop() cancels it and the thread runs until it has ended.
    io::task_group tasks{io.get_executor(), [](const std::string& task, std::exception_ptr e) {
                             observability::log_stray(e, task);
                         }};
    // While a fetch runs: its waiters wait on it, and the fetch cancels it when it ends.
    std::shared_ptr<net::steady_timer> arrived;
    connection* in_use = nullptr;
    std::thread thread;

    // Starts the thread at the first call. While the returned hold lives the thread runs on;
    // none once stopped.
    using hold = net::executor_work_guard<net::io_context::executor_type>;
    std::optional<hold> start() {
        std::lock_guard lock(mutex);
        if (stopped) return std::nullopt;
        if (!started) {
            started = true;
            work.emplace(io.get_executor());
            thread = std::thread([this] {
                io::name_this_thread("aws-credentials");
                io.run();
            });
        }
        return net::make_work_guard(io);
    }

    // The answer from what is known, under `mutex`: fresh keys; or, within the pause after a
    // failure, the keys that still work or the failure; or nothing (a fetch is needed).
    std::optional<current_credentials> known(const settings& s) const {
        auto now = clock::now();
        if (stopped) return current_credentials{nullptr, "the gateway is stopping"};
        if (keys && fresh(*keys, now, s.refresh_early)) return current_credentials{keys, {}};
        bool pausing =
            !error.empty() && std::chrono::steady_clock::now() - failed_at < s.retry_after_failure;
        if (!pausing) return std::nullopt;
        if (usable(keys, now)) return current_credentials{keys, {}};
        return current_credentials{nullptr, error};
    }

    // On the provider's thread: the answer once the fetch under way, or a new one, has ended.
    net::awaitable<current_credentials> join_fetch(const source& from, const settings& s);
    // One fetch of temporary credentials; its outcome goes into `keys` or `error`.
    net::awaitable<void> fetch(const source& from, const settings& s);
};

credentials_provider::credentials_provider(source from, settings s)
    : source_(std::move(from)), settings_(std::move(s)), state_(std::make_unique<state>()) {
    if (source_.from == source::kind::keys)
        state_->keys = std::make_shared<const credentials>(source_.keys);
}

credentials_provider::~credentials_provider() {
    stop();
}

void credentials_provider::stop() {
    auto& st = *state_;
    {
        std::lock_guard lock(st.mutex);
        st.stopped = true;
    }
    if (!st.thread.joinable()) return;
    net::post(st.io, [&st] {
        st.tasks.cancel();
        if (st.in_use) st.in_use->close();
        if (st.arrived) st.arrived->cancel();
        st.work.reset();
    });
    st.thread.join();
}

net::awaitable<current_credentials> credentials_provider::current() {
    auto& st = *state_;
    if (source_.from == source::kind::bearer_token)
        co_return current_credentials{
            nullptr, "upstream `" + settings_.upstream + "` uses a Bedrock API key, not keys"};
    {
        std::lock_guard lock(st.mutex);
        if (source_.from == source::kind::keys) co_return current_credentials{st.keys, {}};
        if (auto answer = st.known(settings_)) co_return std::move(*answer);
    }
    auto hold = st.start();
    if (!hold) co_return current_credentials{nullptr, "the gateway is stopping"};
    auto joined = st.join_fetch(source_, settings_);
    auto answer = co_await net::co_spawn(st.io, std::move(joined), net::use_awaitable);
    co_return answer;
}

net::awaitable<current_credentials> credentials_provider::state::join_fetch(const source& from,
                                                                            const settings& s) {
    co_await net::this_coro::throw_if_cancelled(false);
    {
        std::lock_guard lock(mutex);
        if (auto answer = known(s)) co_return std::move(*answer);
    }
    if (!arrived) {
        arrived = std::make_shared<net::steady_timer>(io);
        arrived->expires_at(std::chrono::steady_clock::time_point::max());
        tasks.spawn("AWS credentials of upstream " + s.upstream, fetch(from, s));
    }
    auto waited = arrived;  // the fetch lets go of it when it ends
    co_await waited->async_wait(net::as_tuple(net::use_awaitable));
    std::lock_guard lock(mutex);
    if (stopped) co_return current_credentials{nullptr, "the gateway is stopping"};
    // A failed fetch still leaves the keys in hand to use until they expire.
    if (usable(keys, clock::now())) co_return current_credentials{keys, {}};
    co_return current_credentials{nullptr, error.empty() ? "the wait was cancelled" : error};
}

net::awaitable<void> credentials_provider::state::fetch(const source& from, const settings& s) {
    co_await net::this_coro::throw_if_cancelled(false);
    exchange_hooks hooks;
    hooks.in_use = [this](connection* c) { in_use = c; };
    hooks.abandoned = [this] {
        std::lock_guard lock(mutex);
        return stopped;
    };
    config::parsed<credentials> got;
    if (from.from == source::kind::web_identity) {
        auto assumed = co_await assume_role_with_web_identity(from, s.sts_timeout, hooks);
        got = std::move(assumed);
    } else {
        auto metadata = co_await instance_metadata_credentials(from, s.metadata_timeout, hooks);
        got = std::move(metadata);
    }
    in_use = nullptr;
    std::string said;
    {
        std::lock_guard lock(mutex);
        if (got) {
            keys = std::make_shared<const credentials>(std::move(*got.value));
            error.clear();
            auto until = std::chrono::duration_cast<std::chrono::milliseconds>(
                keys->expiration.value_or(clock::time_point()).time_since_epoch());
            said = "upstream `" + s.upstream + "`: AWS credentials from " + from.origin +
                   ", until " + config::format_time(until.count());
        } else if (!stopped) {  // (a fetch stop() cut short is no news)
            error = "no AWS credentials for upstream `" + s.upstream + "` from " + from.origin +
                    ": " + got.error;
            failed_at = std::chrono::steady_clock::now();
            said = error + (usable(keys, clock::now()) ? "; the credentials in hand serve until "
                                                         "they expire"
                                                       : "");
        }
    }
    if (got)
        observability::log_info(said);
    else if (!said.empty())
        observability::log_warn(said);
    auto done = std::move(arrived);
    if (done) done->cancel();
}

}  // namespace gateway::upstream::aws
