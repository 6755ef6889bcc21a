// test_answers.cpp: the class's answers to the check view's questions: the server takes them
// off the socket (follow_server.h) and the window counts them (class_answers.h, counted as
// serve_link.cpp does). A page's answer counts once per question (its latest replaces its
// earlier one), only answers to a question's choices count, one page per connection, a clear
// forgets the answers and tells every page; and the real window (attnviz_harness --serve
// --follow-stdin under xvfb-run) shows the same counts in the check view.
#include "check_questions.h"
#include "class_answers.h"
#include "follow_server.h"
#include "serve_link.h"
#include "common/temp_dir.h"
#include "ws_client.h"
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

using attnviz::FollowServer;
using attnviz::ServeConfig;
using attnviz_test::free_port;
using attnviz_test::eventually;
using attnviz_test::WsClient;
using Clock = std::chrono::steady_clock;
using Counts = std::vector<std::vector<int>>;

namespace {

struct SiteDir {
    attnviz_test::TempDir tmp{"attnviz-answers"};
    std::string root = tmp.path;
    SiteDir() { tmp.write("index.html", "<html>the page</html>"); }
};

std::string answer(const std::string& page, int q, int c) {
    return nlohmann::json{{"answer", {{"page", page}, {"question", q}, {"choice", c}}}}.dump();
}

// A page: connected, with the teacher's first state read.
void join(WsClient& p, int port) {
    std::string got;
    ASSERT_TRUE(p.connect("127.0.0.1", port));
    ASSERT_EQ(p.read(got, 10000), 1);
}

struct Server {
    SiteDir site;
    FollowServer server;
    ServeConfig c;
    attnviz::ClassAnswers tally; // as the window keeps it (s.follow.answers)
    // The counts once the window took what the server received (serve_after_frame does it).
    Counts counts() {
        attnviz::count_answers(server, tally);
        return tally.counts();
    }
    size_t pages() {
        attnviz::count_answers(server, tally);
        return tally.size();
    }
    explicit Server(std::vector<int> choices, int max_clients = 60) {
        tally.reset(choices, size_t(3 * max_clients));
        c.bind = "127.0.0.1";
        c.port = free_port();
        c.site_dir = site.root;
        c.quiet = true;
        c.max_clients = max_clients;
        c.per_address = 0;  // every page here comes from 127.0.0.1
        c.rate = c.burst = 1000; // these pages send many messages at once; the rate has its own test
        c.choices = std::move(choices);
        std::string error;
        EXPECT_TRUE(server.start(c, error)) << error;
        server.publish(R"({"view":"check"})");
    }
};

} // namespace

TEST(Answers, EachPageCountsOncePerQuestionWithItsLatestChoice) {
    Server s({4, 3});
    EXPECT_EQ(s.counts(), (Counts{{0, 0, 0, 0}, {0, 0, 0}}));
    WsClient a, b, c;
    join(a, s.c.port);
    join(b, s.c.port);
    join(c, s.c.port);
    ASSERT_TRUE(a.send(answer("page-a", 0, 0)));
    ASSERT_TRUE(b.send(answer("page-b", 0, 2)));
    ASSERT_TRUE(c.send(answer("page-c", 0, 0)));
    ASSERT_TRUE(c.send(answer("page-c", 1, 1)));
    EXPECT_TRUE(eventually([&] { return s.counts() == Counts{{2, 0, 1, 0}, {0, 1, 0}}; }));
    // b changes its mind: its earlier choice no longer counts.
    ASSERT_TRUE(b.send(answer("page-b", 0, 0)));
    EXPECT_TRUE(eventually([&] { return s.counts() == Counts{{3, 0, 0, 0}, {0, 1, 0}}; }));
    // A page that leaves (a laptop that sleeps) still counts; it comes back as the same page.
    a.close();
    WsClient a2;
    join(a2, s.c.port);
    ASSERT_TRUE(a2.send(answer("page-a", 0, 3)));
    EXPECT_TRUE(eventually([&] { return s.counts() == Counts{{2, 0, 0, 1}, {0, 1, 0}}; }));
    EXPECT_EQ(s.server.stats().answers, 6u);
    EXPECT_EQ(s.server.stats().ignored, 0u);
}

TEST(Answers, OnlyAnswersToAQuestionsChoicesCount) {
    Server s({4, 3});
    WsClient p;
    join(p, s.c.port);
    const std::vector<std::string> bad = {
        answer("p", 2, 0),                                          // no question 2
        answer("p", -1, 0),                                         // nor -1
        answer("p", 1, 3),                                          // question 1 has 3 choices
        answer("p", 0, -1),                                         //
        answer("", 0, 0),                                           // no page ID
        answer(std::string(41, 'x'), 0, 0),                         // too long
        answer("a b", 0, 0),                                        // not letters, digits, - or _
        R"({"answer":{"page":"p","question":"0","choice":0}})",     // a string, not a number
        R"({"answer":{"page":"p","question":0.5,"choice":0}})",     // not an integer
        R"({"answer":{"page":"p","question":0,"choice":0,"x":1}})", // more than an answer
        R"({"answer":{"page":"p","question":0,"choice":0},"view":"walk"})",
        R"({"answer":[0,0]})",
        R"({"view":"walk"})",
    };
    for (const std::string& m : bad) ASSERT_TRUE(p.send(m));
    ASSERT_TRUE(p.send("{\"answer\":"));  // malformed
    ASSERT_TRUE(p.send(answer("p", 1, 2))); // the one good one
    EXPECT_TRUE(eventually([&] { return s.server.stats().answers == 1 && s.server.stats().ignored == bad.size(); }))
        << "answers " << s.server.stats().answers << " ignored " << s.server.stats().ignored;
    EXPECT_EQ(s.server.stats().malformed, 1u);
    EXPECT_EQ(s.counts(), (Counts{{0, 0, 0, 0}, {0, 0, 1}}));
    // One page per connection: after "p", this connection cannot answer as another page.
    ASSERT_TRUE(p.send(answer("q", 0, 1)));
    EXPECT_TRUE(eventually([&] { return s.server.stats().ignored == bad.size() + 1; }));
    EXPECT_EQ(s.counts(), (Counts{{0, 0, 0, 0}, {0, 0, 1}}));
}

TEST(Answers, PagesThatLeftAreCappedTheOldestGoingFirst) {
    Server s({2}, 2);
    // 3 × max_clients (6) pages that left keep their answers; the 7th that leaves pushes out
    // the first, so a script that comes and goes cannot freeze the count.
    for (int i = 0; i < 10; ++i) {
        WsClient p;
        join(p, s.c.port);
        ASSERT_TRUE(p.send(answer("page" + std::to_string(i), 0, i % 2)));
        ASSERT_TRUE(eventually([&] { return s.server.stats().answers == uint64_t(i + 1); }));
        p.close();
        ASSERT_TRUE(eventually([&] { return s.server.stats().clients == 0; }));
    }
    ASSERT_TRUE(eventually([&] { return s.counts() == Counts{{3, 3}}; })); // pages 4 to 9
    EXPECT_EQ(s.pages(), 6u);
    // A connected page's answer is never pushed out, however many leave after it.
    WsClient stay;
    join(stay, s.c.port);
    ASSERT_TRUE(stay.send(answer("stays", 0, 0)));
    for (int i = 10; i < 20; ++i) {
        WsClient p;
        join(p, s.c.port);
        ASSERT_TRUE(p.send(answer("page" + std::to_string(i), 0, 1)));
        ASSERT_TRUE(eventually([&] { return s.server.stats().answers == uint64_t(i + 2); }));
        p.close();
        ASSERT_TRUE(eventually([&] { return s.server.stats().clients == 1; }));
    }
    EXPECT_EQ(s.counts(), (Counts{{1, 6}}));
    EXPECT_EQ(s.pages(), 7u);
}

TEST(Answers, AClearForgetsTheAnswersAndTellsEveryPage) {
    Server s({4, 3});
    WsClient a, b;
    join(a, s.c.port);
    join(b, s.c.port);
    ASSERT_TRUE(a.send(answer("a", 0, 1)));
    ASSERT_TRUE(a.send(answer("a", 1, 2)));
    ASSERT_TRUE(b.send(answer("b", 0, 1)));
    ASSERT_TRUE(eventually([&] { return s.counts() == Counts{{0, 2, 0, 0}, {0, 0, 1}}; }));
    s.server.clear_answers(0);
    EXPECT_EQ(s.counts(), (Counts{{0, 0, 0, 0}, {0, 0, 1}}));
    std::string got;
    for (WsClient* p : {&a, &b}) {
        ASSERT_EQ(p->read(got, 10000), 1);
        EXPECT_EQ(got, R"({"answers_cleared":0})");
    }
    // The state still follows after a clear, and a page that answers again counts again.
    s.server.publish(R"({"view":"walk"})");
    for (WsClient* p : {&a, &b}) {
        ASSERT_EQ(p->read(got, 10000), 1);
        EXPECT_EQ(got, R"({"view":"walk"})");
    }
    ASSERT_TRUE(b.send(answer("b", 0, 3)));
    EXPECT_TRUE(eventually([&] { return s.counts() == Counts{{0, 0, 0, 1}, {0, 0, 1}}; }));
    // Every question: one message per question; a page that joins later is told nothing.
    s.server.clear_answers(-1);
    EXPECT_EQ(s.counts(), (Counts{{0, 0, 0, 0}, {0, 0, 0}}));
    for (const char* want : {R"({"answers_cleared":0})", R"({"answers_cleared":1})"}) {
        ASSERT_EQ(a.read(got, 10000), 1);
        EXPECT_EQ(got, want);
    }
    // (Its first message is the state, and the next one the next state: no clear between.)
    WsClient late;
    ASSERT_TRUE(late.connect("127.0.0.1", s.c.port));
    ASSERT_EQ(late.read(got, 10000), 1);
    EXPECT_EQ(got, R"({"view":"walk"})");
    // Out of range: nothing happens; a's next message is the next state.
    s.server.clear_answers(2);
    s.server.clear_answers(-3);
    s.server.publish(R"({"view":"scores"})");
    for (WsClient* p : {&late, &a}) {
        ASSERT_EQ(p->read(got, 10000), 1);
        EXPECT_EQ(got, R"({"view":"scores"})");
    }
}

// The window: attnviz_harness --serve --follow-stdin in the check view. Pages answer; the
// window's check view has the counts ("answers" prints what it holds), and draws them.
TEST(Answers, TheTeachersCheckViewShowsTheClassAnswers) {
    SiteDir site;
    const int port = free_port();
    std::vector<std::string> args = {"xvfb-run", "-a", ATTNVIZ_HARNESS_BIN, "--serve", "--port", std::to_string(port),
                                     "--bind", "127.0.0.1", "--no-code", "--site", site.root, "--follow-stdin", "--view", "check",
                                     "--size", "1280x800"};
    int in[2], out[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawnp(&pid, "xvfb-run", &fa, &attr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    ::close(out[1]);
    ::fcntl(out[0], F_SETFL, ::fcntl(out[0], F_GETFL) | O_NONBLOCK);
    std::string pending;
    // The window's next stdout line that starts with `prefix` ("" when none within 10 s).
    auto line_with = [&](const std::string& prefix) {
        const auto end = Clock::now() + std::chrono::seconds(10);
        while (Clock::now() < end) {
            for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
                const std::string l = pending.substr(0, nl);
                pending.erase(0, nl + 1);
                if (l.rfind(prefix, 0) == 0) return l;
            }
            char buf[512];
            const ssize_t n = ::read(out[0], buf, sizeof buf);
            if (n > 0) pending.append(buf, size_t(n));
            else std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return std::string();
    };
    auto say = [&](const std::string& l) { return ::write(in[1], (l + "\n").data(), l.size() + 1) == ssize_t(l.size() + 1); };

    std::vector<WsClient> pages(3);
    // Refused at once until the window listens; then the handshake has a generous deadline.
    const bool up = eventually([&] { return pages[0].connect("127.0.0.1", port, "/follow", "attnviz-follow", 10000); }, 60000);
    std::string got, counts;
    if (up) {
        EXPECT_EQ(pages[0].read(got, 10000), 1);
        for (size_t i = 1; i < pages.size(); ++i) join(pages[i], port);
        EXPECT_TRUE(pages[0].send(answer("a", 0, 0)));
        EXPECT_TRUE(pages[1].send(answer("b", 0, 0)));
        EXPECT_TRUE(pages[2].send(answer("c", 0, 2)));
        EXPECT_TRUE(pages[2].send(answer("c", 3, 1)));
        const std::string want = "answers 2,0,1,0 0,0,0 0,0,0 0,1,0 0,0,0,0 0,0,0,0";
        eventually([&] { return say("answers") && (counts = line_with("answers ")) == want; }, 10000);
        EXPECT_EQ(counts, want);
        // The check view draws them: a bar per choice of question 1, as long as its count.
        const std::string shot = site.root + "/check.png";
        EXPECT_TRUE(say("hide-address"));
        EXPECT_NE(line_with("published "), "");
        EXPECT_TRUE(say("screenshot " + shot));
        EXPECT_EQ(line_with("shot "), "shot " + shot);
        std::ifstream lf(shot + ".json");
        const nlohmann::json layout = nlohmann::json::parse(lf, nullptr, false);
        std::vector<double> value(4, -1), width(4, -1);
        if (layout.is_object() && layout.contains("items"))
            for (const nlohmann::json& it : layout["items"])
                if (it.value("kind", "") == "bar" && it.value("name", "") == "answers" && it.value("head", -1) == 0) {
                    const int c = it.value("position", -1);
                    if (c >= 0 && c < 4) value[size_t(c)] = it.value("value", -1.0), width[size_t(c)] = it.value("w", -1.0);
                }
        EXPECT_EQ(value, (std::vector<double>{2, 0, 1, 0})) << layout.dump().substr(0, 400);
        EXPECT_GT(width[0], 2 * width[2] - 2); // the longest bar is the most chosen choice's
        EXPECT_GT(width[2], 0);
        EXPECT_EQ(width[1], 0);
        // Clear question 0, as the view's button: its counts go, question 3's stay.
        EXPECT_TRUE(say("clear 0"));
        EXPECT_NE(line_with("published "), "");
        eventually([&] { return say("answers") && (counts = line_with("answers ")) == "answers 0,0,0,0 0,0,0 0,0,0 0,1,0 0,0,0,0 0,0,0,0"; },
                   10000);
        EXPECT_EQ(counts, "answers 0,0,0,0 0,0,0 0,0,0 0,1,0 0,0,0,0 0,0,0,0");
        if (const char* keep = std::getenv("ATTNVIZ_KEEP_SHOT"))
            std::system(("cp " + shot + " " + keep).c_str());
    }
    say("quit");
    ::close(in[1]);
    const auto end = Clock::now() + std::chrono::seconds(10);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0 && Clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ::kill(-pid, SIGTERM);
    ::waitpid(pid, &status, 0);
    ::close(out[0]);
    ASSERT_TRUE(up) << "attnviz_harness --serve did not listen on port " << port;
    EXPECT_EQ(attnviz::check_question_choices(), (std::vector<int>{4, 3, 3, 3, 4, 4}));
}
