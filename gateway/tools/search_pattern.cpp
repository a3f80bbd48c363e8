#include "gateway/tools/search_pattern.hpp"

#include <hs.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <new>

namespace gateway::tools {

namespace {

// One atom as a Hyperscan expression matched without regard to ASCII case. RE2 folds `k` with
// U+212A (KELVIN SIGN) and `s` with U+017F (LATIN SMALL LETTER LONG S), the only ASCII letters
// with case partners outside ASCII; the atom accepts their UTF-8 too, so a text that a
// case-insensitive regex matches through them still passes.
std::string atom_expression(std::string_view atom) {
    std::string out;
    for (unsigned char c : atom) {
        if (c == 'k')
            out += "(?:k|\\xE2\\x84\\xAA)";
        else if (c == 's')
            out += "(?:s|\\xC5\\xBF)";
        else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02X", c);
            out += hex;
        }
    }
    return out;
}

struct scan_state {
    const re2::FilteredRE2& filter;
    std::vector<int>& found;
    std::vector<int>& potentials;
    bool passed = false;
};

int on_atom(unsigned int id, unsigned long long, unsigned long long, unsigned int, void* context) {
    auto& state = *static_cast<scan_state*>(context);
    state.found.push_back(static_cast<int>(id));
    state.filter.AllPotentials(state.found, &state.potentials);
    state.passed = !state.potentials.empty();
    return state.passed ? 1 : 0;  // non-zero stops the scan: the text may match
}

}  // namespace

std::unique_ptr<search_pattern> search_pattern::compile(std::string_view pattern,
                                                        bool case_sensitive, std::string& error) {
    RE2::Options options;
    options.set_log_errors(false);
    options.set_case_sensitive(case_sensitive);
    options.set_max_mem(64 << 20);
    std::string full = "(?m)" + std::string(pattern);
    std::unique_ptr<search_pattern> compiled(new search_pattern());
    int id = 0;
    if (compiled->filter_.Add(full, options, &id) != RE2::NoError) {
        RE2 refused(full, options);  // Add keeps no error text: compile again for it
        error = refused.error();
        return nullptr;
    }
    std::vector<std::string> atoms;
    compiled->filter_.Compile(&atoms);
    compiled->build_prefilter(atoms);
    return compiled;
}

void search_pattern::build_prefilter(const std::vector<std::string>& atoms) {
    if (atoms.empty() || hs_valid_platform() != HS_SUCCESS) return;
    // RE2 lowercases atoms by its own Unicode rules, which a byte-wise caseless search cannot
    // follow outside ASCII: such patterns go unfiltered.
    for (const auto& atom : atoms)
        if (std::any_of(atom.begin(), atom.end(), [](unsigned char c) { return c >= 0x80; }))
            return;
    std::vector<std::string> expressions;
    std::vector<const char*> pointers;
    std::vector<unsigned> flags, ids;
    for (std::size_t i = 0; i < atoms.size(); ++i) {
        expressions.push_back(atom_expression(atoms[i]));
        flags.push_back(HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH);
        ids.push_back(static_cast<unsigned>(i));
    }
    for (const auto& e : expressions) pointers.push_back(e.c_str());
    hs_compile_error_t* failure = nullptr;
    if (hs_compile_multi(pointers.data(), flags.data(), ids.data(),
                         static_cast<unsigned>(pointers.size()), HS_MODE_BLOCK, nullptr, &database_,
                         &failure) != HS_SUCCESS) {
        hs_free_compile_error(failure);  // e.g. too many atoms: search without the prefilter
        database_ = nullptr;
    }
}

search_pattern::~search_pattern() {
    hs_free_database(database_);
}

search_pattern::scanner::scanner(const search_pattern& pattern) {
    if (pattern.database_ && hs_alloc_scratch(pattern.database_, &scratch_) != HS_SUCCESS)
        throw std::bad_alloc();
}

search_pattern::scanner::~scanner() {
    hs_free_scratch(scratch_);
}

bool search_pattern::may_match(std::string_view text, scanner& scratch) const {
    if (!database_ || text.size() > UINT_MAX) return true;
    scratch.found_.clear();
    scan_state state{filter_, scratch.found_, scratch.potentials_};
    auto status = hs_scan(database_, text.data(), static_cast<unsigned>(text.size()), 0,
                          scratch.scratch_, on_atom, &state);
    // Only a finished scan rules a text out; any failure lets the regex decide.
    return status != HS_SUCCESS || state.passed;
}

}  // namespace gateway::tools
