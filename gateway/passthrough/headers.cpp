#include "gateway/passthrough/headers.hpp"

#include <boost/beast/core/string.hpp>

#include <vector>

namespace gateway::passthrough {

namespace http = boost::beast::http;

namespace {

bool iequals(std::string_view a, std::string_view b) {
    return boost::beast::iequals(a, b);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

bool is_hop_by_hop(std::string_view name) {
    static constexpr std::string_view names[] = {"connection", "keep-alive",        "te",
                                                 "trailer",    "transfer-encoding", "upgrade"};
    for (auto n : names)
        if (iequals(name, n)) return true;
    return name.size() >= 6 && iequals(name.substr(0, 6), "proxy-");
}

void for_each_end_to_end(const http::fields& from, field_visitor visit) {
    // Fields named by Connection are hop-by-hop for this message only (RFC 9110 7.6.1).
    std::vector<std::string_view> named;
    auto [first, last] = from.equal_range(http::field::connection);
    for (auto it = first; it != last; ++it) {
        std::string_view list = it->value();
        while (!list.empty()) {
            auto comma = list.find(',');
            auto token = trim(list.substr(0, comma));
            if (!token.empty()) named.push_back(token);
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        }
    }
    for (const auto& f : from) {
        std::string_view name = f.name_string();
        if (is_hop_by_hop(name) || f.name() == http::field::host ||
            f.name() == http::field::content_length)
            continue;
        bool listed = false;
        for (auto n : named) listed = listed || iequals(n, name);
        if (listed) continue;
        visit(f.name(), name, f.value());
    }
}

}  // namespace gateway::passthrough
