#include "gateway/mcp/naming.hpp"

#include "gateway/tools/digest.hpp"

namespace gateway::mcp {

namespace {

constexpr std::size_t max_name = 64;

bool allowed(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

}  // namespace

std::string exposed_name(std::string_view server, std::string_view tool) {
    std::string out(tool_prefix);
    out += server;
    out += "__";
    std::string clean;
    for (char c : tool) clean += allowed(c) ? c : '_';
    bool changed = clean != tool || out.size() + clean.size() > max_name || clean.empty();
    if (!changed) return out + clean;
    auto suffix = "_" + tools::sha256_hex(tool).substr(0, 8);
    auto room = max_name - out.size() - suffix.size();
    if (clean.size() > room) clean.resize(room);
    return out + clean + suffix;
}

}  // namespace gateway::mcp
