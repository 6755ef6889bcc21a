// test_check_view.cpp: the "Check yourself" view renders and differs from the others, and
// the sharpness it shows for question 3 agrees with the forward pass's softmax weights.
#include "app_state.h"
#include "gui_test_support.h"
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>

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

TEST(CheckView, KeyFiveIsTheCheckView) {
    View v;
    std::string error;
    ASSERT_TRUE(parse_view("check", v, error)) << error;
    EXPECT_EQ(int(v), 4); // keys 1-5 pick View(key - 1)
    EXPECT_LT(int(v), view_count);
}

TEST(CheckView, SharpnessMatchesTheSoftmaxWeightsAtTheTracesScale) {
    AppState s;
    init_app_state(s, lesson_config(), KernelChoice::reference);
    recompute(s);
    ASSERT_TRUE(s.ready);
    const Trace& tr = s.trace;
    const auto sharp = row_sharpness(tr, double(tr.scale));
    for (int h = 0; h < tr.H; ++h)
        for (int i = 0; i < tr.T; ++i) {
            double top = 0, entropy = 0;
            for (int j = 0; j < tr.T; ++j) {
                const double w = tr.probs[size_t(h)](i, j);
                top = std::max(top, w);
                if (w > 0) entropy -= w * std::log(w);
            }
            EXPECT_NEAR(sharp[size_t(h)][size_t(i)].max_weight, top, 1e-6) << h << "," << i;
            EXPECT_NEAR(sharp[size_t(h)][size_t(i)].entropy, entropy, 1e-5) << h << "," << i;
        }
    // Query 0 sees only key 0 under the causal mask: all its weight, no entropy.
    EXPECT_EQ(sharp[0][0].max_weight, 1.0);
    // A smaller scale (÷√C instead of ÷√head_dim) never sharpens a row.
    const auto flat = row_sharpness(tr, 1.0 / std::sqrt(double(tr.C)));
    for (int h = 0; h < tr.H; ++h)
        for (int i = 1; i < tr.T; ++i)
            EXPECT_GE(flat[size_t(h)][size_t(i)].entropy + 1e-12, sharp[size_t(h)][size_t(i)].entropy) << h << "," << i;
}
