#include "gateway/upstream/aws_fetch.hpp"

#include "gateway/upstream/credential_call.hpp"

#include <boost/asio/this_coro.hpp>
#include <boost/json/parse.hpp>

#include <chrono>
#include <fstream>

namespace gateway::upstream::aws {

namespace {

namespace net = boost::asio;
namespace json = boost::json;
using fetched = config::parsed<credentials>;

constexpr std::size_t token_file_limit = 64 * 1024;

// The text of the first <tag>…</tag> in `xml`, its five predefined entities decoded; nullopt
// when there is none.
std::optional<std::string> element(std::string_view xml, std::string_view tag) {
    std::string open = "<" + std::string(tag) + ">";
    std::string close = "</" + std::string(tag) + ">";
    auto start = xml.find(open);
    if (start == std::string_view::npos) return std::nullopt;
    start += open.size();
    auto end = xml.find(close, start);
    if (end == std::string_view::npos) return std::nullopt;
    auto text = xml.substr(start, end - start);
    static constexpr std::pair<std::string_view, char> entities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        bool decoded = false;
        for (const auto& [name, c] : entities) {
            if (text.substr(i, name.size()) == name) {
                out += c;
                i += name.size();
                decoded = true;
                break;
            }
        }
        if (!decoded) out += text[i++];
    }
    return out;
}

std::optional<std::chrono::system_clock::time_point> expiration_of(std::string_view text) {
    auto ms = config::parse_time(text);
    if (!ms) return std::nullopt;
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(*ms));
}

}  // namespace

fetched read_sts_answer(unsigned status, std::string_view body) {
    if (status != 200) {
        auto code = element(body, "Code");
        auto message = element(body, "Message");
        std::string why = "STS refused AssumeRoleWithWebIdentity (" + std::to_string(status);
        if (code) why += " " + *code;
        why += ")";
        if (message)
            why += ": " + *message;
        else if (!code && !body.empty())
            why += ": " + first_bytes(body);
        return fetched::fail(why);
    }
    auto start = body.find("<Credentials>");
    auto end = body.find("</Credentials>");
    if (start == std::string_view::npos || end == std::string_view::npos || end < start)
        return fetched::fail("STS's answer to AssumeRoleWithWebIdentity has no Credentials");
    auto xml = body.substr(start, end - start);
    credentials keys;
    struct part {
        const char* tag;
        std::string* into;
    };
    std::string expiration_text;
    for (auto [tag, into] :
         {part{"AccessKeyId", &keys.access_key_id},
          part{"SecretAccessKey", &keys.secret_access_key},
          part{"SessionToken", &keys.session_token}, part{"Expiration", &expiration_text}}) {
        auto text = element(xml, tag);
        if (!text || text->empty())
            return fetched::fail(std::string("STS's answer has no Credentials/") + tag);
        *into = std::move(*text);
    }
    keys.expiration = expiration_of(expiration_text);
    if (!keys.expiration)
        return fetched::fail("STS's answer has an Expiration that is no time: `" +
                             first_bytes(expiration_text) + "`");
    return {std::move(keys), {}};
}

fetched read_metadata_credentials(std::string_view body) {
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 8;
    auto value = json::parse(body, ec, {}, options);
    if (ec || !value.is_object())
        return fetched::fail("the instance metadata service's credentials are not a JSON object");
    const auto& o = value.get_object();
    auto text = [&](std::string_view key) -> std::string {
        auto* v = o.if_contains(key);
        return v && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    if (auto code = text("Code"); !code.empty() && code != "Success")
        return fetched::fail("the instance metadata service answered Code `" + code + "`" +
                             (text("Message").empty() ? "" : ": " + text("Message")));
    credentials keys;
    keys.access_key_id = text("AccessKeyId");
    keys.secret_access_key = text("SecretAccessKey");
    keys.session_token = text("Token");
    for (auto [key, value] : {std::pair{"AccessKeyId", &keys.access_key_id},
                              std::pair{"SecretAccessKey", &keys.secret_access_key},
                              std::pair{"Token", &keys.session_token}})
        if (value->empty())
            return fetched::fail(std::string("the instance metadata service's credentials have "
                                             "no ") +
                                 key);
    keys.expiration = expiration_of(text("Expiration"));
    if (!keys.expiration)
        return fetched::fail("the instance metadata service's credentials have no Expiration");
    return {std::move(keys), {}};
}

net::awaitable<fetched> assume_role_with_web_identity(const source& from, config::duration timeout,
                                                      const exchange_hooks& hooks) {
    // The token file is read at each refresh: Kubernetes and others replace it as it ages.
    std::ifstream file(from.token_file, std::ios::binary);
    if (!file)
        co_return fetched::fail("cannot read the web identity token file `" + from.token_file +
                                "`");
    std::string token(token_file_limit + 1, '\0');
    file.read(token.data(), static_cast<std::streamsize>(token.size()));
    token.resize(static_cast<std::size_t>(file.gcount()));
    if (token.size() > token_file_limit)
        co_return fetched::fail("the web identity token file `" + from.token_file +
                                "` is larger than 64 KiB");
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
        token.pop_back();
    if (token.empty())
        co_return fetched::fail("the web identity token file `" + from.token_file + "` is empty");

    auto sts = credential_service("aws-sts", from.sts_url, timeout);
    if (!sts) co_return fetched::fail("STS endpoint " + sts.error);
    std::string form =
        "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=" + uri_encode(from.role_arn) +
        "&RoleSessionName=" + uri_encode(from.session_name) +
        "&WebIdentityToken=" + uri_encode(token);
    auto head =
        credential_request_head("POST", *sts.value, "/",
                                "Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n"
                                "Accept: text/xml\r\n",
                                form.size());
    auto answered = co_await call_credential_service(*sts.value, head, form, hooks);
    if (!answered)
        co_return fetched::fail("STS at " + from.sts_url + " did not answer: " + answered.error);
    co_return read_sts_answer(answered.value->status, answered.value->body);
}

net::awaitable<fetched> instance_metadata_credentials(const source& from, config::duration timeout,
                                                      const exchange_hooks& hooks) {
    auto imds = credential_service("aws-imds", from.metadata_url, timeout);
    if (!imds) co_return fetched::fail("instance metadata endpoint " + imds.error);
    const auto& up = *imds.value;
    std::string where = "the instance metadata service at " + from.metadata_url;

    // (Each head a named local: GCC 12 mishandles temporaries in a co_await's expression.)
    auto session_head = credential_request_head(
        "PUT", up, "/latest/api/token", "X-aws-ec2-metadata-token-ttl-seconds: 21600\r\n", 0);
    auto session = co_await call_credential_service(up, session_head, {}, hooks);
    if (!session) co_return fetched::fail(where + " did not answer: " + session.error);
    if (session.value->status != 200 || session.value->body.empty())
        co_return fetched::fail(where + " gave no IMDSv2 session token (" +
                                std::to_string(session.value->status) + ")");
    std::string token_field = "X-aws-ec2-metadata-token: " + session.value->body + "\r\n";

    const std::string roles_target = "/latest/meta-data/iam/security-credentials/";
    auto roles_head = credential_request_head("GET", up, roles_target, token_field, 0);
    auto roles = co_await call_credential_service(up, roles_head, {}, hooks);
    if (!roles) co_return fetched::fail(where + " did not answer: " + roles.error);
    if (roles.value->status == 404)
        co_return fetched::fail(where + " says this instance has no IAM role");
    auto role = roles.value->body.substr(0, roles.value->body.find_first_of("\r\n"));
    if (roles.value->status != 200 || role.empty())
        co_return fetched::fail(where + " named no IAM role (" +
                                std::to_string(roles.value->status) + ")");

    auto keys_head =
        credential_request_head("GET", up, roles_target + uri_encode(role), token_field, 0);
    auto keys = co_await call_credential_service(up, keys_head, {}, hooks);
    if (!keys) co_return fetched::fail(where + " did not answer: " + keys.error);
    if (keys.value->status != 200)
        co_return fetched::fail(where + " refused the credentials of role `" + role + "` (" +
                                std::to_string(keys.value->status) + ")");
    auto read = read_metadata_credentials(keys.value->body);
    if (!read) co_return fetched::fail(read.error + " (role `" + role + "`)");
    co_return read;
}

}  // namespace gateway::upstream::aws
