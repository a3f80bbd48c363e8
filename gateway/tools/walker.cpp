#include "gateway/tools/walker.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/ignore_rules.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <vector>

namespace gateway::tools {

namespace {

struct ignore_level {
    std::string base;  // folder of the .gitignore, relative to the root ("" for the root)
    ignore_rules rules;
};

void load_ignore(std::vector<ignore_level>& levels, int dir_fd, const std::string& base) {
    std::string text;
    auto fd = open_entry(dir_fd, ".gitignore");
    if (!fd || read_text(fd.get(), 1024 * 1024, text) != read_outcome::ok || text.empty()) return;
    auto rules = ignore_rules::parse(text);
    if (!rules.empty()) levels.push_back({base, std::move(rules)});
}

bool ignored(const std::vector<ignore_level>& levels, const std::string& path, bool directory) {
    auto verdict = ignore_rules::verdict::none;
    for (const auto& level : levels) {
        std::string_view relative = path;
        if (!level.base.empty()) {
            if (!relative.starts_with(level.base) || relative.size() <= level.base.size() ||
                relative[level.base.size()] != '/')
                continue;
            relative.remove_prefix(level.base.size() + 1);
        }
        auto v = level.rules.check(relative, directory);
        if (v != ignore_rules::verdict::none) verdict = v;
    }
    return verdict == ignore_rules::verdict::ignored;
}

entry_type type_of(int dir_fd, const char* name, unsigned char d_type) {
    switch (d_type) {
        case DT_REG:
            return entry_type::file;
        case DT_DIR:
            return entry_type::directory;
        case DT_LNK:
            return entry_type::symlink;
        case DT_UNKNOWN:
            break;
        default:
            return entry_type::other;
    }
    struct stat info {};
    if (::fstatat(dir_fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0) return entry_type::other;
    if (S_ISREG(info.st_mode)) return entry_type::file;
    if (S_ISDIR(info.st_mode)) return entry_type::directory;
    if (S_ISLNK(info.st_mode)) return entry_type::symlink;
    return entry_type::other;
}

struct walker {
    const walk_options& options;
    const std::function<walk_action(const walk_entry&)>& visit;
    std::vector<ignore_level> levels;
    bool stopped = false;

    // Walks the open folder `dir` whose path is `base` ("" for the root).
    void folder(int dir, const std::string& base) {
        auto levels_before = levels.size();
        if (options.honour_ignores) load_ignore(levels, dir, base);

        // fdopendir takes ownership of its descriptor: give it a duplicate of `dir`.
        int listing_fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR* listing = listing_fd >= 0 ? ::fdopendir(listing_fd) : nullptr;
        if (!listing) {
            if (listing_fd >= 0) ::close(listing_fd);
            levels.resize(levels_before);
            return;
        }
        std::vector<std::pair<std::string, unsigned char>> names;
        while (auto* entry = ::readdir(listing)) {
            std::string_view name = entry->d_name;
            if (name == "." || name == ".." || is_write_temporary(name)) continue;
            names.emplace_back(entry->d_name, entry->d_type);
        }
        ::closedir(listing);
        std::sort(names.begin(), names.end());

        std::string path;
        for (auto& [name, d_type] : names) {
            if (stopped) break;
            path.assign(base);
            if (!path.empty()) path.push_back('/');
            path += name;
            auto type = type_of(dir, name.c_str(), d_type);
            bool directory = type == entry_type::directory;
            if (options.honour_ignores &&
                ((directory && is_skipped_folder(name)) || ignored(levels, path, directory)))
                continue;
            auto action = visit(walk_entry{path, dir, name.c_str(), type});
            if (action == walk_action::stop) {
                stopped = true;
                break;
            }
            if (!directory || action == walk_action::skip || !options.recursive) continue;
            unique_fd child(
                ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (child) folder(child.get(), path);
        }
        levels.resize(levels_before);
    }
};

}  // namespace

bool is_skipped_folder(std::string_view name) {
    static constexpr std::array<std::string_view, 14> skipped = {
        ".git", ".hg",         ".svn",  "node_modules", "build", "dist",   "target",
        "out",  "__pycache__", ".venv", "venv",         ".tox",  ".cache", ".next"};
    return std::find(skipped.begin(), skipped.end(), name) != skipped.end() ||
           name.starts_with("cmake-build-");
}

std::string normalize_relative(std::string_view path) {
    while (path.starts_with("./")) path.remove_prefix(2);
    while (path.size() > 1 && path.ends_with('/')) path.remove_suffix(1);
    if (path.empty() || path == "./") return ".";
    return std::string(path);
}

fs_status walk(const sandbox& root, std::string_view start_path, const walk_options& options,
               const std::function<walk_action(const walk_entry&)>& visit) {
    auto start = normalize_relative(start_path);
    walker w{options, visit, {}, false};
    auto dir = root.open_dir(start);
    if (!dir && dir.error_code == code::not_a_directory) {
        // A single file: visit it from its parent folder.
        auto file = root.open_file(start);
        if (!file) return {file.error_code, file.message};
        auto slash = start.rfind('/');
        std::string parent = slash == std::string::npos ? "." : start.substr(0, slash);
        auto parent_fd = root.open_dir(parent);
        if (!parent_fd) return {parent_fd.error_code, parent_fd.message};
        std::string name = slash == std::string::npos ? start : start.substr(slash + 1);
        visit(walk_entry{start, parent_fd.fd.get(), name.c_str(), entry_type::file});
        return {};
    }
    if (!dir) return {dir.error_code, dir.message};
    std::string base = start == "." ? "" : start;
    if (options.honour_ignores && !base.empty()) {
        // The .gitignore files of the folders above `start` apply too.
        std::string prefix;
        auto ancestor = root.open_dir(".");
        if (ancestor) load_ignore(w.levels, ancestor.fd.get(), "");
        for (std::size_t pos = base.find('/'); pos != std::string::npos;
             pos = base.find('/', pos + 1)) {
            prefix = base.substr(0, pos);
            auto folder = root.open_dir(prefix);
            if (folder) load_ignore(w.levels, folder.fd.get(), prefix);
        }
    }
    w.folder(dir.fd.get(), base);
    return {};
}

}  // namespace gateway::tools
