#include "gateway/tools/workspace.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/symbol_index.hpp"
#include "gateway/tools/tool.hpp"
#include "gateway/tools/walker.hpp"

#include <cstring>

#include <fcntl.h>

namespace gateway::tools {

workspace::workspace(std::string root, sandbox box)
    : root_(std::move(root)), sandbox_(std::move(box)) {}

workspace::~workspace() = default;

std::unique_ptr<workspace> workspace::open(const std::string& root, std::string& error,
                                           sandbox::resolution mode) {
    if (root.empty() || root.front() != '/') {
        error = "workspace root " + quoted(root) + " must be an absolute path";
        return nullptr;
    }
    auto fd = sandbox::open_directory(root);
    if (!fd) {
        error = fd.message;
        return nullptr;
    }
    return std::unique_ptr<workspace>(new workspace(root, sandbox(std::move(fd.fd), mode)));
}

std::unique_ptr<workspace> workspace::adopt(std::string root, unique_fd dir,
                                            sandbox::resolution mode) {
    return std::unique_ptr<workspace>(
        new workspace(std::move(root), sandbox(std::move(dir), mode)));
}

file_content workspace::read(std::string_view relative, std::size_t limit) const {
    file_content out;
    auto fd = sandbox_.open_file(relative);
    if (!fd) {
        out.error_code = std::move(fd.error_code);
        out.message = std::move(fd.message);
        return out;
    }
    std::size_t size = 0;
    switch (read_text(fd.fd.get(), limit, out.text, &size)) {
        case read_outcome::ok:
            break;
        case read_outcome::too_large:
            out.error_code = code::file_too_large;
            out.message = "File " + quoted(relative) + " is " + std::to_string(size) +
                          " bytes, over the limit of " + std::to_string(limit) + " bytes.";
            break;
        case read_outcome::binary:
            out.text.clear();
            out.error_code = code::binary_file;
            out.message = "File " + quoted(relative) + " (" + std::to_string(size) +
                          " bytes) is binary; its content is not shown.";
            break;
        case read_outcome::failed:
            out.text.clear();
            out.error_code = code::io_error;
            out.message = "Cannot read " + quoted(relative) + ": " + std::strerror(errno);
            break;
    }
    return out;
}

fs_status workspace::write(std::string_view relative, std::string_view content, overwrite policy) {
    auto key = normalize_relative(relative);
    std::lock_guard lock(mutex_);
    auto status = sandbox_.write_file(key, content, policy);
    if (status && symbols_) symbols_->invalidate(key);
    return status;
}

fs_status workspace::remove(std::string_view relative) {
    auto key = normalize_relative(relative);
    std::lock_guard lock(mutex_);
    auto status = sandbox_.remove_file(key);
    if (status && symbols_) symbols_->invalidate(key);
    return status;
}

std::size_t workspace::remove_debris() const {
    std::size_t removed = remove_stale_temporaries(sandbox_.root_fd());
    walk(sandbox_, ".", {}, [&](const walk_entry& entry) {
        if (entry.type != entry_type::directory) return walk_action::next;
        unique_fd folder(
            ::openat(entry.dir_fd, entry.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (folder) removed += remove_stale_temporaries(folder.get());
        return walk_action::next;
    });
    return removed;
}

symbol_index& workspace::symbols() {
    std::lock_guard lock(mutex_);
    if (!symbols_) symbols_ = std::make_unique<symbol_index>(sandbox_);
    return *symbols_;
}

}  // namespace gateway::tools
