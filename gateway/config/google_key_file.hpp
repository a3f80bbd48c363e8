#pragma once

#include "gateway/config/config.hpp"

#include <memory>
#include <string>
#include <string_view>

struct evp_pkey_st;

// A Google credentials file (a service account's key, or gcloud's application default
// credentials), read and checked when the configuration is: a file that cannot work is refused
// at start, before any request needs a token. The token itself is fetched in upstream/.
namespace gateway::config::google {

// Where an authorized_user's refresh token is exchanged when its file names no token_uri.
inline constexpr std::string_view default_token_uri = "https://oauth2.googleapis.com/token";

// A key file's credentials. Secrets: private_key, client_secret, refresh_token.
struct key_file {
    enum class kind { service_account, authorized_user };
    kind type = kind::service_account;
    std::string path;  // where it was read from, for logs and errors
    std::string token_uri;
    // service_account
    std::string client_email;
    std::string private_key;  // PEM, PKCS#8
    std::string private_key_id;
    // authorized_user
    std::string client_id;
    std::string client_secret;
    std::string refresh_token;
};

// The file's text as a key file (`path` names it in errors). Errors say what is wrong: not a JSON
// object, a `type` that is neither service_account nor authorized_user, a field missing or empty,
// a private_key that is no PEM RSA key, a token_uri that is no http(s) URL or is http:// to
// another machine than this one.
parsed<key_file> parse_key_file(std::string_view text, const std::string& path);
// Reads the file at `path` (blocking, at most 64 KiB) and parses it.
parsed<key_file> read_key_file(const std::string& path);

// An RSA private key from PEM text (OpenSSL's EVP_PKEY), or null when the text holds none.
struct rsa_key_free {
    void operator()(evp_pkey_st* key) const;
};
using rsa_private_key = std::unique_ptr<evp_pkey_st, rsa_key_free>;
rsa_private_key load_rsa_private_key(const std::string& pem);

}  // namespace gateway::config::google
