#include "gateway/pricing/price_table.hpp"

#include "gateway/config/glob.hpp"

namespace gateway::pricing {

namespace {

bool is_glob(std::string_view name) {
    return name.find_first_of("*?[") != std::string_view::npos;
}

}  // namespace

price_table::price_table(config::price_list table, std::vector<config::price_entry> overrides)
    : table_(std::move(table)), overrides_(std::move(overrides)) {
    for (std::size_t i = 0; i < table_.models.size(); ++i) {
        const auto& name = table_.models[i].model;
        if (is_glob(name))
            globs_.push_back(i);
        else
            exact_.emplace(name, i);  // the first of a name stays
    }
}

const config::price_entry* price_table::find(std::string_view upstream,
                                             std::string_view model) const {
    for (const auto& o : overrides_)
        if ((o.upstream.empty() || o.upstream == upstream) && config::glob_match(o.model, model))
            return &o;
    if (auto it = exact_.find(model); it != exact_.end()) return &table_.models[it->second];
    for (auto i : globs_)
        if (config::glob_match(table_.models[i].model, model)) return &table_.models[i];
    return nullptr;
}

config::parsed<std::shared_ptr<const price_table>> build_prices(
    const config::pricing_config& config) {
    using result = config::parsed<std::shared_ptr<const price_table>>;
    auto list = config.file.empty() ? config::load_price_list(std::string(shipped_prices()),
                                                              "the shipped price table")
                                    : config::load_price_file(config.file);
    if (!list) return result::fail(list.error);
    return {std::make_shared<const price_table>(std::move(*list.value), config.overrides), {}};
}

}  // namespace gateway::pricing
