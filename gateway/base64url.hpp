#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gateway {

// Base64url without padding (RFC 4648 section 5, as JWS uses it), both ways: JWTs and their
// keys, PKCE, Google's assertions and the virtual keys' secrets. decode is nullopt at a
// character outside the alphabet.
std::string base64url_encode(std::string_view bytes);
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace gateway
