#include "gateway/observability/log.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <string>

namespace gateway::observability {

namespace {

std::atomic<int> current_level{static_cast<int>(config::log_level::info)};

const char* name(config::log_level level) {
    switch (level) {
        case config::log_level::debug:
            return "DEBUG";
        case config::log_level::info:
            return "INFO";
        case config::log_level::warn:
            return "WARN";
        case config::log_level::error:
            return "ERROR";
    }
    return "INFO";
}

}  // namespace

void set_level(config::log_level level) {
    current_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

bool enabled(config::log_level level) {
    return static_cast<int>(level) >= current_level.load(std::memory_order_relaxed);
}

void log(config::log_level level, std::string_view message) {
    if (!enabled(level)) return;
    auto now = std::chrono::system_clock::now();
    auto seconds = std::chrono::system_clock::to_time_t(now);
    auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char stamp[32];
    std::size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    std::string line;
    line.reserve(message.size() + 48);
    line.append(stamp, n);
    char ms[8];
    std::snprintf(ms, sizeof ms, ".%03dZ ", static_cast<int>(millis.count()));
    line += ms;
    line += name(level);
    line += ' ';
    line += message;
    line += '\n';
    // A failed write to stderr has nowhere to be reported.
    [[maybe_unused]] auto written = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace gateway::observability
