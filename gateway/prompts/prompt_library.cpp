// Prompt files -> prompts. Includes yaml-cpp for the front matter only.
#include "gateway/prompts/prompt_library.hpp"
#include "gateway/ids.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gateway::prompts {

config::parsed<prompt> parse_prompt(std::string_view text, const std::string& source) {
    using result = config::parsed<prompt>;
    auto fail_at = [&](int line, const std::string& what) {
        return result::fail(source + ":" + std::to_string(line) + ": " + what);
    };
    if (!text.starts_with("---\n") && !text.starts_with("---\r\n"))
        return fail_at(1,
                       "a prompt file starts with `---` and YAML front matter (id, title, "
                       "description)");
    auto header_start = text.find('\n') + 1;
    auto close = text.find("\n---", header_start - 1);
    if (close == std::string_view::npos)
        return fail_at(1, "the front matter is never closed by `---`");
    std::string header(text.substr(header_start, close + 1 - header_start));
    auto body_start = text.find('\n', close + 1);
    std::string body(body_start == std::string_view::npos ? "" : text.substr(body_start + 1));
    while (body.starts_with("\n")) body.erase(0, 1);

    YAML::Node node;
    try {
        node = YAML::Load(header);
    } catch (const YAML::Exception& e) {
        return fail_at(e.mark.line + 2, "invalid front matter: " + e.msg);
    }
    if (!node.IsMap())
        return fail_at(2, "the front matter must be a mapping of id, title, description");
    prompt out;
    out.source = source;
    out.body = std::move(body);
    for (const auto& entry : node) {
        auto key = entry.first.as<std::string>();
        int line = entry.first.Mark().line + 2;
        if (!entry.second.IsScalar()) return fail_at(line, "`" + key + "` must be a single value");
        auto value = entry.second.Scalar();
        if (key == "id")
            out.id = value;
        else if (key == "title")
            out.title = value;
        else if (key == "description")
            out.description = value;
        else
            return fail_at(line,
                           "unknown key `" + key + "` (expected one of: id, title, description)");
    }
    for (auto [key, value] :
         {std::pair{"id", &out.id}, {"title", &out.title}, {"description", &out.description}})
        if (value->empty())
            return fail_at(2, "missing `" + std::string(key) + "` in the front matter");
    if (!valid_id(out.id))
        return fail_at(2, "id `" + out.id + "` may only hold letters, digits, `-` and `_`");
    if (out.body.empty()) return fail_at(2, "the prompt has no text after the front matter");
    return {std::move(out), {}};
}

config::parsed<std::vector<prompt>> load_folder(const std::string& folder) {
    using result = config::parsed<std::vector<prompt>>;
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
        if (entry.path().extension() == ".md" && entry.is_regular_file())
            files.push_back(entry.path());
    if (ec) return result::fail(folder + ": cannot read the prompts folder: " + ec.message());
    std::sort(files.begin(), files.end());
    std::vector<prompt> prompts;
    std::set<std::string> ids;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        auto parsed = parse_prompt(text.str(), file.string());
        if (!parsed) return result::fail(parsed.error);
        if (!ids.insert(parsed.value->id).second)
            return result::fail(file.string() + ":2: duplicate prompt id `" + parsed.value->id +
                                "`");
        prompts.push_back(std::move(*parsed.value));
    }
    return {std::move(prompts), {}};
}

}  // namespace gateway::prompts
