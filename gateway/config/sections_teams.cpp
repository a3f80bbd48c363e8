// The declared teams' fields (`teams:`), declared once as every section's are (sections.cpp).
#include "gateway/config/field_kinds.hpp"

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
             read_budget(r, b, "500.00", s.budget_usd_nano, s.budget_period);
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
