// test_soak.cpp: attnviz_harness --soak under xvfb-run: a short clean run, and proof that
// each of its checks fails when it should (a provoked GL error, memory kept on every frame),
// plus the harness's option errors, and that attnviz itself has no soak or frame benchmark.
// The full 20,000-frame run is the ctest test soak_full (label soak).
#include "gui_test_support.h"
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>

using namespace attnviz_gui_test;

namespace {

struct SoakRun {
    int status = -1;
    std::string out, err;
    nlohmann::json report; // the JSON line on stdout (null if none)
};

// ATTNVIZ_HARNESS_BIN --soak args under xvfb-run; stdout kept for the JSON line.
SoakRun run_soak(const std::string& args) {
    SoakRun r;
    const std::string err_path = temp_dir() + "/soak_stderr.txt", status_path = temp_dir() + "/soak_status.txt";
    std::remove(status_path.c_str());
    // The harness's own exit status goes through a file: xvfb-run replaces it by 5 when its
    // clean-up of its temporary directory fails (it does so now and then under load).
    const std::string cmd = "xvfb-run -a -s '-screen 0 1280x800x24' sh -c '\"$0\" \"$@\"; echo $? >" + status_path + "' '" +
                            std::string(ATTNVIZ_HARNESS_BIN) + "' " + args + " 2>'" + err_path + "'";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream st(status_path);
    int harness_status = 0;
    if (st >> harness_status) r.status = harness_status;
    std::ifstream in(err_path);
    std::stringstream ss;
    ss << in.rdbuf();
    // xvfb-run's own complaints (an occasional "problem while cleaning up temporary
    // directory" when it stops) are the wrapper's, not the soak's: only the harness's lines count.
    for (std::string line; std::getline(ss, line);)
        if (line.rfind("xvfb-run: ", 0) != 0) r.err += line + "\n";
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty() && line[0] == '{') r.report = nlohmann::json::parse(line, nullptr, false);
    return r;
}

int lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

} // namespace

TEST(Soak, ShortRunIsCleanAndReportsEveryField) {
    const SoakRun r = run_soak("--soak 600 --soak-seed 7");
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
    ASSERT_TRUE(r.report.is_object()) << r.out;
    const auto& j = r.report;
    EXPECT_EQ(j.at("frames").get<int>(), 600);
    EXPECT_EQ(j.at("seed").get<int>(), 7);
    EXPECT_EQ(j.at("warmup_frames").get<int>(), 60);
    EXPECT_EQ(j.at("gl_errors").get<int>(), 0);
    // Mesa's llvmpipe has KHR_debug: the callback, not only glGetError, watched the run.
    EXPECT_TRUE(j.at("gl_debug_output").get<bool>());
    EXPECT_GT(j.at("rss_mb_after_warmup").get<double>(), 0);
    EXPECT_GT(j.at("rss_mb_end").get<double>(), 0);
    EXPECT_LE(j.at("rss_growth_mb").get<double>(), 5.0);
    EXPECT_NEAR(j.at("rss_growth_mb").get<double>(),
                j.at("rss_mb_end").get<double>() - j.at("rss_mb_after_warmup").get<double>(), 0.011);
    EXPECT_GE(j.at("rss_peak_mb").get<double>(), j.at("rss_mb_end").get<double>());
    // The script reached the invalid edits and the size edits (each refused / applied as expected,
    // or the run would have failed).
    EXPECT_GT(j.at("refused_edits").get<int>(), 0);
    EXPECT_GT(j.at("config_edits").get<int>(), 6);
}

TEST(Soak, CountsAProvokedGlError) {
    const SoakRun r = run_soak("--soak 200 --soak-fault gl-error");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("OpenGL error"), std::string::npos) << r.err;
    ASSERT_TRUE(r.report.is_object()) << r.out;
    EXPECT_GE(r.report.at("gl_errors").get<int>(), 1);
}

TEST(Soak, ReportsMemoryKeptEveryFrame) {
    // 512 KB kept per frame after warm-up: about 135 MB over 270 frames, far above the tens of
    // MB by which RSS can shrink or grow on its own as the allocator returns or keeps memory.
    const SoakRun r = run_soak("--soak 300 --soak-fault leak");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("resident memory grew"), std::string::npos) << r.err;
    ASSERT_TRUE(r.report.is_object()) << r.out;
    EXPECT_GT(r.report.at("rss_growth_mb").get<double>(), 5.0);
    EXPECT_EQ(r.report.at("gl_errors").get<int>(), 0);
}

TEST(Soak, BadOptionsAreOneSentenceAndStatus2) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"--soak", "0"},
             {"--soak", "many"},
             {"--soak", "-5"},
             {"--soak-seed", "3"},
             {"--soak", "10", "--soak-seed", "x"},
             {"--soak", "10", "--soak-fault", "crash"},
             {"--soak", "10", "--bench-frames", "5"},
             {"--soak", "10", "--screenshot", "/tmp/attnviz_soak_never.png"},
             {"--bench-frames", "0"},
             {"--bench-frames", "5", "--screenshot", "/tmp/attnviz_soak_never.png"},
             {"--view", "walk"}, // no mode
         }) {
        // With DISPLAY unset: refused before any window opens.
        const RunResult r = run_harness(args, true);
        std::string joined;
        for (const auto& a : args) joined += a + " ";
        EXPECT_EQ(r.status, 2) << joined << r.err;
        EXPECT_EQ(r.err_lines(), 1) << joined << r.err;
        EXPECT_EQ(r.err.find("DISPLAY"), std::string::npos) << joined << " was not checked before the display:\n" << r.err;
    }
}

// The shipped binary holds the product: the soak and the frame benchmark are unknown options
// there, refused as any other with one sentence that names them.
TEST(Soak, AttnvizItselfHasNoHarnessOptions) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"--soak", "10"}, {"--bench-frames", "5"}, {"--soak-seed", "3"}, {"--soak-fault", "leak"}}) {
        const RunResult r = run_direct(args, true);
        EXPECT_EQ(r.status, 2) << args[0] << ": " << r.err;
        EXPECT_EQ(r.err_lines(), 1) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find(args[0]), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("is not a command or option"), std::string::npos) << r.err;
    }
}
