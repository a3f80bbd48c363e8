#include "gateway/app/cli.hpp"

#include <string>
#include <vector>

int main(int argc, char** argv) {
    return gateway::app::run_cli(std::vector<std::string>(argv + 1, argv + argc));
}
