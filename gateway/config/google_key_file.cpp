#include "gateway/config/google_key_file.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <fstream>
#include <utility>
#include <vector>

namespace gateway::config::google {

void rsa_key_free::operator()(evp_pkey_st* key) const {
    EVP_PKEY_free(key);
}

rsa_private_key load_rsa_private_key(const std::string& pem) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
    if (!bio) return nullptr;
    rsa_private_key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key || EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA) return nullptr;
    return key;
}

namespace {

namespace json = boost::json;

constexpr std::size_t key_file_limit = 64 * 1024;

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
    auto endpoint = parse_base_url(uri);
    if (!endpoint) return "token_uri `" + uri + "` is no http(s) URL";
    if (!endpoint.value->tls && !loopback(endpoint.value->host))
        return "token_uri `" + uri + "` must be https:// (http:// only to a loopback address)";
    return {};
}

}  // namespace

parsed<key_file> parse_key_file(std::string_view text, const std::string& path) {
    using result = parsed<key_file>;
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
    if (out.type == key_file::kind::service_account && !load_rsa_private_key(out.private_key))
        return result::fail(where + ": private_key is no PEM RSA private key");
    return {std::move(out), {}};
}

parsed<key_file> read_key_file(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return parsed<key_file>::fail("cannot read Google credentials file `" + path + "`");
    std::string text(key_file_limit + 1, '\0');
    file.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(file.gcount()));
    if (text.size() > key_file_limit)
        return parsed<key_file>::fail("Google credentials file `" + path +
                                      "` is larger than 64 KiB");
    return parse_key_file(text, path);
}

}  // namespace gateway::config::google
