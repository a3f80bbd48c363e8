// In-process timings for bench/tools.sh: find_definition once the index exists (the gateway is a
// long-running process, so the index lives across calls), the first index build, and the
// freshness re-check that a lookup pays when the recheck interval has passed.
// Usage: tools_bench WORKSPACE SYMBOL [ROUNDS]

#include "gateway/tools/registry.hpp"
#include "gateway/tools/symbol_index.hpp"
#include "gateway/tools/workspace.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace tools = gateway::tools;
using clock_type = std::chrono::steady_clock;

namespace {

double ms_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: tools_bench WORKSPACE SYMBOL [ROUNDS]\n");
        return 2;
    }
    int rounds = argc > 3 ? std::stoi(argv[3]) : 21;
    std::string error;
    auto files = tools::workspace::open(argv[1], error);
    if (!files) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    tools::tool_context context;
    context.files = files.get();
    auto parameters = boost::json::parse(std::string(R"({"symbol":")") + argv[2] + "\"}");
    const auto& registry = tools::registry::standard();

    auto start = clock_type::now();
    auto first = registry.execute("find_definition", parameters, context, tools::mode::execute);
    double build = ms_since(start);
    if (!first.ok || first.data.at("definitions").as_array().empty()) {
        std::fprintf(stderr, "no definition found: %s\n", first.text.c_str());
        return 1;
    }
    auto& index = files->symbols();
    std::vector<double> warm, starting, rechecked;
    for (int i = 0; i < rounds; ++i) {
        index.set_recheck(std::chrono::hours(1));
        start = clock_type::now();
        registry.execute("find_definition", parameters, context, tools::mode::execute);
        warm.push_back(ms_since(start));
        // A lookup after the recheck interval starts the background re-stat of the tree.
        index.set_recheck(std::chrono::milliseconds(0));
        start = clock_type::now();
        registry.execute("find_definition", parameters, context, tools::mode::execute);
        starting.push_back(ms_since(start));
        index.wait_for_refresh();
        rechecked.push_back(ms_since(start));
    }
    std::printf(
        "engine=%s files=%zu index_build_ms=%.0f lookup_ms=%.3f "
        "lookup_starting_recheck_ms=%.3f background_recheck_ms=%.0f\n",
        first.data.at("engine").as_string().c_str(), index.file_count(), build, median(warm),
        median(starting), median(rechecked));
    return 0;
}
