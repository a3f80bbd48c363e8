// The guardrails' scan per 10 KB of text (bench/guardrails_scan.sh): prose and code from this
// repository, a text full of near misses (prefixes, numbers, dates and assignments that every
// rule's pattern or validator must look at and turn down), and the check of a Chat Completions
// request body with a `detect: [secrets, pii]` guardrail. Prints the median of ROUNDS rounds in
// µs per 10 KB; beside each text, what a Hyperscan database of the same patterns takes only to
// say which rules match (the prefilter the scan could use instead of its RE2 set).
// Usage: guardrails_scan [ROUNDS]

#include "gateway/detection/detectors.hpp"
#include "gateway/detection/rules.hpp"
#include "gateway/guardrails/engine.hpp"

#include <hs.h>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace guardrails = gateway::guardrails;
namespace config = gateway::config;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr std::size_t ten_kb = 10 * 1024;

std::string file(const char* relative) {
    std::ifstream in(std::string(CONTEXTGATE_SOURCE_DIR) + "/" + relative, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// `source` repeated and cut to 10 KB.
std::string ten_kb_of(const std::string& source) {
    std::string out;
    while (out.size() < ten_kb) out += source;
    out.resize(ten_kb);
    return out;
}

std::string near_misses() {
    std::string line =
        "sk-learn-model ghp_short AKIA12 xoxb-no AIza-short glpat- eyJhbGciOi.x npm_x "
        "password = \"changeme\" token: ${API_TOKEN} api_key=your-api-key-here "
        "4111 1111 1111 1112 1234-5678-9012-3456 GB82 WEST 1234 5698 7654 33 "
        "v1.24.3 2026-11-28 12:30:45 10.0.0.1 1764290961000 +12,8 user at example dot com "
        "-----BEGIN PUBLIC KEY----- 3f786850e387550fdab836ed7e6dc881de23001b "
        "123e4567-e89b-12d3-a456-426614174000 secret_name: prod-db\n";
    return ten_kb_of(line);
}

// A Chat Completions body of about 10 KB: a system prompt, code and prose in the messages.
std::string request_body(const std::string& prose, const std::string& code) {
    boost::json::array messages{
        {{"role", "system"}, {"content", "You are a careful reviewer."}},
        {{"role", "user"}, {"content", prose.substr(0, 4500)}},
        {{"role", "assistant"}, {"content", "Here is the code I mean:"}},
        {{"role", "user"}, {"content", code.substr(0, 5000)}},
    };
    return boost::json::serialize(
        boost::json::object{{"model", "gpt-4o"}, {"stream", true}, {"messages", messages}});
}

template <class F>
double median_us(int rounds, int per_round, F&& run) {
    std::vector<double> samples;
    for (int r = 0; r < rounds; ++r) {
        auto start = clock_type::now();
        for (int i = 0; i < per_round; ++i) run();
        samples.push_back(
            std::chrono::duration<double, std::micro>(clock_type::now() - start).count() /
            per_round);
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

// The built-in patterns as one Hyperscan block-mode database, each reporting its first match.
struct hyperscan_prefilter {
    hs_database_t* db = nullptr;
    hs_scratch_t* scratch = nullptr;

    hyperscan_prefilter() {
        std::vector<std::string> patterns;
        for (const auto& r : gateway::detection::builtin_rules()) patterns.emplace_back(r.pattern);
        std::vector<const char*> expressions;
        std::vector<unsigned> flags, ids;
        for (std::size_t i = 0; i < patterns.size(); ++i) {
            expressions.push_back(patterns[i].c_str());
            flags.push_back(HS_FLAG_SINGLEMATCH);
            ids.push_back(static_cast<unsigned>(i));
        }
        hs_compile_error_t* error = nullptr;
        if (hs_compile_multi(expressions.data(), flags.data(), ids.data(),
                             static_cast<unsigned>(expressions.size()), HS_MODE_BLOCK, nullptr, &db,
                             &error) != HS_SUCCESS) {
            std::fprintf(stderr, "hyperscan: %s\n", error->message);
            hs_free_compile_error(error);
            return;
        }
        hs_alloc_scratch(db, &scratch);
    }
    ~hyperscan_prefilter() {
        hs_free_scratch(scratch);
        hs_free_database(db);
    }

    std::size_t matching(const std::string& text) const {
        std::size_t count = 0;
        hs_scan(
            db, text.data(), static_cast<unsigned>(text.size()), 0, scratch,
            [](unsigned, unsigned long long, unsigned long long, unsigned, void* n) {
                ++*static_cast<std::size_t*>(n);
                return 0;
            },
            &count);
        return count;
    }
};

}  // namespace

int main(int argc, char** argv) {
    int rounds = argc > 1 ? std::stoi(argv[1]) : 15;
    const int per_round = 200;
    auto prose = ten_kb_of(file("docs/architecture.md"));
    auto code = ten_kb_of(file("gateway/config/sections.cpp"));
    auto misses = near_misses();
    auto body = request_body(prose, code);

    auto all = gateway::detection::detectors::make({"secrets", "pii"}, {});
    if (!all) {
        std::fprintf(stderr, "%s\n", all.error.c_str());
        return 1;
    }
    const auto& rules = *all.value;
    config::guardrail_config rail;
    rail.name = "secrets";
    rail.detect = {"secrets", "pii"};
    guardrails::engine engine({rail});

    hyperscan_prefilter prefilter;
    std::size_t sink = 0;
    auto scan = [&](const std::string& text) {
        return median_us(rounds, per_round, [&] { sink += rules.scan(text).size(); });
    };
    auto prefiltered = [&](const std::string& text) {
        if (!prefilter.db) return 0.0;
        return median_us(rounds, per_round, [&] { sink += prefilter.matching(text); });
    };
    std::printf("guardrails scan, secrets + pii (%zu bytes of hold-back), median of %d rounds\n",
                rules.max_match_bytes(), rounds);
    std::printf("%-34s %10s %14s\n", "text (10 KB)", "us/10KB", "hyperscan only");
    for (const auto& [name, text] :
         {std::pair<const char*, const std::string*>{"prose (docs/architecture.md)", &prose},
          {"code (config/sections.cpp)", &code},
          {"near misses", &misses}})
        std::printf("%-34s %10.1f %14.1f\n", name, scan(*text), prefiltered(*text));
    double check = median_us(rounds, per_round, [&] {
        auto out = engine.check(config::guardrail_stage::request, body, {});
        sink += out.hits.size();
    });
    std::printf("%-34s %10.1f  (%zu bytes: %.1f us/10KB)\n", "request body, engine.check", check,
                body.size(), check * ten_kb / body.size());
    // Without `guardrails:` the engine is empty, and a request asks only that.
    guardrails::engine none;
    double empty = median_us(rounds, per_round * 100, [&] {
        if (!none.empty())
            sink += none.check(config::guardrail_stage::request, body, {}).hits.size();
    });
    std::printf("%-34s %10.3f\n", "no guardrails: engine.empty()", empty);
    return sink == 42 ? 1 : 0;
}
