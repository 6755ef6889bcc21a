// test_app_state.cpp: recompute() - the one place the window does math - against a fresh
// forward pass of the same input, and the upload requests it leaves for the textures.
#include "app_state.h"
#include "state_test_support.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace attnviz;
using namespace attnviz_gui_test;

TEST(AppStateRecompute, StartsOnTheLessonUnperturbed) {
    AppState s = lesson_state();
    ASSERT_TRUE(s.ready);
    EXPECT_TRUE(s.error.empty());
    EXPECT_TRUE(s.upload.full);
    EXPECT_EQ(s.run.applied_p, -1);
    EXPECT_TRUE(same_bits(s.run.trace.y, s.run.base_y));
    // The lesson's y1 (PyTorch), to the last bit of float32.
    std::ifstream in(std::string(ATTNVIZ_TEST_DATA) + "/lesson_example.json");
    const auto ref = nlohmann::json::parse(in);
    for (int t = 0; t < 4; ++t)
        for (int c = 0; c < 8; ++c) EXPECT_EQ(s.run.trace.y(t, c), float(ref["y1"][0][t][c])) << t << "," << c;
}

TEST(AppStateRecompute, SliderMoveEqualsAFreshForwardAndUploadsRowsFromP) {
    AppState s = lesson_state();
    s.upload = UploadRequest{};
    request_perturbation(s, 2, 0.5f);
    recompute(s);
    EXPECT_EQ(s.run.applied_p, 2);
    EXPECT_FALSE(s.upload.full);
    EXPECT_EQ(s.upload.row0, 2);
    ASSERT_FALSE(s.upload.columns.empty());
    EXPECT_EQ(s.upload.columns.front(), 2);
    // Same as running the whole forward pass on the blended input.
    Trace fresh;
    forward(s.config.applied, s.run.experiment.weights, perturbed_input(s.run.experiment, 2, 0.5f), KernelKind::reference, fresh);
    EXPECT_TRUE(same_bits(s.run.trace.y, fresh.y));
    for (int h = 0; h < 2; ++h) EXPECT_TRUE(same_bits(s.run.trace.att[size_t(h)], fresh.att[size_t(h)]));
    // Rows before p did not move, exactly.
    ASSERT_EQ(s.run.dy.size(), 4u);
    EXPECT_EQ(s.run.dy[0], 0.f);
    EXPECT_EQ(s.run.dy[1], 0.f);
    EXPECT_GT(s.run.dy[2], 0.f);
}

TEST(AppStateRecompute, LessonStrengthOneGivesTheLessonsNumbers) {
    AppState s = lesson_state();
    request_perturbation(s, 2, 1.f);
    recompute(s);
    std::ifstream in(std::string(ATTNVIZ_TEST_DATA) + "/lesson_example.json");
    const auto ref = nlohmann::json::parse(in);
    for (int t = 0; t < 4; ++t)
        for (int c = 0; c < 8; ++c) EXPECT_EQ(s.run.trace.y(t, c), float(ref["y2"][0][t][c])) << t << "," << c;
    for (int t = 0; t < 4; ++t) EXPECT_EQ(s.run.dy[size_t(t)], float(ref["max_abs_diff_per_position"][t])) << t;
}

TEST(AppStateRecompute, MovingPRestoresTheOldRowFirst) {
    AppState s = lesson_state();
    request_perturbation(s, 1, 1.f);
    recompute(s);
    s.upload = UploadRequest{};
    request_perturbation(s, 3, 1.f);
    recompute(s);
    EXPECT_EQ(s.upload.row0, 1); // rows from the old p must be sent again
    Trace fresh;
    forward(s.config.applied, s.run.experiment.weights, perturbed_input(s.run.experiment, 3, 1.f), KernelKind::reference, fresh);
    EXPECT_TRUE(same_bits(s.run.trace.y, fresh.y));
    EXPECT_TRUE(same_bits(s.run.trace.x, fresh.x));
    // Back to strength 0: exactly the unperturbed trace.
    request_perturbation(s, 3, 0.f);
    recompute(s);
    EXPECT_EQ(s.run.applied_p, -1);
    EXPECT_TRUE(same_bits(s.run.trace.y, s.run.base_y));
    for (float d : s.run.dy) EXPECT_EQ(d, 0.f);
}

TEST(AppStateRecompute, OtherMasksUploadEverything) {
    AppState s;
    Config c = lesson_config();
    c.mask = MaskMode::none;
    init_app_state(s, c, KernelChoice::reference);
    recompute(s);
    s.upload = UploadRequest{};
    request_perturbation(s, 2, 1.f);
    recompute(s);
    EXPECT_TRUE(s.upload.full);
    EXPECT_GT(s.run.dy[0], 0.f); // without the mask, earlier positions move
}

TEST(AppStateRecompute, RefusedEditKeepsThePreviousStateAndSaysWhy) {
    AppState s = lesson_state();
    const Mat y = s.run.trace.y;
    Config bad = lesson_config();
    bad.n_embd = 10;
    bad.n_head = 3;
    request_config(s, bad, KernelChoice::reference);
    recompute(s);
    EXPECT_EQ(s.config.applied.n_embd, 8);
    EXPECT_EQ(s.config.edit.n_embd, 8); // the controls show the state in use again
    EXPECT_TRUE(same_bits(s.run.trace.y, y));
    EXPECT_NE(s.error.find("n_embd 10"), std::string::npos) << s.error;

    Config huge = lesson_config();
    huge.seq_len = 8192;
    huge.n_embd = 512;
    huge.n_head = 8;
    request_config(s, huge, KernelChoice::automatic);
    recompute(s);
    EXPECT_EQ(s.config.applied.seq_len, 4);
    EXPECT_FALSE(s.error.empty());
    EXPECT_NE(s.error.find("seq_len 8192"), std::string::npos) << s.error;

    // A good edit clears the message.
    Config ok = lesson_config();
    ok.seed = 7;
    request_config(s, ok, KernelChoice::reference);
    recompute(s);
    EXPECT_EQ(s.config.applied.seed, 7u);
    EXPECT_TRUE(s.error.empty());
}

TEST(AppStateRecompute, ViewAndThemeNamesRoundTrip) {
    for (View v : {View::walk, View::qkv, View::scores, View::causality}) {
        View back = View::walk;
        std::string error;
        ASSERT_TRUE(parse_view(to_string(v), back, error));
        EXPECT_EQ(back, v);
    }
    View v;
    std::string error;
    EXPECT_FALSE(parse_view("heads", v, error));
    EXPECT_NE(error.find("heads"), std::string::npos);
}

// The colour ranges must cover every value on screen after any sequence of slider moves:
// a move under the causal mask rescans only the rows from p and the score column p, so a
// value that changed outside them would fall off the colour map.
TEST(AppStateRecompute, RangesCoverEveryValueAfterSliderMoves) {
    AppState s;
    Config c = lesson_config();
    c.seq_len = 16, c.n_embd = 12, c.n_head = 3;
    for (MaskMode mask : {MaskMode::causal, MaskMode::none}) {
        c.mask = mask;
        init_app_state(s, c, KernelChoice::reference);
        recompute(s);
        ASSERT_TRUE(s.ready) << s.error;
        for (auto [p, strength] : {std::pair{9, 1.f}, std::pair{3, 0.7f}, std::pair{15, 1.f}, std::pair{0, 1.f}}) {
            request_perturbation(s, p, strength);
            recompute(s);
            auto top = [](const Mat& m, int c0, int c1) {
                float best = 0;
                for (Eigen::Index r = 0; r < m.rows(); ++r)
                    for (int j = c0; j < c1; ++j)
                        if (std::isfinite(m(r, j))) best = std::max(best, std::fabs(m(r, j)));
                return best;
            };
            const Trace& t = s.run.trace;
            const int C = t.C, hd = t.head_dim;
            EXPECT_GE(s.run.ranges.x.all, top(t.x, 0, C)) << "p " << p;
            EXPECT_GE(s.run.ranges.y.all, top(t.y, 0, C)) << "p " << p;
            for (int h = 0; h < t.H; ++h) {
                const size_t i = size_t(h);
                EXPECT_GE(s.run.ranges.q.head[i], top(t.qkv, h * hd, (h + 1) * hd)) << "p " << p << " head " << h;
                EXPECT_GE(s.run.ranges.k.head[i], top(t.qkv, C + h * hd, C + (h + 1) * hd)) << "p " << p << " head " << h;
                EXPECT_GE(s.run.ranges.v.head[i], top(t.qkv, 2 * C + h * hd, 2 * C + (h + 1) * hd)) << "p " << p;
                EXPECT_GE(s.run.ranges.raw.head[i], top(t.raw_scores[i], 0, t.T)) << "p " << p << " head " << h;
                EXPECT_GE(s.run.ranges.heads.head[i], top(t.concat, h * hd, (h + 1) * hd)) << "p " << p;
            }
        }
    }
}

// The causality view prints dy_summary; it must say what dy holds around applied_p after
// every kind of change (a move, a NaN row under the off-by-one mask, back to strength 0).
TEST(AppStateRecompute, DySummaryDescribesDyAroundP) {
    auto expect_summary = [](const AppState& s, const char* where) {
        float top = 0, before = 0, after = 0;
        bool nan = false;
        int zeros = 0;
        for (int t = 0; t < int(s.run.dy.size()); ++t) {
            const float d = s.run.dy[size_t(t)];
            if (std::isfinite(d)) top = std::max(top, d);
            if (std::isnan(d)) nan = true;
            else if (t < s.run.applied_p) before = std::max(before, d);
            else after = std::max(after, d);
            if (t < s.run.applied_p && d == 0.f) ++zeros;
        }
        EXPECT_EQ(s.run.dy_summary.top, top) << where;
        EXPECT_EQ(s.run.dy_summary.before, before) << where;
        EXPECT_EQ(s.run.dy_summary.after, after) << where;
        EXPECT_EQ(s.run.dy_summary.nan, nan) << where;
        EXPECT_EQ(s.run.dy_summary.zeros_before, zeros) << where;
    };
    AppState s;
    Config c = lesson_config();
    c.seq_len = 9;
    init_app_state(s, c, KernelChoice::reference);
    recompute(s);
    expect_summary(s, "new config");
    request_perturbation(s, 5, 1.f);
    recompute(s);
    expect_summary(s, "p = 5");
    EXPECT_EQ(s.run.dy_summary.zeros_before, 5);
    EXPECT_GT(s.run.dy_summary.after, 0.f);
    request_perturbation(s, 2, 0.5f);
    recompute(s);
    expect_summary(s, "p = 2");
    c.mask = MaskMode::none;
    request_config(s, c, KernelChoice::reference);
    recompute(s);
    expect_summary(s, "no mask, p = 2");
    EXPECT_GT(s.run.dy_summary.before, 0.f);
    c.mask = MaskMode::off_by_one;
    request_config(s, c, KernelChoice::reference);
    recompute(s);
    expect_summary(s, "off-by-one");
    EXPECT_TRUE(s.run.dy_summary.nan);
    request_perturbation(s, 2, 0.f);
    recompute(s);
    expect_summary(s, "strength 0");
}
