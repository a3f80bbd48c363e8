#pragma once

// The guardrails' detectors: named rules that find secrets and personal data in text, compiled
// once into one multi-pattern scan (docs/operations.md "Guardrails" lists the rules). Pure code
// over RE2: no I/O, no configuration reading beyond the two lists a guardrail gives.
#include "gateway/detection/custom_rule.hpp"
#include "gateway/parsed.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::detection {

// One match: the rule that found it and its byte span [begin, end) in the scanned text. `rule`
// views the detectors' own copy of the name: valid while they live.
struct hit {
    std::string_view rule;
    std::size_t begin = 0;
    std::size_t end = 0;
};

// The rules of one guardrail: built-in sets (rules.hpp) and custom RE2 patterns. Immutable once
// built; scan() is const and safe to call from any number of threads at once.
class detectors {
public:
    // The rules of the sets named in `sets` ("secrets", "pii"), then the custom `regex` rules,
    // each matched as a whole (RE2 syntax). Fails with a message naming the rule when a set is
    // unknown, a custom pattern does not compile (pattern_error) or a name is used twice.
    static parsed<detectors> make(const std::vector<std::string>& sets,
                                  const std::vector<custom_rule>& custom);

    detectors(detectors&&) noexcept;
    detectors& operator=(detectors&&) noexcept;
    ~detectors();

    // Every hit in `text`, in order and non-overlapping (where two overlap, the one that starts
    // first wins, then the longer, then the earlier rule). One RE2::Set pass over the text tells
    // which rules match at all; only those run again to find their spans, each span checked by
    // its rule's validator (Luhn, mod-97, entropy, length). Linear in the text.
    std::vector<hit> scan(std::string_view text) const;

    // The longest span any rule can report, in bytes: a stream that holds back this many bytes
    // (minus one) of not yet released text cannot let a match through split across two events.
    // Built-in rules declare theirs (the longest: private-key blocks and JWTs, 4 KiB, beyond
    // which a block is masked up to the bound); a custom rule's match counts up to
    // custom_rule_max_bytes, a longer one is refused.
    std::size_t max_match_bytes() const;

    bool empty() const;

private:
    struct compiled;
    explicit detectors(std::unique_ptr<compiled> c);
    std::unique_ptr<compiled> compiled_;
};

// How long a custom `regex` rule's match may be (see max_match_bytes).
inline constexpr std::size_t custom_rule_max_bytes = 256;

// Why `pattern` cannot be a custom rule ("" when it can): it must compile as RE2 and must not
// match the empty string (it would hit everywhere). The configuration loader calls it, so a bad
// pattern is a check-config error.
std::string pattern_error(std::string_view pattern);

// `text` with each hit's span replaced by `[REDACTED:<rule>]`. `hits` as scan() gives them: in
// order and non-overlapping.
std::string mask(std::string_view text, const std::vector<hit>& hits);

}  // namespace gateway::detection
