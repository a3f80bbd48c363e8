#include "gateway/tools/find_importers.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/walker.hpp"
#include "gateway/tools/workspace.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <vector>

namespace gateway::tools {

const tool_spec& find_importers_tool::spec() const {
    static const tool_spec s{
        "find_importers",
        "Find the files that import a module or include a header: JS/TS import/require "
        "(relative paths resolved), Python import, C/C++ #include, Go import, Rust use/mod, "
        "Java import. Give a workspace path (src/db.ts) or a module name (os, fmt).",
        category::search,
        R"({"type":"object","properties":{
            "module_path":{"type":"string","minLength":1,"description":"file path relative to the workspace root, or a module name"}},
            "required":["module_path"],"additionalProperties":false})",
        read_files,
        false};
    return s;
}

namespace {

std::string_view extension(std::string_view path) {
    auto slash = path.rfind('/');
    auto dot = path.rfind('.');
    if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash))
        return {};
    return path.substr(dot + 1);
}

std::string strip_extension(std::string_view path) {
    auto ext = extension(path);
    return std::string(ext.empty() ? path : path.substr(0, path.size() - ext.size() - 1));
}

std::string dirname(std::string_view path) {
    auto slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

// `base/relative` with `.` and `..` folded; "" when it climbs above the root.
std::string join(std::string_view base, std::string_view relative) {
    std::vector<std::string> parts;
    auto push = [&](std::string_view path) {
        std::size_t pos = 0;
        while (pos <= path.size()) {
            auto slash = path.find('/', pos);
            auto part = path.substr(pos, slash == std::string_view::npos ? path.npos : slash - pos);
            if (part == "..") {
                if (parts.empty()) return false;
                parts.pop_back();
            } else if (!part.empty() && part != ".") {
                parts.emplace_back(part);
            }
            if (slash == std::string_view::npos) break;
            pos = slash + 1;
        }
        return true;
    };
    if (!push(base) || !push(relative)) return {};
    std::string out;
    for (const auto& part : parts) out += (out.empty() ? "" : "/") + part;
    return out;
}

std::string replace_all(std::string text, char from, std::string_view to) {
    std::string out;
    for (char c : text) {
        if (c == from)
            out += to;
        else
            out.push_back(c);
    }
    return out;
}

// What the module looks like from each language.
struct target {
    std::string path;    // as given, normalized
    std::string stem;    // without extension and a trailing /index, /__init__, /mod
    std::string dotted;  // stem with '.' separators (Python, Java)
    std::string rust;    // crate-relative path with '::' (src/ and mod.rs dropped)

    explicit target(std::string_view module) : path(normalize_relative(module)) {
        stem = strip_extension(path);
        for (std::string_view tail : {"/index", "/__init__", "/mod"})
            if (stem.ends_with(tail)) stem.resize(stem.size() - tail.size());
        dotted = replace_all(stem, '/', ".");
        std::string crate = stem;
        if (crate.starts_with("src/")) crate.erase(0, 4);
        rust = replace_all(crate, '/', "::");
    }

    bool js(const std::string& file, std::string_view spec) const {
        if (!spec.starts_with('.')) return spec == path || spec == stem;
        auto resolved = join(dirname(file), spec);
        auto resolved_stem = strip_extension(resolved);
        if (resolved_stem.ends_with("/index")) resolved_stem.resize(resolved_stem.size() - 6);
        return resolved == path || resolved_stem == stem || resolved == stem;
    }
    bool python(const std::string& file, std::string module) const {
        if (module.starts_with('.')) {  // relative: one dot is the file's package
            std::size_t dots = module.find_first_not_of('.');
            if (dots == std::string::npos) dots = module.size();
            std::string package = dirname(file);
            for (std::size_t i = 1; i < dots; ++i) package = dirname(package);
            auto rest = module.substr(dots);
            module = replace_all(package, '/', ".") + (rest.empty() || package.empty() ? "" : ".") +
                     rest;
        }
        return module == dotted ||
               (dotted.size() > module.size() && dotted.ends_with("." + module) &&
                module.find('.') != std::string::npos) ||
               module == path;
    }
    bool c(const std::string& file, std::string_view header) const {
        return header == path || path.ends_with("/" + std::string(header)) ||
               join(dirname(file), header) == path;
    }
    bool go(std::string_view import) const {
        return import == path || std::string(import).ends_with("/" + path);
    }
    bool rust_use(std::string_view use) const {
        std::string u(use);
        if (u.starts_with("crate::")) u.erase(0, 7);
        return !rust.empty() && (u == rust || u.starts_with(rust + "::"));
    }
    bool rust_mod(const std::string& file, std::string_view name) const {
        auto base = dirname(file);
        auto candidate = join(base, name);
        return candidate + ".rs" == path || candidate + "/mod.rs" == path;
    }
    bool java(std::string_view import) const {
        return dotted == import || dotted.ends_with("." + std::string(import));
    }
};

struct patterns {
    RE2 js_from{R"re((?:^|\s)(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"])re"};
    RE2 js_bare{R"re(^\s*import\s*['"]([^'"]+)['"])re"};
    RE2 js_require{R"re(\b(?:require|import)\s*\(\s*['"]([^'"]+)['"]\s*\))re"};
    RE2 py_from{R"re(^\s*from\s+(\.*[\w.]*)\s+import\s+([\w\s,.*()]+))re"};
    RE2 py_import{R"re(^\s*import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*))re"};
    RE2 py_name{R"re(([\w.]+)(?:\s+as\s+\w+)?)re"};
    RE2 c_include{R"re(^\s*#\s*include\s*[<"]([^>"]+)[>"])re"};
    RE2 go_single{R"re(^\s*import\s+(?:[\w.]+\s+)?"([^"]+)")re"};
    RE2 go_block{R"re(^\s*(?:[\w.]+\s+)?"([^"]+)"\s*$)re"};
    RE2 rust_use{R"re(^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([\w:]+))re"};
    RE2 rust_mod{R"re(^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;)re"};
    RE2 java_import{R"re(^\s*import\s+(?:static\s+)?([\w.]+?)(?:\.\*)?\s*;)re"};
};

bool imports(const target& t, const patterns& re, const std::string& file, std::string_view line,
             bool& in_go_block) {
    auto ext = extension(file);
    re2::StringPiece input(line.data(), line.size());
    std::string spec;
    if (ext == "js" || ext == "jsx" || ext == "ts" || ext == "tsx" || ext == "mjs" ||
        ext == "cjs" || ext == "mts" || ext == "vue" || ext == "svelte") {
        return ((RE2::PartialMatch(input, re.js_from, &spec) ||
                 RE2::PartialMatch(input, re.js_bare, &spec) ||
                 RE2::PartialMatch(input, re.js_require, &spec)) &&
                t.js(file, spec));
    }
    if (ext == "py" || ext == "pyi") {
        std::string names;
        if (RE2::PartialMatch(input, re.py_from, &spec, &names)) {
            if (t.python(file, spec)) return true;
            re2::StringPiece rest(names);
            std::string name;
            while (RE2::FindAndConsume(&rest, re.py_name, &name))
                if (t.python(file, spec + (spec.ends_with('.') ? "" : ".") + name)) return true;
            return false;
        }
        if (RE2::PartialMatch(input, re.py_import, &spec)) {
            re2::StringPiece rest(spec);
            std::string name;
            while (RE2::FindAndConsume(&rest, re.py_name, &name))
                if (t.python(file, name)) return true;
        }
        return false;
    }
    if (ext == "c" || ext == "h" || ext == "cc" || ext == "cpp" || ext == "cxx" || ext == "hpp" ||
        ext == "hh" || ext == "hxx" || ext == "m" || ext == "mm")
        return RE2::PartialMatch(input, re.c_include, &spec) && t.c(file, spec);
    if (ext == "go") {
        if (line.starts_with("import (")) in_go_block = true;
        if (in_go_block && line.starts_with(")")) in_go_block = false;
        return (RE2::PartialMatch(input, re.go_single, &spec) ||
                (in_go_block && RE2::PartialMatch(input, re.go_block, &spec))) &&
               t.go(spec);
    }
    if (ext == "rs")
        return (RE2::PartialMatch(input, re.rust_use, &spec) && t.rust_use(spec)) ||
               (RE2::PartialMatch(input, re.rust_mod, &spec) && t.rust_mod(file, spec));
    if (ext == "java" || ext == "kt")
        return RE2::PartialMatch(input, re.java_import, &spec) && t.java(spec);
    return false;
}

}  // namespace

tool_result find_importers_tool::run(const boost::json::object& p, tool_context& context,
                                     mode) const {
    if (!context.files) return no_workspace();
    auto module = string_param(p, "module_path");
    if (auto why = sandbox::check_relative(normalize_relative(module)); !why.empty())
        return tool_result::failure(code::path_outside_workspace,
                                    "Module path " + quoted(module) + " " + why +
                                        "; give a path relative to the workspace root.");
    static const patterns re;
    target t(module);
    auto cap = static_cast<std::size_t>(context.limits.find_cap);
    std::vector<std::pair<std::string, std::pair<std::size_t, std::string>>> found;
    std::string buffer;
    auto status = walk(context.files->files(), ".", {}, [&](const walk_entry& e) {
        if (e.type != entry_type::file || e.path == t.path) return walk_action::next;
        auto ext = extension(e.path);
        if (ext.empty()) return walk_action::next;
        auto fd = open_entry(e.dir_fd, e.name);
        if (!fd ||
            read_text(fd.get(), context.limits.max_search_file_bytes, buffer) != read_outcome::ok)
            return walk_action::next;
        std::string_view text = buffer;
        std::size_t pos = 0, number = 0;
        bool in_go_block = false;
        while (pos < text.size()) {
            auto newline = text.find('\n', pos);
            auto line =
                text.substr(pos, newline == std::string_view::npos ? text.npos : newline - pos);
            pos = newline == std::string_view::npos ? text.size() : newline + 1;
            ++number;
            if (imports(t, re, e.path, line, in_go_block)) {
                found.push_back({e.path, {number, std::string(line.substr(0, 300))}});
                break;  // one line per importing file
            }
        }
        return walk_action::next;
    });
    if (!status) return tool_result::failure(status.error_code, status.message);
    std::string text;
    boost::json::array list;
    if (found.empty()) {
        text = "No file imports " + quoted(module) +
               ". Give the module's path relative to the workspace root (e.g. src/db.ts) or its "
               "import name.";
    } else {
        text = std::to_string(found.size()) +
               (found.size() == 1 ? " file imports " : " files import ") + quoted(module) + ":\n";
        for (std::size_t i = 0; i < found.size() && i < cap; ++i) {
            auto& [path, where] = found[i];
            text += path + ":" + std::to_string(where.first) + ": " + where.second + "\n";
            list.push_back(
                boost::json::object{{"path", path}, {"line", where.first}, {"text", where.second}});
        }
        if (found.size() > cap) text += "... " + std::to_string(found.size() - cap) + " more.\n";
    }
    return tool_result::success(std::move(text),
                                {{"importers", std::move(list)}, {"total", found.size()}});
}

}  // namespace gateway::tools
