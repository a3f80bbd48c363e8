#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// The gateway's identifiers, made in one place.
namespace gateway {

// `prefix` followed by `bytes` random bytes as lowercase hex, from OpenSSL's generator (ids that
// name things in URLs or sessions must not be guessable from the ones seen before). Throws
// std::runtime_error when the system's generator fails.
std::string random_id(std::string_view prefix, std::size_t bytes);

// A request's correlation id (x-request-id, log lines): 32 hex digits from a per-thread
// generator. Unique, not secret — and on every request's path, so 20 ns instead of the 600 ns
// OpenSSL's generator takes (random_id is for what must not be guessed).
std::string correlation_id();

// `size` bytes from correlation_id's per-thread generator: unique, not secret (trace and span
// ids, made for every traced request).
void unique_bytes(std::uint8_t* out, std::size_t size);

// `size` bytes as lowercase hex digits.
std::string to_hex(const std::uint8_t* bytes, std::size_t size);

// A record's id: its kind, an underscore and 96 random bits ("run_1f…", "chat_…", "call_…").
inline std::string new_id(std::string_view kind) {
    std::string prefix(kind);
    prefix += '_';
    return random_id(prefix, 12);
}

// Whether `id` may name a workflow or a prompt (a file's stem, a URL segment): 1 to 64 ASCII
// letters, digits, `-` and `_`.
inline bool valid_id(std::string_view id) {
    if (id.empty() || id.size() > 64) return false;
    for (char c : id)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return false;
    return true;
}

}  // namespace gateway
