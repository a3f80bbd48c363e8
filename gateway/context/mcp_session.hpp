#pragma once

// Internal to the MCP endpoint's two files (mcp_endpoint.cpp: sessions and requests;
// mcp_endpoint_calls.cpp: tools/call as a run): its JSON-RPC shapes and its session state.
#include "gateway/context/mcp_endpoint.hpp"

#include "gateway/http/reply.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gateway::context::mcp_rpc {

namespace json = boost::json;

// An elicitation's request id: "approval/<run id>/<call id>".
constexpr std::string_view approval_prefix = "approval/";
// What an elicitation shows of a write's preview.
constexpr std::size_t preview_bytes = 8 * 1024;

// JSON-RPC error codes (the last is the TypeScript SDK's for an unknown session).
constexpr int parse_error = -32700;
constexpr int invalid_request = -32600;
constexpr int method_not_found = -32601;
constexpr int invalid_params = -32602;
constexpr int server_error = -32000;
constexpr int session_not_found = -32001;

inline json::object rpc_result(const json::value& id, json::value result) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}
inline json::object rpc_error(const json::value& id, int code, std::string_view message) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}
inline http::reply rpc(unsigned status, const json::object& message) {
    return http::reply::json(status, message);
}
inline const json::object* object_of(const json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    return v && v->is_object() ? &v->as_object() : nullptr;
}
// A JSON-RPC id: a string or an integer (MCP allows no null id).
inline bool valid_id(const json::value& id) {
    return id.is_string() || id.is_int64() || id.is_uint64();
}

}  // namespace gateway::context::mcp_rpc

namespace gateway::context {

struct mcp_endpoint::session {
    std::string version;
    bool can_ask = false;  // the client declared form elicitation
    std::chrono::steady_clock::time_point used;
    std::map<std::string, std::string> runs;  // tools/call id (as JSON) → run, while followed
    std::map<std::string, std::string> dismissed;  // run → why its approval was not given
};

struct mcp_endpoint::call {
    boost::json::value id;
    std::string key;  // the id as JSON text
    std::string run_id;
    std::shared_ptr<const workflows::workflow> definition;
    std::optional<boost::json::value> token;  // the client's progress token
    bool sse = true;
    std::int64_t progress = 0;  // what the last progress notification said
};

}  // namespace gateway::context
