#include "gateway/providers/aws_eventstream.hpp"

// Boost.CRC rather than zlib: the same CRC-32 (reflected polynomial 0xEDB88320, initial and final
// value 0xFFFFFFFF), header-only in the Boost the gateway already builds with, so no library is
// added to the link for it; OpenSSL has no CRC-32.
#include <boost/crc.hpp>

#include <limits>
#include <stdexcept>

namespace gateway::providers::aws_eventstream {

namespace {

std::uint64_t read_be(const char* p, std::size_t bytes) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

std::uint32_t read_u32(const char* p) {
    return static_cast<std::uint32_t>(read_be(p, 4));
}

void write_be(std::string& out, std::uint64_t v, std::size_t bytes) {
    for (std::size_t i = bytes; i-- > 0;) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A signed value of `bytes` bytes, sign-extended.
std::int64_t read_signed(const char* p, std::size_t bytes) {
    auto v = read_be(p, bytes);
    if (bytes < 8 && (v >> (8 * bytes - 1)) != 0) v |= ~std::uint64_t(0) << (8 * bytes);
    return static_cast<std::int64_t>(v);
}

// A name from the wire as an error may quote it: at most 64 bytes, controls and non-ASCII as `?`.
std::string quoted(std::string_view name) {
    std::string out = "`";
    for (unsigned char c : name.substr(0, 64)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
    return out + "`";
}

// The width of a fixed-size value; 0 for the booleans and the length-prefixed types.
std::size_t fixed_width(header_type t) {
    switch (t) {
        case header_type::bool_true:
        case header_type::bool_false:
            return 0;
        case header_type::byte:
            return 1;
        case header_type::int16:
            return 2;
        case header_type::int32:
            return 4;
        case header_type::int64:
        case header_type::timestamp:
            return 8;
        case header_type::uuid:
            return 16;
        case header_type::bytes:
        case header_type::string:
            break;
    }
    return 0;
}

bool length_prefixed(header_type t) {
    return t == header_type::bytes || t == header_type::string;
}

// The headers section of a message into `out`; false with `why` when a header does not fit in
// it or has a type the framing does not have.
bool read_headers(std::string_view section, std::vector<header>& out, std::string& why) {
    std::size_t at = 0;
    auto left = [&] { return section.size() - at; };
    while (at < section.size()) {
        std::size_t name_length = static_cast<unsigned char>(section[at++]);
        if (left() < name_length + 1) {
            why = "a header name runs past the end of the message's headers";
            return false;
        }
        header h;
        h.name = std::string(section.substr(at, name_length));
        at += name_length;
        auto type_byte = static_cast<unsigned char>(section[at++]);
        if (type_byte > static_cast<unsigned char>(header_type::uuid)) {
            why = "header " + quoted(h.name) + " has type " + std::to_string(type_byte) +
                  ", which the event-stream framing does not have";
            return false;
        }
        h.type = static_cast<header_type>(type_byte);
        std::size_t width = fixed_width(h.type);
        if (length_prefixed(h.type)) {
            if (left() < 2) {
                why = "the value of header " + quoted(h.name) + " is cut off";
                return false;
            }
            width = static_cast<std::size_t>(read_be(section.data() + at, 2));
            at += 2;
        }
        if (left() < width) {
            why = "the value of header " + quoted(h.name) + " runs past the end of the headers";
            return false;
        }
        const char* value = section.data() + at;
        if (h.type == header_type::bool_true || h.type == header_type::bool_false)
            h.number = h.type == header_type::bool_true ? 1 : 0;
        else if (length_prefixed(h.type) || h.type == header_type::uuid)
            h.text = std::string(value, width);
        else
            h.number = read_signed(value, width);
        at += width;
        out.push_back(std::move(h));
    }
    return true;
}

}  // namespace

std::string_view message::string_header(std::string_view name) const {
    for (const auto& h : headers)
        if (h.name == name && h.type == header_type::string) return h.text;
    return {};
}

std::uint32_t crc32(std::string_view bytes) {
    boost::crc_32_type crc;
    crc.process_bytes(bytes.data(), bytes.size());
    return crc.checksum();
}

void encode(const message& m, std::string& out) {
    std::string headers;
    for (const auto& h : m.headers) {
        if (h.name.size() > 255)
            throw std::invalid_argument("event-stream header name longer than 255 bytes");
        headers.push_back(static_cast<char>(h.name.size()));
        headers += h.name;
        headers.push_back(static_cast<char>(h.type));
        if (length_prefixed(h.type)) {
            if (h.text.size() > 0xffff)
                throw std::invalid_argument("event-stream header value longer than 65535 bytes");
            write_be(headers, h.text.size(), 2);
            headers += h.text;
        } else if (h.type == header_type::uuid) {
            if (h.text.size() != 16)
                throw std::invalid_argument("event-stream UUID header not 16 bytes");
            headers += h.text;
        } else {
            write_be(headers, static_cast<std::uint64_t>(h.number), fixed_width(h.type));
        }
    }
    auto total = min_message_bytes + headers.size() + m.payload.size();
    if (total > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument("event-stream message longer than 4 GiB");
    auto start = out.size();
    write_be(out, total, 4);
    write_be(out, headers.size(), 4);
    write_be(out, crc32(std::string_view(out).substr(start, 8)), 4);
    out += headers;
    out += m.payload;
    write_be(out, crc32(std::string_view(out).substr(start)), 4);
}

std::string encode(const message& m) {
    std::string out;
    encode(m, out);
    return out;
}

decoder::decoder(std::size_t max_message_bytes) : max_(max_message_bytes) {}

bool decoder::fail(std::string why, std::string& error) {
    failure_ = "the event stream is broken: " + std::move(why);
    buffer_.clear();
    error = failure_;
    return false;
}

bool decoder::feed(std::string_view bytes, std::vector<message>& out, std::string& error) {
    if (!failure_.empty()) {
        error = failure_;
        return false;
    }
    buffer_.append(bytes);
    std::size_t at = 0;  // the start of the current message in buffer_
    while (true) {
        std::string_view rest = std::string_view(buffer_).substr(at);
        if (length_ == 0) {
            if (rest.size() < prelude_bytes) break;
            auto total = read_u32(rest.data());
            auto headers = read_u32(rest.data() + 4);
            if (crc32(rest.substr(0, 8)) != read_u32(rest.data() + 8))
                return fail("a message's prelude CRC does not match its length fields", error);
            if (total < min_message_bytes)
                return fail("a message says it is " + std::to_string(total) +
                                " bytes long, less than its prelude and CRC",
                            error);
            if (total > max_)
                return fail("a message of " + std::to_string(total) +
                                " bytes is larger than the limit of " + std::to_string(max_),
                            error);
            if (headers > total - min_message_bytes)
                return fail("a message's headers (" + std::to_string(headers) +
                                " bytes) do not fit in its " + std::to_string(total) + " bytes",
                            error);
            length_ = total;
            headers_length_ = headers;
        }
        if (rest.size() < length_) break;
        auto whole = rest.substr(0, length_);
        if (crc32(whole.substr(0, length_ - 4)) != read_u32(whole.data() + length_ - 4))
            return fail("a message's CRC does not match its bytes", error);
        message m;
        std::string why;
        if (!read_headers(whole.substr(prelude_bytes, headers_length_), m.headers, why))
            return fail(why, error);
        m.payload = std::string(whole.substr(prelude_bytes + headers_length_,
                                             length_ - min_message_bytes - headers_length_));
        out.push_back(std::move(m));
        at += length_;
        length_ = 0;
    }
    buffer_.erase(0, at);
    return true;
}

bool decoder::finish(std::string& error) const {
    if (!failure_.empty()) {
        error = failure_;
        return false;
    }
    if (buffer_.empty()) return true;
    error = "the event stream ended inside a message (" + std::to_string(buffer_.size()) +
            " bytes of it arrived)";
    return false;
}

}  // namespace gateway::providers::aws_eventstream
