#include "gateway/http/request_head.hpp"

#include "gateway/http/target.hpp"

#include <boost/beast/core/string.hpp>

#include <vector>

namespace gateway::http {

namespace {

namespace bhttp = boost::beast::http;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The transfer codings of every Transfer-Encoding field, in order (empty list elements skipped).
std::vector<std::string_view> transfer_codings(const bhttp::request_header<>& head) {
    std::vector<std::string_view> codings;
    auto [first, last] = head.equal_range(bhttp::field::transfer_encoding);
    for (auto it = first; it != last; ++it) {
        std::string_view list = it->value();
        while (true) {
            auto comma = list.find(',');
            auto token = trim(list.substr(0, comma));
            if (!token.empty()) codings.push_back(token);
            if (comma == std::string_view::npos) break;
            list.remove_prefix(comma + 1);
        }
    }
    return codings;
}

std::optional<head_refusal> check_framing(const bhttp::request<bhttp::string_body>& head) {
    if (head.find(bhttp::field::transfer_encoding) == head.end()) return std::nullopt;
    if (head.version() < 11)
        return head_refusal{errc::bad_request,
                            "An HTTP/1.0 request cannot carry Transfer-Encoding."};
    auto codings = transfer_codings(head);
    if (codings.empty() || !boost::beast::iequals(codings.back(), "chunked"))
        return head_refusal{errc::bad_request,
                            "Transfer-Encoding must end in `chunked`; the body length of this "
                            "request cannot be determined."};
    // Beast frames the body by its own reading of the field: it must agree with ours.
    if (!head.chunked())
        return head_refusal{errc::bad_request, "Transfer-Encoding cannot be read reliably."};
    for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
        if (boost::beast::iequals(codings[i], "chunked"))
            return head_refusal{errc::bad_request, "Transfer-Encoding applies `chunked` twice."};
        return head_refusal{errc::unsupported_transfer_coding,
                            "The transfer coding `" + std::string(codings[i]) +
                                "` is not supported; send the body with `chunked` alone or "
                                "with Content-Length."};
    }
    return std::nullopt;
}

std::optional<head_refusal> check_host(const bhttp::request_header<>& head) {
    auto count = head.count(bhttp::field::host);
    if (count > 1)
        return head_refusal{errc::bad_request, "The request has more than one Host field."};
    if (head.version() >= 11 && count == 0)
        return head_refusal{errc::bad_request, "An HTTP/1.1 request needs a Host field."};
    if (count == 1 && trim(head[bhttp::field::host]).empty() && head.version() >= 11)
        return head_refusal{errc::bad_request, "The request's Host field is empty."};
    return std::nullopt;
}

}  // namespace

std::optional<head_refusal> check_request_head(bhttp::request<bhttp::string_body>& head) {
    if (auto refused = check_framing(head)) return refused;
    if (auto refused = check_host(head)) return refused;
    if (is_normal_target(head.target())) return std::nullopt;
    auto normalized = normalize_target(head.target());
    if (!normalized) return head_refusal{errc::bad_request, std::move(normalized.error)};
    if (normalized.target != head.target()) head.target(normalized.target);
    return std::nullopt;
}

void drop_trailer_fields(bhttp::fields& fields, std::size_t header_fields) {
    auto it = fields.begin();
    for (std::size_t i = 0; i < header_fields && it != fields.end(); ++i) ++it;
    while (it != fields.end()) it = fields.erase(it);
}

}  // namespace gateway::http
