#include "gateway/providers/aws_eventstream.hpp"

#include <boost/test/unit_test.hpp>

#include <limits>
#include <stdexcept>

namespace providers_aws_eventstream_test {

using namespace gateway::providers::aws_eventstream;

namespace {

std::string unhex(std::string_view hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
    return out;
}

// AWS's published event-stream test vectors (awslabs/aws-c-event-stream's encoded cases, as the
// AWS SDK for JavaScript's eventstream codec carries them in TestVectors.fixture.ts).
const std::string all_headers = unhex(
    "000000cc000000af0fae64ca0a6576656e742d74797065040000a00c0c636f6e74656e742d74797065070010"
    "6170706c69636174696f6e2f6a736f6e0a626f6f6c2066616c73650109626f6f6c2074727565000462797465"
    "02cf08627974652062756606001449276d2061206c6974746c6520746561706f74210974696d657374616d70"
    "080000000000845fed05696e74313603002a05696e7436340500000000028757b20475756964090102030405"
    "060708090a0b0c0d0e0f107b27666f6f273a27626172277daba5f10c");
const std::string empty_message = unhex("000000100000000005c248eb7d98c8ff");
const std::string int32_header = unhex(
    "0000002d0000001041c424b80a6576656e742d74797065040000a00c7b27666f6f273a27626172277d36f480"
    "a0");
const std::string payload_no_headers =
    unhex("0000001d00000000fd528c5a7b27666f6f273a27626172277dc3653936");
const std::string payload_one_str_header = unhex(
    "0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e"
    "7b27666f6f273a27626172277d8d9c08b1");

const std::string foo_bar = "{'foo':'bar'}";

struct decoded {
    bool ok = false;
    std::string error;
    std::vector<message> messages;
};

// `bytes` fed in pieces of `cut` bytes (0: whole), then the end.
decoded decode(std::string_view bytes, std::size_t cut = 0, std::size_t limit = 1 << 20) {
    decoded out;
    decoder d(limit);
    std::size_t step = cut == 0 ? std::max<std::size_t>(bytes.size(), 1) : cut;
    for (std::size_t at = 0; at < bytes.size(); at += step)
        if (!d.feed(bytes.substr(at, step), out.messages, out.error)) return out;
    out.ok = d.finish(out.error);
    return out;
}

// A message as one comparable line: each header's name, type, value; then the payload.
std::string describe(const message& m) {
    std::string out;
    for (const auto& h : m.headers) {
        out += h.name + "/" + std::to_string(static_cast<int>(h.type)) + "=";
        out += h.text.empty() ? std::to_string(h.number) : h.text;
        out += ";";
    }
    return out + "|" + m.payload;
}

header number(std::string name, header_type type, std::int64_t n) {
    return {std::move(name), type, n, {}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(providers_aws_eventstream)

BOOST_AUTO_TEST_CASE(crc32_is_zlibs) {
    BOOST_TEST(crc32("") == 0u);
    BOOST_TEST(crc32("123456789") == 0xCBF43926u);  // CRC-32's check value
}

BOOST_AUTO_TEST_CASE(awss_vectors_decode_to_their_messages_and_encode_back) {
    auto one = [](const std::string& bytes) {
        auto d = decode(bytes);
        BOOST_TEST_REQUIRE(d.ok, d.error);
        BOOST_TEST_REQUIRE(d.messages.size() == 1u);
        BOOST_TEST(encode(d.messages[0]) == bytes);
        return d.messages[0];
    };
    auto empty = one(empty_message);
    BOOST_TEST(empty.headers.empty());
    BOOST_TEST(empty.payload.empty());

    BOOST_TEST(one(payload_no_headers).payload == foo_bar);

    auto typed = one(int32_header);
    BOOST_TEST_REQUIRE(typed.headers.size() == 1u);
    BOOST_TEST(typed.headers[0].name == "event-type");
    BOOST_TEST((typed.headers[0].type == header_type::int32));
    BOOST_TEST(typed.headers[0].number == 40972);

    auto text = one(payload_one_str_header);
    BOOST_TEST(text.string_header("content-type") == "application/json");
    BOOST_TEST(text.string_header("absent") == "");
    BOOST_TEST(text.payload == foo_bar);

    auto all = one(all_headers);
    BOOST_TEST(all.payload == foo_bar);
    BOOST_TEST(describe(all) ==
               "event-type/4=40972;content-type/7=application/json;bool false/1=0;"
               "bool true/0=1;byte/2=-49;byte buf/6=I'm a little teapot!;timestamp/8=8675309;"
               "int16/3=42;int64/5=42424242;uuid/9=" +
                   unhex("0102030405060708090a0b0c0d0e0f10") + ";|" + foo_bar);
}

// The vectors AWS publishes as failures, made from the good ones as they are.
BOOST_AUTO_TEST_CASE(awss_corrupted_vectors_are_refused_naming_the_check) {
    auto refused = [](std::string bytes, std::string_view why) {
        auto d = decode(bytes);
        BOOST_TEST(!d.ok);
        BOOST_TEST(d.messages.empty());
        BOOST_TEST(d.error.find(why) != std::string::npos, d.error);
    };
    auto length = payload_one_str_header;  // corrupted_length: total 62
    length[3] = 62;
    refused(length, "prelude CRC");
    auto headers_length = payload_one_str_header;  // corrupted_header_len: headers 33
    headers_length[7] = 33;
    refused(headers_length, "prelude CRC");
    auto headers = payload_one_str_header;  // corrupted_headers: a byte after the headers
    headers[45] = 'a';
    refused(headers, "message's CRC");
    auto payload = payload_no_headers;  // corrupted_payload: its first byte
    payload[12] = '[';
    refused(payload, "message's CRC");
}

BOOST_AUTO_TEST_CASE(every_type_and_sign_round_trips) {
    message m;
    m.headers = {header::of_string(":event-type", "contentBlockDelta"),
                 number("t", header_type::bool_true, 1),
                 number("f", header_type::bool_false, 0),
                 number("b", header_type::byte, -128),
                 number("s", header_type::int16, -2),
                 number("i", header_type::int32, -2147483648LL),
                 number("l", header_type::int64, std::numeric_limits<std::int64_t>::min()),
                 number("ts", header_type::timestamp, 1700000000123),
                 {"raw", header_type::bytes, 0, std::string("\0\xff\n", 3)},
                 {"id", header_type::uuid, 0, std::string(16, '\x7f')},
                 header::of_string("empty", "")};
    m.payload = std::string(70'000, 'x');
    auto bytes = encode(m);
    auto d = decode(bytes);
    BOOST_TEST_REQUIRE(d.ok, d.error);
    BOOST_TEST_REQUIRE(d.messages.size() == 1u);
    BOOST_TEST(describe(d.messages[0]) == describe(m));
    BOOST_TEST(encode(d.messages[0]) == bytes);
}

// Chunk boundaries are the transport's: every cut of a stream decodes to the same messages.
BOOST_AUTO_TEST_CASE(a_stream_split_at_every_byte_decodes_identically) {
    message event;
    event.headers = {header::of_string(":event-type", "contentBlockDelta"),
                     header::of_string(":content-type", "application/json"),
                     header::of_string(":message-type", "event")};
    event.payload = R"({"contentBlockIndex":0,"delta":{"text":"Hello"},"p":"abcdefgh"})";
    auto stream = all_headers + empty_message + encode(event) + payload_one_str_header;
    auto whole = decode(stream);
    BOOST_TEST_REQUIRE(whole.ok, whole.error);
    BOOST_TEST_REQUIRE(whole.messages.size() == 4u);
    std::string expected;
    for (const auto& m : whole.messages) expected += describe(m) + "\n";

    for (std::size_t cut = 1; cut < stream.size(); ++cut) {
        // Two pieces cut at `cut`, and pieces of `cut` bytes each.
        std::vector<message> got;
        std::string error;
        decoder d(1 << 20);
        BOOST_TEST_REQUIRE(d.feed(std::string_view(stream).substr(0, cut), got, error), error);
        BOOST_TEST_REQUIRE(d.feed(std::string_view(stream).substr(cut), got, error), error);
        BOOST_TEST_REQUIRE(d.finish(error), error);
        std::string seen;
        for (const auto& m : got) seen += describe(m) + "\n";
        BOOST_TEST_REQUIRE(seen == expected, "cut at " << cut);

        auto pieces = decode(stream, cut);
        BOOST_TEST_REQUIRE(pieces.ok, pieces.error);
        seen.clear();
        for (const auto& m : pieces.messages) seen += describe(m) + "\n";
        BOOST_TEST_REQUIRE(seen == expected, "pieces of " << cut);
    }
}

BOOST_AUTO_TEST_CASE(a_message_over_the_limit_is_refused_from_its_prelude) {
    message big;
    big.payload = std::string(1000, 'x');
    auto bytes = encode(big);
    BOOST_TEST(decode(bytes, 0, bytes.size()).ok);
    // Refused as soon as the prelude is in: nothing of the payload is waited for or kept.
    decoder d(bytes.size() - 1);
    std::vector<message> out;
    std::string error;
    BOOST_TEST(!d.feed(std::string_view(bytes).substr(0, prelude_bytes), out, error));
    BOOST_TEST(error.find("1016 bytes is larger than the limit of 1015") != std::string::npos,
               error);
    // Broken for good: more bytes change nothing.
    error.clear();
    BOOST_TEST(!d.feed(std::string_view(bytes).substr(prelude_bytes), out, error));
    BOOST_TEST(!error.empty());
    BOOST_TEST(!d.finish(error));
    BOOST_TEST(out.empty());
}

BOOST_AUTO_TEST_CASE(a_stream_that_ends_inside_a_message_is_truncated) {
    auto stream = payload_no_headers + int32_header;
    for (std::size_t end = 1; end < stream.size(); ++end) {
        if (end == payload_no_headers.size()) continue;  // a boundary: a clean end
        auto d = decode(std::string_view(stream).substr(0, end));
        BOOST_TEST_REQUIRE(!d.ok, "ended at " << end);
        BOOST_TEST(d.error.find("ended inside a message") != std::string::npos, d.error);
        BOOST_TEST(d.messages.size() == (end > payload_no_headers.size() ? 1u : 0u));
    }
    BOOST_TEST(decode(std::string_view(stream).substr(0, payload_no_headers.size())).ok);
    BOOST_TEST(decode("").ok);
}

// A prelude whose CRC is right but whose lengths are no message, and headers that do not parse:
// what a broken or hostile upstream could send with correct CRCs.
BOOST_AUTO_TEST_CASE(impossible_lengths_and_malformed_headers_are_refused) {
    // A frame with these lengths, these header bytes and correct CRCs.
    auto frame = [](std::uint32_t total, std::uint32_t headers_length, std::string body) {
        std::string out;
        for (auto v : {total, headers_length})
            for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
        auto crc = crc32(out);
        for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
        out += body;
        crc = crc32(out);
        for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
        return out;
    };
    auto refused = [](const std::string& bytes, std::string_view why) {
        auto d = decode(bytes);
        BOOST_TEST(!d.ok);
        BOOST_TEST(d.error.find(why) != std::string::npos, d.error);
    };
    refused(frame(15, 0, ""), "says it is 15 bytes long");
    refused(frame(0, 0, ""), "says it is 0 bytes long");
    refused(frame(20, 5, "abcd"), "headers (5 bytes) do not fit in its 20 bytes");
    refused(frame(0xffffffff, 0, ""), "larger than the limit");
    auto headers = [&](std::string h) {
        return frame(static_cast<std::uint32_t>(16 + h.size()),
                     static_cast<std::uint32_t>(h.size()), h);
    };
    refused(headers(std::string("\x01x\x0a", 3)), "header `x` has type 10");
    refused(headers(std::string("\x05"
                                "ab",
                                3)),
            "header name runs past");
    refused(headers(std::string("\x01x", 2)), "header name runs past");
    refused(headers(std::string("\x01x\x04\x00\x00", 5)), "value of header `x` runs past");
    refused(headers(std::string("\x01x\x07\x00", 4)), "value of header `x` is cut off");
    refused(headers(std::string("\x01x\x07\x00\x05"
                                "abc",
                                8)),
            "value of header `x` runs past");
    refused(headers(std::string("\x01x\x09"
                                "0123456789",
                                13)),
            "value of header `x` runs past");
    // A name with controls is quoted without them.
    refused(headers(std::string("\x02\n\x01\x0b", 4)), "header `??` has type 11");
    // Sound headers after the bad ones do not matter; a good message before a bad one is kept.
    auto d = decode(payload_no_headers + headers(std::string("\x01x\x0b", 3)));
    BOOST_TEST(!d.ok);
    BOOST_TEST(d.messages.size() == 1u);
    // An empty name is a name.
    BOOST_TEST(decode(headers(std::string("\x00\x00", 2))).ok);
}

BOOST_AUTO_TEST_CASE(what_cannot_be_framed_is_the_callers_bug) {
    message m;
    m.headers = {header::of_string(std::string(256, 'n'), "v")};
    BOOST_CHECK_THROW(encode(m), std::invalid_argument);
    m.headers = {header::of_string("n", std::string(65536, 'v'))};
    BOOST_CHECK_THROW(encode(m), std::invalid_argument);
    m.headers = {{"id", header_type::uuid, 0, "short"}};
    BOOST_CHECK_THROW(encode(m), std::invalid_argument);
    m.headers = {header::of_string(std::string(255, 'n'), std::string(65535, 'v'))};
    BOOST_TEST(decode(encode(m)).ok);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_aws_eventstream_test
