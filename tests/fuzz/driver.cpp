// A libFuzzer-compatible driver for compilers without -fsanitize=fuzzer: runs the target over
// every file in the corpus folders given, then over `ROUNDS` seeded random mutations of them
// (byte flips, insertions of protocol tokens, truncations). Deterministic, bounded in time.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
    std::vector<std::string> corpus;
    for (int i = 1; i < argc; ++i)
        for (const auto& entry : std::filesystem::directory_iterator(argv[i])) {
            std::ifstream in(entry.path(), std::ios::binary);
            std::stringstream text;
            text << in.rdbuf();
            corpus.push_back(text.str());
        }
    if (corpus.empty()) corpus.push_back("{}");
    auto run = [](const std::string& input) {
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    };
    for (const auto& input : corpus) run(input);
    const char* tokens[] = {
        "{", "}", "\"",      "\\", "\"tool\"", "\"parameters\"", ":",    ",",
        "[", "]", "```json", "\n", "\"name\"", "\"arguments\"",  "true", "null"};
    std::mt19937 random(12345);
    const int rounds = 20000;
    for (int round = 0; round < rounds; ++round) {
        std::string input = corpus[random() % corpus.size()];
        int edits = 1 + static_cast<int>(random() % 4);
        for (int e = 0; e < edits; ++e) {
            std::size_t at = input.empty() ? 0 : random() % (input.size() + 1);
            switch (random() % 4) {
                case 0:
                    input.insert(at, tokens[random() % std::size(tokens)]);
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
    std::printf("fuzz_smoke: %zu corpus inputs and %d mutations, no crash\n", corpus.size(),
                rounds);
    return 0;
}
