// ID token verification with keys made at test time: RS256 and ES256 signatures, the claims
// OpenID Connect requires, and what a forger might try (another algorithm, a tampered payload,
// a key the set lacks, a short RSA key).
#include "gateway/auth/jwt.hpp"

#include "gateway/auth/oidc.hpp"

#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>

#include <ctime>
#include <memory>
#include <string>

namespace auth_jwt_test {

namespace json = boost::json;
using namespace gateway::auth;

namespace {

std::string bytes_of(const BIGNUM* bn, int width = 0) {
    std::string out(static_cast<std::size_t>(width ? width : BN_num_bytes(bn)), '\0');
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size()));
    return out;
}

std::string param(EVP_PKEY* key, const char* name, int width = 0) {
    BIGNUM* bn = nullptr;
    BOOST_TEST_REQUIRE(EVP_PKEY_get_bn_param(key, name, &bn) == 1);
    auto out = bytes_of(bn, width);
    BN_free(bn);
    return out;
}

// A signing key made for the test, its JWK, and tokens signed with it.
struct test_key {
    std::shared_ptr<EVP_PKEY> key;
    std::string kid;
    std::string alg;

    static test_key rsa(std::string kid, std::size_t bits = 2048) {
        return {std::shared_ptr<EVP_PKEY>(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", bits),
                                          EVP_PKEY_free),
                std::move(kid), "RS256"};
    }
    static test_key p256(std::string kid) {
        return {std::shared_ptr<EVP_PKEY>(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"),
                                          EVP_PKEY_free),
                std::move(kid), "ES256"};
    }

    json::object jwk() const {
        if (alg == "RS256")
            return {{"kty", "RSA"},
                    {"kid", kid},
                    {"use", "sig"},
                    {"n", base64url_encode(param(key.get(), OSSL_PKEY_PARAM_RSA_N))},
                    {"e", base64url_encode(param(key.get(), OSSL_PKEY_PARAM_RSA_E))}};
        return {{"kty", "EC"},
                {"kid", kid},
                {"crv", "P-256"},
                {"x", base64url_encode(param(key.get(), OSSL_PKEY_PARAM_EC_PUB_X, 32))},
                {"y", base64url_encode(param(key.get(), OSSL_PKEY_PARAM_EC_PUB_Y, 32))}};
    }

    std::string sign(const json::object& claims, std::string header_alg = {}) const {
        json::object header{
            {"alg", header_alg.empty() ? alg : header_alg}, {"typ", "JWT"}, {"kid", kid}};
        auto input = base64url_encode(json::serialize(header)) + "." +
                     base64url_encode(json::serialize(claims));
        EVP_MD_CTX* md = EVP_MD_CTX_new();
        std::size_t length = 0;
        BOOST_TEST_REQUIRE(EVP_DigestSignInit(md, nullptr, EVP_sha256(), nullptr, key.get()) == 1);
        auto data = reinterpret_cast<const unsigned char*>(input.data());
        BOOST_TEST_REQUIRE(EVP_DigestSign(md, nullptr, &length, data, input.size()) == 1);
        std::string signature(length, '\0');
        BOOST_TEST_REQUIRE(EVP_DigestSign(md, reinterpret_cast<unsigned char*>(signature.data()),
                                          &length, data, input.size()) == 1);
        signature.resize(length);
        EVP_MD_CTX_free(md);
        if (alg == "ES256") {  // DER to JWS's r || s
            auto p = reinterpret_cast<const unsigned char*>(signature.data());
            ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(signature.size()));
            signature = bytes_of(ECDSA_SIG_get0_r(sig), 32) + bytes_of(ECDSA_SIG_get0_s(sig), 32);
            ECDSA_SIG_free(sig);
        }
        return input + "." + base64url_encode(signature);
    }
};

key_set keys_of(std::initializer_list<const test_key*> keys) {
    json::array list;
    for (const auto* k : keys) list.push_back(k->jwk());
    auto parsed = key_set::parse(json::serialize(json::object{{"keys", std::move(list)}}));
    BOOST_TEST_REQUIRE(static_cast<bool>(parsed), parsed.error);
    return std::move(*parsed.value);
}

const std::int64_t now = 1'900'000'000;

token_expectations expected() {
    return {"https://idp.test", "contextgate", "nonce-1", now, 60};
}

json::object claims() {
    return {{"iss", "https://idp.test"}, {"sub", "user-1"}, {"aud", "contextgate"},
            {"exp", now + 300},          {"iat", now},      {"nonce", "nonce-1"},
            {"email", "ada@example.com"}};
}

token_check check(const test_key& k, const json::object& c, const key_set& keys) {
    return verify_id_token(k.sign(c), keys, expected());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(jwt)

BOOST_AUTO_TEST_CASE(rs256_and_es256_tokens_verify) {
    auto rsa = test_key::rsa("r1");
    auto ec = test_key::p256("e1");
    auto keys = keys_of({&rsa, &ec});
    BOOST_TEST(keys.size() == 2u);
    for (const auto* k : {&rsa, &ec}) {
        auto checked = check(*k, claims(), keys);
        BOOST_TEST((checked.result == token_check::outcome::valid), checked.error);
        BOOST_TEST(checked.claims.at("email").as_string() == "ada@example.com");
    }
}

BOOST_AUTO_TEST_CASE(a_forged_or_mislabelled_token_is_refused) {
    auto rsa = test_key::rsa("r1");
    auto other = test_key::rsa("r1");  // the same kid, another key
    auto ec = test_key::p256("e1");
    auto keys = keys_of({&rsa, &ec});
    auto refused = [](const token_check& c, std::string_view says) {
        BOOST_TEST((c.result == token_check::outcome::refused));
        BOOST_TEST(c.error.find(says) != std::string::npos, c.error);
    };
    refused(check(other, claims(), keys), "signature does not verify");
    // A payload changed after signing.
    auto token = rsa.sign(claims());
    auto first = token.find('.');
    auto second = token.find('.', first + 1);
    auto changed = claims();
    changed["sub"] = "admin";
    auto tampered = token.substr(0, first + 1) + base64url_encode(json::serialize(changed)) +
                    token.substr(second);
    refused(verify_id_token(tampered, keys, expected()), "signature does not verify");
    // An algorithm the key is not for, or one never accepted.
    refused(verify_id_token(rsa.sign(claims(), "ES256"), keys, expected()), "is RS256");
    refused(verify_id_token(rsa.sign(claims(), "HS256"), keys, expected()), "`HS256`");
    auto unsigned_token = base64url_encode(R"({"alg":"none"})") + "." +
                          base64url_encode(json::serialize(claims())) + ".";
    refused(verify_id_token(unsigned_token, keys, expected()), "`none`");
    refused(verify_id_token("not.a-token", keys, expected()), "three");
    refused(verify_id_token("a.b.c!", keys, expected()), "base64url");
}

BOOST_AUTO_TEST_CASE(a_key_the_set_lacks_asks_for_the_keys_again) {
    auto old_key = test_key::rsa("old");
    auto rotated = test_key::p256("new");
    auto keys = keys_of({&old_key});
    auto checked = check(rotated, claims(), keys);
    BOOST_TEST((checked.result == token_check::outcome::unknown_key));
    BOOST_TEST(checked.error.find("`new`") != std::string::npos);
    BOOST_TEST((check(rotated, claims(), keys_of({&old_key, &rotated})).result ==
                token_check::outcome::valid));
}

BOOST_AUTO_TEST_CASE(the_claims_must_be_for_this_sign_in) {
    auto k = test_key::p256("e1");
    auto keys = keys_of({&k});
    auto refused_with = [&](json::object c, std::string_view says) {
        auto checked = check(k, c, keys);
        BOOST_TEST((checked.result == token_check::outcome::refused), says);
        BOOST_TEST(checked.error.find(says) != std::string::npos, checked.error);
    };
    auto c = claims();
    c["iss"] = "https://evil.test";
    refused_with(c, "not the configured issuer");
    c = claims();
    c["aud"] = "another-client";
    refused_with(c, "another client");
    c = claims();
    c["aud"] = json::array{"another-client", "contextgate"};
    refused_with(c, "`azp`");  // several audiences: azp must name us
    c["azp"] = "contextgate";
    BOOST_TEST((check(k, c, keys).result == token_check::outcome::valid));
    c = claims();
    c["exp"] = now - 61;
    refused_with(c, "expired");
    c["exp"] = now - 30;  // within the leeway
    BOOST_TEST((check(k, c, keys).result == token_check::outcome::valid));
    c = claims();
    c.erase("exp");
    refused_with(c, "no expiry");
    c = claims();
    c["iat"] = now + 600;
    refused_with(c, "in the future");
    c = claims();
    c["nonce"] = "nonce-2";
    refused_with(c, "nonce");
    c.erase("nonce");
    refused_with(c, "nonce");
    c = claims();
    c.erase("sub");
    refused_with(c, "subject");
}

BOOST_AUTO_TEST_CASE(a_key_set_keeps_only_keys_it_can_verify_with) {
    auto short_rsa = test_key::rsa("short", 1024);
    auto good = test_key::rsa("good");
    auto encryption = good.jwk();
    encryption["kid"] = "enc";
    encryption["use"] = "enc";
    json::array list{short_rsa.jwk(), good.jwk(), encryption,
                     json::object{{"kty", "oct"}, {"kid", "hmac"}, {"k", "c2VjcmV0"}}};
    auto keys = key_set::parse(json::serialize(json::object{{"keys", std::move(list)}}));
    BOOST_TEST_REQUIRE(static_cast<bool>(keys));
    BOOST_TEST(keys.value->size() == 1u);
    BOOST_TEST(keys.value->has("good"));
    BOOST_TEST(!keys.value->has("short"));  // under 2048 bits
    BOOST_TEST(!key_set::parse("[1, 2]"));
    BOOST_TEST(!key_set::parse("{\"keys\": 3"));
}

BOOST_AUTO_TEST_CASE(base64url_and_the_pkce_challenge) {
    for (std::string text : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\x00"})
        BOOST_TEST(*base64url_decode(base64url_encode(text)) == text);
    BOOST_TEST(base64url_encode("\xfb\xff") == "-_8");
    BOOST_TEST(!base64url_decode("ab+c"));
    // RFC 7636, appendix B.
    BOOST_TEST(pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") ==
               "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    auto pair = make_pkce();
    BOOST_TEST(pair.verifier.size() == 43u);
    BOOST_TEST(pair.challenge == pkce_challenge(pair.verifier));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace auth_jwt_test
