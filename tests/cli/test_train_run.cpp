// test_train_run.cpp: attnviz train from the command line: its JSON, against the recipe's
// torch run of the same arguments (tests/data/train/recipe_runs.json), its files (loadable,
// the same bytes for the same arguments with 1 or 2 threads, replaced whole), and every bad
// input with one sentence, exit status 2 and nothing written. Runs stay at tens of steps.
#include "run_attnviz.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

using attnviz_test::load_json;
using attnviz_test::read_file;
using attnviz_test::expect_usage_error;
using attnviz_test::run_attnviz;
using attnviz_test::run_json;
using attnviz_test::RunResult;
using attnviz_test::TempDir;
using nlohmann::json;

namespace {

const std::string train_dir = ATTNVIZ_TEST_DATA "/train/";

// OMP_NUM_THREADS (work_team.h's thread count) for the children started in one scope.
struct Threads {
    explicit Threads(int n) { ::setenv("OMP_NUM_THREADS", std::to_string(n).c_str(), 1); }
    ~Threads() { ::unsetenv("OMP_NUM_THREADS"); }
};

} // namespace

TEST(TrainRun, JsonHasTheRecipesKeysForEveryTask) {
    TempDir dir;
    const struct {
        const char* task;
        int V, T, C, H, L;
        double lr;
        std::vector<std::string> acc;
    } tasks[] = {{"prev", 16, 16, 64, 2, 1, 5e-3, {"prev"}},
                 {"dup", 16, 16, 64, 2, 1, 5e-3, {"dup"}},
                 {"both", 16, 16, 64, 4, 1, 5e-3, {"prev", "dup"}},
                 {"induction", 16, 24, 64, 2, 2, 3e-3, {"next"}}};
    for (const auto& t : tasks) {
        const std::string out = dir.path + "/" + t.task + ".safetensors";
        json j = run_json({"train", "--task", t.task, "--steps", "4", "--out", out});
        std::vector<std::string> keys;
        for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
        std::sort(keys.begin(), keys.end());
        EXPECT_EQ(keys, (std::vector<std::string>{"accuracy", "config", "head_scores", "losses", "seconds", "seed", "task"}));
        EXPECT_EQ(j.at("task"), t.task);
        EXPECT_EQ(j.at("seed"), 0);
        const json want = {{"V", t.V}, {"T", t.T}, {"C", t.C}, {"H", t.H}, {"L", t.L}, {"lr", t.lr}, {"B", 64}, {"steps", 4}};
        EXPECT_EQ(j.at("config"), want) << t.task;
        ASSERT_EQ(j.at("losses").size(), 4u);
        for (const json& l : j.at("losses")) EXPECT_TRUE(l.is_number() && l.get<double>() > 0) << l;
        std::vector<std::string> acc;
        for (auto it = j.at("accuracy").begin(); it != j.at("accuracy").end(); ++it) {
            acc.push_back(it.key());
            EXPECT_GE(it.value().get<double>(), 0.0);
            EXPECT_LE(it.value().get<double>(), 1.0);
        }
        std::vector<std::string> want_acc = t.acc; // nlohmann::json keeps keys sorted
        std::sort(want_acc.begin(), want_acc.end());
        EXPECT_EQ(acc, want_acc) << t.task;
        for (const char* k : {"prev_token", "duplicate", "induction"}) {
            const json& s = j.at("head_scores").at(k);
            ASSERT_EQ(s.size(), size_t(t.L)) << k;
            for (const json& layer : s) {
                ASSERT_EQ(layer.size(), size_t(t.H)) << k;
                for (const json& v : layer) EXPECT_TRUE(v.get<double>() >= 0 && v.get<double>() <= 1) << k << " " << v;
            }
        }
        EXPECT_GT(j.at("seconds").get<double>(), 0.0);
        // The file is a trained model that heads reads back to the same scores.
        json h = run_json({"heads", "--weights", out});
        EXPECT_EQ(h.at("head_scores"), j.at("head_scores")) << t.task;
        EXPECT_EQ(h.at("accuracy"), j.at("accuracy")) << t.task;
    }
}

TEST(TrainRun, LossesFollowTheRecipesTorchRun) {
    // The first 50 steps of the torch run that wrote both_s0_200.safetensors: the losses
    // before each update do not depend on how many steps follow.
    const json ref = load_json(train_dir + "recipe_runs.json").at("runs").at("both_s0_200");
    TempDir dir;
    json j = run_json({"train", "--task", "both", "--steps", "50", "--out", dir.path + "/b.safetensors"});
    const json& ours = j.at("losses");
    const json& theirs = ref.at("losses");
    ASSERT_EQ(ours.size(), 50u);
    for (size_t s = 0; s < 50; ++s) {
        const double a = ours[s].get<double>(), b = theirs[s].get<double>();
        EXPECT_NEAR(a, b, 1e-4 * std::fabs(b)) << "step " << s;
    }
}

TEST(TrainRun, SameArgumentsGiveTheSameFileWithOneOrTwoThreads) {
    TempDir dir;
    const std::vector<std::string> args = {"train", "--task", "induction", "--steps", "12", "--seed", "5", "--out"};
    auto run_with = [&](int threads, const std::string& name) {
        Threads t(threads);
        std::vector<std::string> a = args;
        a.push_back(dir.path + "/" + name);
        return run_json(a);
    };
    json one = run_with(1, "one.safetensors"), two = run_with(2, "two.safetensors");
    EXPECT_EQ(one.at("losses"), two.at("losses"));
    const std::string a = read_file(dir.path + "/one.safetensors"), b = read_file(dir.path + "/two.safetensors");
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b);
    // Another seed is another model: the comparison above can fail.
    Threads t(2);
    run_json({"train", "--task", "induction", "--steps", "12", "--seed", "6", "--out", dir.path + "/six.safetensors"});
    EXPECT_NE(read_file(dir.path + "/six.safetensors"), a);
}

TEST(TrainRun, AnExistingFileIsReplacedWhole) {
    TempDir dir;
    const std::string out = dir.path + "/m.safetensors";
    { std::ofstream(out) << "an older file"; }
    run_json({"train", "--task", "dup", "--steps", "3", "--out", out});
    json h = run_json({"heads", "--weights", out});
    EXPECT_EQ(h.at("task"), "dup");
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.safetensors"}); // no temporary or probe file left
}

TEST(TrainRun, BadInputIsOneSentenceAndWritesNothing) {
    TempDir dir;
    const std::string out = dir.path + "/kept.safetensors";
    { std::ofstream(out) << "the user's file"; }
    auto bad = [&](std::vector<std::string> extra, const std::string& says) {
        std::vector<std::string> args = {"train"};
        args.insert(args.end(), extra.begin(), extra.end());
        expect_usage_error(args, says);
        EXPECT_EQ(read_file(out), "the user's file");
    };
    const std::vector<std::string> o = {"--out", out};
    auto with = [&](std::vector<std::string> a) {
        a.insert(a.end(), o.begin(), o.end());
        return a;
    };
    bad(with({"--task", "copy"}), "copy");
    bad(with({"--task", "prev", "--vocab", "1"}), "1");
    bad(with({"--task", "prev", "--n-head", "3"}), "3");
    bad(with({"--task", "induction", "--seq-len", "6"}), "6");
    bad(with({"--task", "prev", "--lr", "0"}), "--lr 0 is not positive");
    bad(with({"--task", "prev", "--lr", "-1e-3"}), "--lr -1e-3 is not positive");
    bad(with({"--task", "prev", "--lr", "fast"}), "--lr");
    bad(with({"--task", "prev", "--steps", "0"}), "--steps");
    bad(with({"--task", "prev", "--batch", "x"}), "--batch");
    bad(with({"--task", "prev", "--batch", "257"}), "--batch 257");
    bad({"--task", "prev", "--out", dir.path + "/no/such/dir/m.safetensors"}, "does not exist");
    bad({"--task", "prev", "--out", dir.path}, "is a directory");
    bad({"--task", "prev", "--out", dir.path + "/m.npy"}, "does not end in .safetensors");
    bad({"--task", "prev"}, "--out");
    // A directory that cannot be written (root writes anywhere but in /sys).
    std::string locked = "/sys";
    if (::geteuid() != 0) {
        locked = dir.path + "/locked";
        std::filesystem::create_directory(locked);
        std::filesystem::permissions(locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    }
    bad({"--task", "prev", "--out", locked + "/m.safetensors"}, "is not writable");
    if (locked != "/sys") std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
}

TEST(TrainRun, DivergenceNamesTheStepAndWritesNothing) {
    TempDir dir;
    const std::string out = dir.path + "/kept.safetensors";
    { std::ofstream(out) << "the user's file"; }
    expect_usage_error({"train", "--task", "prev", "--steps", "50", "--lr", "1e30", "--out", out}, "training diverged at step ");
    EXPECT_EQ(read_file(out), "the user's file");
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"kept.safetensors"});
}

TEST(TrainRun, DefaultBothRunGrowsAHeadOfEachKind) {
    // The recipe's default both run (H = 4, 1000 steps, seed 0): the lesson's claim that
    // heads learn different relations, one previous-token head and another duplicate head.
    TempDir dir;
    json j = run_json({"train", "--task", "both", "--out", dir.path + "/both.safetensors"});
    EXPECT_GE(j.at("accuracy").at("prev").get<double>(), 0.99);
    EXPECT_GE(j.at("accuracy").at("dup").get<double>(), 0.99);
    const json& prev = j.at("head_scores").at("prev_token")[0];
    const json& dup = j.at("head_scores").at("duplicate")[0];
    int best_prev = 0, best_dup = 0;
    for (int h = 1; h < 4; ++h) {
        if (prev[size_t(h)].get<double>() > prev[size_t(best_prev)].get<double>()) best_prev = h;
        if (dup[size_t(h)].get<double>() > dup[size_t(best_dup)].get<double>()) best_dup = h;
    }
    EXPECT_GE(prev[size_t(best_prev)].get<double>(), 0.97) << prev;
    EXPECT_GE(dup[size_t(best_dup)].get<double>(), 0.73) << dup;
    EXPECT_NE(best_prev, best_dup) << "one head took both relations";
}

TEST(TrainRun, ATerminalGetsAProgressBar) {
    // stderr on a pseudo-terminal, as in a shell; every other test has it on a file, where
    // it must stay empty (run_json checks that).
    int master = -1, slave = -1;
    ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
    TempDir dir;
    std::vector<std::string> text = {ATTNVIZ_BIN, "train", "--task", "prev", "--steps", "5", "--out",
                                     dir.path + "/p.safetensors"};
    std::vector<char*> argv;
    for (std::string& a : text) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, slave, 2);
    posix_spawn_file_actions_addclose(&actions, master);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(slave);
    ASSERT_EQ(rc, 0);
    std::string seen;
    char buf[4096];
    for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) seen.append(buf, size_t(n)); // EIO once the child exits
    ::close(master);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {}
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_NE(seen.find("step 5/5 [##############################] loss "), std::string::npos) << seen;
    EXPECT_NE(seen.find(" steps/s"), std::string::npos) << seen;
}
