#pragma once

// AWS's binary event-stream framing (`application/vnd.amazon.eventstream`), in which Bedrock's
// ConverseStream and InvokeModelWithResponseStream answer. A message is
//
//   total length (u32 BE) | headers length (u32 BE) | prelude CRC (u32 BE, over the 8 bytes
//   before it) | headers | payload | message CRC (u32 BE, over every byte before it)
//
// and a header is: name length (u8), name, value type (u8), value: nothing for the booleans, one
// byte, a 16-, 32- or 64-bit big-endian integer (a timestamp is milliseconds since the epoch in
// 64 bits), 16 bytes for a UUID, or a 16-bit big-endian length and that many bytes (bytes and
// string). Both CRCs are CRC-32 (IEEE 802.3, zlib's crc32).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::providers::aws_eventstream {

// A header value's wire type; the numbers are its type byte.
enum class header_type : std::uint8_t {
    bool_true = 0,
    bool_false = 1,
    byte = 2,
    int16 = 3,
    int32 = 4,
    int64 = 5,
    bytes = 6,
    string = 7,
    timestamp = 8,
    uuid = 9,
};

struct header {
    std::string name;
    header_type type = header_type::string;
    // byte, int16, int32, int64 and timestamp: the value (sign-extended); the booleans: 1 or 0.
    std::int64_t number = 0;
    // bytes and string: the value; uuid: its 16 bytes.
    std::string text;

    static header of_string(std::string name, std::string value) {
        return {std::move(name), header_type::string, 0, std::move(value)};
    }
};

struct message {
    std::vector<header> headers;
    std::string payload;

    // The first string header called `name`, or "" when there is none.
    std::string_view string_header(std::string_view name) const;
};

// The smallest message: a prelude, no headers, no payload and the message CRC.
constexpr std::size_t prelude_bytes = 12;
constexpr std::size_t min_message_bytes = prelude_bytes + 4;

// The CRC-32 of `bytes` (what zlib's crc32(0, bytes, size) gives).
std::uint32_t crc32(std::string_view bytes);

// `m` framed, appended to `out`. A header name longer than 255 bytes, a bytes or string value
// longer than 65,535, a UUID that is not 16 bytes or a message past 4 GiB cannot be framed: that
// is the caller's bug, and throws std::invalid_argument.
void encode(const message& m, std::string& out);
std::string encode(const message& m);

// Reads messages from bytes that arrive in any pieces. Each message is checked whole before it
// is handed out: its prelude CRC as soon as its first 12 bytes are there (so a length that is not
// one is refused before anything is buffered for it), its length against `max_message_bytes`, its
// message CRC, and its headers (every one inside the headers section, of a known type). The first
// failure stops the decoder: it says what was wrong and ignores what follows. Not thread-safe; one
// per stream.
class decoder {
public:
    explicit decoder(std::size_t max_message_bytes);

    // Appends to `out` every message `bytes` completes. False, with `error`, once the stream is
    // broken; `out` then holds the messages before the broken one.
    bool feed(std::string_view bytes, std::vector<message>& out, std::string& error);
    // The stream ended: false, with `error`, when it ended inside a message (or was broken).
    bool finish(std::string& error) const;

private:
    bool fail(std::string why, std::string& error);

    std::size_t max_;
    std::string buffer_;        // bytes of messages not handed out yet
    std::uint32_t length_ = 0;  // the current message's total length, once its prelude is read
    std::uint32_t headers_length_ = 0;
    std::string failure_;  // set: broken
};

}  // namespace gateway::providers::aws_eventstream
