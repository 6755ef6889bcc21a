// test_options.cpp: the window's options - bad values and no display - exit 2 with one
// sentence, checked before any window opens.
#include "gui_test_support.h"
#include <gtest/gtest.h>

using namespace attnviz_gui_test;

TEST(NoDisplay, SaysToUseXvfbRunAndExits2) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{}, std::vector<std::string>{"--screenshot", temp_dir() + "/never.png"}}) {
        RunResult r = run_direct(args, true);
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_EQ(r.err_lines(), 1) << r.err;
        EXPECT_NE(r.err.find("xvfb-run"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("DISPLAY"), std::string::npos) << r.err;
    }
}

TEST(BadOptions, OneSentenceAndStatus2BeforeAnyWindow) {
    const std::vector<std::vector<std::string>> cases = {
        {"--size", "10x10"},         {"--size", "wide"},          {"--size", "1280x"},
        {"--view", "heads"},         {"--step", "12"},            {"--step", "-1"},
        {"--step", "two"},           {"--strength", "1.5"},       {"--strength", "nan"},
        {"--strength", "-0.1"},      {"--perturb", "4"},          {"--perturb", "-1"},
        {"--theme", "pink"},         {"--font-scale", "9"},
        {"--n-embd", "10", "--n-head", "3"},
        {"--seq-len", "8192", "--n-embd", "8192", "--n-head", "256"},
    };
    for (const auto& args : cases) {
        // With DISPLAY unset, the option must be refused first: the message names it.
        RunResult r = run_direct(args, true);
        std::string joined;
        for (const auto& a : args) joined += a + " ";
        EXPECT_EQ(r.status, 2) << joined << "\n" << r.err;
        EXPECT_EQ(r.err_lines(), 1) << joined << "\n" << r.err;
        EXPECT_EQ(r.err.find("DISPLAY"), std::string::npos) << joined << " was not checked before the display:\n" << r.err;
    }
}

// --keys and --layout-out are the harness's probes (tests/harness/screenshot_probes.h):
// attnviz refuses them as any unknown option; the harness checks them before any window.
TEST(BadOptions, ProbesAreTheHarnesssOnly) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--keys", "a", "--screenshot", temp_dir() + "/never.png"},
          std::vector<std::string>{"--layout-out", "x.json", "--screenshot", temp_dir() + "/never.png"}}) {
        RunResult r = run_direct(args, true);
        EXPECT_EQ(r.status, 2) << args[0] << "\n" << r.err;
        EXPECT_EQ(r.err_lines(), 1) << args[0] << "\n" << r.err;
        EXPECT_NE(r.err.find("is not a command or option"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("DISPLAY"), std::string::npos) << r.err;
    }
    for (const char* option : {"--keys", "--layout-out"}) {
        RunResult r = run_harness({option, "x", "--view", "walk"}, true);
        EXPECT_EQ(r.status, 2) << option << "\n" << r.err;
        EXPECT_EQ(r.err_lines(), 1) << option << "\n" << r.err;
        EXPECT_NE(r.err.find(std::string(option) + " needs --screenshot"), std::string::npos) << r.err;
    }
}

TEST(BadOptions, UnwritableScreenshotPathExits2) {
    RunResult r = run_headless({"--screenshot", "/nonexistent-dir/x.png"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("/nonexistent-dir/x.png"), std::string::npos) << r.err;
}
