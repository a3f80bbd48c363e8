#include "gateway/providers/model_lists.hpp"

#include "gateway/http/request_values.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>

namespace gateway::providers {

namespace {

// The most a page of an upstream's list is asked to hold (each provider's own maximum).
constexpr std::string_view anthropic_page = "1000";
constexpr std::string_view gemini_page = "1000";

// "2025-02-19T00:00:00Z" as seconds since the epoch; 0 when it is no such time.
std::int64_t from_rfc3339(std::string_view text) {
    std::tm t{};
    std::string copy(text.substr(0, 19));
    if (!strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &t)) return 0;
    return static_cast<std::int64_t>(timegm(&t));
}

std::string to_rfc3339(std::int64_t seconds) {
    auto at = static_cast<std::time_t>(seconds);
    std::tm t{};
    gmtime_r(&at, &t);
    char out[32];
    std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &t);
    return out;
}

std::string string_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// A count from a query parameter: `fallback` when absent or unreadable, within [1, most].
std::size_t count_of(std::string_view text, std::size_t fallback, std::size_t most) {
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || n == 0)
        return fallback;
    return std::min(n, most);
}

// A page token as a query value: every byte but the unreserved ones percent-encoded.
std::string query_encoded(std::string_view text) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += c;
        } else {
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 15];
        }
    }
    return out;
}

std::string_view shown_name(const listed_model& m) {
    return m.display_name.empty() ? std::string_view(m.id) : std::string_view(m.display_name);
}

// `rates` as JSON members, each after a comma; a rate in its shortest decimal form.
void append_rates(std::string& out, const config::token_rates& rates) {
    auto rate = [&](std::string_view name, const std::optional<double>& v) {
        if (!v) return;
        char number[32];
        auto [end, ec] = std::to_chars(number, number + sizeof number, *v);
        out += ",\"";
        out += name;
        out += "\":";
        out.append(number, end);
    };
    rate("input", rates.input);
    rate("output", rates.output);
    rate("cache_read", rates.cache_read);
    rate("cache_write", rates.cache_write);
    rate("cache_write_1h", rates.cache_write_1h);
    rate("reasoning", rates.reasoning);
}

// The entries [from, to) of `models` as a JSON array, each as `shape` makes it, with its price
// as one member more. Written as text: Boost.JSON would give a price of 2.5 as 2.5E0.
template <class Shape>
std::string entries(const std::vector<listed_model>& models, std::size_t from, std::size_t to,
                    Shape shape) {
    std::string out = "[";
    for (auto i = from; i < to; ++i) {
        json::object entry = shape(models[i]);
        if (models[i].price) entry.erase("contextgate_price");
        auto text = json::serialize(entry);
        if (models[i].price) {
            text.pop_back();  // its '}'
            text += ",\"contextgate_price\":" + price_json(*models[i].price) + "}";
        }
        out += (i > from ? "," : "") + text;
    }
    return out + "]";
}

std::string openai_list(const std::vector<listed_model>& models) {
    auto shape = [](const listed_model& m) {
        if (!m.original.empty()) return m.original;
        return json::object{
            {"id", m.id}, {"object", "model"}, {"created", m.created}, {"owned_by", m.owned_by}};
    };
    return "{\"object\":\"list\",\"data\":" + entries(models, 0, models.size(), shape) + "}";
}

// Anthropic's page: `limit` models after `after_id` (or before `before_id`).
std::string anthropic_list(const std::vector<listed_model>& models, std::string_view target) {
    auto limit = count_of(http::query_value(target, "limit"), 20, 1000);
    auto after = http::query_value(target, "after_id");
    auto before = http::query_value(target, "before_id");
    auto id_is = [](const std::string& id) {
        return [&id](const listed_model& m) { return m.id == id; };
    };
    std::size_t from = 0;
    std::size_t to = models.size();
    if (!after.empty()) {
        auto it = std::find_if(models.begin(), models.end(), id_is(after));
        from =
            it == models.end() ? models.size() : static_cast<std::size_t>(it - models.begin()) + 1;
        to = std::min(models.size(), from + limit);
    } else if (!before.empty()) {
        auto it = std::find_if(models.begin(), models.end(), id_is(before));
        to = static_cast<std::size_t>(it - models.begin());
        from = to > limit ? to - limit : 0;
    } else {
        to = std::min(models.size(), limit);
    }
    auto shape = [](const listed_model& m) {
        return json::object{{"type", "model"},
                            {"id", m.id},
                            {"display_name", shown_name(m)},
                            {"created_at", to_rfc3339(m.created)}};
    };
    bool more = before.empty() ? to < models.size() : from > 0;
    json::value first = from < to ? json::value(models[from].id) : json::value(nullptr);
    json::value last = from < to ? json::value(models[to - 1].id) : json::value(nullptr);
    auto rest = json::serialize(json::object{
        {"has_more", more}, {"first_id", std::move(first)}, {"last_id", std::move(last)}});
    return "{\"data\":" + entries(models, from, to, shape) + "," + rest.substr(1);
}

// Gemini's models.list: `pageSize` models from the offset `pageToken` gave.
std::string gemini_list(const std::vector<listed_model>& models, std::string_view target) {
    auto size = count_of(http::query_value(target, "pageSize"), 50, 1000);
    auto token = http::query_value(target, "pageToken");
    std::size_t from = token.empty() ? 0 : count_of(token, models.size(), models.size());
    std::size_t to = std::min(models.size(), from + size);
    auto shape = [](const listed_model& m) {
        return json::object{
            {"name", "models/" + m.id},
            {"displayName", shown_name(m)},
            {"supportedGenerationMethods",
             json::array{"generateContent", "streamGenerateContent", "countTokens"}}};
    };
    std::string out = "{\"models\":" + entries(models, from, to, shape);
    if (to < models.size()) out += ",\"nextPageToken\":\"" + std::to_string(to) + "\"";
    return out + "}";
}

}  // namespace

std::string model_list_target(provider p, std::string_view page) {
    switch (p) {
        case provider::anthropic: {
            std::string target = "/v1/models?limit=" + std::string(anthropic_page);
            if (!page.empty()) target += "&after_id=" + query_encoded(page);
            return target;
        }
        case provider::gemini: {
            std::string target = "/models?pageSize=" + std::string(gemini_page);
            if (!page.empty()) target += "&pageToken=" + query_encoded(page);
            return target;
        }
        case provider::bedrock:  // never asked (model_catalog): its list is its control plane's
        case provider::openai:
            break;
    }
    return "/models";
}

bool read_model_page(provider p, std::string_view body, std::vector<listed_model>& out,
                     std::string& next, std::string& error) {
    next.clear();
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 32;
    auto value = json::parse(body, ec, {}, options);
    const auto* o = !ec ? value.if_object() : nullptr;
    std::string_view member = p == provider::gemini ? "models" : "data";
    const auto* list = o ? o->if_contains(member) : nullptr;
    if (!list || !list->is_array()) {
        error = "the answer is not a model list (no `" + std::string(member) + "` array)";
        return false;
    }
    for (const auto& item : list->get_array()) {
        const auto* entry = item.if_object();
        if (!entry) continue;
        listed_model m;
        if (p == provider::gemini) {
            m.id = string_of(*entry, "name");
            if (m.id.starts_with("models/")) m.id.erase(0, 7);
            m.display_name = string_of(*entry, "displayName");
        } else {
            m.id = string_of(*entry, "id");
        }
        if (m.id.empty() || m.id.size() > max_model_name_bytes) continue;
        if (p == provider::anthropic) {
            m.display_name = string_of(*entry, "display_name");
            m.created = from_rfc3339(string_of(*entry, "created_at"));
        } else if (p == provider::openai) {
            m.owned_by = string_of(*entry, "owned_by");
            if (const auto* c = entry->if_contains("created"); c && c->is_int64())
                m.created = c->get_int64();
            m.original = *entry;
        }
        out.push_back(std::move(m));
    }
    if (p == provider::anthropic) {
        const auto* more = o->if_contains("has_more");
        if (more && more->is_bool() && more->get_bool()) next = string_of(*o, "last_id");
    } else if (p == provider::gemini) {
        next = string_of(*o, "nextPageToken");
    }
    return true;
}

std::string model_list_answer(provider dialect, const std::vector<listed_model>& models,
                              std::string_view target) {
    switch (dialect) {
        case provider::anthropic:
            return anthropic_list(models, target);
        case provider::gemini:
            return gemini_list(models, target);
        case provider::bedrock:  // no client speaks Converse on /v1
        case provider::openai:
            break;
    }
    return openai_list(models);
}

std::string price_json(const config::price_entry& price) {
    std::string out = "{\"unit\":\"usd_per_1m_tokens\"";
    append_rates(out, price.rates);
    if (price.long_context.above > 0) {
        out += ",\"long_context\":{\"above\":" + std::to_string(price.long_context.above);
        append_rates(out, price.long_context.rates);
        out += "}";
    }
    return out + "}";
}

std::string model_not_found_body(provider dialect, std::string_view message) {
    switch (dialect) {
        case provider::anthropic:
            return json::serialize(json::object{
                {"type", "error"}, {"error", {{"type", "not_found_error"}, {"message", message}}}});
        case provider::gemini:
            return json::serialize(json::object{
                {"error", {{"code", 404}, {"message", message}, {"status", "NOT_FOUND"}}}});
        case provider::bedrock:  // no client speaks Converse on /v1
        case provider::openai:
            break;
    }
    return json::serialize(json::object{{"error",
                                         {{"message", message},
                                          {"type", "invalid_request_error"},
                                          {"param", "model"},
                                          {"code", "model_not_found"}}}});
}

}  // namespace gateway::providers
