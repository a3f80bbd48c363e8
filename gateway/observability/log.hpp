#pragma once

#include "gateway/config/config.hpp"

#include <string_view>

namespace gateway::observability {

// Process-wide log level; set once by the composition root before threads start.
void set_level(config::log_level level);
bool enabled(config::log_level level);

// Writes one line "<ISO time> <level> <message>" to stderr with a single write(2), so lines from
// different threads never interleave and no lock is taken. Thread-safe.
void log(config::log_level level, std::string_view message);

inline void log_debug(std::string_view m) {
    log(config::log_level::debug, m);
}
inline void log_info(std::string_view m) {
    log(config::log_level::info, m);
}
inline void log_warn(std::string_view m) {
    log(config::log_level::warn, m);
}
inline void log_error(std::string_view m) {
    log(config::log_level::error, m);
}

}  // namespace gateway::observability
