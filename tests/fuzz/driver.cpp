// A libFuzzer-compatible driver for compilers without -fsanitize=fuzzer: runs the target over
// every file in the corpus folders given, then over seeded random mutations of them (byte flips,
// insertions of the dictionary's tokens, truncations). Deterministic, bounded in time.
// Usage: <target> [-dict=FILE] [-runs=N] CORPUS_DIR...   (the options libFuzzer takes too)

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// The input being run, for the crash handler.
const std::string* current = nullptr;

// On a crash (a broken invariant traps), saves the input to ./fuzz-crash and says so, as
// libFuzzer does, so a failing CI run can be reproduced: `<target> ./fuzz-crash`... as a corpus
// file. Only async-signal-safe calls.
extern "C" void on_crash(int signal) {
    static const char said[] =
        "fuzz_smoke: the target crashed; the input is saved in ./fuzz-crash\n";
    (void)!::write(2, said, sizeof said - 1);
    int fd = ::open("fuzz-crash", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0 && current) (void)!::write(fd, current->data(), current->size());
    if (fd >= 0) ::close(fd);
    ::_exit(128 + signal);
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The tokens of a libFuzzer dictionary: one `"…"` (optionally `name="…"`) per line, with
// \\, \" and \xHH escapes; `#` starts a comment line.
std::vector<std::string> read_dictionary(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "cannot read dictionary %s\n", path.c_str());
        std::exit(2);
    }
    std::vector<std::string> tokens;
    for (std::string line; std::getline(in, line);) {
        auto open = line.find('"');
        auto close = line.rfind('"');
        if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) continue;
        std::string token;
        for (std::size_t i = open + 1; i < close; ++i) {
            if (line[i] != '\\' || i + 1 >= close) {
                token += line[i];
            } else if (line[i + 1] == 'x' && i + 3 < close && hex_digit(line[i + 2]) >= 0 &&
                       hex_digit(line[i + 3]) >= 0) {
                token += static_cast<char>(hex_digit(line[i + 2]) * 16 + hex_digit(line[i + 3]));
                i += 3;
            } else {
                token += line[++i];
            }
        }
        tokens.push_back(token);
    }
    return tokens;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> corpus;
    std::vector<std::string> tokens{"{", "}", "\n", " "};
    int rounds = 20000;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.starts_with("-dict=")) {
            tokens = read_dictionary(arg.substr(6));
            continue;
        }
        if (arg.starts_with("-runs=")) {
            rounds = std::atoi(arg.c_str() + 6);
            continue;
        }
        for (const auto& entry : std::filesystem::directory_iterator(arg)) {
            std::ifstream in(entry.path(), std::ios::binary);
            std::stringstream text;
            text << in.rdbuf();
            corpus.push_back(text.str());
        }
    }
    if (corpus.empty()) corpus.push_back("{}");
    if (tokens.empty()) tokens.push_back(" ");
    for (int signal : {SIGILL, SIGTRAP, SIGSEGV, SIGABRT, SIGFPE, SIGBUS})
        std::signal(signal, on_crash);
    auto run = [](const std::string& input) {
        current = &input;
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    };
    for (const auto& input : corpus) run(input);
    std::mt19937 random(12345);
    for (int round = 0; round < rounds; ++round) {
        std::string input = corpus[random() % corpus.size()];
        int edits = 1 + static_cast<int>(random() % 4);
        for (int e = 0; e < edits; ++e) {
            std::size_t at = input.empty() ? 0 : random() % (input.size() + 1);
            switch (random() % 4) {
                case 0:
                    input.insert(at, tokens[random() % tokens.size()]);
                    break;
                case 1:
                    if (!input.empty() && at < input.size())
                        input[at] = static_cast<char>(random());
                    break;
                case 2:
                    input.resize(at);
                    break;
                default:
                    if (at < input.size()) input.erase(at, 1 + random() % 8);
            }
        }
        run(input);
    }
    std::printf(
        "fuzz_smoke: %zu corpus inputs, %zu dictionary tokens and %d mutations, no "
        "crash\n",
        corpus.size(), tokens.size(), rounds);
    return 0;
}
