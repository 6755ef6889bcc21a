// test_serve_options.cpp: attnviz --serve's bad input is one sentence naming the value and
// what to do instead, exit status 2, before any window opens (so without a display too).
#include "run_attnviz.h"
#include <arpa/inet.h>
#include <fstream>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using attnviz_test::expect_usage_error;
using attnviz_test::TempDir;

TEST(ServeOptions, BadValuesAreOneSentence) {
    TempDir site;
    std::ofstream(site.path + "/index.html") << "<html></html>";
    const std::vector<std::string> ok = {"--serve", "--site", site.path};
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> a = ok;
        a.insert(a.end(), more.begin(), more.end());
        return a;
    };
    expect_usage_error(with({"--port", "70000"}), "--port '70000' is not a port; use a number from 1024 to 65535");
    expect_usage_error(with({"--port", "0"}), "--port '0' is not a port");
    expect_usage_error(with({"--port", "eighty"}), "--port 'eighty' is not a port");
    expect_usage_error(with({"--bind", "10.0.0"}), "--bind '10.0.0' is not an IPv4 address");
    expect_usage_error(with({"--bind", "example.org"}), "--bind 'example.org' is not an IPv4 address");
    expect_usage_error(with({"--bind", "192.0.2.1"}), "--bind 192.0.2.1 is not an address of this machine");
    // What the terminal would take as a command is shown, not sent to it.
    expect_usage_error(with({"--port", "12\x1b[31m"}), "--port '12\\x1B[31m' is not a port");
    expect_usage_error(with({"--bind", "1.2.3\x1b"}), "--bind '1.2.3\\x1B' is not an IPv4 address");
    expect_usage_error(with({"--max-clients", "0"}), "--max-clients '0' is not a number of pages; use 1 to 1000");
    expect_usage_error({"--serve", "--site", site.path + "/none"}, "none holds no index.html");
    expect_usage_error(with({"--per-address", "-1"}), "--per-address '-1' is not a number of pages; use 0 to 1000");
    expect_usage_error(with({"--per-address", "many"}), "--per-address 'many' is not a number of pages");
    expect_usage_error(with({"--allow-host", "laptop:8642"}), "--allow-host 'laptop:8642' is not a host name");
    expect_usage_error(with({"--allow-host", "a b"}), "--allow-host 'a b' is not a host name");
    expect_usage_error({"--per-address", "4"}, "--per-address needs --serve");
    expect_usage_error({"--allow-host", "laptop"}, "--allow-host needs --serve");
    expect_usage_error({"--no-code"}, "--no-code needs --serve");
    expect_usage_error({"--port", "9000"}, "--port needs --serve");
    expect_usage_error({"--bind", "127.0.0.1"}, "--bind needs --serve");
}

TEST(ServeOptions, ABusyPortIsNamed) {
    TempDir site;
    std::ofstream(site.path + "/index.html") << "<html></html>";
    // Hold a port on 127.0.0.1.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(fd, 1), 0);
    socklen_t n = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
    const std::string port = std::to_string(ntohs(a.sin_port));
    expect_usage_error({"--serve", "--site", site.path, "--bind", "127.0.0.1", "--port", port},
                       "port " + port + " is in use on 127.0.0.1; choose another with --port");
    ::close(fd);
}
