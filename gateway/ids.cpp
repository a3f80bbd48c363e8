#include "gateway/ids.hpp"

#include <openssl/rand.h>

#include <cstring>
#include <random>
#include <stdexcept>

namespace gateway {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

std::mt19937_64& unique_generator() {
    thread_local std::mt19937_64 generator{std::random_device{}()};
    return generator;
}

}  // namespace

std::string to_hex(const std::uint8_t* bytes, std::size_t size) {
    std::string out;
    out.reserve(2 * size);
    for (std::size_t i = 0; i < size; ++i) {
        out += hex_digits[bytes[i] >> 4];
        out += hex_digits[bytes[i] & 15];
    }
    return out;
}

void unique_bytes(std::uint8_t* out, std::size_t size) {
    for (std::size_t i = 0; i < size; i += 8) {
        auto word = unique_generator()();
        std::memcpy(out + i, &word, std::min<std::size_t>(8, size - i));
    }
}

std::string random_id(std::string_view prefix, std::size_t bytes) {
    unsigned char random[64];
    std::string id(prefix);
    id.reserve(prefix.size() + bytes * 2);
    while (bytes > 0) {
        auto n = std::min(bytes, sizeof random);
        if (RAND_bytes(random, static_cast<int>(n)) != 1)
            throw std::runtime_error("the system random generator failed");
        id += to_hex(random, n);
        bytes -= n;
    }
    return id;
}

std::string correlation_id() {
    std::string id(32, '0');
    for (int half = 0; half < 2; ++half) {
        auto bits = unique_generator()();
        for (int i = 0; i < 16; ++i) id[half * 16 + i] = hex_digits[(bits >> (i * 4)) & 0xf];
    }
    return id;
}

}  // namespace gateway
