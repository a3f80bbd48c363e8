#include "gateway/agent/run_command.hpp"

#include "gateway/json_fields.hpp"

#include <boost/json/string.hpp>

namespace gateway::agent {

namespace json = boost::json;

namespace {

template <class... Visitors>
struct overloaded : Visitors... {
    using Visitors::operator()...;
};
template <class... Visitors>
overloaded(Visitors...) -> overloaded<Visitors...>;

}  // namespace

std::string_view kind_of(const run_command& command) {
    return std::visit(
        overloaded{[](const decide_command&) { return std::string_view("decide"); },
                   [](const cancel_command&) { return std::string_view("cancel"); },
                   [](const announce_command&) { return std::string_view("announce"); }},
        command);
}

void tag_invoke(json::value_from_tag, json::value& out, const run_command& command) {
    json::object o{{"kind", kind_of(command)}};
    std::visit(overloaded{[&](const decide_command& c) {
                              o["call_id"] = c.call_id;
                              o["approve"] = c.choice.approve;
                              o["feedback"] = c.choice.feedback;
                              o["whole_run"] = c.choice.whole_run;
                              if (c.choice.parameters) o["parameters"] = *c.choice.parameters;
                          },
                          [](const cancel_command&) {},
                          [&](const announce_command& c) {
                              o["type"] = c.type;
                              o["data"] = c.data;
                          }},
               command);
    out = std::move(o);
}

json::result<run_command> tag_invoke(json::try_value_to_tag<run_command>, const json::value& in) {
    const auto* o = in.if_object();
    if (!o) return make_error_code(json::error::not_object);
    auto kind = string_of(*o, "kind");
    if (kind == "decide") {
        decide_command c;
        c.call_id = string_of(*o, "call_id");
        if (c.call_id.empty()) return make_error_code(json::error::not_string);
        c.choice.approve = flag_of(*o, "approve");
        c.choice.feedback = string_of(*o, "feedback");
        c.choice.whole_run = flag_of(*o, "whole_run");
        if (const auto* p = o->if_contains("parameters"); p && p->is_object())
            c.choice.parameters = p->get_object();
        return run_command(std::move(c));
    }
    if (kind == "cancel") return run_command(cancel_command{});
    if (kind == "announce") {
        announce_command c;
        c.type = string_of(*o, "type");
        if (c.type.empty()) return make_error_code(json::error::not_string);
        if (const auto* d = o->if_contains("data"); d && d->is_object()) c.data = d->get_object();
        return run_command(std::move(c));
    }
    return make_error_code(json::error::unknown_name);
}

json::object answer_json(const command_answer& answer) {
    if (!answer) return {};
    return {{"refusal", {{"code", error_code_name(answer->code)}, {"message", answer->message}}}};
}

command_answer answer_of(const json::value& in) {
    const auto* o = in.if_object();
    const auto* r = o ? o->if_contains("refusal") : nullptr;
    if (!r || !r->is_object()) return std::nullopt;
    auto code = errc_from_code_name(string_of(r->get_object(), "code"));
    return refusal{code.value_or(errc::internal), string_of(r->get_object(), "message")};
}

}  // namespace gateway::agent
