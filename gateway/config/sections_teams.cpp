// The declared teams' fields (`teams:`), declared once as every section's are (sections.cpp).
#include "gateway/config/field_kinds.hpp"

#include <array>

namespace gateway::config {

using namespace field_kinds;

const fields<team_config>& team_fields() {
    using S = team_config;
    static const fields<S> all{
        {"name", "1-64 letters, digits, _ - .",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             s.name = r.scalar(n, "name");
             if (!valid_key_name(s.name))
                 r.fail(n, std::string(section) + ": `name` must be " + std::string(key_name_rule));
         },
         [](const S& s) { return quoted(s.name); }},
        {"budget", "{usd, period: day | week | month}: bounds every key the team owns",
         [](const yaml_reader& r, const YAML::Node& b, std::string_view section, S& s) {
             r.check_keys(b, std::string(section) + ".budget", {"usd", "period"});
             if (auto n = b["usd"]) {
                 auto text = r.scalar(n, "usd");
                 auto usd = parse_usd(text);
                 if (!usd)
                     r.fail(n, "`budget.usd`: `" + text +
                                   "` must be an amount of USD such as 500.00 (up to 9 decimals)");
                 s.budget_usd_nano = *usd;
             }
             if (auto n = b["period"])
                 s.budget_period = std::array{
                     budget_period::day, budget_period::week,
                     budget_period::month}[r.one_of(n, "budget.period", {"day", "week", "month"})];
         },
         [](const S& s) {
             return "{usd: " + usd_text(s.budget_usd_nano) +
                    ", period: " + std::string(budget_period_name(s.budget_period)) + "}";
         }},
        list_field("models", &S::models, "globs every key of the team is bounded by"),
    };
    return all;
}

}  // namespace gateway::config
