#include "gateway/config/yaml_reader.hpp"

#include <cstdlib>
#include <filesystem>

namespace gateway::config {

std::string yaml_reader::path(const YAML::Node& node, std::string_view key) const {
    auto text = scalar(node, key);
    if (text.empty() || text.front() == '/' || base_.empty()) return text;
    return (std::filesystem::path(base_) / text).lexically_normal().string();
}

void yaml_reader::fail(const YAML::Node& at, const std::string& what) const {
    std::string where = source_;
    if (at.IsDefined() && at.Mark().line >= 0) where += ":" + std::to_string(at.Mark().line + 1);
    throw load_error{where + ": " + what};
}

void yaml_reader::check_keys(const YAML::Node& map, std::string_view section,
                             const std::vector<std::string_view>& allowed) const {
    if (!map.IsMap()) fail(map, "`" + std::string(section) + "` must be a mapping");
    for (const auto& entry : map) {
        auto key = entry.first.as<std::string>();
        bool known = false;
        for (auto a : allowed) known = known || a == key;
        if (!known) {
            std::string list;
            for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
            fail(entry.first, "unknown key `" + key + "` in `" + std::string(section) +
                                  "` (expected one of: " + list + ")");
        }
    }
}

std::string yaml_reader::scalar(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar()) fail(node, "`" + std::string(key) + "` must be a single value");
    return interpolate(node, node.Scalar());
}

std::string yaml_reader::interpolate(const YAML::Node& node, const std::string& text) const {
    std::string out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto open = text.find("${", pos);
        if (open == std::string::npos) break;
        auto close = text.find('}', open);
        if (close == std::string::npos) fail(node, "unterminated `${` in `" + text + "`");
        out.append(text, pos, open - pos);
        std::string name = text.substr(open + 2, close - open - 2);
        std::string fallback;
        if (auto dash = name.find(":-"); dash != std::string::npos) {
            fallback = name.substr(dash + 2);
            name.resize(dash);
        }
        if (name.empty()) fail(node, "empty variable name in `" + text + "`");
        const char* value = std::getenv(name.c_str());
        out += (value && *value) ? std::string(value) : fallback;
        pos = close + 1;
    }
    out.append(text, pos);
    return out;
}

duration yaml_reader::get_duration(const YAML::Node& node, std::string_view key) const {
    auto text = scalar(node, key);
    auto value = parse_duration(text);
    if (!value)
        fail(node, "`" + std::string(key) + "`: `" + text +
                       "` is not a duration (use e.g. 250ms, 10s, 5m)");
    return *value;
}

duration yaml_reader::positive_duration(const YAML::Node& node, std::string_view key) const {
    auto value = get_duration(node, key);
    if (value.count() == 0) fail(node, "`" + std::string(key) + "` must be positive");
    return value;
}

std::size_t yaml_reader::get_size(const YAML::Node& node, std::string_view key) const {
    auto text = scalar(node, key);
    auto value = parse_size(text);
    if (!value)
        fail(node, "`" + std::string(key) + "`: `" + text +
                       "` is not a size (use e.g. 65536, 64KiB, 32MiB)");
    return *value;
}

std::size_t yaml_reader::get_count(const YAML::Node& node, std::string_view key, std::size_t min,
                                   std::size_t max) const {
    auto text = scalar(node, key);
    auto value = parse_size(text);
    if (!value || *value < min || *value > max || text.find_first_not_of("0123456789") != text.npos)
        fail(node, "`" + std::string(key) + "`: `" + text + "` must be a whole number from " +
                       std::to_string(min) + " to " + std::to_string(max));
    return *value;
}

std::size_t yaml_reader::one_of(const YAML::Node& node, std::string_view label,
                                const std::vector<std::string_view>& options) const {
    auto text = scalar(node, label);
    for (std::size_t i = 0; i < options.size(); ++i)
        if (text == options[i]) return i;
    std::string list;
    for (std::size_t i = 0; i < options.size(); ++i)
        list += (i == 0 ? "" : i + 1 == options.size() ? " or " : ", ") + std::string(options[i]);
    fail(node, "`" + std::string(label) + "`: `" + text + "` must be " + list);
}

bool yaml_reader::get_bool(const YAML::Node& node, std::string_view key) const {
    auto text = scalar(node, key);
    if (text == "true") return true;
    if (text == "false") return false;
    fail(node, "`" + std::string(key) + "`: `" + text + "` must be true or false");
}

std::vector<std::string> yaml_reader::string_list(const YAML::Node& node,
                                                  std::string_view key) const {
    if (!node.IsSequence()) fail(node, "`" + std::string(key) + "` must be a list");
    std::vector<std::string> out;
    for (const auto& item : node) out.push_back(scalar(item, key));
    return out;
}

unsigned yaml_reader::get_unsigned(const YAML::Node& node, std::string_view key, unsigned min,
                                   unsigned max) const {
    return static_cast<unsigned>(get_count(node, key, min, max));
}

std::vector<std::pair<std::string, std::string>> yaml_reader::string_map(
    const YAML::Node& node, std::string_view key) const {
    if (!node.IsMap()) fail(node, "`" + std::string(key) + "` must map names to values");
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& entry : node)
        out.emplace_back(entry.first.as<std::string>(),
                         scalar(entry.second, entry.first.as<std::string>()));
    return out;
}

}  // namespace gateway::config
