// test_bad_input.cpp: every kind of bad input gets exit status 2 and exactly one line on
// stderr that names the offending value; --help and --version exit 0.
#include "run_attnviz.h"
#include "sanitizers/lsan_tracer.h"
#include <gtest/gtest.h>
#include <sys/stat.h>

using attnviz_test::run_attnviz;
using attnviz_test::RunResult;
using attnviz_test::TempDir;

namespace {

struct BadInput {
    std::vector<std::string> args;
    std::string must_contain; // the offending value, or the sentence itself
};

void expect_usage_error(const BadInput& b) {
    RunResult r = run_attnviz(b.args);
    std::string shown;
    for (const std::string& a : b.args) shown += a + " ";
    EXPECT_EQ(r.status, 2) << shown << "\nstderr: " << r.err;
    EXPECT_EQ(r.err_lines(), 1) << shown << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find(b.must_contain), std::string::npos) << shown << "\nstderr: " << r.err;
    EXPECT_EQ(r.out, "") << shown;
}

} // namespace

TEST(BadInput, HeadsThatDoNotDivideC) {
    expect_usage_error({{"trace", "--n-embd", "10", "--n-head", "3"},
                        "n_embd 10 is not divisible by n_head 3; n_head can be 1, 2, 5 or 10"});
    expect_usage_error({{"trace", "--n-embd", "8", "--n-head", "16"}, "n_head 16"});
}

TEST(BadInput, ZeroAndNegativeSizes) {
    for (const char* opt : {"--n-embd", "--n-head", "--seq-len"})
        for (const char* v : {"0", "-4"}) expect_usage_error({{"trace", opt, v}, v});
    expect_usage_error({{"trace", "--seed", "-1"}, "-1"});
}

TEST(BadInput, PerturbOutsideThePositions) {
    expect_usage_error({{"trace", "--perturb", "4"}, "--perturb 4"});
    expect_usage_error({{"trace", "--seq-len", "6", "--perturb", "6"}, "6"});
    expect_usage_error({{"trace", "--perturb", "-1"}, "-1"});
    expect_usage_error({{"bench", "--perturb", "9"}, "9"});
    expect_usage_error({{"export", "--tensor", "y", "--out", "y.npy", "--perturb", "4"}, "4"});
}

TEST(BadInput, UnknownNames) {
    expect_usage_error({{"trace", "--mask", "diagonal"}, "diagonal"});
    expect_usage_error({{"trace", "--scale", "sqrt"}, "sqrt"});
    expect_usage_error({{"trace", "--kernel", "gpu"}, "gpu"});
    expect_usage_error({{"bench", "--kernel", "blas"}, "blas"});
}

TEST(BadInput, ValuesThatAreNotNumbers) {
    expect_usage_error({{"trace", "--seed", "abc"}, "abc"});
    expect_usage_error({{"trace", "--n-embd", "8.5"}, "8.5"});
    expect_usage_error({{"trace", "--seq-len", "1e3"}, "1e3"});
    expect_usage_error({{"trace", "--n-head", ""}, "--n-head"});
    expect_usage_error({{"trace", "--n-embd", " 8"}, "8"});
    expect_usage_error({{"trace", "--seed", "99999999999999999999999"}, "99999999999999999999999"});
    expect_usage_error({{"bench", "--repeat", "x"}, "x"});
    expect_usage_error({{"bench", "--repeat", "0"}, "0"});
    expect_usage_error({{"export", "--tensor", "y", "--out", "y.npy", "--perturb", "1", "--strength", "half"},
                        "half"});
    expect_usage_error({{"export", "--tensor", "y", "--out", "y.npy", "--perturb", "1", "--strength", "2"}, "2"});
    expect_usage_error({{"export", "--tensor", "y", "--out", "y.npy", "--perturb", "1", "--strength", "nan"},
                        "nan"});
}

TEST(BadInput, SizesOverTheMemoryCap) {
    RunResult r = run_attnviz({"trace", "--seq-len", "8192", "--n-embd", "8192", "--n-head", "256"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find("8192"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("cap"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("GiB"), std::string::npos) << r.err; // the estimate and the cap, in units
    expect_usage_error({{"trace", "--n-embd", "9000"}, "9000"});
    expect_usage_error({{"trace", "--seq-len", "100000"}, "100000"});
}

TEST(BadInput, UnknownOptionsCommandsAndMissingValues) {
    expect_usage_error({{"trace", "--frobnicate"}, "--frobnicate"});
    expect_usage_error({{"frobnicate"}, "frobnicate"});
    expect_usage_error({{"lesson", "extra"}, "extra"});
    expect_usage_error({{"lesson", "--seed", "1"}, "--seed"});
    expect_usage_error({{"trace", "--seed"}, "--seed"});
    expect_usage_error({{"trace", "--intermediates=maybe"}, "maybe"});
    expect_usage_error({{"export", "--tensor"}, "--tensor"});
}

TEST(BadInput, MessagesPointAtTheCommandsHelp) {
    RunResult r = run_attnviz({"bench", "--sequence", "4"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("attnviz bench --help"), std::string::npos) << r.err;
    r = run_attnviz({"tarce"});
    EXPECT_NE(r.err.find("lesson, trace, bench, export, save-weights, train, heads, tokenize, get, generate or patch"), std::string::npos) << r.err;
    r = run_attnviz({"save-weights"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("save-weights needs FILE; see attnviz save-weights --help"), std::string::npos) << r.err;
}

TEST(Options, AnOptionGivenTwiceTakesItsLastValue) {
    RunResult r = run_attnviz({"trace", "--seed", "1", "--seed", "7"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["seed"], 7);
}

TEST(BadInput, ExportNamesPathsAndStrength) {
    TempDir dir;
    expect_usage_error({{"export", "--tensor", "attention", "--out", dir.path + "/a.npy"}, "attention"});
    expect_usage_error({{"export", "--tensor", "y", "--out", dir.path + "/y.txt"}, "y.txt"});
    expect_usage_error({{"export", "--tensor", "y", "--out", dir.path + "/no/such/dir/y.npy"}, "no/such/dir/y.npy"});
    expect_usage_error({{"export", "--tensor", "y", "--out", dir.path + "/y.npy", "--strength", "0.5"}, "0.5"});
    expect_usage_error({{"export", "--out", dir.path + "/y.npy"}, "--tensor"});
    expect_usage_error({{"export", "--tensor", "y"}, "--out"});
    // A directory where the file should go: the write fails and leaves nothing behind.
    std::string d = dir.path + "/taken.npy";
    ASSERT_EQ(mkdir(d.c_str(), 0755), 0);
    expect_usage_error({{"export", "--tensor", "y", "--out", d}, "taken.npy"});
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken.npy"});
}

TEST(Help, HelpAndVersionExitZero) {
    for (std::vector<std::string> args :
         {std::vector<std::string>{"--help"}, {"-h"}, {"lesson", "--help"}, {"trace", "--help"},
          {"bench", "--help"}, {"export", "--help"}, {"save-weights", "--help"}}) {
        RunResult r = run_attnviz(args);
        EXPECT_EQ(r.status, 0) << args[0];
        EXPECT_NE(r.out.find("Usage: attnviz"), std::string::npos) << r.out;
    }
    RunResult v = run_attnviz({"--version"});
    EXPECT_EQ(v.status, 0);
    EXPECT_EQ(v.out.rfind("attnviz ", 0), 0u) << v.out;
}

namespace {

// The number of times `needle` occurs in `hay`.
size_t count_of(const std::string& hay, const std::string& needle) {
    size_t n = 0;
    for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
}

// CLI11 names an untyped string value TEXT; the only TEXT allowed is --text's own.
void expect_no_default_type_names(const std::string& help) {
    EXPECT_EQ(count_of(help, " TEXT"), count_of(help, "--text TEXT")) << help;
}

} // namespace

TEST(Help, CommandHelpNamesItsValuesAndDocumentsEveryOption) {
    RunResult r = run_attnviz({"trace", "--help"});
    for (const char* s : {"--seed N", "--n-embd C", "--n-head H", "--seq-len T", "--perturb P", "--mask MASK",
                          "--scale SCALE", "--kernel KERNEL", "--intermediates", "off-by-one", "head-dim",
                          "--text TEXT", "--weights FILE", "--layer N"})
        EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
    expect_no_default_type_names(r.out);
    RunResult e = run_attnviz({"export", "--help"});
    for (const char* s : {"--tensor NAME", "--out FILE", "--strength A", "probs", "concat", ".npy", ".csv",
                          "--text TEXT", "--weights FILE", "--layer N"})
        EXPECT_NE(e.out.find(s), std::string::npos) << s << "\n" << e.out;
    expect_no_default_type_names(e.out);
    RunResult b = run_attnviz({"bench", "--help"});
    for (const char* s : {"--repeat N", "--text TEXT", "--weights FILE", "--layer N"})
        EXPECT_NE(b.out.find(s), std::string::npos) << s << "\n" << b.out;
    expect_no_default_type_names(b.out);
    RunResult w = run_attnviz({"save-weights", "--help"});
    for (const char* s : {"save-weights [OPTIONS] FILE", "--seed N", "--n-embd C", "--n-head H", "--weights FILE",
                          "--layer N", ".safetensors", "qkv.weight", "n_head"})
        EXPECT_NE(w.out.find(s), std::string::npos) << s << "\n" << w.out;
    // Options that do not change the weights are not offered.
    for (const char* s : {"--seq-len", "--text", "--mask", "--kernel"})
        EXPECT_EQ(w.out.find(s), std::string::npos) << s << "\n" << w.out;
    expect_no_default_type_names(w.out);
}

TEST(Help, TopLevelListsEachCommandOnOneLine) {
    RunResult r = run_attnviz({"--help"});
    ASSERT_EQ(r.status, 0);
    const size_t at = r.out.find("Subcommands:\n");
    ASSERT_NE(at, std::string::npos) << r.out;
    std::vector<std::string> lines;
    size_t begin = at + std::string("Subcommands:\n").size();
    while (begin < r.out.size()) {
        size_t end = r.out.find('\n', begin);
        if (end == std::string::npos) end = r.out.size();
        if (end > begin) lines.push_back(r.out.substr(begin, end - begin));
        begin = end + 1;
    }
    const std::vector<std::string> commands = {"lesson", "trace", "bench", "export", "save-weights", "train", "heads", "tokenize", "get", "generate", "patch"};
    ASSERT_EQ(lines.size(), commands.size()) << r.out; // no continuation lines
    for (size_t i = 0; i < commands.size(); ++i) {
        EXPECT_EQ(lines[i].rfind("  " + commands[i] + " ", 0), 0u) << lines[i];
        EXPECT_GT(lines[i].size(), 40u) << "no description: " << lines[i];
    }
}

// A full disk or a closed pipe on stdout is not a success: every JSON command says so in
// one sentence and exits 1 instead of 0 with half a document written.
TEST(BadInput, StdoutThatRefusesTheOutput) {
    TempDir dir;
    std::string model = dir.path + "/m.safetensors";
    ASSERT_EQ(run_attnviz({"train", "--task", "prev", "--steps", "2", "--out", model}).status, 0);
    const std::vector<std::vector<std::string>> commands = {
        {"trace"},
        {"bench", "--repeat", "3"},
        {"train", "--task", "prev", "--steps", "2", "--out", dir.path + "/n.safetensors"},
        {"heads", "--weights", model},
        {"trace", "--weights", model, "--text", "a b c"},
    };
    for (const auto& args : commands) {
        RunResult r = run_attnviz(args, "/dev/full");
        EXPECT_EQ(r.status, 1) << args[0] << ": " << r.err;
        EXPECT_EQ(r.err_lines(), 1) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("could not write the"), std::string::npos) << args[0] << ": " << r.err;
    }
}

// The helpers rerun a child only for LeakSanitizer's own tracer crash (sanitizers/lsan_tracer.h),
// never for a leak report or another sanitizer's error.
TEST(TestHelpers, OnlyLeakSanitizersOwnCrashIsRetried) {
    using attnviz_sanitizers::lsan_tracer_crashed;
    EXPECT_TRUE(lsan_tracer_crashed("Tracer caught signal 11: addr=0x1b90 pc=0x7ff6e0ae80f0 sp=0x7ff6cf1fdd10\n"
                                    "==28395==LeakSanitizer has encountered a fatal error.\n"));
    EXPECT_FALSE(lsan_tracer_crashed("==1==ERROR: LeakSanitizer: detected memory leaks\n"));
    EXPECT_FALSE(lsan_tracer_crashed("==1==ERROR: AddressSanitizer: heap-use-after-free\n"));
    EXPECT_FALSE(lsan_tracer_crashed("==1==LeakSanitizer has encountered a fatal error.\n"));
    EXPECT_FALSE(lsan_tracer_crashed(""));
}
