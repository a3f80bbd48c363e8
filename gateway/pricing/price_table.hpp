#pragma once

#include "gateway/config/config.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gateway::pricing {

// The prices of one configuration (docs/operations.md "Prices and cost"): its overrides, then a
// price table (the one shipped with the binary, or `pricing.file`). Built with the configuration's
// generation (app::build_generation), so a reload changes prices for the requests that start
// after it. Immutable once built: every worker reads it without a lock.
class price_table {
public:
    price_table(config::price_list table, std::vector<config::price_entry> overrides);

    // The price of `model` as `upstream` serves it: the first override whose glob takes the model
    // (and whose upstream, when it names one, is `upstream`); else the table's entry of that exact
    // name; else the first of the table's globs that takes it. Null: the model is unpriced (never
    // to be counted as $0).
    const config::price_entry* find(std::string_view upstream, std::string_view model) const;

    const std::string& date() const { return table_.date; }
    const std::string& origin() const { return table_.origin; }
    std::size_t size() const { return table_.models.size(); }

private:
    struct name_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const {
            return std::hash<std::string_view>{}(s);
        }
    };

    config::price_list table_;
    std::vector<config::price_entry> overrides_;
    // The table's entries by exact name (the first of a name), and those that are globs, in order.
    std::unordered_map<std::string, std::size_t, name_hash, std::equal_to<>> exact_;
    std::vector<std::size_t> globs_;
};

// The price table `config` asks for: `pricing.file`'s, else the shipped one, with the overrides.
// The error names the file and line of what is wrong in it.
config::parsed<std::shared_ptr<const price_table>> build_prices(
    const config::pricing_config& config);

// The shipped table's text: gateway/pricing/prices.yaml, built into the binary.
std::string_view shipped_prices();

}  // namespace gateway::pricing
