// test_load.cpp: a class following a teacher who drags the strength slider (a new state every
// 16 ms), on 127.0.0.1 (follow_server.h). What is asserted holds on any machine however
// loaded: every page ends on the latest state, a slow page gets the newest state and not a
// queue of old ones, a page that reads nothing is dropped, and the server's memory stays flat
// over 1,000 connects and drops. What is measured is printed, not asserted (CI's 2 cores are
// shared): how late pages were, and the teacher's frame time with 60 pages against without.
//
// The drag lasts 10 s, not the minute a lesson might: 600 frames and 60 pages give the
// latency's tail and the frame time's mean to within a few percent, and CI runs this test
// twice (plain and under AddressSanitizer) inside its 90 minutes. ATTNVIZ_LOAD_SECONDS=60
// runs the issue's minute (any 1 to 600).
#include "follow_server.h"
#include "common/temp_dir.h"
#include "ws_client.h"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <thread>
#include <vector>

using attnviz::FollowServer;
using attnviz::ServeConfig;
using attnviz_test::eventually;
using attnviz_test::free_port;
using attnviz_test::TempDir;
using attnviz_test::WsClient;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int pages_n = 60;
constexpr auto frame = std::chrono::milliseconds(16);

long rss_kb() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

// The state the teacher's frame i publishes: about 2 KB, as a lesson's session is.
std::string state(int i) { return "{\"strength\":" + std::to_string(i) + ",\"pad\":\"" + std::string(2000, 'p') + "\"}"; }
int seq_of(const std::string& m) {
    const size_t at = m.find("\"strength\":");
    return at == std::string::npos ? -1 : std::atoi(m.c_str() + at + 11);
}

// The drag's length: ATTNVIZ_LOAD_SECONDS, else 10 s.
double drag_seconds() {
    const char* v = std::getenv("ATTNVIZ_LOAD_SECONDS");
    const double s = v && *v ? std::atof(v) : 10.0;
    return s >= 1 && s <= 600 ? s : 10.0;
}

double now_ms() { return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count(); }

// One teacher's frame: a fixed piece of work (a stand-in for drawing the view) and the publish.
float frame_work(int i) {
    float acc = float(i);
    for (int k = 0; k < 40000; ++k) acc = std::sin(acc) * 0.5f + float(k & 7);
    return acc;
}

// The teacher drags for `seconds`: a state every 16 ms. Returns the median time of a frame's
// work and publish (ms), the middle of a loaded machine's spread; publish_at[i] is when state
// i was handed to the server.
double drag(FollowServer& server, double seconds, int first, std::vector<std::atomic<double>>& publish_at, int& last) {
    const int frames = int(seconds * 1000 / 16);
    std::vector<double> busy;
    volatile float sink = 0;
    auto next = Clock::now();
    for (int i = 0; i < frames; ++i) {
        const auto t0 = Clock::now();
        sink = sink + frame_work(i);
        last = first + i;
        publish_at[size_t(last)] = now_ms();
        server.publish(state(last));
        busy.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        next += frame;
        std::this_thread::sleep_until(next); // the frame's pace (vsync), not a wait for an event
    }
    std::nth_element(busy.begin(), busy.begin() + frames / 2, busy.end());
    return busy[size_t(frames / 2)];
}

} // namespace

TEST(Load, SixtyPagesFollowADraggingTeacher) {
    TempDir site{"attnviz-load"};
    site.write("index.html", "<html>the page</html>");
    FollowServer server;
    ServeConfig c;
    c.bind = "127.0.0.1";
    c.port = free_port();
    c.site_dir = site.path;
    c.per_address = 0; // every page here comes from 127.0.0.1
    c.max_clients = pages_n + 2;
    c.stuck_s = 2;
    c.quiet = true;
    std::string error;
    ASSERT_TRUE(server.start(c, error)) << error;
    const double seconds = drag_seconds();
    // Every state's publish time: the drag's, and the 2 s alone before and after it.
    std::vector<std::atomic<double>> publish_at(size_t((seconds + 4) * 1000 / 16) + 64);
    int last = 0;
    server.publish(state(0));
    publish_at[0] = now_ms();
    // The teacher without pages, before and after them: the frame time to compare with.
    double alone = drag(server, 2, 1, publish_at, last);

    // 60 pages, each read by a thread of its own as fast as it can (a student's laptop).
    std::vector<WsClient> pages(pages_n);
    for (WsClient& p : pages) ASSERT_TRUE(p.connect("127.0.0.1", c.port));
    std::atomic<bool> done{false};
    std::vector<std::atomic<int>> seen(pages_n);
    std::vector<double> worst_lag(pages_n, 0);
    std::vector<int> messages(pages_n, 0);
    std::vector<std::thread> readers;
    for (int i = 0; i < pages_n; ++i) {
        seen[size_t(i)] = -1;
        readers.emplace_back([&, i] {
            std::string m;
            while (!done) {
                if (pages[size_t(i)].read(m, 100) != 1) continue;
                const int s = seq_of(m);
                if (s < 0) continue;
                seen[size_t(i)] = s;
                ++messages[size_t(i)];
                worst_lag[size_t(i)] = std::max(worst_lag[size_t(i)], now_ms() - publish_at[size_t(s)].load());
            }
        });
    }
    // A slow page (it reads two messages a second, with a small receive buffer) and one that
    // reads nothing at all.
    WsClient slow, deaf;
    slow.set_receive_buffer(4096);
    ASSERT_TRUE(slow.connect("127.0.0.1", c.port));
    ASSERT_TRUE(deaf.connect("127.0.0.1", c.port));
    std::atomic<int> slow_seen{-1}, slow_messages{0};
    std::thread slow_reader([&] {
        std::string m;
        while (!done) {
            if (slow.read(m, 100) == 1) {
                slow_seen = seq_of(m);
                ++slow_messages;
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
            }
        }
    });
    ASSERT_TRUE(eventually([&] { return server.stats().clients == pages_n + 2; }, 10000));
    const long rss_before = rss_kb();
    const int first_with = last + 1;
    const double with = drag(server, seconds, first_with, publish_at, last);
    const int states = last - first_with + 1;
    const long rss_after = rss_kb();
    // Every page ends on the latest state (waited for, with a generous deadline).
    const bool all = eventually(
        [&] {
            for (auto& s : seen)
                if (s != last) return false;
            return true;
        },
        20000);
    const int slow_at_end = slow_messages;
    const bool slow_caught_up = eventually([&] { return slow_seen == last; }, 30000);
    const int slow_after_end = slow_messages - slow_at_end;
    done = true;
    for (std::thread& t : readers) t.join();
    slow_reader.join();
    for (WsClient& p : pages) p.close();
    slow.close();
    deaf.close();
    ASSERT_TRUE(eventually([&] { return server.stats().clients == 0; }, 10000));
    alone = (alone + drag(server, 2, last + 1, publish_at, last)) / 2;
    EXPECT_TRUE(all) << "a page did not get the latest state";
    // The slow page read two messages a second during the drag: once the teacher stopped it
    // got the newest state after at most what the sockets' buffers hold (the server's 32 KB,
    // its own 8 KB: 20 states of 2 KB), not the hundreds of states it missed, one by one.
    EXPECT_TRUE(slow_caught_up) << "the slow page is at " << slow_seen << " of " << last;
    EXPECT_LE(slow_after_end, 24) << "the slow page read " << slow_after_end << " old states after the teacher stopped";
    // The page that reads nothing was dropped; the server's memory did not grow for it.
    EXPECT_GE(server.stats().stuck + server.stats().timed_out, 1u);
    double lag = 0;
    int fewest = 1 << 30;
    for (int i = 0; i < pages_n; ++i) lag = std::max(lag, worst_lag[size_t(i)]), fewest = std::min(fewest, messages[size_t(i)]);
    std::printf("load: 60 pages, a state every 16 ms for %.0f s (%d states): the latest page was %.0f ms behind at worst; "
                "the fewest states a page took %d (coalesced); the teacher's frame (median) %.2f ms alone, %.2f ms with "
                "60 pages (ratio %.2f); RSS %ld -> %ld kB during the drag\n",
                seconds, states, lag, fewest, alone, with, with / alone, rss_before, rss_after);
#if defined(__SANITIZE_ADDRESS__)
    (void)rss_before, (void)rss_after; // ASan's quarantine keeps freed memory: LeakSanitizer checks it there
#else
    EXPECT_LT(rss_after - rss_before, 5 * 1024) << "kB grown while a page read nothing";
#endif
}

// The server's memory is flat over 1,000 pages connecting and dropping (50 at a time), some
// closing cleanly, some vanishing.
TEST(Load, MemoryIsFlatOverAThousandConnectsAndDrops) {
    TempDir site{"attnviz-load"};
    site.write("index.html", "<html>the page</html>");
    FollowServer server;
    ServeConfig c;
    c.bind = "127.0.0.1";
    c.port = free_port();
    c.site_dir = site.path;
    c.per_address = 0;
    c.quiet = true;
    std::string error;
    ASSERT_TRUE(server.start(c, error)) << error;
    server.publish(state(1));
    auto round = [&](int n) {
        std::vector<WsClient> pages(50);
        std::string got;
        for (size_t i = 0; i < pages.size(); ++i) {
            ASSERT_TRUE(pages[i].connect("127.0.0.1", c.port)) << "round " << n;
            ASSERT_EQ(pages[i].read(got, 10000), 1);
            if (i % 5 == 0) pages[i].send(R"({"answer":{"page":"p)" + std::to_string(n * 50 + int(i)) + R"(","question":0,"choice":1}})");
        }
        for (size_t i = 0; i < pages.size(); ++i)
            if (i % 2) pages[i].close();
            else pages[i].send(std::string("\x03\xe8", 2), 8);
        pages.clear();
        ASSERT_TRUE(eventually([&] { return server.stats().clients == 0; }, 10000));
    };
    for (int r = 0; r < 4; ++r) round(r); // warm up: the allocator's pools, lws's tables
    const long before = rss_kb();
    for (int r = 4; r < 24; ++r) round(r);
    const long after = rss_kb();
    std::printf("load: RSS after 200 connects and drops %ld kB, after 1,200 %ld kB; answers waiting %zu\n", before, after,
                server.take_answers().size());
#if defined(__SANITIZE_ADDRESS__)
    (void)before, (void)after; // ASan's quarantine keeps freed memory: LeakSanitizer checks it there
#else
    EXPECT_LT(after - before, 5 * 1024) << "kB grown over 1,000 pages";
#endif
    EXPECT_EQ(server.stats().connected, 1200u);
}
