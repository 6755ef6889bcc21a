// test_door.cpp: attnviz --serve on a school network, tried as a hostile student would with raw
// sockets on 127.0.0.1 (follow_server.h, docs/views.md "On a school network"): silent
// sockets do not hold the class, an upgrade without the subprotocol or to another path is
// refused, one machine cannot take the class, one connection cannot stuff the vote, a
// foreign Host or Origin is refused, the log cannot move the teacher's terminal, the page's
// headers, and the class code. Every loop is bounded in count and time.
#include "class_answers.h"
#include "follow_server.h"
#include "serve_link.h"
#include "common/temp_dir.h"
#include "ws_client.h"
#include <chrono>
#include <gtest/gtest.h>
#include <mutex>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

using attnviz::FollowServer;
using attnviz::ServeConfig;
using attnviz_test::eventually;
using attnviz_test::free_port;
using attnviz_test::http_get;
using attnviz_test::TempDir;
using attnviz_test::WsClient;
using Clock = std::chrono::steady_clock;

namespace {

// The response's status code and text, "403 Forbidden" (lws answers errors as HTTP/1.0).
std::string status_line(const std::string& r) {
    const std::string line = r.substr(0, r.find("\r\n"));
    return line.size() > 9 ? line.substr(9) : line;
}
int close_code(const std::string& payload) {
    return payload.size() < 2 ? -1 : (static_cast<unsigned char>(payload[0]) << 8) | static_cast<unsigned char>(payload[1]);
}
std::string answer(const std::string& page, int q, int c) {
    return nlohmann::json{{"answer", {{"page", page}, {"question", q}, {"choice", c}}}}.dump();
}

// A server on 127.0.0.1 with a site folder, its log lines kept.
struct Door {
    TempDir site{"attnviz-door"};
    FollowServer server;
    ServeConfig c;
    std::mutex mutex;
    std::vector<std::string> lines;
    Door() {
        site.write("index.html", "<html>the page</html>");
        c.bind = "127.0.0.1";
        c.port = free_port();
        c.site_dir = site.path;
        c.per_address = 0;
        c.choices = {4, 3};
        c.log = [this](const std::string& l) {
            std::lock_guard<std::mutex> lock(mutex);
            lines.push_back(l);
        };
    }
    bool start() {
        std::string error;
        const bool ok = server.start(c, error);
        EXPECT_TRUE(ok) << error;
        server.publish(R"({"view":"walk"})");
        return ok;
    }
    std::vector<std::string> log() {
        std::lock_guard<std::mutex> lock(mutex);
        return lines;
    }
    size_t lines_with(const std::string& part) {
        size_t n = 0;
        for (const std::string& l : log()) n += l.find(part) != std::string::npos;
        return n;
    }
};

// A page that follows: connected (with `path`), the teacher's first state read.
bool join(WsClient& p, int port, const std::string& path = "/follow") {
    std::string got;
    return p.connect("127.0.0.1", port, path) && p.read(got, 10000) == 1;
}

} // namespace

// Finding 1: a socket that completes the handshake and says nothing held a slot forever.
// Here the class is 60 silent sockets; the server pings them, drops each after idle_ms
// (shortened from 30 s: the mechanism is the same, ServeConfig's default is 30 s), and a
// real page joins.
TEST(Door, SilentSocketsDoNotHoldTheClass) {
    Door d;
    d.c.max_clients = 60;
    d.c.ping_ms = 300;
    d.c.idle_ms = 1500;
    ASSERT_TRUE(d.start());
    std::vector<WsClient> silent(60);
    for (WsClient& s : silent) ASSERT_TRUE(s.connect("127.0.0.1", d.c.port)); // and then never reads
    ASSERT_TRUE(eventually([&] { return d.server.stats().clients == 60; }, 5000));
    WsClient late;
    std::string got;
    if (late.connect("127.0.0.1", d.c.port)) {
        EXPECT_EQ(late.read(got, 10000), 8); // the class is full now
    }
    // Within idle_ms and a margin, the slots are free again, and a real page (one that
    // answers pings, as browsers do) joins and stays.
    ASSERT_TRUE(eventually([&] { return d.server.stats().clients == 0; }, 15000)) << d.server.stats().clients;
    EXPECT_EQ(d.server.stats().timed_out, 60u);
    WsClient page;
    ASSERT_TRUE(join(page, d.c.port));
    const auto end = Clock::now() + std::chrono::milliseconds(3 * d.c.idle_ms);
    while (Clock::now() < end) page.read(got, 100); // answers the pings
    EXPECT_TRUE(page.is_open());
    EXPECT_EQ(d.server.stats().clients, 1);
    EXPECT_GE(d.lines_with("silent"), 1u);
}

// A connection that never finishes its request is closed within handshake_s.
TEST(Door, AHalfRequestIsClosedWithinTheHandshakeTime) {
    Door d;
    d.c.handshake_s = 1;
    ASSERT_TRUE(d.start());
    // One sends half a request and never the rest, one sends nothing at all.
    for (const std::string half : {"GET /follow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1", ""}) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_port = htons(uint16_t(d.c.port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        ASSERT_EQ(::send(fd, half.data(), half.size(), MSG_NOSIGNAL), ssize_t(half.size()));
        // The server closes it (recv returns 0 or an error). The bound is 8 × handshake_s, for a
        // loaded machine; libwebsockets' own default (10 s, what the server had) is over it.
        pollfd p {fd, POLLIN, 0};
        const auto t0 = Clock::now();
        const int ready = ::poll(&p, 1, 8000);
        char buf[256];
        const ssize_t n = ready > 0 ? ::recv(fd, buf, sizeof buf, 0) : 1;
        ::close(fd);
        EXPECT_EQ(ready, 1) << "the server kept a half request open for 8 s: '" << half << "'";
        EXPECT_LE(n, 0);
        std::printf("closed after %.1f s (handshake_s %d)\n", std::chrono::duration<double>(Clock::now() - t0).count(),
                    d.c.handshake_s);
    }
}

// Finding 2: an upgrade without the subprotocol was accepted and not counted.
TEST(Door, AnUpgradeWithoutTheSubprotocolOrElsewhereIsRefused) {
    Door d;
    d.c.max_clients = 2;
    ASSERT_TRUE(d.start());
    WsClient none, other, wrong_path, elsewhere;
    EXPECT_FALSE(none.connect("127.0.0.1", d.c.port, "/follow", ""));
    EXPECT_EQ(status_line(none.last_head()), "400 Bad Request");
    EXPECT_FALSE(other.connect("127.0.0.1", d.c.port, "/follow", "chat"));
    EXPECT_EQ(status_line(other.last_head()), "400 Bad Request");
    EXPECT_FALSE(wrong_path.connect("127.0.0.1", d.c.port, "/index.html"));
    EXPECT_EQ(status_line(wrong_path.last_head()), "404 Not Found");
    EXPECT_FALSE(elsewhere.connect("127.0.0.1", d.c.port, "/", ""));
    EXPECT_EQ(d.server.stats().refused_upgrade, 4u);
    // The class's two places are still there.
    WsClient a, b;
    EXPECT_TRUE(join(a, d.c.port));
    EXPECT_TRUE(join(b, d.c.port));
    EXPECT_EQ(d.server.stats().clients, 2);
}

// One machine cannot take the class: --per-address.
TEST(Door, OneAddressTakesAtMostPerAddressPages) {
    Door d;
    d.c.per_address = 3;
    ASSERT_TRUE(d.start());
    std::vector<WsClient> pages(3);
    for (WsClient& p : pages) ASSERT_TRUE(join(p, d.c.port));
    WsClient fourth;
    std::string got;
    ASSERT_TRUE(fourth.connect("127.0.0.1", d.c.port));
    ASSERT_EQ(fourth.read(got, 10000), 8);
    EXPECT_EQ(close_code(got), 1008);
    EXPECT_NE(got.find("this address"), std::string::npos) << got;
    EXPECT_EQ(d.server.stats().refused_address, 1u);
    // The slot is free again as soon as one leaves.
    pages[0].close();
    ASSERT_TRUE(eventually([&] { return d.server.stats().clients == 2; }, 5000));
    WsClient again;
    EXPECT_TRUE(join(again, d.c.port));
}

// Finding 3: one connection sent valid answers under fresh IDs and filled the table.
TEST(Door, AThousandAnswersUnderFreshIdsFromOneConnectionCountOnce) {
    Door d;
    ASSERT_TRUE(d.start());
    WsClient p;
    ASSERT_TRUE(join(p, d.c.port));
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(p.send(answer("fresh" + std::to_string(i), 0, i % 4)));
    ASSERT_TRUE(eventually([&] {
        const auto s = d.server.stats();
        return s.answers + s.ignored + s.throttled == 1000;
    }, 10000)) << d.server.stats().answers << " " << d.server.stats().ignored << " " << d.server.stats().throttled;
    EXPECT_EQ(d.server.stats().answers, 1u);
    EXPECT_GE(d.server.stats().throttled, 900u); // the rate: at most a few a second
    attnviz::ClassAnswers tally; // as the window counts them (serve_link.cpp)
    tally.reset(d.c.choices, 3 * size_t(d.c.max_clients));
    attnviz::count_answers(d.server, tally);
    EXPECT_EQ(tally.counts(), (std::vector<std::vector<int>>{{1, 0, 0, 0}, {0, 0, 0}}));
    EXPECT_EQ(tally.size(), 1u);
    // Counted, not logged one by one: a line, then "N more like this" once a second.
    ASSERT_TRUE(eventually([&] { return d.lines_with("more like this: rate") >= 1; }, 5000));
    EXPECT_LE(d.lines_with("dropped a page's message: more than"), 2u);
    // Another connection cannot answer as that page while it is connected.
    WsClient thief;
    ASSERT_TRUE(join(thief, d.c.port));
    ASSERT_TRUE(thief.send(answer("fresh0", 0, 3)));
    ASSERT_TRUE(eventually([&] { return d.server.stats().ignored >= 1; }, 5000));
    attnviz::count_answers(d.server, tally);
    EXPECT_EQ(tally.counts()[0], (std::vector<int>{1, 0, 0, 0}));
}

// Finding 4: no Host or Origin check (DNS rebinding; another site's page in a student's browser).
TEST(Door, AForeignHostOrOriginIsRefused) {
    Door d;
    d.c.allow_hosts = {"laptop.school.lan"};
    ASSERT_TRUE(d.start());
    const std::string port = std::to_string(d.c.port);
    EXPECT_EQ(status_line(http_get(d.c.port, "/", 10000, "evil.example:" + port)), "403 Forbidden");
    EXPECT_EQ(status_line(http_get(d.c.port, "/", 10000, "-")), "403 Forbidden");
    EXPECT_EQ(status_line(http_get(d.c.port, "/follow.json", 10000, "evil.example")), "403 Forbidden");
    for (const std::string& ok : std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port, "LocalHost", "laptop.school.lan:" + port})
        EXPECT_EQ(status_line(http_get(d.c.port, "/", 10000, ok)), "200 OK") << ok;
    WsClient foreign_origin, no_origin, foreign_host, named;
    foreign_origin.set_headers("", "http://evil.example");
    EXPECT_FALSE(foreign_origin.connect("127.0.0.1", d.c.port));
    EXPECT_EQ(status_line(foreign_origin.last_head()), "403 Forbidden");
    no_origin.set_headers("", "-");
    EXPECT_FALSE(no_origin.connect("127.0.0.1", d.c.port));
    foreign_host.set_headers("evil.example:" + port, "http://evil.example:" + port);
    EXPECT_FALSE(foreign_host.connect("127.0.0.1", d.c.port));
    named.set_headers("laptop.school.lan:" + port, "http://laptop.school.lan:" + port);
    EXPECT_TRUE(named.connect("127.0.0.1", d.c.port));
    EXPECT_EQ(d.server.stats().refused_host, 6u);
    EXPECT_TRUE(eventually([&] { return d.server.stats().clients == 1; }, 10000));
    // One log line each kind in a second, however many were refused.
    EXPECT_EQ(d.lines_with("refused a request for Host"), 1u);
}

// Finding 6: a refused path's bytes reached the teacher's terminal decoded.
TEST(Door, ALoggedPathIsEscaped) {
    Door d;
    ASSERT_TRUE(d.start());
    EXPECT_EQ(status_line(http_get(d.c.port, "/%1b[2J%1b[31mred%07")), "404 Not Found");
    ASSERT_TRUE(eventually([&] { return d.lines_with("refused /") >= 1; }, 10000));
    for (const std::string& l : d.log()) {
        for (char ch : l) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << "a raw byte " << int(ch) << " in " << l;
        if (l.find("refused /") != std::string::npos) {
            EXPECT_NE(l.find("\\x1b[2J\\x1b[31mred\\x07"), std::string::npos) << l;
        }
    }
    // Repeats are counted per kind and said once a second, never silently.
    for (int i = 0; i < 30; ++i) http_get(d.c.port, "/nothing" + std::to_string(i));
    ASSERT_TRUE(eventually([&] { return d.lines_with("more like this: path") >= 1; }, 5000));
}

// Finding 7: the page's headers.
TEST(Door, ThePageCarriesItsHeaders) {
    Door d;
    d.site.write("attnviz.js", "// the script");
    ASSERT_TRUE(d.start());
    const std::string page = http_get(d.c.port, "/"), script = http_get(d.c.port, "/attnviz.js");
    for (const std::string* r : {&page, &script}) {
        EXPECT_EQ(status_line(*r), "200 OK");
        EXPECT_NE(r->find("x-content-type-options: nosniff"), std::string::npos) << *r;
        EXPECT_NE(r->find("content-security-policy: default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; "
                          "connect-src 'self'"),
                  std::string::npos)
            << *r;
    }
    EXPECT_NE(page.find("cache-control: no-cache"), std::string::npos);
    EXPECT_NE(script.find("cache-control: max-age=3600"), std::string::npos);
    const std::string json = http_get(d.c.port, "/follow.json");
    EXPECT_NE(json.find("cache-control: no-store"), std::string::npos);
    EXPECT_NE(json.find("x-content-type-options: nosniff"), std::string::npos);
}

// The class code: refused without it or with a wrong one, accepted with it (any case), its
// files too; a new code drops every page, and the new one lets them back.
TEST(Door, TheClassCode) {
    Door d;
    d.c.code = "ACD347";
    ASSERT_TRUE(d.start());
    d.server.publish_files({{"/follow/model-1.safetensors", "weights"}});
    std::string got;
    for (const char* path : {"/follow", "/follow?code=ACD346", "/follow?code="}) {
        WsClient p;
        ASSERT_TRUE(p.connect("127.0.0.1", d.c.port, path)) << path;
        ASSERT_EQ(p.read(got, 10000), 8) << path; // closed before any state
        EXPECT_EQ(close_code(got), 4401) << path;
    }
    EXPECT_EQ(d.server.stats().refused_code, 3u);
    EXPECT_EQ(status_line(http_get(d.c.port, "/follow/model-1.safetensors")), "403 Forbidden");
    EXPECT_EQ(status_line(http_get(d.c.port, "/follow/model-1.safetensors?code=ACD347")), "200 OK");
    WsClient a, b;
    ASSERT_TRUE(join(a, d.c.port, "/follow?code=ACD347"));
    ASSERT_TRUE(join(b, d.c.port, "/follow?code=acd-347"));
    EXPECT_EQ(d.server.stats().clients, 2);
    d.server.set_code("KMN679");
    for (WsClient* p : {&a, &b}) {
        ASSERT_EQ(p->read(got, 10000), 8);
        EXPECT_EQ(close_code(got), 4401);
        EXPECT_NE(got.find("changed"), std::string::npos);
    }
    ASSERT_TRUE(eventually([&] { return d.server.stats().clients == 0; }, 5000));
    WsClient old_code, new_code;
    ASSERT_TRUE(old_code.connect("127.0.0.1", d.c.port, "/follow?code=ACD347"));
    EXPECT_EQ(old_code.read(got, 10000), 8);
    EXPECT_TRUE(join(new_code, d.c.port, "/follow?code=KMN679"));
}
