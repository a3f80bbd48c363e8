#include "gateway/ids.hpp"

#include <openssl/rand.h>

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

}  // namespace gateway
