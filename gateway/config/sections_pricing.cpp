// The `pricing` section and the price table's file (the shipped one and `pricing.file`): one
// price entry declared once, read the same way in both.
#include "gateway/config/field_kinds.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>

namespace gateway::config {

using namespace field_kinds;

namespace {

// A price: a number of USD per 1M tokens, finite and not negative; printed in its shortest form.
std::optional<double> read_rate(const yaml_reader& r, const YAML::Node& n, std::string_view name) {
    auto text = r.scalar(n, name);
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < 0)
        r.fail(n, "`" + std::string(name) + "` must be a price in USD per 1M tokens (such as " +
                      "2.50), not `" + text + "`");
    return v;
}

std::string rate_text(const std::optional<double>& v) {
    if (!v) return {};
    char out[32];
    auto [end, ec] = std::to_chars(out, out + sizeof out, *v);
    return ec == std::errc() ? std::string(out, end) : std::string();
}

// One rate of the token_rates `group` of S.
template <class S>
field<S> rate_field(std::string_view name, token_rates S::*group,
                    std::optional<double> token_rates::*m, std::string_view about) {
    return {name, about,
            [name, group, m](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                s.*group.*m = read_rate(r, n, name);
            },
            [group, m](const S& s) { return rate_text(s.*group.*m); }};
}

// The six rates of a price, as fields of S.
template <class S>
void add_rates(fields<S>& all, token_rates S::*g) {
    all.push_back(rate_field("input", g, &token_rates::input, "USD per 1M input tokens"));
    all.push_back(rate_field("output", g, &token_rates::output, "USD per 1M output tokens"));
    all.push_back(rate_field("cache_read", g, &token_rates::cache_read,
                             "a cached input token (default: input)"));
    all.push_back(rate_field("cache_write", g, &token_rates::cache_write,
                             "an input token written to a 5-minute cache (default: input)"));
    all.push_back(rate_field("cache_write_1h", g, &token_rates::cache_write_1h,
                             "written to a 1-hour cache (default: cache_write)"));
    all.push_back(rate_field("reasoning", g, &token_rates::reasoning,
                             "a reasoning (thinking) token (default: output)"));
}

// An entry needs a model, and input and output prices (its tier too, when it has one).
void check_entry(const yaml_reader& r, const YAML::Node& n, const std::string& at,
                 const price_entry& e) {
    if (e.model.empty()) r.fail(n, at + ": `model` is required (a name or a glob)");
    if (!e.rates.input || !e.rates.output)
        r.fail(n, at + ": `input` and `output` are required (USD per 1M tokens)");
    const auto& tier = e.long_context;
    if (n["long_context"] && (!tier.rates.input || !tier.rates.output || tier.above <= 0))
        r.fail(n["long_context"],
               at + ".long_context: `above` (input tokens), `input` and `output` are required");
}

std::vector<price_entry> read_entries(const yaml_reader& r, const YAML::Node& n,
                                      const std::string& label) {
    if (!n.IsSequence()) r.fail(n, "`" + label + "` must be a list of {model, input, output, …}");
    std::vector<price_entry> out;
    for (std::size_t i = 0; i < n.size(); ++i) {
        auto at = label + "[" + std::to_string(i) + "]";
        if (!n[i].IsMap()) r.fail(n[i], at + " must be a map such as {model, input, output}");
        price_entry e;
        read(r, n[i], at, price_entry_fields(), e);
        check_entry(r, n[i], at, e);
        out.push_back(std::move(e));
    }
    return out;
}

std::string entries_text(const std::vector<price_entry>& entries) {
    std::string out = "[";
    for (const auto& e : entries)
        out += (out.size() > 1 ? ", " : "") + flow(e, price_entry_fields());
    return out + "]";
}

}  // namespace

const fields<price_tier>& price_tier_fields() {
    using S = price_tier;
    static const fields<S> all = [] {
        fields<S> f{count_field("above", &S::above, 1, std::size_t(1) << 40,
                                "the tier's rates apply past this many input tokens")};
        add_rates(f, &S::rates);
        return f;
    }();
    return all;
}

const fields<price_entry>& price_entry_fields() {
    using S = price_entry;
    static const fields<S> all = [] {
        fields<S> f{
            text_field("model", &S::model, "a model name or a glob"),
            {"upstream", "only as this upstream serves it (default: every upstream)",
             [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                 s.upstream = r.scalar(n, "upstream");
             },
             [](const S& s) {
                 return s.upstream.empty() ? std::string() : config::quoted(s.upstream);
             }},
            {"source", "the published pricing page",
             [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                 s.source = r.scalar(n, "source");
             },
             [](const S& s) {
                 return s.source.empty() ? std::string() : config::quoted(s.source);
             }},
        };
        add_rates(f, &S::rates);
        f.push_back({"long_context",
                     "{above, input, output, …}: the rates past `above` input tokens",
                     [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
                         if (!n.IsMap())
                             r.fail(n,
                                    "`long_context` must be a map such as {above: 200000, "
                                    "input: 2.50, output: 15.00}");
                         read(r, n, std::string(section) + ".long_context", price_tier_fields(),
                              s.long_context);
                     },
                     [](const S& s) {
                         return s.long_context.above > 0 ? flow(s.long_context, price_tier_fields())
                                                         : std::string();
                     }});
        return f;
    }();
    return all;
}

const fields<pricing_config>& pricing_fields() {
    using S = pricing_config;
    static const fields<S> all{
        path_field("file", &S::file, "a price table replacing the shipped one (\"\": shipped)"),
        {"overrides", "prices by model glob, optionally per upstream; the first match wins",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             s.overrides = read_entries(r, n, std::string(section) + ".overrides");
         },
         [](const S& s) { return entries_text(s.overrides); }},
    };
    return all;
}

parsed<price_list> load_price_list(const std::string& yaml, const std::string& source) {
    try {
        yaml_reader r(source, "");
        YAML::Node root = YAML::Load(yaml);
        if (!root.IsMap()) r.fail(root, "a price table is a map with `date` and `models`");
        r.check_keys(root, "top level", {"date", "models"});
        if (!root["models"]) r.fail(root, "`models` is required: the list of prices");
        price_list out;
        out.origin = source;
        if (auto d = root["date"]) out.date = r.scalar(d, "date");
        out.models = read_entries(r, root["models"], "models");
        return {std::move(out), {}};
    } catch (const load_error& e) {
        return parsed<price_list>::fail(e.message);
    } catch (const YAML::Exception& e) {
        std::string where = source;
        if (e.mark.line >= 0) where += ":" + std::to_string(e.mark.line + 1);
        return parsed<price_list>::fail(where + ": " + e.msg);
    }
}

std::string price_list_yaml(const price_list& list) {
    std::string out = "date: " + quoted(list.date) + "\nmodels:\n";
    for (const auto& e : list.models) out += "  - " + flow(e, price_entry_fields()) + "\n";
    return out;
}

parsed<price_list> load_price_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return parsed<price_list>::fail(path + ": cannot open the price table");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return load_price_list(text, path);
}

}  // namespace gateway::config
