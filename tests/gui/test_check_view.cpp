// test_check_view.cpp: the "Check yourself" view renders, differs from the others and is
// what key 5 shows; the sharpness it prints for question 3 agrees with the forward pass's
// softmax weights, and the state keeps that table right through every change.
#include "app_state.h"
#include "check_questions.h"
#include "gui_test_support.h"
#include "session_state.h"
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <string>

using namespace attnviz;
using namespace attnviz_gui_test;

TEST(CheckView, RendersAndDiffersFromTheOtherViews) {
    Shot check = take_shot("check", {"--view", "check"});
    ASSERT_EQ(check.result.status, 0) << check.result.err;
    EXPECT_GT(check.image.distinct_colours(), 30);
    for (const char* v : {"walk", "scores", "causality"}) {
        Shot other = take_shot(std::string("check_vs_") + v, {"--view", v});
        ASSERT_EQ(other.result.status, 0) << other.result.err;
        EXPECT_GT(differing_fraction(check.image, other.image), 0.05) << v;
    }
}

// Keys 1-5 pick the views in tab order; 5 must bring up exactly what --view check draws.
TEST(CheckView, KeyFiveShowsTheCheckView) {
    Shot direct = take_shot("check_direct", {"--view", "check"});
    Shot by_key = take_shot("check_by_key", {"--view", "walk", "--keys", "5"});
    ASSERT_EQ(direct.result.status, 0) << direct.result.err;
    ASSERT_EQ(by_key.result.status, 0) << by_key.result.err;
    EXPECT_EQ(by_key.layout["view"], "check");
    EXPECT_EQ(differing_fraction(direct.image, by_key.image), 0.0);
    // And back: key 1 from the check view is the shape walk.
    Shot back = take_shot("check_key_1", {"--view", "check", "--keys", "1"});
    ASSERT_EQ(back.result.status, 0) << back.result.err;
    EXPECT_EQ(back.layout["view"], "walk");
}

namespace {

// Row i of head h of the trace's own softmax weights: the largest and the entropy.
RowSharpness from_probs(const Trace& tr, int h, int i) {
    RowSharpness r;
    for (int j = 0; j < tr.T; ++j) {
        const double w = tr.att[size_t(h)](i, j);
        r.max_weight = std::max(r.max_weight, w);
        if (w > 0) r.entropy -= w * std::log(w);
    }
    return r;
}

} // namespace

TEST(CheckView, SharpnessMatchesTheSoftmaxWeightsAtTheTracesScale) {
    AppState s;
    init_app_state(s, lesson_config(), KernelChoice::reference);
    recompute(s);
    ASSERT_TRUE(s.ready);
    const Trace& tr = s.run.trace;
    for (int h = 0; h < tr.H; ++h)
        for (int i = 0; i < tr.T; ++i) {
            const RowSharpness want = from_probs(tr, h, i), got = row_sharpness(tr, h, i, double(tr.scale));
            EXPECT_NEAR(got.max_weight, want.max_weight, 1e-6) << h << "," << i;
            EXPECT_NEAR(got.entropy, want.entropy, 1e-5) << h << "," << i;
        }
    // Query 0 sees only key 0 under the causal mask: all its weight, no entropy.
    EXPECT_EQ(row_sharpness(tr, 0, 0, double(tr.scale)).max_weight, 1.0);
    // A smaller scale (÷√C instead of ÷√head_dim) never sharpens a row.
    const double by_c = 1.0 / std::sqrt(double(tr.C));
    for (int h = 0; h < tr.H; ++h)
        for (int i = 1; i < tr.T; ++i)
            EXPECT_GE(row_sharpness(tr, h, i, by_c).entropy + 1e-12, row_sharpness(tr, h, i, double(tr.scale)).entropy)
                << h << "," << i;
}

// The table the view prints, as recompute() keeps it, equals the rows computed afresh from
// the trace on screen, after a new config and after slider moves at a row inside the table,
// below it and back (a move redoes only the rows from the first one that changed).
TEST(CheckView, TheStatesTableFollowsEveryChange) {
    auto expect_fresh = [](const AppState& s, const std::string& where) {
        const Trace& tr = s.run.trace;
        const SharpnessTable& t = s.run.sharpness;
        ASSERT_EQ(t.heads, std::min(tr.H, sharpness_heads)) << where;
        ASSERT_EQ(t.rows, std::min(tr.T, sharpness_rows)) << where;
        const double by_hd = 1.0 / std::sqrt(double(tr.head_dim)), by_c = 1.0 / std::sqrt(double(tr.C));
        for (int h = 0; h < t.heads; ++h)
            for (int i = 0; i < t.rows; ++i)
                for (int k = 0; k < 2; ++k) {
                    const RowSharpness want = row_sharpness(tr, h, i, k == 0 ? by_hd : by_c), got = t.at(h, i)[size_t(k)];
                    if (std::isnan(want.max_weight)) {
                        EXPECT_TRUE(std::isnan(got.max_weight)) << where << " " << h << "," << i;
                        continue;
                    }
                    EXPECT_EQ(got.max_weight, want.max_weight) << where << " " << h << "," << i << " scale " << k;
                    EXPECT_EQ(got.entropy, want.entropy) << where << " " << h << "," << i << " scale " << k;
                }
    };
    AppState s;
    Config c = lesson_config();
    c.seq_len = 12, c.n_embd = 16, c.n_head = 4;
    init_app_state(s, c, KernelChoice::reference);
    recompute(s);
    expect_fresh(s, "new config");
    // The perturbed row changes the table's rows from p on.
    const RowSharpness row5 = s.run.sharpness.at(1, 5)[0];
    request_perturbation(s, 3, 1.f);
    recompute(s);
    expect_fresh(s, "p = 3");
    EXPECT_NE(s.run.sharpness.at(1, 5)[0].max_weight, row5.max_weight);
    request_perturbation(s, 10, 0.5f);
    recompute(s);
    expect_fresh(s, "p = 10");
    request_perturbation(s, 1, 0.25f);
    recompute(s);
    expect_fresh(s, "p = 1");
    // Another mask lets every row move; the off-by-one mask's row 0 is NaN.
    c.mask = MaskMode::off_by_one;
    request_config(s, c, KernelChoice::reference);
    recompute(s);
    expect_fresh(s, "off-by-one");
    EXPECT_TRUE(std::isnan(s.run.sharpness.at(0, 0)[0].max_weight));
    request_perturbation(s, 6, 1.f);
    recompute(s);
    expect_fresh(s, "off-by-one, p = 6");
    c.mask = MaskMode::none;
    c.n_head = 8;
    request_config(s, c, KernelChoice::reference);
    recompute(s);
    expect_fresh(s, "no mask, H = 8");
    request_perturbation(s, 9, 1.f);
    recompute(s);
    expect_fresh(s, "no mask, p = 9");
}

// The revealed answers are part of the state a session (and a following page) gets: the
// teacher's Show the answer shows it on every page that follows.
TEST(CheckView, RevealedAnswersGoThroughASession) {
    AppState s;
    init_app_state(s, lesson_config(), KernelChoice::reference);
    recompute(s);
    s.screen.answer_shown[2] = true;
    Session ss = to_session(s);
    EXPECT_EQ(ss.answers_shown, (std::vector<int>{2}));
    AppState t;
    init_app_state(t, lesson_config(), KernelChoice::reference);
    t.screen.answer_shown[0] = true; // the page's own reveal goes: it shows the teacher's
    std::string error;
    ASSERT_TRUE(apply_session(t, ss, error)) << error;
    EXPECT_FALSE(t.screen.answer_shown[0]);
    EXPECT_TRUE(t.screen.answer_shown[2]);
    // A question the view does not have: one sentence, and the state as it was.
    ss.answers_shown = {1, check_question_count};
    EXPECT_FALSE(apply_session(t, ss, error));
    EXPECT_NE(error.find("answers_shown names question " + std::to_string(check_question_count)), std::string::npos) << error;
    EXPECT_TRUE(t.screen.answer_shown[2]);
    EXPECT_FALSE(t.screen.answer_shown[1]);
}
