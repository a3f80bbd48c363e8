// libFuzzer target for the request-head path: the request line, header fields, chunked framing
// and trailers as Beast parses them, then the gateway's own checks (check_request_head: framing,
// Host, target normalization) and trailer removal, in the order the session applies them. Any
// bytes must give a refusal or a request that keeps the invariants below; never a crash, a hang
// or a leak (run under ASan+UBSan). The key extraction runs on every accepted head too: the key a
// head presents, and the target with its `key` query parameter removed (what goes upstream when
// the gateway replaces the client's key) must keep theirs.
// Build with clang: cmake -DCONTEXTGATE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ …, then run
// build-fuzz/tests/request_head_fuzz -dict=tests/fuzz/request_head.dict build-fuzz/corpus-head
// tests/fuzz/request_head_corpus. With g++ the same function is driven by tests/fuzz/driver.cpp
// (ctest `fuzz_smoke`).

#include "gateway/http/credentials.hpp"
#include "gateway/http/request_head.hpp"
#include "gateway/http/target.hpp"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace http = boost::beast::http;

namespace {

[[noreturn]] void broken() {
    __builtin_trap();
}

// What every head the checks accept must satisfy.
void check_accepted(http::request<http::string_body>& head) {
    std::string_view target = head.target();
    if (target.empty() || target.front() != '/') broken();
    for (unsigned char c : target)
        if (c <= 0x20 || c >= 0x7f || c == '#') broken();
    // Normalized already: normalizing again changes nothing.
    auto again = gateway::http::normalize_target(target);
    if (!again || again.target != target) broken();
    std::string_view path = target.substr(0, target.find('?'));
    for (std::string_view dots : {"/./", "/../"})
        if (path.find(dots) != std::string_view::npos) broken();
    if (path.ends_with("/.") || path.ends_with("/..")) broken();
    if (head.count(http::field::host) > 1) broken();
    if (head.version() >= 11 && head.count(http::field::host) != 1) broken();
    // A Transfer-Encoding that passed is one Beast frames as chunked: the body ends where the
    // gateway thinks it ends.
    if (head.find(http::field::transfer_encoding) != head.end())
        if (head.version() < 11 || !head.chunked()) broken();
}

// The key a head presents, and the target without its key.
void check_key(const http::request_header<>& head) {
    namespace gh = gateway::http;
    auto key = gh::presented_key_of(head);
    if (key.value.empty() != (key.place == gh::key_place::none)) broken();
    std::string_view target = head.target();
    auto stripped = gh::without_query_key(target);
    if (gh::has_query_key(stripped)) broken();                  // no key left in any spelling
    if (gh::without_query_key(stripped) != stripped) broken();  // and nothing more to remove
    if (stripped.size() > target.size()) broken();
    auto path = target.substr(0, target.find('?'));
    if (std::string_view(stripped).substr(0, path.size()) != path) broken();  // path untouched
    if (!gh::has_query_key(target) && stripped != target) broken();
    // A head whose only key is in the query presents it from there, and the stripped target
    // presents none.
    if (key.place == gh::key_place::query) {
        auto copy = head;
        copy.target(stripped);
        if (gh::presented_key_of(copy).place != gh::key_place::none) broken();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    http::request_parser<http::string_body> parser;
    parser.header_limit(8192);
    parser.body_limit(64 * 1024);
    boost::system::error_code ec;
    // The head alone first, as the session reads it: nothing of the body is parsed yet.
    std::size_t used = 0;
    while (!ec && used < bytes.size() && !parser.is_header_done()) {
        auto n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
        if (n == 0 && !ec) break;
        used += n;
    }
    if (ec || !parser.is_header_done()) return 0;
    auto& head = parser.get();
    if (gateway::http::check_request_head(head)) return 0;  // refused: the session closes
    check_accepted(head);
    check_key(head);
    if (head.find(http::field::transfer_encoding) != head.end() && !parser.chunked()) broken();
    auto header_fields = static_cast<std::size_t>(std::distance(head.begin(), head.end()));
    parser.eager(true);
    while (!ec && used < bytes.size() && !parser.is_done()) {
        auto n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
        if (n == 0 && !ec) break;
        used += n;
    }
    if (ec == http::error::need_more) parser.put_eof(ec);
    if (ec || !parser.is_done()) return 0;
    auto request = parser.release();
    if (request.chunked()) gateway::http::drop_trailer_fields(request, header_fields);
    // Trailers never survive into the header.
    if (static_cast<std::size_t>(std::distance(request.begin(), request.end())) != header_fields)
        broken();
    return 0;
}
