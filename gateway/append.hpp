#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace gateway {

// Appends the pieces to `to` in one call. A head written in many pieces with `+=` inlines a
// capacity check and a copy for each piece, and on the request path every one of those lines of
// code is run, and missed in the instruction cache, on every request; this is one function for
// all of them (the upstream's request head, the client's response head).
void append(std::string& to, std::initializer_list<std::string_view> pieces);

}  // namespace gateway
