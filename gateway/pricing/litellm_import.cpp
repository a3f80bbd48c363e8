#include "gateway/pricing/litellm_import.hpp"

#include "gateway/providers/conversation.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace gateway::pricing {

namespace json = boost::json;

namespace {

// The modes of LiteLLM's entries that are text models priced by the token.
constexpr std::string_view text_modes[] = {"chat", "completion", "responses"};

// The member names of the rates a price entry has a field for.
constexpr std::string_view input_name = "input_cost_per_token";
constexpr std::string_view output_name = "output_cost_per_token";
constexpr std::string_view cache_read_name = "cache_read_input_token_cost";
constexpr std::string_view cache_write_name = "cache_creation_input_token_cost";
constexpr std::string_view cache_write_1h_name = "cache_creation_input_token_cost_above_1hr";
constexpr std::string_view reasoning_name = "output_cost_per_reasoning_token";
constexpr std::string_view tier_prefix = "input_cost_per_token_above_";

constexpr std::string_view source_name = "litellm model_prices_and_context_window.json";

// `v` in scientific notation, its shortest form that reads back as `v`: "2.1875e-06".
std::string shortest(double v) {
    char out[40];
    auto [end, ec] = std::to_chars(out, out + sizeof out, v, std::chars_format::scientific);
    return std::string(out, end);
}

// A decimal in scientific notation with its exponent moved by `by`: exact, as text.
std::string moved(std::string_view sci, int by) {
    auto e = sci.find('e');
    auto digits = sci.substr(e + 1);
    if (digits.starts_with('+')) digits.remove_prefix(1);
    int exponent = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), exponent);
    return std::string(sci.substr(0, e)) + "e" + std::to_string(exponent + by);
}

double read_double(std::string_view text) {
    double v = 0;
    std::from_chars(text.data(), text.data() + text.size(), v);
    return v;
}

// "3:14": the line and column (from 1) of byte `at` of `text`.
std::string position(std::string_view text, std::size_t at) {
    at = std::min(at, text.size());
    auto before = text.substr(0, at);
    auto line = std::count(before.begin(), before.end(), '\n') + 1;
    auto line_start = before.rfind('\n');
    auto column = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    return std::to_string(line) + ":" + std::to_string(column);
}

std::string_view kind_of(const json::value& v) {
    switch (v.kind()) {
        case json::kind::array:
            return "an array";
        case json::kind::string:
            return "a string";
        case json::kind::null:
            return "null";
        case json::kind::bool_:
            return "a boolean";
        case json::kind::object:
            return "an object";
        default:
            return "a number";
    }
}

std::string_view string_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// Whether a key's first part (before its first '/') names `provider`: `gemini/…` of gemini,
// `vertex_ai/…` of vertex_ai-language-models, `fireworks_ai/…` of fireworks_ai-embedding-models.
bool names_provider(std::string_view head, std::string_view provider) {
    return provider.starts_with(head) &&
           (provider.size() == head.size() || provider[head.size()] == '-' ||
            provider[head.size()] == '_');
}

// One entry of a chosen provider and text mode, before its prices are read.
struct candidate {
    std::string_view key;
    std::string_view provider;
    const json::object* entry;
    std::size_t rank;  // the provider's place in litellm_options::providers
    bool prefixed;     // its key begins with its provider's name
};

// Reads an entry's rates; `problem` says what is wrong with one that is not a price.
class rate_reader {
public:
    explicit rate_reader(const json::object& entry) : entry_(entry) {}

    // The rate `name` per 1M tokens; nullopt when absent (or null).
    std::optional<double> operator()(std::string_view name) {
        const auto* v = entry_.if_contains(name);
        if (!v || v->is_null()) return std::nullopt;
        std::optional<double> rate;
        if (v->is_number()) rate = per_million(v->to_number<double>());
        if (!rate && problem.empty()) {
            auto shown = json::serialize(*v);
            if (shown.size() > 40) shown = shown.substr(0, 40) + "…";
            problem = "`" + std::string(name) + "` is not a price in USD per token: " + shown;
        }
        return rate;
    }

    std::string problem;

private:
    const json::object& entry_;
};

// The long-context tiers of an entry, lowest first: `above` and how the member names write it
// ("200k" in input_cost_per_token_above_200k_tokens).
struct tier_name {
    std::int64_t above = 0;
    std::string text;
};

std::vector<tier_name> tiers_of(const json::object& entry) {
    std::vector<tier_name> out;
    for (const auto& member : entry) {
        std::string_view key = member.key();
        if (!key.starts_with(tier_prefix) || !key.ends_with("_tokens")) continue;
        auto text = key.substr(tier_prefix.size(), key.size() - tier_prefix.size() - 7);
        bool thousands = text.ends_with('k');
        auto digits = thousands ? text.substr(0, text.size() - 1) : text;
        std::int64_t n = 0;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (ec != std::errc() || end != digits.data() + digits.size() || n <= 0) continue;
        out.push_back({thousands ? n * 1000 : n, std::string(text)});
    }
    std::sort(out.begin(), out.end(),
              [](const tier_name& a, const tier_name& b) { return a.above < b.above; });
    return out;
}

// The member names of a tier's rates.
std::vector<std::string> tier_names(const tier_name& t) {
    return {std::string(tier_prefix) + t.text + "_tokens",
            "output_cost_per_token_above_" + t.text + "_tokens",
            "cache_read_input_token_cost_above_" + t.text + "_tokens",
            "cache_creation_input_token_cost_above_" + t.text + "_tokens"};
}

// The rates of `entry` as a price entry named `name`; nullopt with the reason counted.
std::optional<config::price_entry> price_of(std::string_view key, const json::object& entry,
                                            std::string name, litellm_report& report) {
    rate_reader rate(entry);
    config::price_entry e;
    e.model = std::move(name);
    e.source = source_name;
    auto& r = e.rates;
    r.input = rate(input_name);
    r.output = rate(output_name);
    r.cache_read = rate(cache_read_name);
    r.cache_write = rate(cache_write_name);
    r.cache_write_1h = rate(cache_write_1h_name);
    r.reasoning = rate(reasoning_name);
    if (auto tiers = tiers_of(entry); !tiers.empty()) {
        // A rate the tier leaves out is the base rate of its kind, as LiteLLM charges it; the
        // 1-hour write and reasoning have no tier of their own there.
        auto names = tier_names(tiers.front());
        auto& tier = e.long_context;
        tier.above = tiers.front().above;
        tier.rates = r;
        tier.rates.input = rate(names[0]);
        if (auto v = rate(names[1])) tier.rates.output = v;
        if (auto v = rate(names[2])) tier.rates.cache_read = v;
        if (auto v = rate(names[3])) tier.rates.cache_write = v;
    }
    if (!rate.problem.empty()) {
        report.unusable.push_back(std::string(key) + ": " + rate.problem);
        return std::nullopt;
    }
    if (!r.input || !r.output) {
        ++report.no_token_prices;
        return std::nullopt;
    }
    return e;
}

// Counts what the report says of a kept entry: free, more tiers than one, rates not carried.
void count_kept(const json::object& entry, const config::price_entry& e, litellm_report& report) {
    if (*e.rates.input == 0 && *e.rates.output == 0) ++report.free;
    std::vector<std::string> carried{
        std::string(input_name),          std::string(output_name),
        std::string(cache_read_name),     std::string(cache_write_name),
        std::string(cache_write_1h_name), std::string(reasoning_name)};
    auto tiers = tiers_of(entry);
    if (!tiers.empty()) {
        auto names = tier_names(tiers.front());
        carried.insert(carried.end(), names.begin(), names.end());
    }
    if (tiers.size() > 1) ++report.extra_tiers;
    for (const auto& member : entry) {
        std::string_view key = member.key();
        if (key.find("cost") != std::string_view::npos &&
            std::find(carried.begin(), carried.end(), key) == carried.end())
            ++report.not_carried[std::string(key)];
    }
}

// The table's name for `c`, or what makes its key unusable as one.
std::string name_of(const candidate& c, std::string& problem) {
    auto name = c.key;
    if (c.prefixed) name.remove_prefix(name.find('/') + 1);
    if (name.empty() || name.size() > providers::max_model_name_bytes)
        problem = "the name is empty or longer than " +
                  std::to_string(providers::max_model_name_bytes) + " bytes";
    else if (std::any_of(name.begin(), name.end(), [](char ch) {
                 return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
             }))
        problem = "the name holds a control character";
    else if (name.find_first_of("*?[") != std::string_view::npos)
        problem = "the name holds a glob character (* ? [)";
    // OpenAI names a fine-tuned model `ft:BASE:ORG:SUFFIX:ID`; LiteLLM prices it by BASE.
    if (name.starts_with("ft:")) return std::string(name) + ":*";
    return std::string(name);
}

bool same_price(const config::price_entry& a, const config::price_entry& b) {
    return a.rates == b.rates && a.long_context == b.long_context;
}

}  // namespace

std::optional<double> per_million(double per_token) {
    if (!std::isfinite(per_token) || per_token < 0) return std::nullopt;
    if (per_token == 0) return 0.0;
    double rate = read_double(moved(shortest(per_token), 6));
    // What the table will print (its shortest form), moved back, must be the file's number.
    if (!std::isfinite(rate) || read_double(moved(shortest(rate), -6)) != per_token)
        return std::nullopt;
    return rate;
}

config::parsed<litellm_import> import_litellm(std::string_view text,
                                              const litellm_options& options) {
    using result = config::parsed<litellm_import>;
    json::stream_parser parser;
    boost::system::error_code ec;
    auto read = parser.write(text.data(), text.size(), ec);
    if (!ec) parser.finish(ec);
    if (ec) return result::fail(position(text, read) + ": not JSON: " + ec.message());
    auto root = parser.release();
    const auto* map = root.if_object();
    if (!map)
        return result::fail("1:1: not LiteLLM's price map: the file holds " +
                            std::string(kind_of(root)) + ", not an object of models");

    litellm_import out;
    auto& report = out.report;
    std::vector<candidate> candidates;
    bool any_provider = false;
    for (const auto& member : *map) {
        ++report.entries;
        const auto* entry = member.value().if_object();
        auto provider = entry ? string_of(*entry, "litellm_provider") : std::string_view();
        // sample_spec describes the fields; its provider is a sentence.
        if (provider.empty() || member.key() == "sample_spec") {
            ++report.not_models;
            continue;
        }
        any_provider = true;
        auto chosen = std::find(options.providers.begin(), options.providers.end(), provider);
        if (chosen == options.providers.end()) {
            ++report.other_providers[std::string(provider)];
            continue;
        }
        auto mode = string_of(*entry, "mode");
        if (std::find(std::begin(text_modes), std::end(text_modes), mode) == std::end(text_modes)) {
            ++report.other_modes[std::string(mode)];
            continue;
        }
        std::string_view key = member.key();
        auto slash = key.find('/');
        candidates.push_back(
            {key, provider, entry, static_cast<std::size_t>(chosen - options.providers.begin()),
             slash != std::string_view::npos && names_provider(key.substr(0, slash), provider)});
    }
    if (!any_provider)
        return result::fail(
            "1:1: not LiteLLM's price map: no member is a model with a `litellm_provider`");

    // The first provider named first; within one, a key written without its provider's prefix.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const candidate& a, const candidate& b) {
                         return a.rank != b.rank ? a.rank < b.rank : a.prefixed < b.prefixed;
                     });
    std::map<std::string, std::pair<config::price_entry, std::string_view>> kept;
    for (const auto& c : candidates) {
        std::string problem;
        auto name = name_of(c, problem);
        if (!problem.empty()) {
            report.unusable.push_back(std::string(c.key) + ": " + problem);
            continue;
        }
        auto price = price_of(c.key, *c.entry, name, report);
        if (!price) continue;
        auto [at, fresh] = kept.try_emplace(name, std::move(*price), c.key);
        if (fresh) {
            count_kept(*c.entry, at->second.first, report);
            continue;
        }
        ++report.duplicates;
        if (!same_price(at->second.first, *price))
            report.differing.push_back(std::string(c.key) + " (" + std::string(c.provider) +
                                       ") prices `" + name + "` unlike " +
                                       std::string(at->second.second) + ", which is kept");
    }
    out.prices.date = options.date;
    for (auto& [name, entry] : kept) out.prices.models.push_back(std::move(entry.first));
    report.kept = out.prices.models.size();
    return {std::move(out), {}};
}

}  // namespace gateway::pricing
