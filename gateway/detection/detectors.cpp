#include "gateway/detection/detectors.hpp"

#include "gateway/detection/rules.hpp"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <set>

namespace gateway::detection {

namespace {

// One options object for the set and every rule, so that the set's "this rule matches" and
// the rule's own search agree. The DFA budget is raised from RE2's 8 MiB: the set's DFA over
// two dozen unanchored patterns needs more states than one pattern's, and running out would
// make every scan fall back to running each rule.
RE2::Options rule_options() {
    RE2::Options options;
    options.set_log_errors(false);
    options.set_max_mem(64 << 20);
    return options;
}

// A rule ready to run: built-in (validator, capture group) or custom (the whole match).
struct compiled_rule {
    std::string name;
    std::unique_ptr<RE2> re;
    std::size_t max_bytes;
    validator valid;
    int group;  // the submatch that is the span: 1 when the pattern has a group, else 0
};

}  // namespace

struct detectors::compiled {
    RE2::Set set{rule_options(), RE2::UNANCHORED};
    std::vector<compiled_rule> rules;
    std::size_t max_match = 0;

    // The spans of rule `index` in `text`, validated, appended to `out`.
    void find(std::size_t index, std::string_view text, std::vector<hit>& out) const {
        const auto& r = rules[index];
        re2::StringPiece whole[2];
        re2::StringPiece all(text.data(), text.size());
        std::size_t pos = 0;
        // The match's bounds first (RE2's DFAs only), then its group within those bounds: a
        // search for the group over the rest of the text costs about twice as much.
        while (pos <= text.size() &&
               r.re->Match(all, pos, text.size(), RE2::UNANCHORED, whole, 1)) {
            auto match_begin = static_cast<std::size_t>(whole[0].data() - text.data());
            auto match_end = match_begin + whole[0].size();
            // Past the match: a rejected candidate is not searched again from inside itself,
            // which keeps a text full of near misses linear.
            pos = match_end > match_begin ? match_end : match_begin + 1;
            if (whole[0].size() > r.max_bytes) continue;
            if (r.group && !r.re->Match(all, match_begin, match_end, RE2::ANCHOR_BOTH, whole, 2))
                continue;
            const auto& span = whole[r.group];
            if (span.data() == nullptr) continue;
            auto begin = static_cast<std::size_t>(span.data() - text.data());
            auto end = begin + span.size();
            if (r.valid && !r.valid(text, begin, end)) continue;
            out.push_back({r.name, begin, end});
        }
    }
};

detectors::detectors(std::unique_ptr<compiled> c) : compiled_(std::move(c)) {}
detectors::detectors(detectors&&) noexcept = default;
detectors& detectors::operator=(detectors&&) noexcept = default;
detectors::~detectors() = default;

std::string pattern_error(std::string_view pattern) {
    RE2 re(re2::StringPiece(pattern.data(), pattern.size()), rule_options());
    if (!re.ok()) return re.error();
    if (RE2::FullMatch("", re)) return "it matches the empty string";
    return {};
}

parsed<detectors> detectors::make(const std::vector<std::string>& sets,
                                  const std::vector<custom_rule>& custom) {
    using result = parsed<detectors>;
    auto c = std::make_unique<compiled>();
    std::set<std::string, std::less<>> names;
    auto add = [&](compiled_rule r, std::string_view pattern) -> std::string {
        if (!names.insert(r.name).second) return "rule `" + r.name + "` is named twice";
        std::string error;
        if (c->set.Add(re2::StringPiece(pattern.data(), pattern.size()), &error) < 0)
            return "rule `" + r.name + "`: " + error;
        c->max_match = std::max(c->max_match, r.max_bytes);
        c->rules.push_back(std::move(r));
        return {};
    };
    for (const auto& set : sets)
        if (!known_set(set))
            return result::fail("unknown detector set `" + set + "` (known: " +
                                std::string(secrets_set) + ", " + std::string(pii_set) + ")");
    for (const auto& r : builtin_rules()) {
        if (std::find(sets.begin(), sets.end(), r.set) == sets.end()) continue;
        auto re = std::make_unique<RE2>(re2::StringPiece(r.pattern.data(), r.pattern.size()),
                                        rule_options());
        if (!re->ok()) return result::fail("rule `" + std::string(r.name) + "`: " + re->error());
        int group = re->NumberOfCapturingGroups() > 0 ? 1 : 0;
        auto error =
            add({std::string(r.name), std::move(re), r.max_bytes, r.valid, group}, r.pattern);
        if (!error.empty()) return result::fail(error);
    }
    for (const auto& r : custom) {
        if (auto why = pattern_error(r.pattern); !why.empty())
            return result::fail("rule `" + r.name + "`: " + why);
        auto re = std::make_unique<RE2>(r.pattern, rule_options());
        auto error = add({r.name, std::move(re), custom_rule_max_bytes, nullptr, 0}, r.pattern);
        if (!error.empty()) return result::fail(error);
    }
    if (!c->rules.empty() && !c->set.Compile())
        return result::fail("the rules do not compile together (RE2 set)");
    return {detectors(std::move(c)), {}};
}

std::vector<hit> detectors::scan(std::string_view text) const {
    std::vector<hit> found;
    if (compiled_->rules.empty()) return found;
    std::vector<int> matching;
    RE2::Set::ErrorInfo info{};
    if (!compiled_->set.Match(re2::StringPiece(text.data(), text.size()), &matching, &info)) {
        if (info.kind == RE2::Set::kNoError) return found;
        // The set's DFA ran out of memory on this text: every rule runs on its own.
        matching.resize(compiled_->rules.size());
        for (std::size_t i = 0; i < matching.size(); ++i) matching[i] = static_cast<int>(i);
    }
    std::sort(matching.begin(), matching.end());
    for (int index : matching) compiled_->find(static_cast<std::size_t>(index), text, found);
    // Rule order breaks ties: `found` holds the rules' hits in rule order, so a stable sort by
    // start, then by length, keeps the earlier rule first among equal spans.
    std::stable_sort(found.begin(), found.end(), [](const hit& a, const hit& b) {
        if (a.begin != b.begin) return a.begin < b.begin;
        return a.end - a.begin > b.end - b.begin;
    });
    std::vector<hit> kept;
    for (const auto& h : found)
        if (kept.empty() || h.begin >= kept.back().end) kept.push_back(h);
    return kept;
}

std::size_t detectors::max_match_bytes() const {
    return compiled_->max_match;
}

bool detectors::empty() const {
    return compiled_->rules.empty();
}

std::string mask(std::string_view text, const std::vector<hit>& hits) {
    std::string out;
    out.reserve(text.size());
    std::size_t at = 0;
    for (const auto& h : hits) {
        out.append(text.substr(at, h.begin - at));
        out.append("[REDACTED:").append(h.rule).append("]");
        at = h.end;
    }
    out.append(text.substr(at));
    return out;
}

}  // namespace gateway::detection
