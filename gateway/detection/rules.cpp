// The built-in rules. Each pattern follows its format's public definition (the provider's
// documentation or announcement of its token format); what a pattern cannot say is checked by a
// validator over the candidate span and its neighbours (RE2 has no look-around).
#include "gateway/detection/rules.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace gateway::detection {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_upper(char c) {
    return c >= 'A' && c <= 'Z';
}
bool is_lower(char c) {
    return c >= 'a' && c <= 'z';
}
bool is_alnum(char c) {
    return is_digit(c) || is_upper(c) || is_lower(c);
}
// A character that continues a token: a span that a token character touches on either side was
// cut out of something longer (a hash, an identifier), so it is not the secret it looks like.
bool is_token_char(char c) {
    return is_alnum(c) || c == '_' || c == '-';
}

char before(std::string_view text, std::size_t begin) {
    return begin ? text[begin - 1] : ' ';
}
char after(std::string_view text, std::size_t end) {
    return end < text.size() ? text[end] : ' ';
}

// Shannon entropy of `s` in bits per character.
double entropy(std::string_view s) {
    std::array<int, 256> counts{};
    for (unsigned char c : s) ++counts[c];
    double bits = 0;
    for (int n : counts)
        if (n) {
            double p = static_cast<double>(n) / static_cast<double>(s.size());
            bits -= p * std::log2(p);
        }
    return bits;
}

// What a random token has and a word or a name in code has not: letters and digits mixed.
bool mixes_letters_and_digits(std::string_view s) {
    bool digit = false, letter = false;
    for (char c : s) {
        digit = digit || is_digit(c);
        letter = letter || is_upper(c) || is_lower(c);
    }
    return digit && letter;
}

// A token of a fixed length given by its pattern: nothing of the same alphabet may follow.
bool standalone(std::string_view text, std::size_t& begin, std::size_t& end) {
    return !is_token_char(before(text, begin)) && !is_token_char(after(text, end));
}

// A prefixed token of variable length (its pattern gives the shortest): standalone, and
// random-looking (a name such as `sk-learn-classifier-options-for-the-model` has the prefix and
// the length but no digits).
bool random_token(std::string_view text, std::size_t& begin, std::size_t& end) {
    return !is_token_char(before(text, begin)) &&
           mixes_letters_and_digits(text.substr(begin, end - begin));
}

// A JWT: three base64url parts, the first two JSON objects (the pattern asks for `eyJ`, which
// is how `{"` begins in base64); long enough to carry a claim.
bool jwt(std::string_view text, std::size_t& begin, std::size_t& end) {
    return end - begin >= 36 && !is_token_char(before(text, begin));
}

// A private-key block: the pattern finds its BEGIN line; the span runs to its END line. When
// that is not within the rule's bound (a truncated text, an uncommonly large key), the span
// runs over the lines that follow as long as they are the block's (base64, or a `Name: value`
// header of an encrypted key), up to the bound.
constexpr std::size_t private_key_max = 4096;
bool private_key_block(std::string_view text, std::size_t& begin, std::size_t& end) {
    auto window = text.substr(begin, private_key_max);
    auto close = window.find("-----END ", end - begin);
    if (close != std::string_view::npos) {
        auto dashes = window.find("-----", close + 9);
        if (dashes != std::string_view::npos) {
            end = begin + dashes + 5;
            return true;
        }
    }
    auto body_line = [](std::string_view line) {
        if (line.ends_with('\r')) line.remove_suffix(1);
        if (line.find(": ") != std::string_view::npos) return true;
        for (char c : line)
            if (!is_alnum(c) && c != '+' && c != '/' && c != '=') return false;
        return !line.empty();
    };
    std::size_t stop = begin + window.size();
    for (std::size_t at = end; at < stop && text[at] == '\n';) {
        auto next = text.find('\n', at + 1);
        auto line_end = std::min(next == std::string_view::npos ? text.size() : next, stop);
        auto line = text.substr(at + 1, line_end - at - 1);
        // One empty line separates an encrypted key's headers from its body.
        if (line.empty() || line == "\r") {
            at = line_end;
            continue;
        }
        if (!body_line(line)) break;
        end = line_end;
        at = line_end;
    }
    return true;
}

// A value assigned to a name such as `password` or `api_key`: a secret when it is at least 16
// characters, mixes letters and digits, holds no word (8 lowercase letters in a row: a random
// token of 32 characters has such a run about 2% of the time, `x-metadata-token` always), and
// carries at least 3.5 bits of entropy per character — a random 32-character token has about
// 4.5, `password123password123` 3.2; `changeme` and `your-api-key-here` fail sooner.
constexpr double assigned_secret_min_entropy = 3.5;
bool holds_a_word(std::string_view s) {
    std::size_t run = 0;
    for (char c : s) {
        run = is_lower(c) ? run + 1 : 0;
        if (run == 8) return true;
    }
    return false;
}
bool assigned_secret(std::string_view text, std::size_t& begin, std::size_t& end) {
    auto value = text.substr(begin, end - begin);
    return value.size() >= 16 && mixes_letters_and_digits(value) && !holds_a_word(value) &&
           entropy(value) >= assigned_secret_min_entropy;
}

bool luhn(std::string_view digits) {
    int sum = 0;
    bool twice = false;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
        int d = *it - '0';
        if (twice) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
        sum += d;
        twice = !twice;
    }
    return sum % 10 == 0;
}

// A payment card number: 13 to 19 digits that pass the Luhn check, beginning as the major
// networks' numbers do (2-6), standing alone (not inside a longer number, a version or an
// identifier), and grouped as cards are printed: no separators, or one kind of separator
// between groups of four (the last shorter) or Amex's 4-6-5.
bool card_number(std::string_view text, std::size_t& begin, std::size_t& end) {
    char left = before(text, begin), right = after(text, end);
    if (is_token_char(left) || left == '.' || left == '+' || is_token_char(right) ||
        (right == '.' && is_digit(after(text, end + 1))))
        return false;
    std::string digits;
    std::vector<std::size_t> groups{0};
    char separator = 0;
    for (char c : text.substr(begin, end - begin)) {
        if (is_digit(c)) {
            digits += c;
            ++groups.back();
            continue;
        }
        if (separator && c != separator) return false;
        separator = c;
        groups.push_back(0);
    }
    if (digits.size() < 13 || digits.size() > 19 || digits[0] < '2' || digits[0] > '6')
        return false;
    if (groups.size() > 1) {
        bool amex = groups.size() == 3 && groups[0] == 4 && groups[1] == 6;
        bool fours = true;
        for (std::size_t i = 0; i + 1 < groups.size(); ++i) fours = fours && groups[i] == 4;
        if (!amex && !(fours && groups.back() >= 1 && groups.back() <= 4)) return false;
    }
    return luhn(digits);
}

// An IBAN: country, check digits, account (ISO 13616), 15 to 34 characters, whose mod-97
// check (the first four characters moved to the end, letters as 10-35) leaves 1. Written
// compact or in groups of four; the pattern takes a run of such characters and spaces, and the
// longest run of whole groups that passes is the span (a word after the number is not part of
// it).
bool mod97(std::string_view compact) {
    std::uint32_t rest = 0;
    auto feed = [&rest](char c) {
        if (is_digit(c))
            rest = (rest * 10 + static_cast<std::uint32_t>(c - '0')) % 97;
        else
            rest = (rest * 100 + static_cast<std::uint32_t>(c - 'A' + 10)) % 97;
    };
    for (std::size_t i = 4; i < compact.size(); ++i) feed(compact[i]);
    for (std::size_t i = 0; i < 4; ++i) feed(compact[i]);
    return rest == 1;
}
bool iban(std::string_view text, std::size_t& begin, std::size_t& end) {
    if (is_alnum(before(text, begin))) return false;
    auto span = text.substr(begin, end - begin);
    // Where each space-separated group ends.
    std::vector<std::size_t> group_ends;
    for (std::size_t at = 0; at <= span.size(); ++at)
        if (at == span.size() || span[at] == ' ') group_ends.push_back(at);
    for (std::size_t k = group_ends.size(); k >= 1; --k) {
        auto candidate = span.substr(0, group_ends[k - 1]);
        if (is_alnum(after(text, begin + candidate.size()))) continue;
        bool grouped = true;
        std::size_t start = 0;
        for (std::size_t g = 0; g + 1 < k; ++g) {
            grouped = grouped && group_ends[g] - start == 4;
            start = group_ends[g] + 1;
        }
        std::string compact;
        for (char c : candidate)
            if (c != ' ') compact += c;
        if (!grouped || (k > 1 && candidate.size() - start > 4) || compact.size() < 15 ||
            compact.size() > 34 || !mod97(compact))
            continue;
        end = begin + candidate.size();
        return true;
    }
    return false;
}

// A phone number: 8 to 15 digits (E.164's maximum), parentheses balanced, standing alone (a
// digit, a letter, `.`, `/` or `:` next to it makes it part of a version, a date, a path or a
// time).
bool phone(std::string_view text, std::size_t& begin, std::size_t& end) {
    auto near = [](char c) {
        return is_token_char(c) || c == '.' || c == '/' || c == ':' || c == '+';
    };
    char right = after(text, end);
    if (near(before(text, begin)) || (near(right) && right != '.') ||
        (right == '.' && is_digit(after(text, end + 1))))
        return false;
    int digits = 0, open = 0;
    for (char c : text.substr(begin, end - begin)) {
        digits += is_digit(c);
        if (c == '(') ++open;
        if (c == ')' && --open < 0) return false;
    }
    return open == 0 && digits >= 8 && digits <= 15;
}

// An e-mail address, as far as the address itself can tell: not an SSH remote
// (`git@host:owner/repo`) and not an image's density suffix (`icon@2x.png`).
bool email(std::string_view text, std::size_t& begin, std::size_t& end) {
    auto address = text.substr(begin, end - begin);
    auto at = address.find('@');
    auto local = address.substr(0, at);
    if (local.size() > 64 || address.size() > 254 || local.front() == '.' || local.back() == '.')
        return false;
    if (after(text, end) == ':' && !std::isspace(static_cast<unsigned char>(after(text, end + 1))))
        return false;
    auto domain = address.substr(at + 1);
    auto tld = domain.substr(domain.rfind('.') + 1);
    static constexpr std::array file_types{"png", "jpg", "jpeg", "gif", "svg", "webp", "ico",
                                           "css", "js",  "mjs",  "ts",  "tsx", "jsx",  "map"};
    for (std::string_view t : file_types)
        if (tld == t) return false;
    return true;
}

// The rules, in priority order: a tie between two equal spans goes to the earlier one, so the
// specific formats come before the ones that would also take them (Anthropic's `sk-ant-` before
// OpenAI's `sk-`, every assignment-shaped rule before `assigned_secret`).
constexpr std::array rules{
    rule{"aws_access_key_id", secrets_set, R"(\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b)", 20,
         nullptr,
         "AWS access key ids: AKIA (long-term), ASIA (temporary) and 16 base-32 characters"},
    rule{
        "aws_secret_access_key", secrets_set,
        R"((?i:aws)[_\-.]?(?i:secret)[_\-.]?(?i:access[_\-.]?)?(?i:key)["']?\s{0,4}(?::|=|:=|=>)\s{0,4}["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$))",
        120, nullptr, "AWS secret access keys (40 base-64 characters) assigned to aws_secret_*"},
    rule{"github_token", secrets_set,
         R"((?:gh[pousr]_|github_pat_)[A-Za-z0-9_.\-]{36}[A-Za-z0-9_.\-]*)", 300, random_token,
         "GitHub tokens: ghp_, gho_, ghu_, ghs_, ghr_ and fine-grained github_pat_"},
    rule{"gitlab_token", secrets_set,
         R"(glpat-[A-Za-z0-9_\-]{20}[A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*)", 128, random_token,
         "GitLab personal access tokens: glpat- and 20 or more characters"},
    rule{"slack_token", secrets_set, R"((?:xox[abposr]|xapp)-[0-9A-Za-z\-]{19}[0-9A-Za-z\-]*)", 300,
         random_token, "Slack tokens: xoxb-, xoxp-, xoxa-, xoxo-, xoxs-, xoxr-, xapp-"},
    rule{
        "slack_webhook", secrets_set,
        R"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20}[A-Za-z0-9+/_\-]*)",
        300, nullptr, "Slack incoming-webhook URLs"},
    rule{"stripe_key", secrets_set, R"([rs]k_live_[0-9A-Za-z]{16}[0-9A-Za-z]*)", 255, random_token,
         "Stripe live secret and restricted keys: sk_live_, rk_live_"},
    rule{"anthropic_key", secrets_set, R"(sk-ant-[A-Za-z0-9_\-]{33}[A-Za-z0-9_\-]*)", 300,
         random_token, "Anthropic API keys: sk-ant-"},
    rule{"openai_key", secrets_set, R"(sk-[A-Za-z0-9_\-]{37}[A-Za-z0-9_\-]*)", 300, random_token,
         "OpenAI API keys: sk-, sk-proj-, sk-svcacct-, sk-admin- (40 characters or more)"},
    rule{"google_api_key", secrets_set, R"(AIza[0-9A-Za-z_\-]{35})", 39, standalone,
         "Google API keys: AIza and 35 characters"},
    rule{"google_oauth_client_secret", secrets_set, R"(GOCSPX-[0-9A-Za-z_\-]{28})", 35, standalone,
         "Google OAuth client secrets: GOCSPX- and 28 characters"},
    rule{"twilio_api_key", secrets_set, R"(SK[0-9a-fA-F]{32})", 34, standalone,
         "Twilio API key SIDs: SK and 32 hex digits"},
    rule{"twilio_auth_token", secrets_set,
         R"((?i:twilio)[A-Za-z0-9_\-]{0,24}["']?\s{0,4}(?::|=|:=|=>)\s{0,4}["']?([0-9a-f]{32})\b)",
         100, nullptr, "Twilio auth tokens (32 hex digits) assigned to twilio_*"},
    rule{"sendgrid_key", secrets_set, R"(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})", 69,
         standalone, "SendGrid API keys: SG., 22 and 43 characters"},
    rule{"npm_token", secrets_set, R"(npm_[A-Za-z0-9]{36})", 40, standalone,
         "npm access tokens: npm_ and 36 characters"},
    rule{"pypi_token", secrets_set, R"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{60}[A-Za-z0-9_\-]*)", 512,
         random_token, "PyPI API tokens: pypi- and a macaroon issued by pypi.org"},
    rule{"private_key", secrets_set,
         R"(-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----)",
         private_key_max, private_key_block,
         "PEM private-key blocks (RSA, EC, DSA, OpenSSH, PKCS#8, PGP), BEGIN to END"},
    rule{"jwt", secrets_set, R"(eyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*)", 4096,
         jwt, "JSON Web Tokens: three base64url parts, header and claims JSON"},
    rule{
        "assigned_secret", secrets_set,
        R"((?i:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|auth[_\-]?key|private[_\-]?key)[A-Za-z0-9_\-]{0,24}["']?\s{0,4}(?::|=|:=|=>)\s{0,4}["']?([A-Za-z0-9_\-+/=~!@#$%^*]{16,128}))",
        200, assigned_secret,
        "values assigned to password, secret, token, api_key…: 16+ characters, letters and "
        "digits, 3.5+ bits of entropy per character"},
    rule{
        "email", pii_set,
        R"([A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b)",
        254, email, "e-mail addresses"},
    rule{"payment_card", pii_set, R"([2-6](?:[ \-]?[0-9]){12,18})", 23, card_number,
         "payment card numbers: 13-19 digits, Luhn-checked, grouped as printed"},
    rule{"iban", pii_set, R"([A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,40})", 42, iban,
         "IBANs: country, check digits, account; mod-97 checked"},
    rule{
        "phone", pii_set,
        R"(\+[1-9][0-9]{0,3}(?:[ .\-]?\(?[0-9]{1,5}\)?){1,5}[ .\-]?[0-9]{2,5}|\(?[2-9][0-9]{2}\)?[ .\-][2-9][0-9]{2}[ .\-][0-9]{4}|0[1-9](?: [0-9]{2}){4}|0[1-9](?:\.[0-9]{2}){4}|0[1-9][0-9]{1,4}[ /\-][0-9]{3,4}[ \-]?[0-9]{3,4})",
        32, phone,
        "phone numbers: E.164 (+ and 8-15 digits) and grouped national forms (NANP "
        "(555) 010-0199, 06 12 34 56 78, 020 7946 0958)"},
};

}  // namespace

bool known_set(std::string_view name) {
    return name == secrets_set || name == pii_set;
}

std::span<const rule> builtin_rules() {
    return rules;
}

}  // namespace gateway::detection
