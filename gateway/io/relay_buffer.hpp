#pragma once

#include <boost/asio/buffer.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace gateway::io {

// A 16 KiB buffer for relaying a body, borrowed from this thread's spares for as long as the
// relay runs. Held in a coroutine frame as an array it made every frame a 16 KiB allocation per
// request (past Asio's frame recycling), and such a large allocation also makes glibc
// consolidate its fast bins each time. At most `spares_kept` buffers stay per thread.
class relay_buffer {
public:
    static constexpr std::size_t capacity = 16 * 1024;

    relay_buffer() {
        auto& spares = spare_list();
        if (spares.empty()) {
            data_.reset(new char[capacity]);
        } else {
            data_ = std::move(spares.back());
            spares.pop_back();
        }
    }
    ~relay_buffer() {
        auto& spares = spare_list();
        if (data_ && spares.size() < spares_kept) spares.push_back(std::move(data_));
    }
    relay_buffer(const relay_buffer&) = delete;
    relay_buffer& operator=(const relay_buffer&) = delete;

    char* data() { return data_.get(); }
    std::size_t size() const { return capacity; }
    boost::asio::mutable_buffer buffer() { return {data_.get(), capacity}; }

private:
    static constexpr std::size_t spares_kept = 64;
    static std::vector<std::unique_ptr<char[]>>& spare_list() {
        thread_local std::vector<std::unique_ptr<char[]>> spares;
        return spares;
    }

    std::unique_ptr<char[]> data_;
};

}  // namespace gateway::io
