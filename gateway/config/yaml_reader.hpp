#pragma once

#include "gateway/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::config {

// Thrown by yaml_reader::fail, caught where loading started: it carries the finished message
// ("<file>:<line>: …").
struct load_error {
    std::string message;
};

// Reading one YAML file's values the way every section reads them: scalars with `${NAME}` and
// `${NAME:-default}` taken from the environment, durations, sizes, counts, lists, paths
// relative to the file's folder, and errors that name the file and line. Used by the loader.
class yaml_reader {
public:
    // Relative paths in the file resolve against `base` (its folder; "" for the working
    // directory).
    yaml_reader(std::string source, std::string base)
        : source_(std::move(source)), base_(std::move(base)) {}

    // A path setting: relative ones are taken from the configuration file's folder, so the
    // gateway finds the same files whatever folder it is started from.
    std::string path(const YAML::Node& node, std::string_view key) const;

    [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const;

    // Every key of `map` must be one of `allowed`; `section` names the map in the message.
    void check_keys(const YAML::Node& map, std::string_view section,
                    const std::vector<std::string_view>& allowed) const;

    // A scalar with `${NAME}` and `${NAME:-default}` replaced from the environment.
    std::string scalar(const YAML::Node& node, std::string_view key) const;

    std::string interpolate(const YAML::Node& node, const std::string& text) const;

    duration get_duration(const YAML::Node& node, std::string_view key) const;

    // A duration where zero would mean "never": it must be positive.
    duration positive_duration(const YAML::Node& node, std::string_view key) const;

    std::size_t get_size(const YAML::Node& node, std::string_view key) const;

    std::size_t get_count(const YAML::Node& node, std::string_view key, std::size_t min,
                          std::size_t max) const;

    // The index in `options` of the scalar's spelling (`label` names the setting in the error:
    // "`label`: `x` must be a, b or c").
    std::size_t one_of(const YAML::Node& node, std::string_view label,
                       const std::vector<std::string_view>& options) const;

    bool get_bool(const YAML::Node& node, std::string_view key) const;

    std::vector<std::string> string_list(const YAML::Node& node, std::string_view key) const;

    unsigned get_unsigned(const YAML::Node& node, std::string_view key, unsigned min,
                          unsigned max) const;

    // name: value pairs, values interpolated (`${TOKEN}`).
    std::vector<std::pair<std::string, std::string>> string_map(const YAML::Node& node,
                                                                std::string_view key) const;

    // The file's name, as errors give it.
    const std::string& source() const { return source_; }

private:
    std::string source_;
    std::string base_;
};

}  // namespace gateway::config
