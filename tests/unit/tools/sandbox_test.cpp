#include "gateway/tools/sandbox.hpp"

#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>

namespace tools_sandbox_test {

namespace fs = std::filesystem;
using gateway::tools::sandbox;

namespace {

// A workspace beside a secret that must stay unreachable:
//   <tmp>/secret.txt          outside
//   <tmp>/ws/notes.txt        inside
//   <tmp>/ws/sub/inner.txt    inside, reached through an inside symlink too
struct workspace {
    fs::path base;
    fs::path root;
    workspace() {
        char pattern[] = "/tmp/contextgate-sandbox-XXXXXX";
        base = ::mkdtemp(pattern);
        root = base / "ws";
        fs::create_directories(root / "sub");
        std::ofstream(base / "secret.txt") << "top secret";
        std::ofstream(root / "notes.txt") << "hello";
        std::ofstream(root / "sub" / "inner.txt") << "inner";
        fs::create_symlink("sub/inner.txt", root / "inside-link");
        fs::create_symlink("../secret.txt", root / "up-link");
        fs::create_symlink("/etc/passwd", root / "passwd-link");
        fs::create_symlink(base, root / "dir-outside");
        fs::create_symlink("chain2", root / "chain1");
        fs::create_symlink("up-link", root / "chain2");
        fs::create_symlink("/proc/self/root/etc/passwd", root / "proc-link");
        ::mkfifo((root / "fifo").c_str(), 0600);
        int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::string socket_path = (root / "sock").string();
        std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
        ::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address);
        ::close(s);
    }
    ~workspace() { fs::remove_all(base); }

    sandbox make(sandbox::resolution mode) const {
        auto root_fd = sandbox::open_directory(root.string());
        BOOST_TEST_REQUIRE(static_cast<bool>(root_fd), root_fd.message);
        return sandbox(std::move(root_fd.fd), mode);
    }
};

std::string read_all(int fd) {
    std::string out;
    char buffer[256];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) out.append(buffer, n);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tools_sandbox)

BOOST_AUTO_TEST_CASE(attacks_are_refused_with_both_resolvers) {
    workspace ws;
    struct attack {
        std::string path;
        const char* code;
    };
    const std::vector<attack> attacks{
        {"/etc/passwd", "PATH_OUTSIDE_WORKSPACE"},
        {(ws.base / "secret.txt").string(), "PATH_OUTSIDE_WORKSPACE"},
        {"../secret.txt", "PATH_OUTSIDE_WORKSPACE"},
        {"sub/../../secret.txt", "PATH_OUTSIDE_WORKSPACE"},
        {"up-link", "PATH_OUTSIDE_WORKSPACE"},
        {"passwd-link", "PATH_OUTSIDE_WORKSPACE"},
        {"dir-outside/secret.txt", "PATH_OUTSIDE_WORKSPACE"},
        {"chain1", "PATH_OUTSIDE_WORKSPACE"},
        {"proc-link", "PATH_OUTSIDE_WORKSPACE"},
        {"/proc/self/root/etc/passwd", "PATH_OUTSIDE_WORKSPACE"},
        {std::string("notes.txt\0/../../secret.txt", 27), "PATH_OUTSIDE_WORKSPACE"},
        {"fifo", "NOT_A_REGULAR_FILE"},
        {"sock", "NOT_A_REGULAR_FILE"},
        {"sub", "NOT_A_REGULAR_FILE"},
        {"missing.txt", "NOT_FOUND"},
        {"notes.txt/x", "NOT_A_DIRECTORY"},
    };
    for (auto mode : {sandbox::resolution::openat2, sandbox::resolution::walk}) {
        auto box = ws.make(mode);
        for (const auto& a : attacks) {
            auto result = box.open_file(a.path);
            BOOST_TEST(!result, a.path);
            BOOST_TEST(result.error_code == a.code, a.path << ": " << result.error_code);
            BOOST_TEST(!result.message.empty());
        }
    }
    std::ifstream secret(ws.base / "secret.txt");
    std::string content((std::istreambuf_iterator<char>(secret)), {});
    BOOST_TEST(content == "top secret");  // nothing outside was touched
}

BOOST_AUTO_TEST_CASE(inside_paths_open) {
    workspace ws;
    for (auto mode : {sandbox::resolution::openat2, sandbox::resolution::walk}) {
        auto box = ws.make(mode);
        auto notes = box.open_file("notes.txt");
        BOOST_TEST_REQUIRE(static_cast<bool>(notes), notes.message);
        BOOST_TEST(read_all(notes.fd.get()) == "hello");
        auto inner = box.open_file("./sub//inner.txt");
        BOOST_TEST_REQUIRE(static_cast<bool>(inner), inner.message);
        BOOST_TEST(read_all(inner.fd.get()) == "inner");
        BOOST_TEST(static_cast<bool>(box.open_dir(".")));
        BOOST_TEST(static_cast<bool>(box.open_dir("sub")));
        BOOST_TEST(box.open_dir("notes.txt").error_code == "NOT_A_DIRECTORY");
    }
    // A symlink that stays inside is followed by openat2 and refused by the stricter walk.
    BOOST_TEST(static_cast<bool>(ws.make(sandbox::resolution::openat2).open_file("inside-link")));
    BOOST_TEST(ws.make(sandbox::resolution::walk).open_file("inside-link").error_code ==
               "PATH_OUTSIDE_WORKSPACE");
}

BOOST_AUTO_TEST_CASE(lexical_checks) {
    BOOST_TEST(sandbox::check_relative("a/b.txt").empty());
    BOOST_TEST(sandbox::check_relative("a..b/..c").empty());  // dots inside names are fine
    BOOST_TEST(sandbox::check_relative("/a") == "is absolute");
    BOOST_TEST(sandbox::check_relative("a/../b") == "contains `..`");
    BOOST_TEST(sandbox::check_relative("..") == "contains `..`");
    BOOST_TEST(sandbox::check_relative("") == "is empty");
    BOOST_TEST(sandbox::check_relative(std::string("a\0b", 3)) == "contains a NUL byte");
    BOOST_TEST(sandbox::open_directory("/nonexistent/ws").error_code == "NOT_FOUND");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_sandbox_test
