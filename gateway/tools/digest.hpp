#pragma once

#include <string>
#include <string_view>

namespace gateway::tools {

// The SHA-256 of `bytes` as 64 lowercase hex digits. Writes report the digests of their target
// before and after (result data `before_sha256` / `after_sha256`), so that a write interrupted
// by a crash can be judged from the file afterwards.
std::string sha256_hex(std::string_view bytes);

}  // namespace gateway::tools
