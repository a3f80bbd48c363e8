#pragma once

#include <span>
#include <string_view>

namespace gateway::console {

// One file of the console, embedded in the binary at build time by web/build.mjs.
struct asset {
    std::string_view name;          // "index.html", "assets/app-3F2A9C1B.js"
    std::string_view content_type;  // with charset for text
    std::string_view body;
    std::string_view gzip;  // the same body gzip-compressed; empty when that does not pay
    std::string_view etag;  // a quoted hash of body
    bool immutable;         // the name carries the content's hash: cached for a year
};

// The console's files, generated into the build folder (console_assets.cpp).
std::span<const asset> embedded_assets();

}  // namespace gateway::console
