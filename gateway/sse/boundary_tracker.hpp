#pragma once

#include <string_view>

namespace gateway::sse {

// Watches a copy of a relayed event stream and says whether the bytes so far end between events,
// where the gateway may add a comment (`: keep-alive`) or a final `event: error` without corrupting
// an event the client is still receiving. Much cheaper than full parsing: one pass, no allocation.
class boundary_tracker {
public:
    void feed(std::string_view bytes);

    // True when no line is half-received and no field line waits for its dispatching blank line.
    bool at_boundary() const { return !in_line_ && !fields_pending_; }

private:
    bool in_line_ = false;
    bool line_is_comment_ = false;
    bool fields_pending_ = false;
    bool last_was_cr_ = false;
};

}  // namespace gateway::sse
