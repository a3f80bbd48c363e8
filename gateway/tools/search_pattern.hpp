#pragma once

#include <re2/filtered_re2.h>
#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct hs_database;
struct hs_scratch;

namespace gateway::tools {

// A search_files pattern: the RE2 regular expression, and a prefilter that rules out texts
// without running it. RE2 names the literals every match must contain (FilteredRE2's atoms, an
// AND-OR tree of them); Hyperscan looks for all of them in one pass over the text, which is
// several times faster than RE2's DFA on text that holds none. The prefilter never rules out a
// text the regex matches: when its literals cannot be looked for exactly (non-ASCII atoms), when
// a pattern has none (`[0-9]+`), or when Hyperscan cannot run on this CPU, every text passes.
class search_pattern {
public:
    // Scratch space for one thread's scans (Hyperscan's scratch and the atoms found).
    class scanner {
    public:
        explicit scanner(const search_pattern& pattern);
        ~scanner();
        scanner(const scanner&) = delete;
        scanner& operator=(const scanner&) = delete;

    private:
        friend class search_pattern;
        hs_scratch* scratch_ = nullptr;
        std::vector<int> found_;
        std::vector<int> potentials_;
    };

    // `pattern` is compiled as "(?m)" + pattern. nullptr with `error` set when RE2 refuses it.
    static std::unique_ptr<search_pattern> compile(std::string_view pattern, bool case_sensitive,
                                                   std::string& error);
    ~search_pattern();
    search_pattern(const search_pattern&) = delete;
    search_pattern& operator=(const search_pattern&) = delete;

    const RE2& regex() const { return filter_.GetRE2(0); }
    // false only when the regex cannot match `text`.
    bool may_match(std::string_view text, scanner& scratch) const;
    // Whether texts are ruled out by literals at all (for the tests and the benchmark's report).
    bool prefiltered() const { return database_ != nullptr; }

private:
    search_pattern() = default;
    void build_prefilter(const std::vector<std::string>& atoms);

    re2::FilteredRE2 filter_{3};  // atoms shorter than 3 bytes select too little to be worth it
    hs_database* database_ = nullptr;
};

}  // namespace gateway::tools
