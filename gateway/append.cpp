#include "gateway/append.hpp"

namespace gateway {

void append(std::string& to, std::initializer_list<std::string_view> pieces) {
    for (auto p : pieces) to.append(p.data(), p.size());
}

}  // namespace gateway
