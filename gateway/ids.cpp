#include "gateway/ids.hpp"

#include <openssl/rand.h>

#include <random>
#include <stdexcept>

namespace gateway {

std::string random_id(std::string_view prefix, std::size_t bytes) {
    static constexpr char hex[] = "0123456789abcdef";
    unsigned char random[64];
    std::string id(prefix);
    id.reserve(prefix.size() + bytes * 2);
    while (bytes > 0) {
        auto n = std::min(bytes, sizeof random);
        if (RAND_bytes(random, static_cast<int>(n)) != 1)
            throw std::runtime_error("the system random generator failed");
        for (std::size_t i = 0; i < n; ++i) {
            id += hex[random[i] >> 4];
            id += hex[random[i] & 15];
        }
        bytes -= n;
    }
    return id;
}

std::string correlation_id() {
    static constexpr char hex[] = "0123456789abcdef";
    thread_local std::mt19937_64 generator{std::random_device{}()};
    std::string id(32, '0');
    for (int half = 0; half < 2; ++half) {
        auto bits = generator();
        for (int i = 0; i < 16; ++i) id[half * 16 + i] = hex[(bits >> (i * 4)) & 0xf];
    }
    return id;
}

}  // namespace gateway
