#include "gateway/cache/cache_key.hpp"

#include "gateway/tools/digest.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
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

}  // namespace

std::string canonical_json(const json::value& v) {
    std::string out;
    write_canonical(v, out);
    return out;
}

std::optional<std::string> key_of(std::string_view body, std::string_view api_path,
                                  std::string_view target, std::string_view scope,
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
    std::string material = "contextgate-cache 1\n";
    material.append(api).append("\n");
    material.append(target).append("\n");
    material.append(scope).append("\n");
    write_canonical(parsed, material);
    return tools::sha256_hex(material);
}

}  // namespace gateway::cache
