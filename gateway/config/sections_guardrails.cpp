// The guardrails' fields (`guardrails:`), declared once as every section's are (sections.cpp);
// what a detector set or a custom pattern may be is the detectors' own rule (detection/).
#include "gateway/config/field_kinds.hpp"
#include "gateway/detection/detectors.hpp"
#include "gateway/detection/rules.hpp"

#include <algorithm>
#include <array>

namespace gateway::config {

std::string_view guardrail_stage_name(guardrail_stage stage) {
    switch (stage) {
        case guardrail_stage::request:
            return "request";
        case guardrail_stage::response:
            return "response";
        case guardrail_stage::tool_result:
            return "tool_result";
    }
    return "request";
}

std::string_view guardrail_action_name(guardrail_action action) {
    switch (action) {
        case guardrail_action::mask:
            return "mask";
        case guardrail_action::block:
            return "block";
        case guardrail_action::log:
            return "log";
    }
    return "mask";
}

using namespace field_kinds;

namespace {

// A guardrail's or a custom rule's name: it is shown in `[REDACTED:<name>]`, metric labels
// and logs, so it follows the key names' rule.
std::string checked_name(const yaml_reader& r, const YAML::Node& n, std::string_view what) {
    auto name = r.scalar(n, "name");
    if (!valid_key_name(name))
        r.fail(n, std::string(what) + ": `name` must be " + std::string(key_name_rule));
    return name;
}

// The spellings of a stage or an action.
template <class E, std::size_t N>
std::vector<std::pair<std::string_view, E>> spellings(const std::array<E, N>& values,
                                                      std::string_view (*name)(E)) {
    std::vector<std::pair<std::string_view, E>> out;
    for (auto v : values) out.emplace_back(name(v), v);
    return out;
}

const auto stage_spellings = spellings(
    std::array{guardrail_stage::request, guardrail_stage::response, guardrail_stage::tool_result},
    guardrail_stage_name);

// One custom rule: {name, pattern}.
guardrail_regex read_regex(const yaml_reader& r, const YAML::Node& n, const std::string& at) {
    if (!n.IsMap()) r.fail(n, "`" + at + "` must be a map such as {name: ticket, pattern: ...}");
    r.check_keys(n, at, {"name", "pattern"});
    if (!n["name"] || !n["pattern"]) r.fail(n, at + ": `name` and `pattern` are required");
    guardrail_regex out{checked_name(r, n["name"], at), r.scalar(n["pattern"], "pattern")};
    if (auto why = detection::pattern_error(out.pattern); !why.empty())
        r.fail(n["pattern"], at + ": rule `" + out.name + "`: `pattern` " + why);
    return out;
}

std::string print_regex(const std::vector<guardrail_regex>& rules) {
    std::string out = "[";
    for (const auto& rule : rules)
        out += (out.size() > 1 ? ", " : "") + std::string("{name: ") + quoted(rule.name) +
               ", pattern: " + quoted(rule.pattern) + "}";
    return out + "]";
}

const fields<guardrail_model_check>& model_check_fields() {
    using S = guardrail_model_check;
    static const fields<S> all{
        {"model", "a route's model or one an upstream serves, as a client names it",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             s.model = r.scalar(n, "model");
             if (s.model.empty()) r.fail(n, std::string(section) + ".model: must not be empty");
         },
         [](const S& s) { return quoted(s.model); }},
        {"prompt", "the moderation instructions; none: the built-in ones",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.prompt = r.scalar(n, "prompt");
         },
         [](const S& s) { return s.prompt.empty() ? std::string() : quoted(s.prompt); }},
        duration_field("timeout", &S::timeout, "the answer within this", true),
        {"fail", "open (let the text through) | closed (block) when it does not answer allow/block",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.fail_open = r.one_of(n, "fail", {"open", "closed"}) == 0;
         },
         [](const S& s) { return std::string(s.fail_open ? "open" : "closed"); }},
    };
    return all;
}

}  // namespace

const fields<guardrail_webhook>& guardrail_webhook_fields() {
    using S = guardrail_webhook;
    static const fields<S> all{
        {"url", "where the check is posted",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             s.url = r.scalar(n, "url");
             auto endpoint = parse_base_url(s.url);
             if (!endpoint)
                 r.fail(n, std::string(section) + ".url: `" + mask_url_password(s.url) + "` " +
                               endpoint.error);
             s.endpoint = *endpoint.value;
         },
         [](const S& s) { return quoted(mask_url_password(s.url)); }, true},
        duration_field("timeout", &S::timeout, "the answer within this", true),
        {"fail", "open (let the text through) | closed (block) when it does not answer",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.fail_open = r.one_of(n, "fail", {"open", "closed"}) == 0;
         },
         [](const S& s) { return std::string(s.fail_open ? "open" : "closed"); }},
    };
    return all;
}

const fields<guardrail_config>& guardrail_fields() {
    using S = guardrail_config;
    static const fields<S> all{
        {"name", "1-64 letters, digits, _ - .: in metrics and logs",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             s.name = checked_name(r, n, section);
         },
         [](const S& s) { return quoted(s.name); }},
        {"detect", "built-in detector sets: secrets, pii",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             s.detect = r.string_list(n, "detect");
             for (std::size_t i = 0; i < s.detect.size(); ++i)
                 if (!detection::known_set(s.detect[i]))
                     r.fail(n.IsSequence() ? n[i] : n,
                            std::string(section) + ".detect: unknown detector set `" + s.detect[i] +
                                "` (known: " + std::string(detection::secrets_set) + ", " +
                                std::string(detection::pii_set) + ")");
         },
         [](const S& s) { return flow_list(s.detect); }},
        {"regex", "custom rules: {name, pattern} or a list of them (RE2 syntax)",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             auto at = std::string(section) + ".regex";
             if (!n.IsSequence()) {
                 s.regex = {read_regex(r, n, at)};
                 return;
             }
             for (std::size_t i = 0; i < n.size(); ++i)
                 s.regex.push_back(read_regex(r, n[i], at + "[" + std::to_string(i) + "]"));
         },
         [](const S& s) { return s.regex.empty() ? std::string() : print_regex(s.regex); }},
        {"webhook", "{url, timeout, fail: open | closed}: an external policy check",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             auto at = std::string(section) + ".webhook";
             if (!n.IsMap()) r.fail(n, "`" + at + "` must be a map such as {url: http://...}");
             if (!n["url"]) r.fail(n, at + ": `url` is required");
             s.webhook.emplace();
             read(r, n, at, guardrail_webhook_fields(), *s.webhook);
         },
         [](const S& s) {
             return s.webhook ? flow(*s.webhook, guardrail_webhook_fields()) : std::string();
         },
         true},
        {"model_check",
         "{model, prompt, timeout, fail: open | closed}: a model answers allow or block (opt-in)",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             auto at = std::string(section) + ".model_check";
             if (!n.IsMap()) r.fail(n, "`" + at + "` must be a map such as {model: gpt-4o-mini}");
             if (!n["model"]) r.fail(n, at + ": `model` is required");
             s.model_check.emplace();
             read(r, n, at, model_check_fields(), *s.model_check);
         },
         [](const S& s) {
             return s.model_check ? flow(*s.model_check, model_check_fields()) : std::string();
         }},
        {"on", "stages: request, response, tool_result",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view section, S& s) {
             if (!n.IsSequence() || n.size() == 0)
                 r.fail(n, "`" + std::string(section) +
                               ".on` must be a non-empty list of request, response, tool_result");
             std::vector<std::string_view> options;
             for (const auto& [text, value] : stage_spellings) options.push_back(text);
             s.on.clear();
             for (const auto& item : n) {
                 auto stage = stage_spellings[r.one_of(item, "on", options)].second;
                 if (std::find(s.on.begin(), s.on.end(), stage) == s.on.end())
                     s.on.push_back(stage);
             }
         },
         [](const S& s) {
             std::vector<std::string> names;
             for (auto stage : s.on) names.emplace_back(guardrail_stage_name(stage));
             return flow_list(names);
         }},
        choice_field<S, guardrail_action>(
            "action", &S::action,
            spellings(
                std::array{guardrail_action::mask, guardrail_action::block, guardrail_action::log},
                guardrail_action_name),
            "mask ([REDACTED:<rule>]) | block (400 guardrail_blocked) | log"),
        list_field("keys", &S::keys, "globs over virtual key names and team names"),
        list_field("routes", &S::routes, "globs over the requested model; empty: every route"),
    };
    return all;
}

}  // namespace gateway::config
