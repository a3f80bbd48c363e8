#include "gateway/cache/cache_key.hpp"

#include "gateway/secret_names.hpp"
#include "gateway/tools/digest.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <vector>

namespace gateway::cache {

namespace json = boost::json;

namespace {

void write_canonical(const json::value& v, std::string& out) {
    if (const auto* o = v.if_object()) {
        std::vector<const json::key_value_pair*> members;
        members.reserve(o->size());
        for (const auto& m : *o) members.push_back(&m);
        std::sort(members.begin(), members.end(),
                  [](const auto* a, const auto* b) { return a->key() < b->key(); });
        out += '{';
        for (std::size_t i = 0; i < members.size(); ++i) {
            if (i) out += ',';
            out += json::serialize(json::string(members[i]->key()));
            out += ':';
            write_canonical(members[i]->value(), out);
        }
        out += '}';
    } else if (const auto* a = v.if_array()) {
        out += '[';
        for (std::size_t i = 0; i < a->size(); ++i) {
            if (i) out += ',';
            write_canonical((*a)[i], out);
        }
        out += ']';
    } else {
        out += json::serialize(v);
    }
}

// A member's value above 1 (as a number), e.g. n: 2.
bool above_one(const json::object& o, std::string_view name) {
    const auto* v = o.if_contains(name);
    if (!v) return false;
    if (v->is_int64()) return v->as_int64() > 1;
    if (v->is_uint64()) return v->as_uint64() > 1;
    if (v->is_double()) return v->as_double() > 1;
    return false;
}

enum class kind { neutral, credential, varies };

std::string lowercase(std::string_view text) {
    std::string out(text);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

kind kind_of_field(std::string_view name) {
    static constexpr std::string_view neutral[] = {"accept",
                                                   "accept-encoding",
                                                   "accept-language",
                                                   "baggage",
                                                   "cache-control",
                                                   "content-length",
                                                   "content-type",
                                                   "dnt",
                                                   "expect",
                                                   "forwarded",
                                                   "host",
                                                   "idempotency-key",
                                                   "origin",
                                                   "pragma",
                                                   "priority",
                                                   "referer",
                                                   "traceparent",
                                                   "tracestate",
                                                   "user-agent",
                                                   "via",
                                                   "x-real-ip",
                                                   "x-request-id"};
    static constexpr std::string_view neutral_prefixes[] = {"x-stainless-", "sec-", "x-forwarded-"};
    auto lower = lowercase(name);
    for (auto n : neutral)
        if (lower == n) return kind::neutral;
    for (auto p : neutral_prefixes)
        if (lower.starts_with(p)) return kind::neutral;
    if (lower == "authorization" || lower == "cookie" || names_a_secret(lower))
        return kind::credential;
    return kind::varies;
}

kind kind_of_parameter(std::string_view decoded) {
    if (decoded == "alt") return kind::neutral;
    return names_a_secret(decoded) ? kind::credential : kind::varies;
}

// The lines in an order that does not depend on the order they were sent in.
std::string joined(std::vector<std::string>& lines) {
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const auto& l : lines) out.append(l).append("\n");
    return out;
}

}  // namespace

head_key head_key_of(const head_view& head, bool shared) {
    std::vector<std::string> credentials;
    std::vector<std::string> varies;
    // A line per field and parameter: "h" or "q", the name, and the value (a digest of it for a
    // credential, which is kept no longer than the key is worked out, yet never needed whole).
    auto note = [&](kind k, char where, std::string name, std::string_view value) {
        if (k == kind::neutral) return;
        std::string line(1, where);
        line.append(" ").append(name).append(" ");
        if (k == kind::credential)
            credentials.push_back(line + tools::sha256_hex(value));
        else
            varies.push_back(line + std::string(value));
    };
    for (const auto& [name, value] : head.fields)
        note(kind_of_field(name), 'h', lowercase(name), value);
    if (auto q = head.target.find('?'); q != std::string_view::npos) {
        auto query = head.target.substr(q + 1);
        while (!query.empty()) {
            auto amp = query.find('&');
            auto pair = query.substr(0, amp);
            auto eq = pair.find('=');
            auto name = percent_decoded(pair.substr(0, eq));
            auto value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
            note(kind_of_parameter(name), 'q', name, value);
            if (amp == std::string_view::npos) break;
            query.remove_prefix(amp + 1);
        }
    }
    head_key out;
    out.varies = joined(varies);
    if (shared) return out;
    // The key's id alone would name the entries of every key ever given that name or id (a
    // rotated secret, another deployment's key on the same Redis): its secret's digest too.
    if (!head.key_id.empty())
        out.scope = "virtual-key " + std::string(head.key_id) + " " +
                    tools::sha256_hex(head.key_secret) + "\n";
    out.scope += joined(credentials);
    return out;
}

std::string canonical_json(const json::value& v) {
    std::string out;
    write_canonical(v, out);
    return out;
}

std::optional<std::string> key_of(std::string_view body, std::string_view api_path,
                                  std::string_view target, const head_key& head,
                                  std::string& why_not) {
    boost::system::error_code ec;
    json::parse_options nesting;
    nesting.max_depth = 64;
    auto parsed = json::parse(body, ec, {}, nesting);
    if (ec || !parsed.is_object()) {
        why_not = "the body is not a JSON object";
        return std::nullopt;
    }
    auto& o = parsed.as_object();
    const auto* generation = o.if_contains("generationConfig");
    if (above_one(o, "n") || (generation && generation->is_object() &&
                              above_one(generation->as_object(), "candidateCount"))) {
        why_not = "it asks for several choices";
        return std::nullopt;
    }
    const auto* logprobs = o.if_contains("logprobs");
    if ((logprobs && !(logprobs->is_bool() && !logprobs->as_bool()) && !logprobs->is_null()) ||
        o.contains("top_logprobs")) {
        why_not = "it asks for log probabilities";
        return std::nullopt;
    }
    o.erase("stream");
    o.erase("stream_options");
    o.erase("user");

    std::string api(api_path);
    if (auto at = api.rfind(":streamGenerateContent"); at != std::string::npos)
        api.replace(at, api.size() - at, ":generateContent");
    // Each part is length-prefixed, so no part's text can pass for the next one's.
    std::string material = "contextgate-cache 2\n";
    for (std::string_view part : {std::string_view(api), target, std::string_view(head.scope),
                                  std::string_view(head.varies)})
        material.append(std::to_string(part.size())).append(":").append(part).append("\n");
    write_canonical(parsed, material);
    return tools::sha256_hex(material);
}

}  // namespace gateway::cache
