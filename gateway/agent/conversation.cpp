#include "gateway/agent/conversation.hpp"

#include "gateway/json_fields.hpp"

#include <boost/json/error.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

namespace gateway::agent {

namespace json = boost::json;
namespace pv = providers;

namespace {

boost::system::error_code unreadable() {
    return make_error_code(json::error::not_object);
}

}  // namespace

pv::tool_call protocol_call(std::string id, std::string tool, json::object parameters,
                            bool terminate) {
    pv::tool_call c{std::move(id), std::move(tool), std::move(parameters), {}};
    if (terminate) c.provider_meta["terminate"] = true;
    return c;
}

bool terminates(const pv::tool_call& c) {
    return flag_of(c.provider_meta, "terminate");
}

store::run_message_record message_row(const std::string& run_id, std::int64_t seq,
                                      const message& m) {
    return {run_id, seq, std::string(pv::role_name(m.who)), json::serialize(json::value_from(m)),
            2};
}

boost::system::result<message> message_of_row(const store::run_message_record& row) {
    if (row.format == 1) return read_legacy(row.role, row.content);
    if (row.format != 2) return make_error_code(boost::system::errc::not_supported);
    boost::system::error_code ec;
    auto v = json::parse(row.content, ec);
    if (ec) return ec;
    return json::try_value_to<message>(v);
}

boost::system::result<message> read_legacy(std::string_view role, std::string_view content) {
    if (role == "user") return user_text(std::string(content));
    if (role == "assistant") return assistant_text(std::string(content));
    if (role != "assistant_calls" && role != "tool") return unreadable();
    boost::system::error_code ec;
    auto v = json::parse(content, ec);
    const auto* o = ec ? nullptr : v.if_object();
    if (!o) return unreadable();
    if (role == "tool")
        return message{pv::role::tool,
                       {pv::part::of_result({string_of(*o, "call_id"), string_of(*o, "name"),
                                             string_of(*o, "content"), flag_of(*o, "is_error")})}};
    message out{pv::role::assistant, {}};
    if (auto said = string_of(*o, "text"); !said.empty())
        out.parts.push_back(pv::part::of_text(std::move(said)));
    const auto* calls = o->if_contains("calls");
    if (!calls || !calls->is_array()) return unreadable();
    for (const auto& cv : calls->get_array()) {
        const auto* c = cv.if_object();
        if (!c) return unreadable();
        pv::tool_call call{string_of(*c, "id"), string_of(*c, "name"), {}, {}};
        if (const auto* a = c->if_contains("arguments"); a && a->is_object())
            call.arguments = a->get_object();
        if (const auto* meta = c->if_contains("provider_meta"); meta && meta->is_object())
            call.provider_meta = meta->get_object();
        out.parts.push_back(pv::part::of_call(std::move(call)));
    }
    return out;
}

boost::system::result<message> read_message(const json::value& v) {
    const auto* o = v.if_object();
    if (o && !o->contains("parts")) {
        const auto* role = o->if_contains("role");
        const auto* content = o->if_contains("content");
        if (!role || !role->is_string() || !content || !content->is_string()) return unreadable();
        return read_legacy(role->get_string(), content->get_string());
    }
    return json::try_value_to<message>(v);
}

std::size_t approx_bytes(const message& m) {
    std::size_t bytes = 28;  // {"role":"assistant","content":""}
    for (const auto& p : m.parts) {
        bytes += p.text.size() + p.call.name.size() + p.result.name.size() +
                 p.result.content.size() + p.result.call_id.size();
        if (p.what == pv::part::kind::tool_call)
            bytes += p.call.id.size() + json::serialize(p.call.arguments).size() + 32;
        if (p.what == pv::part::kind::tool_result) bytes += 24;
    }
    return bytes;
}

}  // namespace gateway::agent
