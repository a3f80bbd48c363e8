#pragma once

// Kinds of configuration field that several sections share, for the files that declare the
// sections (sections.cpp, sections_mcp.cpp, sections_routes.cpp); nothing else includes it.
#include "gateway/config/schema.hpp"

#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::config::field_kinds {

using namespace schema;

std::string listen_text(const listen_address& a);

// A secret as `api_keys` take it: 16+ characters, or "sha256:" and 64 lowercase hex digits.
void check_secret(const yaml_reader& r, const YAML::Node& n, const std::string& key,
                  std::string_view what);

// `{name: value, …}`, the values masked when `mask_values`.
std::string flow_map(const std::vector<std::pair<std::string, std::string>>& pairs,
                     bool mask_values);

// Header and environment values often carry tokens: printed by name only; left out when empty.
template <class S>
field<S> masked_map_field(std::string_view name,
                          std::vector<std::pair<std::string, std::string>> S::*m,
                          std::string_view about) {
    return {name, about,
            [name, m](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                s.*m = r.string_map(n, name);
            },
            [m](const S& s) { return (s.*m).empty() ? std::string() : flow_map(s.*m, true); },
            true};
}

approval_policy read_approval(const yaml_reader& r, const YAML::Node& n, std::string_view label);

// A budget's `usd` (in nano-dollars; `example` shows an amount in the error) and `period`, each
// left as it was when absent. The caller checks the budget's keys (a key's also takes `tokens`).
void read_budget(const yaml_reader& r, const YAML::Node& b, std::string_view example,
                 std::uint64_t& usd_nano, budget_period& period);

// A CA bundle to verify a TLS peer with, which must be readable; empty: the system store.
template <class S>
field<S> ca_file_field(std::string S::*m, std::string_view about) {
    return {"ca_file", about,
            [m](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                s.*m = r.path(n, "ca_file");
                if (!(s.*m).empty() && !std::ifstream(s.*m))
                    r.fail(n, "`ca_file`: cannot read `" + s.*m + "`");
            },
            [m](const S& s) { return quoted(s.*m); }};
}

// `cache: {ttl: 10m}` of an upstream or a route.
template <class S>
field<S> cache_policy_field(cache_policy S::*m) {
    return {"cache", "{ttl}: its answers are cached this long (docs/operations.md)",
            [m](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
                if (!n.IsMap()) r.fail(n, "`cache` must be a map such as {ttl: 10m}");
                schema::read(r, n, std::string(section) + ".cache", cache_policy_fields(), s.*m);
            },
            [m](const S& s) {
                return (s.*m).ttl.count() ? flow(s.*m, cache_policy_fields()) : std::string();
            }};
}

}  // namespace gateway::config::field_kinds
