// libFuzzer target for the agent's reply parser: any bytes, with either finish reason, must give
// a classified result without crashing, hanging or leaking (run under ASan+UBSan).
// Build with clang: cmake -DCONTEXTGATE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ …, then run
// build-fuzz/tests/tool_call_parser_fuzz build-fuzz/corpus tests/fuzz/corpus (new inputs go to the
// first folder, so the checked-in corpus stays as it is). With g++ the same function is driven
// by tests/fuzz/driver.cpp over the corpus and seeded random mutations (ctest `fuzz_smoke`).

#include "gateway/agent/tool_call_parser.hpp"
#include "gateway/tools/registry.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto& tools = gateway::tools::registry::standard();
    auto finish = size > 0 && data[0] % 7 == 0 ? "length" : "stop";
    auto result = gateway::agent::parse_reply(text, finish, tools, gateway::tools::role::editor);
    using kind = gateway::agent::parsed_reply::kind;
    // Every reply is exactly one of the three outcomes, and a malformed one always says why.
    if (result.what == kind::malformed && result.message.empty()) __builtin_trap();
    if (result.what == kind::call && result.call.tool.empty()) __builtin_trap();
    return 0;
}
