#include "gateway/tools/symbol_index.hpp"

#include "gateway/io/thread_name.hpp"
#include "gateway/tools/walker.hpp"

#include <re2/re2.h>
#include <boost/json/parse.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <tuple>

extern char** environ;

namespace gateway::tools {

namespace {

// Larger files (generated code, bundles) are not indexed.
constexpr std::size_t max_indexed_bytes = 2 * 1024 * 1024;

enum class language { none, c, python, js, go, rust, java };

language language_of(std::string_view path) {
    auto dot = path.rfind('.');
    auto slash = path.rfind('/');
    if (dot == std::string_view::npos || (slash != std::string_view::npos && slash > dot))
        return language::none;
    auto ext = path.substr(dot + 1);
    static constexpr std::array<std::pair<std::string_view, language>, 20> table = {{
        {"c", language::c},       {"h", language::c},        {"cc", language::c},
        {"cpp", language::c},     {"cxx", language::c},      {"hpp", language::c},
        {"hh", language::c},      {"hxx", language::c},      {"py", language::python},
        {"js", language::js},     {"jsx", language::js},     {"mjs", language::js},
        {"cjs", language::js},    {"ts", language::js},      {"tsx", language::js},
        {"mts", language::js},    {"go", language::go},      {"rs", language::rust},
        {"java", language::java}, {"pyi", language::python},
    }};
    for (auto& [name, lang] : table)
        if (ext == name) return lang;
    return language::none;
}

struct pattern {
    language lang;
    const char* type;
    std::unique_ptr<RE2> re;
};

const std::vector<pattern>& definition_patterns() {
    static const std::vector<pattern> patterns = [] {
        std::vector<pattern> out;
        auto add = [&](language lang, const char* type, const char* regex) {
            out.push_back({lang, type, std::make_unique<RE2>(regex)});
        };
        // C and C++: types, macros, and function definitions (a return type before the name and
        // no `;` after the parameter list, so declarations and calls are not definitions).
        add(language::c, "class",
            R"re(^\s*(?:template\s*<[^>]*>\s*)?(?:typedef\s+)?(?:class|struct|union|enum(?:\s+class)?)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*)[^;]*$)re");
        add(language::c, "class", R"re(^\s*namespace\s+([A-Za-z_]\w*))re");
        add(language::c, "class", R"re(^\s*using\s+([A-Za-z_]\w*)\s*=)re");
        add(language::c, "class", R"re(^\s*typedef\s+[^;(]*\b([A-Za-z_]\w*)\s*;)re");
        add(language::c, "variable", R"re(^\s*#\s*define\s+([A-Za-z_]\w*))re");
        add(language::c, "function",
            R"re(^\s*(?:(?:static|inline|extern|virtual|constexpr|explicit|const|unsigned|signed|struct)\s+)*[A-Za-z_][\w:<>,]*[\s\*&]+(?:[A-Za-z_]\w*::)*([A-Za-z_~]\w*)\s*\([^;]*$)re");
        add(language::python, "function", R"re(^\s*(?:async\s+)?def\s+([A-Za-z_]\w*))re");
        add(language::python, "class", R"re(^\s*class\s+([A-Za-z_]\w*))re");
        add(language::python, "variable", R"re(^([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=])re");
        add(language::js, "function",
            R"re(^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*))re");
        add(language::js, "class",
            R"re(^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*))re");
        add(language::js, "class",
            R"re(^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type|enum)\s+([A-Za-z_$][\w$]*))re");
        add(language::js, "function",
            R"re(^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s*)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=]+)?=>)re");
        add(language::js, "variable",
            R"re(^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*))re");
        add(language::js, "function",
            R"re(^\s+(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::\s*[^{]+)?\{\s*$)re");
        add(language::go, "function", R"re(^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*))re");
        add(language::go, "class", R"re(^\s*type\s+([A-Za-z_]\w*))re");
        add(language::go, "variable", R"re(^\s*(?:var|const)\s+([A-Za-z_]\w*))re");
        add(language::rust, "function",
            R"re(^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+([A-Za-z_]\w*))re");
        add(language::rust, "class",
            R"re(^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union|type|mod)\s+([A-Za-z_]\w*))re");
        add(language::rust, "variable",
            R"re(^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const|static)\s+(?:mut\s+)?([A-Za-z_]\w*))re");
        add(language::rust, "function", R"re(macro_rules!\s*([A-Za-z_]\w*))re");
        add(language::java, "class",
            R"re(^\s*(?:(?:public|private|protected|static|final|abstract|sealed)\s+)*(?:class|interface|enum|record)\s+([A-Za-z_]\w*))re");
        add(language::java, "function",
            R"re(^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|native|default)\s+)+[\w<>\[\],\s]*?([A-Za-z_]\w*)\s*\([^;]*$)re");
        add(language::java, "variable",
            R"re(^\s*(?:(?:public|private|protected|static|final)\s+)+[\w<>\[\],]+\s+([A-Za-z_]\w*)\s*(?:=|;))re");
        return out;
    }();
    return patterns;
}

const std::vector<pattern>& import_patterns() {
    static const std::vector<pattern> patterns = [] {
        std::vector<pattern> out;
        auto add = [&](language lang, const char* regex) {
            out.push_back({lang, "import", std::make_unique<RE2>(regex)});
        };
        add(language::python, R"re(^\s*(?:from\s+\S+\s+)?import\s+(.+))re");
        add(language::js, R"re(^\s*import\s+(?:type\s+)?(.+?)\s+from\s+['"])re");
        add(language::js, R"re(^\s*(?:const|let|var)\s+(.+?)\s*=\s*require\s*\()re");
        add(language::go, R"re(^\s*import\s+(?:\w+\s+)?"(?:[^"]*/)?([^"/]+)")re");
        add(language::go, R"re(^\s+(?:\w+\s+)?"(?:[^"]*/)?([^"/]+)"\s*$)re");
        add(language::rust, R"re(^\s*(?:pub\s+)?use\s+(.+);)re");
        add(language::java, R"re(^\s*import\s+(?:static\s+)?(?:[\w]+\.)*(\w+)\s*;)re");
        add(language::c, R"re(^\s*#\s*include\s*[<"](?:[^>"]*/)?([^>"/.]+)[^>"]*[>"])re");
        return out;
    }();
    return patterns;
}

bool is_keyword(std::string_view word) {
    static constexpr std::array<std::string_view, 22> keywords = {
        "if",     "while", "for",   "switch", "return", "else",   "sizeof", "catch",
        "import", "from",  "as",    "type",   "new",    "delete", "throw",  "case",
        "crate",  "self",  "super", "pub",    "do",     "typeof"};
    return std::find(keywords.begin(), keywords.end(), word) != keywords.end();
}

std::string_view trimmed(std::string_view line) {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
        line.remove_suffix(1);
    return line.substr(0, 300);
}

// Definitions (unless `imports_only`) and imports of one file, with regular expressions.
void scan_file(std::string_view path, std::string_view text, bool imports_only,
               std::vector<symbol>& out) {
    auto lang = language_of(path);
    if (lang == language::none) return;
    static const RE2 identifier(R"re(([A-Za-z_$][\w$]*))re");
    std::size_t number = 0, pos = 0;
    std::string name;
    while (pos < text.size()) {
        auto newline = text.find('\n', pos);
        auto line = text.substr(pos, newline == std::string_view::npos ? text.npos : newline - pos);
        pos = newline == std::string_view::npos ? text.size() : newline + 1;
        ++number;
        re2::StringPiece input(line.data(), line.size());
        if (!imports_only) {
            for (const auto& p : definition_patterns()) {
                if (p.lang != lang || !RE2::PartialMatch(input, *p.re, &name) || is_keyword(name))
                    continue;
                out.push_back(
                    {name, std::string(path), number, p.type, p.type, std::string(trimmed(line))});
                break;
            }
        }
        for (const auto& p : import_patterns()) {
            std::string imported;
            if (p.lang != lang || !RE2::PartialMatch(input, *p.re, &imported)) continue;
            re2::StringPiece rest(imported);
            while (RE2::FindAndConsume(&rest, identifier, &name))
                if (!is_keyword(name))
                    out.push_back({name, std::string(path), number, "import", "import",
                                   std::string(trimmed(line))});
            break;
        }
    }
}

std::string type_of_kind(std::string_view kind, std::string_view path) {
    static constexpr std::array<std::string_view, 6> functions = {
        "function", "func", "method", "procedure", "subroutine", "macro"};
    static constexpr std::array<std::string_view, 13> classes = {
        "class", "struct",    "union",  "enum",   "interface", "trait",         "typedef",
        "type",  "namespace", "module", "record", "alias",     "implementation"};
    static constexpr std::array<std::string_view, 8> variables = {
        "variable", "constant", "field", "property", "enumerator", "define", "var", "const"};
    auto in = [&](const auto& list) {
        return std::find(list.begin(), list.end(), kind) != list.end();
    };
    if (kind == "macro") return path.ends_with(".rs") ? "function" : "variable";
    if (kind == "member") return path.ends_with(".py") ? "function" : "variable";
    if (in(functions)) return "function";
    if (in(classes)) return "class";
    if (in(variables)) return "variable";
    if (kind == "package" || kind == "import") return "import";
    return "other";
}

// What tells a file changed: its mtime in nanoseconds and its size.
std::pair<long long, long long> stamp_of(const struct stat& info) {
    return {info.st_mtim.tv_sec * 1000000000LL + info.st_mtim.tv_nsec,
            static_cast<long long>(info.st_size)};
}

std::string find_on_path(const char* program) {
    const char* path = std::getenv("PATH");
    std::string_view dirs = path ? path : "/usr/bin:/bin";
    while (!dirs.empty()) {
        auto colon = dirs.find(':');
        std::string candidate(dirs.substr(0, colon));
        candidate += '/';
        candidate += program;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        if (colon == std::string_view::npos) break;
        dirs.remove_prefix(colon + 1);
    }
    return {};
}

// Runs ctags over `paths` (relative to the folder open at `root_fd`) and returns its JSON lines,
// or "" on failure. ctags starts in that folder by its descriptor, never by its path, which may
// since have been replaced by a link elsewhere. Bounded: ctags is killed after 120 s.
bool run_ctags(const std::string& program, int root_fd, const std::vector<std::string>& paths,
               std::string& output) {
    char list_name[] = "/tmp/contextgate-ctags-XXXXXX";
    unique_fd list(::mkstemp(list_name));
    if (!list) return false;
    ::unlink(list_name);
    std::string listing;
    for (const auto& p : paths) listing += p + "\n";
    if (::write(list.get(), listing.data(), listing.size()) != static_cast<ssize_t>(listing.size()))
        return false;
    ::lseek(list.get(), 0, SEEK_SET);

    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return false;
    unique_fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, list.get(), 0);
    posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addfchdir_np(&actions, root_fd);
    std::vector<std::string> args = {
        program, "--output-format=json", "--fields=+nK", "--links=no", "-f", "-", "-L", "-"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    int spawned = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    write_end = unique_fd{};
    if (spawned != 0) return false;

    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    char buffer[65536];
    while (true) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        pollfd p{read_end.get(), POLLIN, 0};
        if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) == 0) {
            ::kill(pid, SIGKILL);
            break;
        }
        auto n = ::read(read_end.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        output.append(buffer, static_cast<std::size_t>(n));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

symbol_index::symbol_index(const sandbox& root) : root_(root), ctags_(find_on_path("ctags")) {}

symbol_index::~symbol_index() {
    std::unique_lock lock(mutex_);
    refreshed_.wait(lock, [&] { return !refreshing_; });
    lock.unlock();
    if (worker_.joinable()) worker_.join();
}

void symbol_index::set_ctags(std::string program) {
    std::unique_lock lock(mutex_);
    refreshed_.wait(lock, [&] { return !refreshing_; });
    ctags_ = std::move(program);
    built_ = false;
    files_.clear();
    files_by_name_.clear();
}

void symbol_index::invalidate(const std::string& path) {
    std::lock_guard lock(mutex_);
    dirty_.insert(path);
}

std::size_t symbol_index::file_count() {
    std::unique_lock lock(mutex_);
    bring_up_to_date(lock);
    return files_.size();
}

void symbol_index::set_recheck(std::chrono::milliseconds interval) {
    std::lock_guard lock(mutex_);
    recheck_ = interval;
}

void symbol_index::wait_for_refresh() {
    std::unique_lock lock(mutex_);
    refreshed_.wait(lock, [&] { return !refreshing_; });
}

void symbol_index::drop(const std::string& path) {
    auto found = files_.find(path);
    if (found == files_.end()) return;
    for (const auto& s : found->second.symbols) {
        auto& paths = files_by_name_[s.name];
        paths.erase(std::remove(paths.begin(), paths.end(), path), paths.end());
        if (paths.empty()) files_by_name_.erase(s.name);
    }
    found->second.symbols.clear();
}

symbol_index::stamps symbol_index::scan() const {
    stamps seen;
    walk(root_, ".", {}, [&](const walk_entry& entry) {
        if (entry.type != entry_type::file || language_of(entry.path) == language::none)
            return walk_action::next;
        struct stat info {};
        if (::fstatat(entry.dir_fd, entry.name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
            info.st_size > static_cast<off_t>(max_indexed_bytes))
            return walk_action::next;
        seen.emplace(entry.path, stamp_of(info));
        return walk_action::next;
    });
    return seen;
}

void symbol_index::apply(const stamps& seen) {
    for (auto it = files_.begin(); it != files_.end();) {
        if (!seen.count(it->first)) {
            drop(it->first);
            it = files_.erase(it);
        } else {
            ++it;
        }
    }
    std::vector<std::string> changed;
    for (const auto& [path, stamp] : seen) {
        auto& state = files_[path];
        if (state.mtime_ns == stamp.first && state.size == stamp.second) continue;
        state.mtime_ns = stamp.first;
        state.size = stamp.second;
        changed.push_back(path);
    }
    std::sort(changed.begin(), changed.end());
    if (!changed.empty()) index(changed);
}

void symbol_index::bring_up_to_date(std::unique_lock<std::mutex>& lock) {
    if (!built_) {  // the first build is synchronous: there is nothing to answer from yet
        refreshed_.wait(lock, [&] { return !refreshing_; });
        apply(scan());
        built_ = true;
        dirty_.clear();
        checked_ = std::chrono::steady_clock::now();
        return;
    }
    if (!dirty_.empty()) {  // files written through the workspace: re-index them now
        std::vector<std::string> changed;
        for (const auto& path : dirty_) {
            auto slash = path.rfind('/');
            auto folder = root_.open_dir(slash == std::string::npos ? "." : path.substr(0, slash));
            std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
            struct stat info {};
            if (folder && language_of(path) != language::none &&
                ::fstatat(folder.fd.get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(info.st_mode)) {
                auto& state = files_[path];
                std::tie(state.mtime_ns, state.size) = stamp_of(info);
                changed.push_back(path);
            } else {
                drop(path);
                files_.erase(path);
            }
        }
        dirty_.clear();
        if (!changed.empty()) index(changed);
    }
    // Outside edits: re-stat the tree in the background and answer from the index meanwhile,
    // so a lookup never waits for a walk of a large tree.
    if (!refreshing_ && std::chrono::steady_clock::now() - checked_ >= recheck_) {
        if (worker_.joinable()) worker_.join();  // finished: it cleared refreshing_ under the lock
        refreshing_ = true;
        worker_ = std::thread([this] {
            io::name_this_thread("symbols");
            auto seen = scan();
            std::lock_guard guard(mutex_);
            apply(seen);
            checked_ = std::chrono::steady_clock::now();
            refreshing_ = false;
            refreshed_.notify_all();
        });
    }
}

void symbol_index::index(const std::vector<std::string>& paths) {
    for (const auto& path : paths) drop(path);
    std::string json_lines;
    bool use_ctags = !ctags_.empty() && run_ctags(ctags_, root_.root_fd(), paths, json_lines);
    std::unordered_map<std::string, std::vector<symbol>> found;
    std::string text;
    for (const auto& path : paths) {
        auto fd = root_.open_file(path);
        if (!fd || read_text(fd.fd.get(), max_indexed_bytes, text) != read_outcome::ok) continue;
        scan_file(path, text, use_ctags, found[path]);
    }
    if (use_ctags) {
        std::size_t pos = 0;
        while (pos < json_lines.size()) {
            auto newline = json_lines.find('\n', pos);
            if (newline == std::string::npos) newline = json_lines.size();
            boost::system::error_code ec;
            auto tag =
                boost::json::parse(std::string_view(json_lines).substr(pos, newline - pos), ec);
            pos = newline + 1;
            const auto* object = tag.if_object();
            if (ec || !object || !object->contains("name") || !object->contains("path")) continue;
            symbol s;
            s.name = object->at("name").as_string().c_str();
            s.path = object->at("path").as_string().c_str();
            if (auto* line = object->if_contains("line"); line && line->is_int64())
                s.line = static_cast<std::size_t>(line->as_int64());
            if (auto* kind = object->if_contains("kind"); kind && kind->is_string())
                s.kind = kind->as_string().c_str();
            s.type = type_of_kind(s.kind, s.path);
            if (auto* p = object->if_contains("pattern"); p && p->is_string()) {
                std::string_view text = p->as_string();
                if (text.starts_with("/^")) text.remove_prefix(2);
                if (text.ends_with("$/")) text.remove_suffix(2);
                s.text = std::string(trimmed(text));
            }
            if (files_.count(s.path)) found[s.path].push_back(std::move(s));
        }
    }
    for (auto& [path, symbols] : found) {
        for (const auto& s : symbols) {
            auto& names = files_by_name_[s.name];
            if (names.empty() || names.back() != path) names.push_back(path);
        }
        files_[path].symbols = std::move(symbols);
    }
}

symbol_index::lookup symbol_index::find(std::string_view name, std::string_view type) {
    std::unique_lock lock(mutex_);
    bring_up_to_date(lock);
    lookup out;
    out.engine = ctags_.empty() ? "regex" : "ctags";
    auto found = files_by_name_.find(std::string(name));
    if (found == files_by_name_.end()) return out;
    for (const auto& path : found->second)
        for (const auto& s : files_[path].symbols)
            if (s.name == name && (type.empty() || s.type == type)) out.found.push_back(s);
    std::sort(out.found.begin(), out.found.end(), [](const symbol& a, const symbol& b) {
        return std::tie(a.path, a.line) < std::tie(b.path, b.line);
    });
    return out;
}

}  // namespace gateway::tools
