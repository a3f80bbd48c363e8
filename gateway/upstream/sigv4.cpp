#include "gateway/upstream/sigv4.hpp"

#include <algorithm>
#include <array>
#include <ctime>

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace gateway::upstream::aws {

namespace {

using digest = std::array<unsigned char, 32>;

digest sha256(std::string_view bytes) {
    digest out{};
    unsigned int size = 0;
    EVP_Digest(bytes.data(), bytes.size(), out.data(), &size, EVP_sha256(), nullptr);
    return out;
}

digest hmac(std::string_view key, std::string_view message) {
    digest out{};
    unsigned int size = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(), &size);
    return out;
}

std::string_view view(const digest& d) {
    return {reinterpret_cast<const char*>(d.data()), d.size()};
}

std::string hex(const digest& d) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * d.size());
    for (unsigned char c : d) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

bool unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// %XX sequences decoded; anything else (a stray '%' too) kept as it is.
std::string uri_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size()) {
            int high = hex_value(text[i + 1]);
            int low = hex_value(text[i + 2]);
            if (high >= 0 && low >= 0) {
                out += static_cast<char>(high * 16 + low);
                i += 2;
                continue;
            }
        }
        out += text[i];
    }
    return out;
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// A field value as signed: trimmed, each run of white space (line folds too) one space.
std::string canonical_value(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    bool pending_space = false;
    for (char c : value) {
        if (is_space(c)) {
            pending_space = !out.empty();
            continue;
        }
        if (pending_space) out += ' ';
        pending_space = false;
        out += c;
    }
    return out;
}

// "20150830T123600Z" and its first eight characters, the date of the credential scope.
std::string amz_date(std::chrono::system_clock::time_point when) {
    std::time_t seconds = std::chrono::system_clock::to_time_t(when);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[17];
    std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
    return text;
}

}  // namespace

std::string uri_encode(std::string_view text) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        auto c = static_cast<unsigned char>(ch);
        if (unreserved(c)) {
            out += ch;
        } else {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 15];
        }
    }
    return out;
}

std::string canonical_uri(std::string_view wire_path) {
    // Dot segments and empty segments go, as botocore's remove_dot_segments does (AWS services
    // also merge consecutive slashes); a trailing slash stays.
    std::vector<std::string_view> segments;
    std::size_t start = 0;
    while (start <= wire_path.size()) {
        auto end = std::min(wire_path.find('/', start), wire_path.size());
        auto segment = wire_path.substr(start, end - start);
        if (segment == "..") {
            if (!segments.empty()) segments.pop_back();
        } else if (!segment.empty() && segment != ".") {
            segments.push_back(segment);
        }
        start = end + 1;
    }
    std::string out = "/";
    for (std::size_t i = 0; i < segments.size(); ++i) {
        if (i > 0) out += '/';
        out += uri_encode(segments[i]);  // the second encoding: `%` itself becomes %25
    }
    if (!segments.empty() && wire_path.ends_with('/')) out += '/';
    return out;
}

std::string canonical_query(std::string_view wire_query) {
    std::vector<std::pair<std::string, std::string>> parameters;
    std::size_t start = 0;
    while (start < wire_query.size()) {
        auto end = std::min(wire_query.find('&', start), wire_query.size());
        auto pair = wire_query.substr(start, end - start);
        start = end + 1;
        if (pair.empty()) continue;
        auto equals = std::min(pair.find('='), pair.size());
        auto value = equals < pair.size() ? pair.substr(equals + 1) : std::string_view();
        parameters.emplace_back(uri_encode(uri_decode(pair.substr(0, equals))),
                                uri_encode(uri_decode(value)));
    }
    // By the encoded bytes: AWS sorts the names as they are signed, then a repeated name's
    // values.
    std::sort(parameters.begin(), parameters.end());
    std::string out;
    for (const auto& [name, value] : parameters) {
        if (!out.empty()) out += '&';
        out += name;
        out += '=';
        out += value;
    }
    return out;
}

std::string payload_hash(std::string_view body) {
    return hex(sha256(body));
}

signed_request sign(const request& r, const credentials& keys, std::string_view service,
                    std::string_view region, std::chrono::system_clock::time_point when) {
    signed_request out;
    out.amz_date = amz_date(when);
    out.security_token = keys.session_token;
    std::string_view date = std::string_view(out.amz_date).substr(0, 8);

    // The fields signed: lower-case names in order, a repeated name's values joined by ','
    // in the order sent.
    std::vector<std::pair<std::string, std::string>> fields;
    fields.reserve(r.headers.size() + 2);
    for (const auto& [name, value] : r.headers)
        fields.emplace_back(lower(name), canonical_value(value));
    fields.emplace_back("x-amz-date", out.amz_date);
    if (!keys.session_token.empty())
        fields.emplace_back("x-amz-security-token", keys.session_token);
    std::stable_sort(fields.begin(), fields.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string canonical_fields;
    std::string signed_fields;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        bool repeated = i > 0 && fields[i].first == fields[i - 1].first;
        if (repeated) {
            canonical_fields.pop_back();  // the previous value's '\n'
            canonical_fields += ',';
        } else {
            if (!signed_fields.empty()) signed_fields += ';';
            signed_fields += fields[i].first;
            canonical_fields += fields[i].first;
            canonical_fields += ':';
        }
        canonical_fields += fields[i].second;
        canonical_fields += '\n';
    }

    auto& creq = out.canonical_request;
    creq.reserve(256 + canonical_fields.size() + r.path.size() + r.query.size());
    creq += r.method;
    creq += '\n';
    creq += canonical_uri(r.path);
    creq += '\n';
    creq += canonical_query(r.query);
    creq += '\n';
    creq += canonical_fields;
    creq += '\n';
    creq += signed_fields;
    creq += '\n';
    creq += r.payload_sha256;

    std::string scope;
    scope += date;
    scope += '/';
    scope += region;
    scope += '/';
    scope += service;
    scope += "/aws4_request";

    out.string_to_sign = "AWS4-HMAC-SHA256\n" + out.amz_date + '\n' + scope + '\n' +
                         hex(sha256(out.canonical_request));

    auto date_key = hmac("AWS4" + keys.secret_access_key, date);
    auto region_key = hmac(view(date_key), region);
    auto service_key = hmac(view(region_key), service);
    auto signing_key = hmac(view(service_key), "aws4_request");
    out.signature = hex(hmac(view(signing_key), out.string_to_sign));

    out.authorization = "AWS4-HMAC-SHA256 Credential=" + keys.access_key_id + '/' + scope +
                        ", SignedHeaders=" + signed_fields + ", Signature=" + out.signature;
    return out;
}

std::string signed_request::fields() const {
    std::string out = "Authorization: " + authorization + "\r\nX-Amz-Date: " + amz_date + "\r\n";
    if (!security_token.empty()) out += "X-Amz-Security-Token: " + security_token + "\r\n";
    return out;
}

}  // namespace gateway::upstream::aws
