#include "gateway/sse/event_parser.hpp"

#include <charconv>

namespace gateway::sse {

bool event_parser::feed(std::string_view bytes, std::vector<event>& out) {
    if (failed_) return false;
    if (!started_ && !bytes.empty()) {
        // The BOM may itself arrive split; only a complete one at the very start is dropped.
        static constexpr std::string_view bom = "\xEF\xBB\xBF";
        std::string probe = line_ + std::string(bytes.substr(0, 3));
        if (probe.size() < 3 && bom.starts_with(probe)) {
            line_ = probe;
            return true;
        }
        started_ = true;
        if (probe.starts_with(bom)) {
            bytes.remove_prefix(3 - line_.size());
            line_.clear();
        }
    }
    std::size_t pos = 0;
    while (pos < bytes.size()) {
        if (skip_lf_) {
            skip_lf_ = false;
            if (bytes[pos] == '\n') {
                ++pos;
                continue;
            }
        }
        auto end = bytes.find_first_of("\r\n", pos);
        if (end == std::string_view::npos) {
            line_.append(bytes.substr(pos));
            if (line_.size() + event_bytes_ > max_) {
                failed_ = true;
                return false;
            }
            break;
        }
        std::string_view line = bytes.substr(pos, end - pos);
        if (!line_.empty()) {
            line_.append(line);
            line = line_;
        }
        if (line.size() + event_bytes_ > max_) {
            failed_ = true;
            return false;
        }
        process_line(line, out);
        line_.clear();
        if (bytes[end] == '\r') skip_lf_ = true;
        pos = end + 1;
    }
    return true;
}

void event_parser::process_line(std::string_view line, std::vector<event>& out) {
    if (line.empty()) {
        if (has_data_) {
            pending_.data.pop_back();  // the '\n' after the last data line
            pending_.id = last_id_;
            out.push_back(std::move(pending_));
        }
        pending_ = event{};
        has_data_ = false;
        event_bytes_ = 0;
        return;
    }
    event_bytes_ += line.size();
    if (line.front() == ':') return;  // comment
    std::string_view field = line;
    std::string_view value;
    if (auto colon = line.find(':'); colon != std::string_view::npos) {
        field = line.substr(0, colon);
        value = line.substr(colon + 1);
        if (value.starts_with(' ')) value.remove_prefix(1);
    }
    if (field == "event") {
        pending_.type = value;
    } else if (field == "data") {
        pending_.data.append(value);
        pending_.data.push_back('\n');
        has_data_ = true;
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) last_id_ = value;
    } else if (field == "retry") {
        unsigned long ms = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (ec == std::errc{} && end == value.data() + value.size() && !value.empty())
            pending_.retry = ms;
    }
}

}  // namespace gateway::sse
