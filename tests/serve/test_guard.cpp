// test_guard.cpp: the door's small rules alone (follow_guard.h) and the window's tally of the
// answers (src/state/class_answers.h): escaping, the log's counts per kind, Host and Origin names, the class
// code's alphabet, the rate, and a table bounded by the connected pages plus the oldest that
// left going first.
#include "class_answers.h"
#include "follow_guard.h"
#include "serve_address.h"
#include <chrono>
#include <gtest/gtest.h>
#include <set>

using namespace attnviz;

TEST(Guard, LogLinesEscapeEveryByteThatIsNotPrintable) {
    EXPECT_EQ(log_escaped("/\x1b[2J\x07ok\\"), "/\\x1b[2J\\x07ok\\x5c");
    EXPECT_EQ(log_escaped(std::string("a\0b\xff\n", 5)), "a\\x00b\\xff\\x0a");
    EXPECT_EQ(log_escaped(std::string(300, 'x'), 10), "xxxxxxxxxx...");
}

TEST(Guard, RepeatedLinesAreCountedPerKindAndSaidOnceASecond) {
    std::vector<std::string> out;
    LogLimiter logs([&](const std::string& l) { out.push_back(l); });
    for (int i = 0; i < 5; ++i) logs.line("path", "refused /x" + std::to_string(i));
    logs.line("host", "refused a Host"); // another kind is never hidden by the first
    EXPECT_EQ(out, (std::vector<std::string>{"refused /x0", "refused a Host"}));
    logs.tick();
    EXPECT_EQ(out.back(), "4 more like this: path");
    logs.line("path", "refused /y");
    EXPECT_EQ(out.back(), "refused /y");
    logs.tick();
    EXPECT_EQ(out.size(), 4u); // nothing held back: no count line
}

TEST(Guard, HostsAndOrigins) {
    const std::vector<std::string> own = {"127.0.0.1", "localhost", "10.0.0.7", "Laptop", "laptop.school.lan"};
    for (const char* ok : {"127.0.0.1", "127.0.0.1:8642", "LOCALHOST:80", "10.0.0.7:8642", "laptop", "laptop.school.lan.",
                           "Laptop.School.Lan:9000"})
        EXPECT_TRUE(host_allowed(ok, own)) << ok;
    for (const char* bad : {"", "evil.example", "10.0.0.70", "10.0.0.7:x", "127.0.0.1:80:80", "laptop.school.lan.evil",
                            "127.0.0.1\x1b", "[::1]:80"})
        EXPECT_FALSE(host_allowed(bad, own)) << bad;
    EXPECT_EQ(host_name_of("[::1]:8642"), "::1");
    EXPECT_TRUE(origin_matches("http://10.0.0.7:8642", "10.0.0.7:8642"));
    EXPECT_TRUE(origin_matches("HTTPS://Laptop:8642", "laptop:8642"));
    EXPECT_FALSE(origin_matches("http://evil.example", "10.0.0.7:8642"));
    EXPECT_FALSE(origin_matches("http://10.0.0.7:8643", "10.0.0.7:8642"));
    EXPECT_FALSE(origin_matches("null", "10.0.0.7:8642"));
    EXPECT_FALSE(origin_matches("", ""));
    ServeConfig c;
    std::string error;
    EXPECT_TRUE(parse_serve_limits("0", {"laptop.school.lan"}, c, error)) << error;
    EXPECT_EQ(c.per_address, 0);
    EXPECT_FALSE(parse_serve_limits("", {"laptop:8642"}, c, error));
    EXPECT_NE(error.find("--allow-host 'laptop:8642' is not a host name"), std::string::npos) << error;
    EXPECT_FALSE(parse_serve_limits("-1", {}, c, error));
    EXPECT_NE(error.find("--per-address '-1' is not a number of pages"), std::string::npos) << error;
    EXPECT_EQ(url_with_code("http://10.0.0.7:8642/", "ACD347"), "http://10.0.0.7:8642/?code=ACD347");
}

TEST(Guard, ClassCodesHaveNoLookAlikes) {
    std::set<std::string> seen;
    for (int i = 0; i < 200; ++i) {
        const std::string code = make_class_code();
        ASSERT_EQ(code.size(), code_length);
        for (char ch : code) {
            EXPECT_EQ(std::string("0O1IL2Z5S8B").find(ch), std::string::npos) << code;
            EXPECT_NE(std::string(code_alphabet).find(ch), std::string::npos) << code;
        }
        seen.insert(code);
    }
    EXPECT_GT(seen.size(), 190u); // random: 25^6 codes
    EXPECT_EQ(normalized_code("acd-347 "), "ACD347");
}

TEST(Guard, TheRateIsAFewMessagesASecond) {
    RateLimit r(5, 10);
    const auto t0 = std::chrono::steady_clock::now();
    int taken = 0;
    for (int i = 0; i < 100; ++i) taken += r.take(t0);
    EXPECT_EQ(taken, 10); // the burst
    EXPECT_TRUE(r.take(t0 + std::chrono::milliseconds(250))); // 5 a second after it
    EXPECT_FALSE(r.take(t0 + std::chrono::milliseconds(260)));
}

TEST(Guard, TheClassAnswersAreBoundedAndKeepConnectedPages) {
    attnviz::ClassAnswers t;
    t.reset({2, 3}, 3);
    EXPECT_TRUE(t.answer(1, "a", 0, 1));
    EXPECT_FALSE(t.answer(1, "b", 0, 1)); // one page per connection
    EXPECT_FALSE(t.answer(2, "a", 0, 0)); // a's ID while a is connected
    EXPECT_FALSE(t.answer(2, "c", 0, 2)); // no choice 2
    EXPECT_FALSE(t.answer(2, "c", 2, 0)); // no question 2
    // Pages 2..9 answer and leave: 3 of them stay, the last three.
    for (uint64_t conn = 2; conn < 10; ++conn) {
        ASSERT_TRUE(t.answer(conn, "p" + std::to_string(conn), 0, 0));
        t.dropped(conn);
    }
    EXPECT_EQ(t.size(), 4u); // a (connected) and p7, p8, p9
    EXPECT_EQ(t.counts()[0], (std::vector<int>{3, 1}));
    // A page that left comes back under its ID, on a new connection, and changes its mind.
    EXPECT_TRUE(t.answer(20, "p8", 0, 1));
    EXPECT_EQ(t.counts()[0], (std::vector<int>{2, 2}));
    EXPECT_EQ(t.total(0), 4);
    EXPECT_EQ(t.most(0), 2);
    EXPECT_EQ(t.total(2), 0); // no question 2
    EXPECT_EQ(t.dropped_count(), 2u);
    // Many churns later the table is still bounded, and a's answer is still there.
    for (uint64_t conn = 100; conn < 1100; ++conn) {
        ASSERT_TRUE(t.answer(conn, "q" + std::to_string(conn), 1, 2));
        t.dropped(conn);
    }
    EXPECT_EQ(t.size(), 5u); // a, p8 (connected) and three that left
    EXPECT_EQ(t.counts()[0], (std::vector<int>{0, 2}));
    EXPECT_EQ(t.counts()[1], (std::vector<int>{0, 0, 3}));
    t.clear(-1);
    EXPECT_EQ(t.counts()[1], (std::vector<int>{0, 0, 0}));
}
