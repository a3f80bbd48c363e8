#include "gateway/sse/boundary_tracker.hpp"

namespace gateway::sse {

void boundary_tracker::feed(std::string_view bytes) {
    for (char c : bytes) {
        if (c == '\n' && last_was_cr_) {
            last_was_cr_ = false;  // second half of CRLF
            continue;
        }
        last_was_cr_ = c == '\r';
        if (c == '\r' || c == '\n') {
            if (!in_line_)
                fields_pending_ = false;  // blank line: dispatch
            else if (!line_is_comment_)
                fields_pending_ = true;  // a field waits for dispatch
            in_line_ = false;
            continue;
        }
        if (!in_line_) {
            in_line_ = true;
            line_is_comment_ = c == ':';
        }
    }
}

}  // namespace gateway::sse
