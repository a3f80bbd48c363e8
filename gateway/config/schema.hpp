#pragma once

// The configuration's schema, internal to config/: each section declares its fields once
// (sections.cpp) — name, member, how the value is read and checked, whether it is a secret, a
// one-line description — and that declaration drives reading (yaml_loader.cpp: unknown keys
// refused with the list of valid ones, errors with file and line), printing (`check-config`,
// secrets masked) and the test that every field is documented in config/gateway.yaml. The
// defaults are the section structs' own (config.hpp). Rules between fields stay in the section's
// reader, after its fields are read.
#include "gateway/config/config.hpp"
#include "gateway/config/yaml_reader.hpp"

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::config {

// How values print (check-config's YAML): "10s" or "250ms"; a double-quoted string.
std::string format_duration(duration d);
std::string quoted(std::string_view text);

namespace schema {

// One setting of the section struct S.
template <class S>
struct field {
    std::string_view name;
    std::string_view about;  // one line: what it is
    // Reads the field's node into `into` (the section read so far), or fails with its line;
    // `section` names the enclosing section in errors ("mcp_servers[0]").
    std::function<void(const yaml_reader& r, const YAML::Node& node, std::string_view section,
                       S& into)>
        read;
    // The value as YAML (flow style, or a block starting with a newline), secrets masked; ""
    // leaves the line out (a setting that does not apply, e.g. `url` of a stdio server).
    std::function<std::string(const S& from)> print;
    bool secret = false;
};

template <class S>
using fields = std::vector<field<S>>;

template <class S>
std::vector<std::string_view> names(const fields<S>& fs) {
    std::vector<std::string_view> out;
    for (const auto& f : fs) out.push_back(f.name);
    return out;
}

// Reads the mapping `node` into `into`: a key that is no field of `fs` is refused (naming
// `section` and the valid keys); each field present is read, in declaration order.
template <class S>
void read(const yaml_reader& r, const YAML::Node& node, std::string_view section,
          const fields<S>& fs, S& into) {
    r.check_keys(node, section, names(fs));
    for (const auto& f : fs)
        if (auto n = node[std::string(f.name)]) f.read(r, n, section, into);
}

// `s` as block YAML lines, one per field, each after `indent` (`first`, e.g. "  - ", instead of
// it on the first line).
template <class S>
void print(std::ostream& out, const S& s, const fields<S>& fs, std::string_view indent,
           std::string_view first = {}) {
    bool at_first = true;
    for (const auto& f : fs) {
        auto value = f.print(s);
        if (value.empty()) continue;
        out << (at_first && !first.empty() ? first : indent) << f.name << ':'
            << (value.front() == '\n' ? "" : " ") << value << '\n';
        at_first = false;
    }
}

// `s` as one flow mapping: {name: value, ...}.
template <class S>
std::string flow(const S& s, const fields<S>& fs) {
    std::string out = "{";
    for (const auto& f : fs) {
        auto value = f.print(s);
        if (value.empty()) continue;
        if (out.size() > 1) out += ", ";
        out += std::string(f.name) + ": " + value;
    }
    return out + "}";
}

std::string flow_list(const std::vector<std::string>& items);

// The field builders: one per kind of value. `M` is the member's type in S.

template <class S>
field<S> duration_field(std::string_view name, duration S::*m, std::string_view about,
                        bool positive = false) {
    return {name, about,
            [name, m, positive](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                s.*m = positive ? r.positive_duration(n, name) : r.get_duration(n, name);
            },
            [m](const S& s) { return format_duration(s.*m); }};
}

// A size (65536, 64KiB); `at_least` > 0 refuses smaller ones ("must be at least `shown`").
template <class S>
field<S> size_field(std::string_view name, std::size_t S::*m, std::string_view about,
                    std::size_t at_least = 0, std::string_view shown = {}) {
    return {name, about,
            [name, m, at_least, shown](const yaml_reader& r, const YAML::Node& n, std::string_view,
                                       S& s) {
                s.*m = r.get_size(n, name);
                if (s.*m < at_least)
                    r.fail(n, "`" + std::string(name) + "` must be at least " +
                                  (shown.empty() ? std::to_string(at_least) : std::string(shown)));
            },
            [m](const S& s) { return std::to_string(s.*m); }};
}

// A whole number from `min` to `max`.
template <class S, class M>
field<S> count_field(std::string_view name, M S::*m, std::size_t min, std::size_t max,
                     std::string_view about) {
    return {name, about,
            [name, m, min, max](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                s.*m = static_cast<M>(r.get_count(n, name, min, max));
            },
            [m](const S& s) { return std::to_string(s.*m); }};
}

template <class S>
field<S> bool_field(std::string_view name, bool S::*m, std::string_view about) {
    return {name, about,
            [name, m](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                s.*m = r.get_bool(n, name);
            },
            [m](const S& s) { return std::string(s.*m ? "true" : "false"); }};
}

// A string; `print` replaces the value for check-config (a secret's mask, a URL's password).
template <class S>
field<S> text_field(std::string_view name, std::string S::*m, std::string_view about,
                    std::function<std::string(const std::string&)> shown = {}) {
    bool secret = static_cast<bool>(shown);
    return {name, about,
            [name, m](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                s.*m = r.scalar(n, name);
            },
            [m, shown](const S& s) { return quoted(shown ? shown(s.*m) : s.*m); }, secret};
}

// A path: a relative one is taken from the configuration file's folder.
template <class S>
field<S> path_field(std::string_view name, std::string S::*m, std::string_view about) {
    return {name, about,
            [name, m](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                s.*m = r.path(n, name);
            },
            [m](const S& s) { return quoted(s.*m); }};
}

template <class S>
field<S> list_field(std::string_view name, std::vector<std::string> S::*m, std::string_view about) {
    return {name, about,
            [name, m](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
                s.*m = r.string_list(n, name);
            },
            [m](const S& s) { return flow_list(s.*m); }};
}

// One of a few spellings; `label` names the setting in the error ("`label`: `x` must be a, b
// or c").
template <class S, class E>
field<S> choice_field(std::string_view name, E S::*m,
                      std::vector<std::pair<std::string_view, E>> spellings, std::string_view about,
                      std::string_view label = {}) {
    return {name, about,
            [name, m, spellings, label](const yaml_reader& r, const YAML::Node& n, std::string_view,
                                        S& s) {
                std::vector<std::string_view> options;
                for (const auto& [text, value] : spellings) options.push_back(text);
                auto index = r.one_of(n, label.empty() ? name : label, options);
                s.*m = spellings[index].second;
            },
            [m, spellings](const S& s) {
                for (const auto& [text, value] : spellings)
                    if (value == s.*m) return std::string(text);
                return std::string(spellings.front().first);
            }};
}

}  // namespace schema

// The sections' declarations (sections.cpp).
const schema::fields<server_config>& server_fields();
const schema::fields<upstream_config>& upstream_fields();
const schema::fields<aws_keys>& aws_keys_fields();
const schema::fields<azure_entra>& azure_entra_fields();
const schema::fields<logging_config>& logging_fields();
const schema::fields<metrics_config>& metrics_fields();
const schema::fields<virtual_key>& virtual_key_fields();
const schema::fields<budget_alerts_config>& budget_alerts_fields();
const schema::fields<admin_config>& admin_fields();
const schema::fields<limits_config>& limits_fields();
const schema::fields<store_config>& store_fields();
const schema::fields<context_config>& context_fields();
const schema::fields<mcp_server_config>& mcp_server_fields();
const schema::fields<mcp_serve_config>& mcp_serve_fields();
const schema::fields<route_target>& route_target_fields();
const schema::fields<route_config>& route_fields();
const schema::fields<health_config>& health_fields();
const schema::fields<cache_policy>& cache_policy_fields();
const schema::fields<cache_config>& cache_fields();
const schema::fields<tracing_config>& tracing_fields();
const schema::fields<price_entry>& price_entry_fields();
const schema::fields<price_tier>& price_tier_fields();
const schema::fields<pricing_config>& pricing_fields();
const schema::fields<team_config>& team_fields();  // sections_teams.cpp
const schema::fields<oidc_config>& oidc_fields();  // sections_auth.cpp
const schema::fields<auth_config>& auth_fields();
const schema::fields<guardrail_webhook>& guardrail_webhook_fields();  // sections_guardrails.cpp
const schema::fields<guardrail_config>& guardrail_fields();

}  // namespace gateway::config
