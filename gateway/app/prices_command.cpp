#include "gateway/app/prices_command.hpp"

#include "gateway/config/config.hpp"
#include "gateway/pricing/litellm_import.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace gateway::app {

namespace {

constexpr const char* usage = R"(Usage:
  contextgate prices import FILE [--out PATH] [--date YYYY-MM-DD] [--providers LIST]

Makes a price table for `pricing.file` from LiteLLM's model_prices_and_context_window.json:
its chat, completion and responses models priced by the token, in USD per 1M tokens, named as
their upstream hears them (`gemini/gemini-2.5-pro` becomes `gemini-2.5-pro`).
  --out PATH         write the table to PATH (default: stdout)
  --date YYYY-MM-DD  the table's date (default: FILE's modification day, UTC)
  --providers LIST   the litellm_provider values to take, comma-separated; where two price one
                     name, the first named wins (default: openai,text-completion-openai,
                     anthropic,gemini: the APIs an upstream speaks under their own names)
What was left out, and why, goes to stderr. See docs/operations.md, "Prices and cost".
)";

// LiteLLM's whole map is some 2 MB; a file far past that is not it.
constexpr std::uintmax_t most_bytes = 64u << 20;

int usage_error(const std::string& message) {
    std::cerr << "contextgate prices: " << message << "\n\n" << usage;
    return 2;
}

int failed(const std::string& message) {
    std::cerr << "contextgate prices: " << message << "\n";
    return 1;
}

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
    return out;
}

// "a 3, b 2": counts by name, most first.
std::string by_count(const std::map<std::string, std::size_t>& counts) {
    std::vector<std::pair<std::string, std::size_t>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> items;
    for (const auto& [name, n] : sorted)
        items.push_back((name.empty() ? "(none)" : name) + " " + std::to_string(n));
    return joined(items, ", ");
}

std::size_t total(const std::map<std::string, std::size_t>& counts) {
    std::size_t n = 0;
    for (const auto& [name, count] : counts) n += count;
    return n;
}

// The report, a line for each kind of entry left out (or kept with something to say).
std::string report_text(const pricing::litellm_report& r, const std::vector<std::string>& chosen) {
    std::ostringstream out;
    auto line = [&](std::size_t n, const std::string& what) {
        if (n > 0) out << "  " << n << " " << what << "\n";
    };
    line(r.not_models, "not models (sample_spec, or no litellm_provider)");
    line(total(r.other_providers), "of providers not taken (--providers " + joined(chosen, ",") +
                                       "): " + by_count(r.other_providers));
    line(total(r.other_modes),
         "of the providers taken, no text model by its mode: " + by_count(r.other_modes));
    line(r.no_token_prices, "without both input_cost_per_token and output_cost_per_token");
    line(r.unusable.size(), "unusable:");
    for (const auto& u : r.unusable) out << "    " << u << "\n";
    line(r.duplicates, "duplicates of a name already taken (the first kept), " +
                           std::to_string(r.differing.size()) + " with another price" +
                           (r.differing.empty() ? "" : ":"));
    for (const auto& d : r.differing) out << "    " << d << "\n";
    line(r.free, "kept at $0 input and output, as the file gives them");
    line(r.extra_tiers, "kept with more than one long-context tier: the lowest taken");
    if (!r.not_carried.empty())
        out << "  rates of kept entries the table has no field for (not carried), by how many "
               "entries have one: "
            << by_count(r.not_carried) << "\n";
    return out.str();
}

}  // namespace

int run_prices_command(const std::vector<std::string>& args) {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        (args.empty() ? std::cerr : std::cout) << usage;
        return args.empty() ? 2 : 0;
    }
    if (args[0] != "import") return usage_error("unknown subcommand `" + args[0] + "`");
    std::string file, out_path, date;
    pricing::litellm_options options;
    for (std::size_t i = 1; i < args.size(); ++i) {
        bool has_value = i + 1 < args.size();
        if (args[i] == "--out" && has_value) {
            out_path = args[++i];
        } else if (args[i] == "--date" && has_value) {
            date = args[++i];
            if (date.size() != 10 || !config::parse_time(date))
                return usage_error("--date must be a day such as 2025-11-01, not `" + date + "`");
        } else if (args[i] == "--providers" && has_value) {
            options.providers.clear();
            std::stringstream list(args[++i]);
            for (std::string p; std::getline(list, p, ',');)
                if (!p.empty()) options.providers.push_back(p);
            if (options.providers.empty()) return usage_error("--providers names no provider");
        } else if (file.empty() && !args[i].starts_with("-")) {
            file = args[i];
        } else {
            return usage_error("unexpected argument `" + args[i] + "`");
        }
    }
    if (file.empty()) return usage_error("missing FILE (LiteLLM's price map)");

    struct stat info {};
    if (::stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
        return failed(file + ": cannot read it (not a file)");
    if (static_cast<std::uintmax_t>(info.st_size) > most_bytes)
        return failed(file + ": larger than 64 MiB, which LiteLLM's price map is not");
    std::ifstream in(file, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) return failed(file + ": cannot read it");
    std::string dated = "given by --date";
    if (date.empty()) {
        date = config::format_time(static_cast<std::int64_t>(info.st_mtime) * 1000).substr(0, 10);
        dated = "the file's modification day; --date sets it";
    }
    options.date = date;

    auto imported = pricing::import_litellm(text, options);
    if (!imported) return failed(file + ":" + imported.error);
    const auto& prices = imported.value->prices;
    const auto& report = imported.value->report;
    auto summary =
        std::to_string(report.kept) + " of its " + std::to_string(report.entries) + " entries";
    if (prices.models.empty())
        return failed(file + ": no price was kept (" + summary + ")\n" +
                      report_text(report, options.providers));

    std::string table =
        "# Made by `contextgate prices import` from LiteLLM's "
        "model_prices_and_context_window.json\n"
        "# (" +
        file + "): " + summary +
        ", the chat, completion and responses models of\n"
        "# " +
        joined(options.providers, ", ") +
        " priced by the token. USD per 1M tokens; `date`\n"
        "# is " +
        dated.substr(0, dated.find(';')) +
        ". docs/operations.md \"Prices and cost\" says what is taken and how.\n" +
        config::price_list_yaml(prices);
    // What pricing.file will read must load: checked here rather than at the gateway's start.
    std::string shown = out_path.empty() ? "the table" : out_path;
    if (auto back = config::load_price_list(table, shown); !back)
        return failed("the table made does not load (a bug): " + back.error);

    if (out_path.empty()) {
        std::cout << table;
    } else {
        // Written whole beside PATH, then renamed over it: never a half-written table.
        auto partial = out_path + ".partial-" + std::to_string(::getpid());
        {
            std::ofstream out(partial, std::ios::binary | std::ios::trunc);
            out << table;
            if (!out.flush()) {
                std::remove(partial.c_str());
                return failed(out_path + ": cannot write it");
            }
        }
        if (std::rename(partial.c_str(), out_path.c_str()) != 0) {
            std::remove(partial.c_str());
            return failed(out_path + ": cannot write it");
        }
    }
    std::cerr << "contextgate prices: " << summary << " of " << file << " taken into " << shown
              << ", dated " << date << " (" << dated << ")\n"
              << report_text(report, options.providers);
    return 0;
}

}  // namespace gateway::app
