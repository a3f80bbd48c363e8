#pragma once

#include <optional>
#include <string>
#include <utility>

namespace gateway {

// A value or the reason there is none; for expected failures such as bad user input.
template <class T>
struct parsed {
    std::optional<T> value;
    std::string error;
    explicit operator bool() const { return value.has_value(); }
    static parsed fail(std::string why) { return {std::nullopt, std::move(why)}; }
};

}  // namespace gateway
