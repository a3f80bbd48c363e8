#include "tests/support/fake_google.hpp"

#include <boost/json.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <atomic>
#include <memory>
#include <stdexcept>

namespace gateway::testing {

namespace json = boost::json;
using clock = std::chrono::system_clock;

namespace {

std::string pem_of(EVP_PKEY* key, bool private_part) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
    int ok = private_part ? PEM_write_bio_PKCS8PrivateKey(bio.get(), key, nullptr, nullptr, 0,
                                                          nullptr, nullptr)
                          : PEM_write_bio_PUBKEY(bio.get(), key);
    if (ok != 1) throw std::runtime_error("cannot write a PEM key");
    char* data = nullptr;
    auto size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
}

std::string base64url_decode(std::string_view text, bool& ok) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '-') return 62;
        if (c == '_') return 63;
        return -1;
    };
    std::string out;
    std::uint32_t bits = 0;
    int count = 0;
    ok = true;
    for (char c : text) {
        int v = value(c);
        if (v < 0) {
            ok = false;
            return {};
        }
        bits = (bits << 6) | static_cast<std::uint32_t>(v);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out += static_cast<char>((bits >> count) & 0xff);
        }
    }
    return out;
}

json::object object_of(std::string_view text) {
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object()) return {};
    return v.get_object();
}

std::string text_of(const json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::int64_t number_of(const json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    return v && v->is_int64() ? v->get_int64() : -1;
}

aws_reply json_reply(unsigned status, const json::object& body) {
    return {status, json::serialize(body), "application/json"};
}

// Google's token endpoint's refusal, as it writes it.
aws_reply google_error(std::string error, std::string description) {
    return json_reply(400, {{"error", error}, {"error_description", description}});
}

aws_reply token_reply(const std::string& token, std::chrono::seconds lifetime) {
    return json_reply(
        200, {{"access_token", token}, {"expires_in", lifetime.count()}, {"token_type", "Bearer"}});
}

// Whether `assertion` is a JWT the account with `public_key_pem` signed: "" or why not, in
// Google's words where it has some.
std::string verify_assertion(std::string_view assertion, const std::string& public_key_pem,
                             const std::string& client_email, const std::string& key_id,
                             const std::string& audience) {
    auto first = assertion.find('.');
    auto second = first == std::string_view::npos ? first : assertion.find('.', first + 1);
    if (second == std::string_view::npos) return "Invalid JWT: Token must be a short-lived token";
    bool ok_header = false, ok_claims = false, ok_signature = false;
    auto header = object_of(base64url_decode(assertion.substr(0, first), ok_header));
    auto claims =
        object_of(base64url_decode(assertion.substr(first + 1, second - first - 1), ok_claims));
    auto signature = base64url_decode(assertion.substr(second + 1), ok_signature);
    if (!ok_header || !ok_claims || !ok_signature || header.empty() || claims.empty())
        return "Invalid JWT: not base64url JSON";
    if (text_of(header, "alg") != "RS256") return "Invalid JWT: alg must be RS256";
    if (text_of(header, "kid") != key_id) return "Invalid JWT Signature.";

    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(public_key_pem.data(), static_cast<int>(public_key_pem.size())), &BIO_free);
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
        PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
    auto signed_part = assertion.substr(0, second);
    bool verified =
        key && context &&
        EVP_DigestVerifyInit(context.get(), nullptr, EVP_sha256(), nullptr, key.get()) == 1 &&
        EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                         signature.size(),
                         reinterpret_cast<const unsigned char*>(signed_part.data()),
                         signed_part.size()) == 1;
    if (!verified) return "Invalid JWT Signature.";
    if (text_of(claims, "iss") != client_email) return "Invalid issuer: unknown account";
    if (text_of(claims, "aud") != audience)
        return "Invalid JWT: Failed audience check. The right audience is " + audience;
    if (text_of(claims, "scope").empty()) return "Invalid JWT: no scope";
    auto now =
        std::chrono::duration_cast<std::chrono::seconds>(clock::now().time_since_epoch()).count();
    auto iat = number_of(claims, "iat");
    auto exp = number_of(claims, "exp");
    if (iat < 0 || exp < 0 || exp <= iat || exp - iat > 3600)
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable "
               "timeframe. Check your iat and exp values in the JWT claim.";
    if (exp <= now || iat > now + 60)
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable "
               "timeframe. Check your iat and exp values in the JWT claim.";
    return {};
}

}  // namespace

test_service_account::test_service_account() {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_RSA_gen(2048), &EVP_PKEY_free);
    if (!key) throw std::runtime_error("cannot generate a test RSA key");
    private_key_pem = pem_of(key.get(), true);
    public_key_pem = pem_of(key.get(), false);
}

std::string test_service_account::key_file(const std::string& token_uri) const {
    return json::serialize(json::object{
        {"type", "service_account"},
        {"project_id", "test-project"},
        {"private_key_id", private_key_id},
        {"private_key", private_key_pem},
        {"client_email", client_email},
        {"client_id", "100000000000000000001"},
        {"auth_uri", "https://accounts.google.com/o/oauth2/auth"},
        {"token_uri", token_uri},
    });
}

std::string token_ledger::issue(std::chrono::seconds lifetime) {
    static std::atomic<unsigned> next{0};
    auto token = prefix_ + std::to_string(++next);
    std::lock_guard lock(mutex_);
    expiries_[token] = clock::now() + lifetime;
    return token;
}

std::string token_ledger::check(std::string_view token, clock::time_point now) const {
    std::lock_guard lock(mutex_);
    auto found = expiries_.find(std::string(token));
    if (found == expiries_.end()) return "unknown token";
    if (found->second <= now) return "expired token";
    if (revoked_.contains(found->first)) return "revoked token";
    return {};
}

std::size_t token_ledger::issued() const {
    std::lock_guard lock(mutex_);
    return expiries_.size();
}

void token_ledger::revoke(std::string_view token) {
    std::lock_guard lock(mutex_);
    revoked_.emplace(token);
}

fake_google_oauth::fake_google_oauth(const test_service_account& account,
                                     std::chrono::seconds lifetime)
    : public_key_pem_(account.public_key_pem),
      client_email_(account.client_email),
      key_id_(account.private_key_id),
      lifetime_(lifetime),
      service_([this](const aws_request& r) { return answer(r); }) {}

std::string fake_google_oauth::token_uri() const {
    return service_.url() + "/token";
}

void fake_google_oauth::set_lifetime(std::chrono::seconds lifetime) {
    std::lock_guard lock(mutex_);
    lifetime_ = lifetime;
}

void fake_google_oauth::stall() {
    std::lock_guard lock(mutex_);
    stalled_ = true;
}

void fake_google_oauth::accept_user(std::string client_id, std::string client_secret,
                                    std::string refresh_token) {
    std::lock_guard lock(mutex_);
    user_client_id_ = std::move(client_id);
    user_client_secret_ = std::move(client_secret);
    user_refresh_token_ = std::move(refresh_token);
}

aws_reply fake_google_oauth::answer(const aws_request& r) {
    if (r.method != "POST" || r.target != "/token") return {404, "Not Found", "text/html"};
    if (r.field("content-type").find("application/x-www-form-urlencoded") == std::string::npos)
        return google_error("invalid_request", "Invalid Content-Type");
    auto form = r.form();
    std::lock_guard lock(mutex_);
    if (stalled_) return aws_reply{.stall = true};
    auto grant = form["grant_type"];
    if (grant == "urn:ietf:params:oauth:grant-type:jwt-bearer") {
        auto why = verify_assertion(form["assertion"], public_key_pem_, client_email_, key_id_,
                                    token_uri());
        if (!why.empty()) return google_error("invalid_grant", why);
        return token_reply(tokens_.issue(lifetime_), lifetime_);
    }
    if (grant == "refresh_token") {
        if (user_client_id_.empty() || form["client_id"] != user_client_id_ ||
            form["client_secret"] != user_client_secret_)
            return json_reply(401, {{"error", "invalid_client"},
                                    {"error_description", "The OAuth client was not found."}});
        if (form["refresh_token"] != user_refresh_token_)
            return google_error("invalid_grant", "Bad Request");
        return token_reply(tokens_.issue(lifetime_), lifetime_);
    }
    return google_error("unsupported_grant_type", "Invalid grant_type: " + grant);
}

fake_metadata_server::fake_metadata_server(std::chrono::seconds lifetime)
    : lifetime_(lifetime), service_([this](const aws_request& r) -> aws_reply {
          // As the metadata server: no Metadata-Flavor, no answer but a 403.
          if (r.field("metadata-flavor") != "Google")
              return {403, "Missing Metadata-Flavor:Google header.", "text/html"};
          if (r.method != "GET" ||
              r.target != "/computeMetadata/v1/instance/service-accounts/default/token")
              return {404, "Not Found", "text/html"};
          return token_reply(tokens_.issue(lifetime_), lifetime_);
      }) {}

std::string fake_metadata_server::host() const {
    auto url = service_.url();
    return url.substr(url.find("://") + 3);
}

fake_entra::fake_entra(std::string tenant_id, std::string client_id, std::string client_secret,
                       std::chrono::seconds lifetime)
    : tenant_id_(std::move(tenant_id)),
      client_id_(std::move(client_id)),
      client_secret_(std::move(client_secret)),
      lifetime_(lifetime),
      service_([this](const aws_request& r) { return answer(r); }) {}

void fake_entra::set_lifetime(std::chrono::seconds lifetime) {
    std::lock_guard lock(mutex_);
    lifetime_ = lifetime;
}

aws_reply fake_entra::answer(const aws_request& r) {
    // Entra ID's errors: {error, error_description "AADSTS…: …", error_codes, …}.
    auto refuse = [](unsigned status, std::string error, int code, std::string description) {
        return json_reply(
            status, {{"error", error},
                     {"error_description", "AADSTS" + std::to_string(code) + ": " + description},
                     {"error_codes", json::array{code}}});
    };
    if (r.method != "POST" || r.target != "/" + tenant_id_ + "/oauth2/v2.0/token")
        return refuse(400, "invalid_request", 90002, "Tenant '" + r.target + "' not found.");
    auto form = r.form();
    if (form["grant_type"] != "client_credentials")
        return refuse(400, "unsupported_grant_type", 70003,
                      "The app requested an unsupported grant type.");
    if (form["scope"] != "https://cognitiveservices.azure.com/.default")
        return refuse(400, "invalid_scope", 1002012, "The provided value for scope is not valid.");
    if (form["client_id"] != client_id_)
        return refuse(400, "unauthorized_client", 700016,
                      "Application with identifier '" + form["client_id"] +
                          "' was not found in the directory.");
    if (form["client_secret"] != client_secret_)
        return refuse(401, "invalid_client", 7000215, "Invalid client secret provided.");
    std::lock_guard lock(mutex_);
    return json_reply(200, {{"token_type", "Bearer"},
                            {"expires_in", lifetime_.count()},
                            {"ext_expires_in", lifetime_.count()},
                            {"access_token", tokens_.issue(lifetime_)}});
}

}  // namespace gateway::testing
