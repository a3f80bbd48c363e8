#include "gateway/upstream/aws_credentials.hpp"

#include "gateway/upstream/aws_fetch.hpp"
#include "gateway/upstream/refresher.hpp"

#include <fstream>
#include <map>

namespace gateway::upstream::aws {

namespace net = boost::asio;

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

credentials_provider::credentials_provider(source from, settings s)
    : source_(std::move(from)), settings_(std::move(s)) {
    if (source_.from == source::kind::keys) {
        fixed_ = std::make_shared<const credentials>(source_.keys);
        return;
    }
    if (source_.from == source::kind::bearer_token) return;
    refresh_settings timing{settings_.upstream,      "AWS credentials",
                            source_.origin,          "aws-credentials",
                            settings_.refresh_early, settings_.retry_after_failure};
    // Temporary credentials always say when they expire (their readers refuse them otherwise).
    auto expiry = [](const credentials& keys) {
        return keys.expiration.value_or(clock::time_point());
    };
    auto fetch =
        [this](const exchange_hooks& hooks) -> net::awaitable<config::parsed<credentials>> {
        if (source_.from == source::kind::web_identity)
            return assume_role_with_web_identity(source_, settings_.sts_timeout, hooks);
        return instance_metadata_credentials(source_, settings_.metadata_timeout, hooks);
    };
    refresher_ = std::make_unique<refresher<credentials>>(std::move(timing), fetch, expiry);
}

credentials_provider::~credentials_provider() {
    stop();
}

void credentials_provider::stop() {
    if (refresher_) refresher_->stop();
}

net::awaitable<current_credentials> credentials_provider::current() {
    if (source_.from == source::kind::bearer_token)
        co_return current_credentials{
            nullptr, "upstream `" + settings_.upstream + "` uses a Bedrock API key, not keys"};
    if (fixed_) co_return current_credentials{fixed_, {}};
    auto got = co_await refresher_->current();
    co_return current_credentials{std::move(got.value), std::move(got.error)};
}

}  // namespace gateway::upstream::aws
