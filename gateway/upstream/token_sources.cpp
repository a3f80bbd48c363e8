#include "gateway/upstream/token_sources.hpp"

#include "gateway/upstream/credential_call.hpp"
#include "gateway/upstream/entra_credentials.hpp"
#include "gateway/upstream/google_credentials.hpp"
#include "gateway/upstream/refresher.hpp"

#include <boost/json/parse.hpp>

#include <charconv>

namespace gateway::upstream {

namespace {

namespace net = boost::asio;
namespace json = boost::json;
using clock = std::chrono::system_clock;

// A token source over a refresher: the one the Google and Entra ID sources share; what differs
// is the fetch.
class refreshed_tokens final : public token_source {
public:
    refreshed_tokens(refresh_settings s, refresher<access_token>::fetch_function fetch)
        : refresher_(std::move(s), std::move(fetch),
                     [](const access_token& t) { return t.expires_at; }) {}

    net::awaitable<access_token> current() override {
        auto got = co_await refresher_.current();
        if (!got.value) co_return access_token{{}, {}, std::move(got.error)};
        co_return *got.value;
    }
    void invalidate(std::string_view refused) override {
        refresher_.invalidate([refused](const access_token& t) { return t.token == refused; });
    }
    const std::string& origin() const override { return refresher_.settings().origin; }
    void stop() override { refresher_.stop(); }

private:
    refresher<access_token> refresher_;
};

std::string variable(const environment& env, const std::string& name) {
    auto value = env(name);
    return value ? *value : std::string();
}

config::parsed<std::shared_ptr<token_source>> google_source(const config::upstream_config& up,
                                                            const environment& env,
                                                            const token_timing& timing) {
    using result = config::parsed<std::shared_ptr<token_source>>;
    refresh_settings s{up.name,         "Google access token", {},
                       "google-tokens", timing.refresh_early,  timing.retry_after_failure};
    auto path = up.credentials_file;
    bool named = !path.empty();
    if (!named) path = variable(env, "GOOGLE_APPLICATION_CREDENTIALS");
    if (path.empty()) {
        auto host = variable(env, "GCE_METADATA_HOST");
        if (host.empty()) host = "metadata.google.internal";
        s.origin = "the metadata server at " + host;
        auto timeout = timing.metadata_timeout;
        return {std::make_shared<refreshed_tokens>(std::move(s),
                                                   [host, timeout](const exchange_hooks& hooks) {
                                                       return google::token_from_metadata_server(
                                                           host, timeout, hooks);
                                                   }),
                {}};
    }
    auto key = google::read_key_file(path);
    if (!key)
        return result::fail((named ? "credentials_file: " : "GOOGLE_APPLICATION_CREDENTIALS: ") +
                            key.error);
    s.origin = key.value->type == google::key_file::kind::service_account
                   ? "service account " + key.value->client_email + " (" + path + ")"
                   : "the application default credentials of " + path;
    auto timeout = timing.token_endpoint_timeout;
    return {std::make_shared<refreshed_tokens>(
                std::move(s),
                [key = std::move(*key.value), timeout](const exchange_hooks& hooks) {
                    return google::token_from_key(key, timeout, hooks);
                }),
            {}};
}

std::shared_ptr<token_source> entra_source(const config::upstream_config& up,
                                           const environment& env, const token_timing& timing) {
    auto authority =
        entra::authority_of(up.azure.authority_host, variable(env, "AZURE_AUTHORITY_HOST"));
    refresh_settings s{up.name,
                       "Entra ID token",
                       "application " + up.azure.client_id + " of tenant " + up.azure.tenant_id +
                           " at " + authority,
                       "entra-tokens",
                       timing.refresh_early,
                       timing.retry_after_failure};
    auto timeout = timing.token_endpoint_timeout;
    return std::make_shared<refreshed_tokens>(
        std::move(s), [authority, application = up.azure, timeout](const exchange_hooks& hooks) {
            return entra::client_credentials_token(authority, application, timeout, hooks);
        });
}

}  // namespace

config::parsed<std::shared_ptr<token_source>> make_token_source(const config::upstream_config& up,
                                                                const environment& env,
                                                                token_timing timing) {
    if (up.host == config::hosting::vertex) return google_source(up, env, timing);
    if (up.host == config::hosting::azure && up.azure.configured())
        return {entra_source(up, env, timing), {}};
    return {std::shared_ptr<token_source>(), {}};
}

config::parsed<access_token> read_token_answer(std::string_view where, unsigned status,
                                               std::string_view body, clock::time_point now) {
    using result = config::parsed<access_token>;
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 8;
    auto value = json::parse(body, ec, {}, options);
    const json::object* o = !ec && value.is_object() ? &value.get_object() : nullptr;
    auto text = [&](std::string_view key) -> std::string {
        auto* v = o ? o->if_contains(key) : nullptr;
        return v && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    if (status != 200) {
        std::string why = std::string(where) + " refused (" + std::to_string(status);
        if (!text("error").empty()) why += " " + text("error");
        why += ")";
        if (!text("error_description").empty())
            why += ": " + text("error_description");
        else if (text("error").empty() && !body.empty())
            why += ": " + first_bytes(body);
        return result::fail(why);
    }
    if (!o) return result::fail(std::string(where) + "'s answer is not a JSON object");
    access_token out;
    out.token = text("access_token");
    if (out.token.empty())
        return result::fail(std::string(where) + "'s answer has no access_token");
    std::optional<std::int64_t> seconds;
    if (auto* v = o->if_contains("expires_in")) {
        if (v->is_int64())
            seconds = v->get_int64();
        else if (v->is_uint64())
            seconds = static_cast<std::int64_t>(v->get_uint64());
        else if (v->is_string()) {
            std::string_view digits = v->get_string();
            std::int64_t n = 0;
            auto [end, failed] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
            if (failed == std::errc() && end == digits.data() + digits.size()) seconds = n;
        }
    }
    if (!seconds || *seconds <= 0)
        return result::fail(std::string(where) + "'s answer has no expires_in in seconds");
    out.expires_at = now + std::chrono::seconds(*seconds);
    return {std::move(out), {}};
}

}  // namespace gateway::upstream
