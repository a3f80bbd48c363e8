#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::sse {

// One dispatched Server-Sent Event.
struct event {
    std::string type = "message";  // the `event:` field, "message" when absent
    std::string data;              // `data:` lines joined with '\n'
    std::string id;                // the last event id in force when it was dispatched
    std::optional<unsigned long> retry;
};

// Incremental parser for text/event-stream as the WHATWG HTML standard defines it: lines end in
// CRLF, LF or CR; `:` starts a comment; a blank line dispatches. Bytes may arrive split anywhere.
// Bounded: a line or an event larger than `max_event_bytes` is an error and the parser stops.
// Not thread-safe; one parser per stream.
class event_parser {
public:
    explicit event_parser(std::size_t max_event_bytes = 1 << 20) : max_(max_event_bytes) {}

    // Parses `bytes` and appends every event completed by them to `out`.
    // Returns false once the size bound was exceeded (further input is ignored).
    bool feed(std::string_view bytes, std::vector<event>& out);

    bool failed() const { return failed_; }

private:
    void process_line(std::string_view line, std::vector<event>& out);

    std::size_t max_;
    std::string line_;
    event pending_;
    bool has_data_ = false;
    bool skip_lf_ = false;  // the previous chunk ended in CR: a leading LF belongs to it
    bool started_ = false;  // a leading BOM is dropped once
    bool failed_ = false;
    std::string last_id_;
    std::size_t event_bytes_ = 0;
};

}  // namespace gateway::sse
