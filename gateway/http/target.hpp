#pragma once

#include <string>
#include <string_view>

namespace gateway::http {

// A request target brought to the one form the gateway routes and forwards: origin-form
// (`/path?query`), with its dot segments removed. `error` is set (and `target` empty) when the
// target must be refused with 400.
struct normalized_target {
    std::string target;
    std::string error;
    explicit operator bool() const { return error.empty(); }
};

// Normalizes a request target (RFC 9112 §3.2):
// - origin-form is kept; absolute-form (`http://host/v1/x?q`, as some proxies send) becomes its
//   path and query; asterisk-form and authority-form are refused;
// - bytes that may not appear in a target are refused: controls, space, non-ASCII, `#` (a
//   fragment is never sent), a `%` not followed by two hex digits;
// - dot segments are removed (RFC 3986 §5.2.4), also when written `%2e`; a `..` that would climb
//   above the root, or dot segments that move the target out of its first segment (`/v1/..`,
//   `/x/../v1/…`), are refused, as is a dot segment hidden behind an encoded or backslash
//   separator (`..%2f`, `..\`) that an upstream might decode;
// - the query is kept byte for byte.
// Pure and allocation-light: the session runs it on every request before routing.
normalized_target normalize_target(std::string_view target);

// True for a target normalize_target would accept and leave unchanged, decided in one pass
// without allocating: origin-form, visible ASCII without `#`, `%` or `\`, and no path segment
// starting with a dot. False says nothing (normalize_target decides); the session skips
// normalize_target's copy for the ordinary targets this recognizes.
bool is_normal_target(std::string_view target);

// `text` as one path segment of a target the gateway builds (a model name in Gemini's
// `/models/{model}:generateContent`): every byte but the unreserved ones (RFC 3986 §2.3:
// letters, digits, `-._~`) percent-encoded, so CR/LF, spaces, `/`, `?`, `#` and `%` can neither
// end the request line nor reach another path. Pure.
std::string path_segment(std::string_view text);

}  // namespace gateway::http
