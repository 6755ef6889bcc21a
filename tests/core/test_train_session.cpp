// test_train_session.cpp: the Train view's training session on its worker thread. Pausing,
// single steps, the speed and a scrub-back-and-resume never change a bit (against plain
// train_step and against the file `attnviz train` writes); resuming drops the later
// history; the history stays within its memory budget on a 5000-step run.
#include "common/temp_dir.h"
#include "core_test_util.h"
#include "model_io.h"
#include "train_session.h"
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>

namespace attnviz::test {
namespace {

// prev at its defaults but narrower, so that a few hundred steps take a second or two.
TrainSettings small_prev() {
    TrainSettings s = default_train_settings(Task::prev);
    s.model.n_embd = 32;
    s.seed = 3;
    s.batch = 16;
    return s;
}

std::string read_file_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

bool same_bits(const Mat& a, const Mat& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), sizeof(float) * size_t(a.size())) == 0;
}

bool same_model(const Model& a, const Model& b) {
    Model& x = const_cast<Model&>(a);
    Model& y = const_cast<Model&>(b);
    std::vector<Param> pa = parameters(x), pb = parameters(y);
    if (pa.size() != pb.size()) return false;
    for (size_t i = 0; i < pa.size(); ++i)
        if (pa[i].name != pb[i].name || !same_bits(*pa[i].value, *pb[i].value)) return false;
    return true;
}

bool same_run(const TrainRun& a, const TrainRun& b) {
    if (!same_model(a.model, b.model) || a.adam.step != b.adam.step || a.adam.m.size() != b.adam.m.size()) return false;
    for (size_t i = 0; i < a.adam.m.size(); ++i)
        if (!same_bits(a.adam.m[i], b.adam.m[i]) || !same_bits(a.adam.v[i], b.adam.v[i])) return false;
    TorchGenerator ga = a.batch_gen, gb = b.batch_gen;
    return ga.draws() == gb.draws() && ga.next_u32() == gb.next_u32();
}

TrainRun plain_run(const TrainSettings& s, int steps, std::vector<float>* losses = nullptr) {
    TrainRun r = start_training(s.model, s.seed, s.lr, s.batch);
    for (int k = 0; k < steps; ++k) train_step(r);
    if (losses) *losses = r.losses;
    return r;
}

TEST(TrainSession, PausesStepsSpeedAndResumeNeverChangeABit) {
    const TrainSettings s = small_prev();
    const int N = 120;
    std::vector<float> want_losses;
    const TrainRun want = plain_run(s, N, &want_losses);

    TrainSession ses(s);
    ses.step();      // 1
    ses.step(4);     // 5
    ses.wait_idle();
    EXPECT_EQ(ses.status().step, 5);
    ses.set_speed(200);
    ses.run();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ses.pause();
    ses.wait_idle();
    ses.set_speed(0);
    ses.run_to(90);
    ses.wait_idle();
    ASSERT_EQ(ses.status().step, 90);
    // Scrub back to step 40 and resume from there: 41 .. 90 are dropped and trained again.
    ASSERT_TRUE(ses.resume_from(40));
    ses.run_to(N);
    ses.wait_idle();
    const TrainStatus st = ses.status();
    ASSERT_EQ(st.step, N);
    EXPECT_TRUE(same_run(ses.run_copy(), want)) << "the session's run differs from " << N << " plain steps";
    EXPECT_TRUE(same_model(*ses.latest(), want.model));
    TrainHistory h;
    ses.copy_history(h);
    ASSERT_EQ(h.losses.size(), size_t(N));
    for (int k = 0; k < N; ++k) EXPECT_EQ(h.losses[size_t(k)], want_losses[size_t(k)]) << "loss of step " << k + 1;
}

TEST(TrainSession, ResumeFromAScrubbedStepDropsWhatCameAfter) {
    const TrainSettings s = small_prev();
    TrainSession ses(s);
    ses.run_to(100);
    ses.wait_idle();
    TrainHistory before;
    ses.copy_history(before);
    ASSERT_EQ(before.snapshots.back().step, 100);
    EXPECT_FALSE(ses.resume_from(35)) << "35 is no snapshot step";
    ASSERT_TRUE(ses.resume_from(50));
    ses.wait_idle();
    const TrainStatus st = ses.status();
    EXPECT_EQ(st.step, 50);
    EXPECT_NE(st.message.find("50 later steps were dropped"), std::string::npos) << st.message;
    TrainHistory after;
    ses.copy_history(after);
    EXPECT_EQ(after.losses.size(), 50u);
    EXPECT_EQ(after.snapshots.back().step, 50);
    for (const TrainSnapshot& snap : after.snapshots) {
        EXPECT_LE(snap.step, 50);
        // At full speed the scores come every score_every steps.
        EXPECT_EQ(snap.scored, snap.step % score_every == 0) << snap.step;
    }
    // The weights now are the snapshot's, and a plain run's at 30.
    EXPECT_TRUE(same_model(*ses.latest(), *after.snapshots.back().model));
    EXPECT_TRUE(same_run(ses.run_copy(), plain_run(s, 50)));
    ASSERT_TRUE(after.snapshots.back().scored);
    // The snapshot's scores are those of its weights.
    const HeadScores hs = head_scores(*after.snapshots.back().model);
    EXPECT_EQ(hs.prev_token, after.snapshots.back().scores.prev_token);
}

TEST(TrainSession, WeightsAtStepNAreTheFileAttnvizTrainWrites) {
    const TrainSettings s = small_prev();
    const int N = 60;
    const attnviz_test::TempDir dir;
    ASSERT_FALSE(dir.path.empty());
    const std::string out = dir.file("cli.safetensors");
    const std::string cmd = std::string(ATTNVIZ_BIN) + " train --task prev --seed 3 --n-embd 32 --batch 16 --steps " +
                            std::to_string(N) + " --out " + out + " > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    Model from_cli;
    std::string error;
    ASSERT_TRUE(load_model(out, from_cli, error)) << error;

    TrainSession ses(s);
    ses.step(7);
    ses.wait_idle();
    ses.set_speed(500);
    ses.run_to(N);
    ses.wait_idle();
    ASSERT_EQ(ses.status().step, N);
    EXPECT_TRUE(same_model(*ses.latest(), from_cli)) << "the session's weights at " << N << " differ from attnviz train's file";
    // Written again by the session's model, the file is the same bytes.
    const std::string mine = dir.file("session.safetensors");
    ASSERT_TRUE(save_model(mine, *ses.latest(), error)) << error;
    EXPECT_EQ(read_file_bytes(out), read_file_bytes(mine));
}

TEST(TrainSession, HistoryStaysWithinItsBudgetOver5000Steps) {
    // A tiny model and a budget of 60 snapshots' weights, so that 5000 steps must thin it.
    TrainSettings s = default_train_settings(Task::prev);
    s.model.n_embd = 8;
    s.model.n_head = 2;
    s.model.vocab = 4;
    s.model.seq_len = 4;
    s.batch = 1;
    const Model m0 = init_model(s.model, 0);
    Model& m = const_cast<Model&>(m0);
    int64_t floats = 0;
    for (const Param& p : parameters(m)) floats += p.value->size();
    const int64_t budget = 60 * floats * 4;
    TrainSession ses(s, budget);
    ses.run_to(5000);
    int64_t worst = 0;
    while (ses.status().busy) {
        worst = std::max(worst, ses.status().history_bytes);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ses.wait_idle();
    const TrainStatus st = ses.status();
    ASSERT_EQ(st.step, 5000);
    EXPECT_LE(worst, budget);
    EXPECT_LE(st.history_bytes, budget);
    EXPECT_GT(st.every, snapshot_every) << "the interval should have grown";
    TrainHistory h;
    ses.copy_history(h);
    // Every 10 steps while it fitted, then sparser: snapshots on the interval's grid, step 0 kept.
    EXPECT_EQ(h.snapshots.front().step, 0);
    EXPECT_TRUE(h.snapshots.front().full);
    int64_t counted = 0;
    for (const TrainSnapshot& snap : h.snapshots) {
        EXPECT_EQ(snap.step % st.every, 0) << snap.step;
        counted += floats * 4 * (snap.full ? 3 : 1) + (snap.full ? int64_t(sizeof(TorchGenerator)) : 0);
    }
    EXPECT_EQ(counted, st.history_bytes);
    EXPECT_GE(h.snapshots.size(), 20u);
    // Resuming from a thinned-out history is still exact.
    const int64_t back = h.snapshots[h.snapshots.size() / 2].step;
    ASSERT_TRUE(ses.resume_from(back));
    ses.wait_idle();
    EXPECT_TRUE(same_run(ses.run_copy(), plain_run(s, int(back))));
}

namespace {

// A copy kept up to date frame after frame is the same as one taken afresh: the same losses,
// and the same snapshots (steps, kinds, scores, the very weights).
void expect_same_history(const TrainHistory& followed, const TrainHistory& fresh, const std::string& when) {
    EXPECT_EQ(followed.losses, fresh.losses) << when;
    ASSERT_EQ(followed.snapshots.size(), fresh.snapshots.size()) << when;
    for (size_t i = 0; i < fresh.snapshots.size(); ++i) {
        const TrainSnapshot &a = followed.snapshots[i], &b = fresh.snapshots[i];
        EXPECT_EQ(a.step, b.step) << when;
        EXPECT_EQ(a.full, b.full) << when << ", step " << b.step;
        EXPECT_EQ(a.scored, b.scored) << when << ", step " << b.step;
        EXPECT_EQ(a.model, b.model) << when << ", step " << b.step;
        EXPECT_EQ(a.accuracy, b.accuracy) << when << ", step " << b.step;
    }
}

} // namespace

TEST(TrainSession, AFollowedCopyOfTheHistoryEqualsAFreshOneThroughThinningAndResumes) {
    TrainSettings s = default_train_settings(Task::prev);
    s.model.n_embd = 8;
    s.model.n_head = 2;
    s.model.vocab = 4;
    s.model.seq_len = 4;
    s.batch = 1;
    Model m = init_model(s.model, 0);
    int64_t floats = 0;
    for (const Param& p : parameters(m)) floats += p.value->size();
    TrainSession ses(s, 40 * floats * 4); // 40 snapshots' weights: 1500 steps thin it
    TrainHistory followed;
    auto follow_until_idle = [&] {
        while (ses.status().busy) {
            ses.copy_history(followed);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        ses.wait_idle();
        ses.copy_history(followed);
        TrainHistory fresh;
        ses.copy_history(fresh);
        return fresh;
    };
    ses.run_to(1500);
    expect_same_history(followed, follow_until_idle(), "after 1500 steps");
    EXPECT_GT(ses.status().every, snapshot_every) << "the history should have been thinned";
    TrainHistory h;
    ses.copy_history(h);
    const int64_t back = h.snapshots[h.snapshots.size() / 2].step;
    ASSERT_TRUE(ses.resume_from(back));
    expect_same_history(followed, follow_until_idle(), "after a resume");
    EXPECT_EQ(followed.losses.size(), size_t(back));
    ses.run_to(1700);
    expect_same_history(followed, follow_until_idle(), "after training on");
    // A resume, then training past where the copy was, before the copy looks again: the copy
    // cannot tell by the sizes alone that its tail is gone.
    ASSERT_TRUE(ses.resume_from(back));
    ses.run_to(1800);
    ses.wait_idle();
    ses.copy_history(followed);
    TrainHistory fresh;
    ses.copy_history(fresh);
    expect_same_history(followed, fresh, "after a resume and more steps between two copies");
}

TEST(TrainSession, DefaultSizesKeepEvery10StepsTo5000WithinTheBudget) {
    // The budget's arithmetic at each task's default sizes: 500 snapshots of weights and 50
    // full checkpoints (every 100 steps) fit 128 MiB, so the defaults thin only after 5000.
    for (Task t : {Task::prev, Task::dup, Task::both, Task::induction}) {
        Model m = init_model(task_defaults(t).model, 0);
        int64_t floats = 0;
        for (const Param& p : parameters(m)) floats += p.value->size();
        const int64_t bytes = 500 * floats * 4 + 50 * (2 * floats * 4 + int64_t(sizeof(TorchGenerator)));
        EXPECT_LE(bytes, train_history_budget) << to_string(t);
    }
}

TEST(TrainSession, StopsCleanlyWhileRunningAndRefusesBadSettings) {
    TrainSettings s = small_prev();
    {
        TrainSession ses(s);
        ses.run(); // destroyed mid-run: the destructor stops the worker after its step
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    s.lr = -1;
    EXPECT_NE(validate(s).find("learning rate"), std::string::npos);
    EXPECT_THROW(TrainSession bad(s), std::invalid_argument);
    s = small_prev();
    s.model.n_head = 5;
    EXPECT_NE(validate(s), "");
}

TEST(TrainSession, DivergenceStopsAndSaysSo) {
    TrainSettings s = small_prev();
    s.lr = 1e30; // the first update overflows
    TrainSession ses(s);
    ses.run_to(50);
    ses.wait_idle();
    const TrainStatus st = ses.status();
    EXPECT_LT(st.step, 50);
    EXPECT_NE(st.message.find("diverged"), std::string::npos) << st.message;
}

} // namespace
} // namespace attnviz::test
