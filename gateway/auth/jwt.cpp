#include "gateway/auth/jwt.hpp"

#include "gateway/json_fields.hpp"

#include <boost/json/parse.hpp>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

namespace gateway::auth {

namespace json = boost::json;

namespace {

// Bounds on what a provider may send: a JWKS and an ID token are a few kilobytes.
constexpr std::size_t token_limit = 64 * 1024;

struct bn_free {
    void operator()(BIGNUM* b) const { BN_free(b); }
};
using bignum = std::unique_ptr<BIGNUM, bn_free>;

bignum bignum_of(std::string_view bytes) {
    return bignum(BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<int>(bytes.size()), nullptr));
}

// A public key from OpenSSL's parameters for `type` ("RSA", "EC"); null when they make none.
std::shared_ptr<EVP_PKEY> key_from(const char* type, OSSL_PARAM_BLD* build) {
    std::shared_ptr<EVP_PKEY> out;
    OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(build);
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr);
    EVP_PKEY* key = nullptr;
    if (params && ctx && EVP_PKEY_fromdata_init(ctx) == 1 &&
        EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) == 1)
        out.reset(key, EVP_PKEY_free);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    return out;
}

std::shared_ptr<EVP_PKEY> rsa_key(std::string_view n, std::string_view e) {
    auto modulus = bignum_of(n);
    auto exponent = bignum_of(e);
    OSSL_PARAM_BLD* build = OSSL_PARAM_BLD_new();
    std::shared_ptr<EVP_PKEY> key;
    if (build && modulus && exponent &&
        OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_RSA_N, modulus.get()) == 1 &&
        OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_RSA_E, exponent.get()) == 1)
        key = key_from("RSA", build);
    OSSL_PARAM_BLD_free(build);
    // Shorter RSA keys are forgeable by those with the means.
    if (key && EVP_PKEY_get_bits(key.get()) < 2048) key.reset();
    return key;
}

std::shared_ptr<EVP_PKEY> p256_key(std::string_view x, std::string_view y) {
    if (x.size() != 32 || y.size() != 32) return nullptr;
    std::string point = "\x04";  // uncompressed: x then y
    point += x;
    point += y;
    OSSL_PARAM_BLD* build = OSSL_PARAM_BLD_new();
    std::shared_ptr<EVP_PKEY> key;
    if (build &&
        OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1 &&
        OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                         point.size()) == 1)
        key = key_from("EC", build);
    OSSL_PARAM_BLD_free(build);
    return key;
}

// JWS's ES256 signature is r and s, 32 bytes each; OpenSSL verifies their DER sequence.
std::optional<std::string> der_of_p256_signature(std::string_view raw) {
    if (raw.size() != 64) return std::nullopt;
    ECDSA_SIG* sig = ECDSA_SIG_new();
    auto r = bignum_of(raw.substr(0, 32));
    auto s = bignum_of(raw.substr(32));
    if (!sig || !r || !s || ECDSA_SIG_set0(sig, r.get(), s.get()) != 1) {
        ECDSA_SIG_free(sig);
        return std::nullopt;
    }
    r.release();  // the signature owns them now
    s.release();
    unsigned char* der = nullptr;
    int length = i2d_ECDSA_SIG(sig, &der);
    ECDSA_SIG_free(sig);
    if (length <= 0) return std::nullopt;
    std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(length));
    OPENSSL_free(der);
    return out;
}

bool signature_holds(const key_set::key& key, std::string_view signed_part,
                     std::string_view signature) {
    std::string der;
    if (key.alg == "ES256") {
        auto converted = der_of_p256_signature(signature);
        if (!converted) return false;
        der = std::move(*converted);
        signature = der;
    }
    EVP_MD_CTX* md = EVP_MD_CTX_new();
    bool ok =
        md && EVP_DigestVerifyInit(md, nullptr, EVP_sha256(), nullptr, key.public_key.get()) == 1 &&
        EVP_DigestVerify(
            md, reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
            reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size()) == 1;
    EVP_MD_CTX_free(md);
    return ok;
}

// A numeric date claim (seconds); nullopt when absent or not a number.
std::optional<std::int64_t> seconds_of(const json::object& claims, std::string_view key) {
    const auto* v = claims.if_contains(key);
    if (!v) return std::nullopt;
    if (v->is_int64()) return v->get_int64();
    if (v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
    if (v->is_double()) return static_cast<std::int64_t>(v->get_double());
    return std::nullopt;
}

// The claims' problem for `expect`, or "" when they hold (OpenID Connect Core 3.1.3.7).
std::string claims_problem(const json::object& claims, const token_expectations& expect) {
    auto issuer = string_of(claims, "iss");
    if (issuer != expect.issuer)
        return "the ID token was issued by `" + issuer + "`, not the configured issuer `" +
               expect.issuer + "`";
    if (string_of(claims, "sub").empty()) return "the ID token names no subject (`sub`)";
    const auto* aud = claims.if_contains("aud");
    std::size_t audiences = 0;
    bool ours = false;
    if (aud && aud->is_string()) {
        audiences = 1;
        ours = aud->get_string() == expect.audience;
    } else if (aud && aud->is_array()) {
        for (const auto& a : aud->get_array()) {
            ++audiences;
            ours = ours || (a.is_string() && a.get_string() == expect.audience);
        }
    }
    if (!ours)
        return "the ID token is meant for another client (`aud` lacks `" + expect.audience + "`)";
    auto azp = string_of(claims, "azp");
    if ((audiences > 1 || claims.contains("azp")) && azp != expect.audience)
        return "the ID token was issued to another party (`azp` is `" + azp + "`)";
    auto exp = seconds_of(claims, "exp");
    if (!exp) return "the ID token has no expiry (`exp`)";
    if (*exp + expect.leeway_s <= expect.now_s) return "the ID token has expired";
    auto iat = seconds_of(claims, "iat");
    if (!iat) return "the ID token has no issue time (`iat`)";
    if (*iat > expect.now_s + expect.leeway_s) return "the ID token was issued in the future";
    if (string_of(claims, "nonce") != expect.nonce)
        return "the ID token's nonce is not this sign-in's (a replayed token?)";
    return {};
}

}  // namespace

json::value parse_json(std::string_view text) {
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 16;
    auto value = json::parse(text, ec, {}, options);
    if (ec) return nullptr;
    return value;
}

config::parsed<key_set> key_set::parse(std::string_view jwks) {
    using result = config::parsed<key_set>;
    if (jwks.size() > token_limit) return result::fail("the JWKS is larger than 64 KiB");
    auto doc = parse_json(jwks);
    const json::array* keys = nullptr;
    if (doc.is_object())
        if (const auto* k = doc.get_object().if_contains("keys"); k && k->is_array())
            keys = &k->get_array();
    if (!keys) return result::fail("the JWKS is not a JSON object with a `keys` list");
    key_set out;
    for (const auto& item : *keys) {
        if (!item.is_object()) continue;
        const auto& jwk = item.get_object();
        auto use = string_of(jwk, "use");
        if (!use.empty() && use != "sig") continue;
        auto kty = string_of(jwk, "kty");
        auto alg = string_of(jwk, "alg");
        key k;
        k.kid = string_of(jwk, "kid");
        if (kty == "RSA" && (alg.empty() || alg == "RS256")) {
            auto n = base64url_decode(string_of(jwk, "n"));
            auto e = base64url_decode(string_of(jwk, "e"));
            if (n && e) k.public_key = rsa_key(*n, *e);
            k.alg = "RS256";
        } else if (kty == "EC" && string_of(jwk, "crv") == "P-256" &&
                   (alg.empty() || alg == "ES256")) {
            auto x = base64url_decode(string_of(jwk, "x"));
            auto y = base64url_decode(string_of(jwk, "y"));
            if (x && y) k.public_key = p256_key(*x, *y);
            k.alg = "ES256";
        }
        if (k.public_key) out.keys_.push_back(std::move(k));
    }
    return {std::move(out), {}};
}

bool key_set::has(std::string_view kid) const {
    return find(kid) != nullptr;
}

const key_set::key* key_set::find(std::string_view kid) const {
    for (const auto& k : keys_)
        if (k.kid == kid) return &k;
    return nullptr;
}

token_check verify_id_token(std::string_view token, const key_set& keys,
                            const token_expectations& expect) {
    token_check out;
    auto refuse = [&](std::string why) {
        out.result = token_check::outcome::refused;
        out.error = std::move(why);
        return out;
    };
    if (token.size() > token_limit) return refuse("the ID token is larger than 64 KiB");
    auto first = token.find('.');
    auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
    if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
        return refuse("the ID token is not a signed JWT (three dot-separated parts)");
    auto header_text = base64url_decode(token.substr(0, first));
    auto payload_text = base64url_decode(token.substr(first + 1, second - first - 1));
    auto signature = base64url_decode(token.substr(second + 1));
    if (!header_text || !payload_text || !signature)
        return refuse("the ID token's parts are not base64url");
    auto header = parse_json(*header_text);
    auto payload = parse_json(*payload_text);
    if (!header.is_object() || !payload.is_object())
        return refuse("the ID token's header or claims are not a JSON object");
    auto alg = string_of(header.get_object(), "alg");
    if (alg != "RS256" && alg != "ES256")
        return refuse("the ID token is signed with `" + alg + "`; RS256 and ES256 are accepted");
    auto kid = string_of(header.get_object(), "kid");
    const key_set::key* key = keys.find(kid);
    if (!key) {
        out.result = token_check::outcome::unknown_key;
        out.error =
            "the ID token is signed with a key the provider's JWKS lacks (kid `" + kid + "`)";
        return out;
    }
    if (key->alg != alg)
        return refuse("the ID token says `" + alg + "` but its key `" + kid + "` is " + key->alg);
    if (!signature_holds(*key, token.substr(0, second), *signature))
        return refuse("the ID token's signature does not verify");
    if (auto problem = claims_problem(payload.get_object(), expect); !problem.empty())
        return refuse(std::move(problem));
    out.result = token_check::outcome::valid;
    out.claims = std::move(payload.get_object());
    return out;
}

}  // namespace gateway::auth
