// test_probes_out.cpp: the test probes (--keys, --layout-out; tests/harness/screenshot_probes.h)
// are attnviz_harness's, not the shipped attnviz's: its help names neither, and it refuses
// them as any unknown option (the symbols: tests/layers/check_no_probes.cmake).
#include "run_attnviz.h"
#include <gtest/gtest.h>

using attnviz_test::expect_usage_error;
using attnviz_test::run_attnviz;
using attnviz_test::RunResult;

TEST(ProbesOut, HelpNamesNoTestOption) {
    RunResult top = run_attnviz({"--help"});
    EXPECT_EQ(top.status, 0) << top.err;
    EXPECT_NE(top.out.find("--screenshot"), std::string::npos) << top.out; // the window's options are listed
    for (std::vector<std::string> args : {std::vector<std::string>{"--help"}, {"lesson", "--help"}, {"trace", "--help"},
                                          {"generate", "--help"}, {"patch", "--help"}}) {
        RunResult r = run_attnviz(args);
        EXPECT_EQ(r.status, 0) << args[0] << "\n" << r.err;
        for (const char* probe : {"--keys", "--layout-out", "--follow-stdin", "--bench-frames", "--soak"})
            EXPECT_EQ(r.out.find(probe), std::string::npos) << probe << " in attnviz " << args[0] << ":\n" << r.out;
    }
}

TEST(ProbesOut, RefusedAsAnyUnknownOption) {
    expect_usage_error({"--keys", "a", "--screenshot", "x.png"}, "--keys a");
    expect_usage_error({"--keys", "a", "--screenshot", "x.png"}, "is not a command or option");
    expect_usage_error({"--layout-out", "x.json", "--screenshot", "x.png"}, "--layout-out x.json");
}
