#include "gateway/console/console.hpp"

#include "gateway/error.hpp"
#include "gateway/http/response.hpp"

#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace gateway::console {

namespace beast = boost::beast;

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

// Calls `each` with every comma-separated item of a header value, trimmed.
template <class F>
void for_each_item(std::string_view value, F each) {
    while (!value.empty()) {
        auto comma = value.find(',');
        each(trim(value.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
    }
}

}  // namespace

// Whether an Accept-Encoding value admits gzip: named (or `*`) with a q-value above zero, and not
// refused by name.
bool accepts_gzip(std::string_view accept_encoding) {
    int gzip = -1, any = -1;  // -1 unnamed, 0 refused, 1 accepted
    for_each_item(accept_encoding, [&](std::string_view item) {
        auto semi = item.find(';');
        auto coding = trim(item.substr(0, semi));
        bool accepted = true;
        if (semi != std::string_view::npos) {
            auto param = trim(item.substr(semi + 1));
            if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
                auto q = trim(param.substr(2));
                accepted = q.find_first_not_of("0.") != std::string_view::npos;
            }
        }
        if (iequals(coding, "gzip") || iequals(coding, "x-gzip"))
            gzip = accepted;
        else if (coding == "*")
            any = accepted;
    });
    return gzip == 1 || (gzip == -1 && any == 1);
}

// Whether an If-None-Match value names `etag` (weakly, as the RFC asks for GET) or is `*`.
bool matches_etag(std::string_view if_none_match, std::string_view etag) {
    bool matched = false;
    for_each_item(if_none_match, [&](std::string_view item) {
        if (item.starts_with("W/")) item.remove_prefix(2);
        if (item == "*" || item == etag) matched = true;
    });
    return matched;
}

const asset* site::find(std::string_view name) const {
    for (const auto& file : files_)
        if (file.name == name) return &file;
    return nullptr;
}

net::awaitable<void> site::serve(http::request_context& ctx) const {
    auto target = std::string_view(ctx.req.target());
    auto path = target.substr(0, target.find_first_of("?#"));
    if (path == "/console") {
        std::string location = "/console/";
        if (path.size() < target.size()) location += target.substr(path.size());
        std::vector<std::pair<std::string, std::string>> fields{{"Location", location}};
        co_await http::write_response(ctx, 308, "text/plain; charset=utf-8", "", fields);
        co_return;
    }
    auto name = path.substr(std::string_view("/console/").size());
    if (name.empty()) name = "index.html";
    const asset* file = find(name);
    if (!file) {
        auto message = "No console file `" + std::string(name) + "`.";
        co_await http::write_error(ctx, errc::not_found, message);
        co_return;
    }

    const auto& head = ctx.req.base();
    bool gzip = !file->gzip.empty() && accepts_gzip(head[beast::http::field::accept_encoding]);
    bool not_modified = matches_etag(head[beast::http::field::if_none_match], file->etag);
    std::vector<std::pair<std::string, std::string>> fields{
        {"ETag", std::string(file->etag)},
        {"Cache-Control", file->immutable ? "public, max-age=31536000, immutable" : "no-cache"},
        {"Content-Security-Policy", std::string(content_security_policy)},
        {"X-Content-Type-Options", "nosniff"},
        {"Referrer-Policy", "no-referrer"},
        {"X-Frame-Options", "DENY"}};
    if (!file->gzip.empty()) fields.emplace_back("Vary", "Accept-Encoding");
    if (gzip) fields.emplace_back("Content-Encoding", "gzip");
    co_await http::write_response(ctx, not_modified ? 304 : 200, file->content_type,
                                  gzip ? file->gzip : file->body, fields);
}

}  // namespace gateway::console
