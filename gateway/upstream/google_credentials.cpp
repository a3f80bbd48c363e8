#include "gateway/upstream/google_credentials.hpp"

#include "gateway/base64url.hpp"

#include "gateway/upstream/credential_call.hpp"
#include "gateway/upstream/sigv4.hpp"
#include "gateway/upstream/token_sources.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <fstream>
#include <memory>
#include <utility>
#include <vector>

namespace gateway::upstream::google {

namespace {

namespace json = boost::json;
namespace net = boost::asio;
using clock = std::chrono::system_clock;
using fetched = config::parsed<access_token>;

constexpr std::size_t key_file_limit = 64 * 1024;

struct pkey_free {
    void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using private_key = std::unique_ptr<EVP_PKEY, pkey_free>;

// The PEM text's RSA private key, or null.
private_key load_private_key(const std::string& pem) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
    if (!bio) return nullptr;
    private_key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key || EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA) return nullptr;
    return key;
}

bool loopback(const std::string& host) {
    if (host == "localhost" || host.ends_with(".localhost")) return true;
    boost::system::error_code ec;
    auto address = boost::asio::ip::make_address(host, ec);
    return !ec && address.is_loopback();
}

// Why `uri` cannot be a token_uri ("" when it can): an http(s) URL, over TLS unless to this
// machine (a test's or an emulator's endpoint), since the assertion or refresh token it is sent
// is as good as the key to whoever reads it on the way.
std::string token_uri_problem(const std::string& uri) {
    auto endpoint = config::parse_base_url(uri);
    if (!endpoint) return "token_uri `" + uri + "` is no http(s) URL";
    if (!endpoint.value->tls && !loopback(endpoint.value->host))
        return "token_uri `" + uri + "` must be https:// (http:// only to a loopback address)";
    return {};
}

}  // namespace

config::parsed<key_file> parse_key_file(std::string_view text, const std::string& path) {
    using result = config::parsed<key_file>;
    auto where = "Google credentials file `" + path + "`";
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 8;
    auto value = json::parse(text, ec, {}, options);
    if (ec || !value.is_object()) return result::fail(where + " is not a JSON object");
    const auto& o = value.get_object();
    auto field = [&](std::string_view name) -> std::string {
        auto* v = o.if_contains(name);
        return v && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    key_file out;
    out.path = path;
    auto type = field("type");
    std::vector<std::pair<std::string_view, std::string*>> needed;
    if (type == "service_account") {
        out.type = key_file::kind::service_account;
        needed = {{"client_email", &out.client_email},
                  {"private_key", &out.private_key},
                  {"private_key_id", &out.private_key_id},
                  {"token_uri", &out.token_uri}};
    } else if (type == "authorized_user") {
        out.type = key_file::kind::authorized_user;
        needed = {{"client_id", &out.client_id},
                  {"client_secret", &out.client_secret},
                  {"refresh_token", &out.refresh_token}};
        out.token_uri = field("token_uri");
        if (out.token_uri.empty()) out.token_uri = default_token_uri;
    } else {
        return result::fail(where + " has " +
                            (type.empty() ? std::string("no `type`") : "type `" + type + "`") +
                            ": the gateway takes a service account's key (type service_account) "
                            "or gcloud's application default credentials (type authorized_user)");
    }
    for (auto [name, into] : needed) {
        *into = field(name);
        if (into->empty())
            return result::fail(where + " (" + type + ") has no `" + std::string(name) + "`");
    }
    if (auto problem = token_uri_problem(out.token_uri); !problem.empty())
        return result::fail(where + ": " + problem);
    if (out.type == key_file::kind::service_account && !load_private_key(out.private_key))
        return result::fail(where + ": private_key is no PEM RSA private key");
    return {std::move(out), {}};
}

config::parsed<key_file> read_key_file(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file)
        return config::parsed<key_file>::fail("cannot read Google credentials file `" + path + "`");
    std::string text(key_file_limit + 1, '\0');
    file.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(file.gcount()));
    if (text.size() > key_file_limit)
        return config::parsed<key_file>::fail("Google credentials file `" + path +
                                              "` is larger than 64 KiB");
    return parse_key_file(text, path);
}

config::parsed<std::string> service_account_assertion(const key_file& key, clock::time_point now) {
    using result = config::parsed<std::string>;
    auto key_pair = load_private_key(key.private_key);
    if (!key_pair) return result::fail("the private_key of `" + key.path + "` cannot sign");
    auto iat = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    json::object header{{"alg", "RS256"}, {"typ", "JWT"}, {"kid", key.private_key_id}};
    json::object claims{{"iss", key.client_email},
                        {"scope", cloud_platform_scope},
                        {"aud", key.token_uri},
                        {"iat", iat},
                        {"exp", iat + 3600}};
    auto signed_part =
        base64url_encode(json::serialize(header)) + "." + base64url_encode(json::serialize(claims));
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
    std::size_t length = 0;
    if (!context ||
        EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, key_pair.get()) != 1 ||
        EVP_DigestSign(context.get(), nullptr, &length,
                       reinterpret_cast<const unsigned char*>(signed_part.data()),
                       signed_part.size()) != 1)
        return result::fail("signing with the private_key of `" + key.path + "` failed");
    std::string signature(length, '\0');
    if (EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                       reinterpret_cast<const unsigned char*>(signed_part.data()),
                       signed_part.size()) != 1)
        return result::fail("signing with the private_key of `" + key.path + "` failed");
    signature.resize(length);
    return {signed_part + "." + base64url_encode(signature), {}};
}

net::awaitable<fetched> token_from_key(const key_file& key, config::duration timeout,
                                       const exchange_hooks& hooks) {
    auto endpoint = credential_service("google-oauth", key.token_uri, timeout);
    if (!endpoint) co_return fetched::fail("token_uri " + endpoint.error);
    std::string form;
    if (key.type == key_file::kind::service_account) {
        auto assertion = service_account_assertion(key, clock::now());
        if (!assertion) co_return fetched::fail(assertion.error);
        form = "grant_type=" + aws::uri_encode("urn:ietf:params:oauth:grant-type:jwt-bearer") +
               "&assertion=" + *assertion.value;
    } else {
        form = "grant_type=refresh_token&client_id=" + aws::uri_encode(key.client_id) +
               "&client_secret=" + aws::uri_encode(key.client_secret) +
               "&refresh_token=" + aws::uri_encode(key.refresh_token);
    }
    // The token_uri's own path is where the form goes: its base path, with nothing below it.
    std::string_view below = endpoint.value->endpoint.base_path.empty() ? "/" : "";
    auto head = credential_request_head(
        "POST", *endpoint.value, below,
        "Content-Type: application/x-www-form-urlencoded\r\nAccept: application/json\r\n",
        form.size());
    auto answered = co_await call_credential_service(*endpoint.value, head, form, hooks);
    std::string where = "Google's token endpoint at " + key.token_uri;
    if (!answered) co_return fetched::fail(where + " did not answer: " + answered.error);
    co_return read_token_answer(where, answered.value->status, answered.value->body, clock::now());
}

net::awaitable<fetched> token_from_metadata_server(const std::string& host,
                                                   config::duration timeout,
                                                   const exchange_hooks& hooks) {
    std::string url = "http://" + host;
    auto server = credential_service("google-metadata", url, timeout);
    if (!server) co_return fetched::fail("metadata server " + server.error);
    auto head = credential_request_head(
        "GET", *server.value, "/computeMetadata/v1/instance/service-accounts/default/token",
        "Metadata-Flavor: Google\r\nAccept: application/json\r\n", 0);
    auto answered = co_await call_credential_service(*server.value, head, {}, hooks);
    std::string where = "the metadata server at " + host;
    if (!answered) co_return fetched::fail(where + " did not answer: " + answered.error);
    co_return read_token_answer(where, answered.value->status, answered.value->body, clock::now());
}

}  // namespace gateway::upstream::google
