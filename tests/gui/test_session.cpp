// test_session.cpp: --save-session writes the state a screenshot showed, --open brings it
// back pixel for pixel; bad session files are one sentence and exit status 2.
#include "gui_test_support.h"
#include <fstream>
#include <gtest/gtest.h>

using namespace attnviz_gui_test;

TEST(Session, SaveThenOpenGivesTheSamePicture) {
    const std::string dir = temp_dir(), file = dir + "/state.json";
    RunResult a = run_headless({"--view", "causality", "--perturb", "1", "--strength", "0.37", "--theme", "light",
                                "--seed", "3", "--n-embd", "12", "--n-head", "3", "--seq-len", "5",
                                "--screenshot", dir + "/sess_a.png", "--save-session", file});
    ASSERT_EQ(a.status, 0) << a.err;
    RunResult b = run_headless({"--open", file, "--screenshot", dir + "/sess_b.png"});
    ASSERT_EQ(b.status, 0) << b.err;
    const Image ia = load_png(dir + "/sess_a.png"), ib = load_png(dir + "/sess_b.png");
    ASSERT_GT(ia.w, 0);
    ASSERT_EQ(ia.w, ib.w);
    ASSERT_EQ(ia.h, ib.h);
    EXPECT_EQ(ia.rgba, ib.rgba);
    // And the picture really is a different state from the default one.
    RunResult c = run_headless({"--screenshot", dir + "/sess_c.png"});
    ASSERT_EQ(c.status, 0) << c.err;
    EXPECT_GT(differing_fraction(ia, load_png(dir + "/sess_c.png")), 0.05);
}

TEST(Session, BadOrNewerFilesExitTwoWithOneSentence) {
    const std::string dir = temp_dir();
    const std::string bad = dir + "/bad.json", newer = dir + "/newer.json";
    std::ofstream(bad) << "{ not json";
    std::ofstream(newer) << "{\"attnviz_session\": 99}";
    for (const std::string& f : {bad, newer, dir + "/missing.json"}) {
        RunResult r = run_direct({"--open", f, "--screenshot", dir + "/never.png"}, false);
        EXPECT_EQ(r.status, 2) << f << ": " << r.err;
        EXPECT_EQ(r.err_lines(), 1) << r.err;
        EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
    }
}
