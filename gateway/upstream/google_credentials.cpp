#include "gateway/upstream/google_credentials.hpp"

#include "gateway/base64url.hpp"

#include "gateway/upstream/credential_call.hpp"
#include "gateway/upstream/sigv4.hpp"
#include "gateway/upstream/token_sources.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <openssl/evp.h>

#include <memory>
#include <utility>

namespace gateway::upstream::google {

namespace {

namespace json = boost::json;
namespace net = boost::asio;
using clock = std::chrono::system_clock;
using fetched = config::parsed<access_token>;

}  // namespace

config::parsed<std::string> service_account_assertion(const key_file& key, clock::time_point now) {
    using result = config::parsed<std::string>;
    auto key_pair = config::google::load_rsa_private_key(key.private_key);
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
