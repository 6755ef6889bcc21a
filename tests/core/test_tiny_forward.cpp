// test_tiny_forward.cpp: at the sizes where the fast kernel runs the reference loops
// (fast_uses_reference_loops), its forward lays the independent sums side by side but
// must give the reference kernel's bits in every intermediate: every mask and scale,
// with and without biases, the lesson's example against PyTorch's numbers, and random
// small shapes.
#include "core_test_util.h"
#include "kernels.h"

namespace attnviz::test {
namespace {

void expect_fast_is_reference(const Config& c, const Weights& w, const Mat& x, const std::string& what) {
    Trace ref, fast;
    forward(c, w, x, KernelKind::reference, ref);
    forward(c, w, x, KernelKind::fast, fast);
    ASSERT_TRUE(detail::fast_uses_reference_loops(fast)) << what << ": not a tiny size";
    expect_same_trace(fast, ref, 0.f, what);
}

TEST(TinyForward, LessonExampleMatchesTorchBitForBit) {
    const json j = load_json("lesson_example.json");
    const Config c = case_config(j);
    const Experiment e = make_experiment(c);
    Trace fast;
    forward(c, e.weights, e.x, KernelKind::fast, fast);
    ASSERT_TRUE(detail::fast_uses_reference_loops(fast));
    EXPECT_TRUE(same(fast.y, flat(j.at("y1")), 0.f)) << "y";
    expect_fast_is_reference(c, e.weights, e.x, "lesson");
}

TEST(TinyForward, EveryMaskScaleAndBias) {
    for (MaskMode mask : all_masks)
        for (ScaleMode scale : all_scales)
            for (bool bias : {false, true}) {
                Config c;
                c.mask = mask;
                c.scale = scale;
                Experiment e = make_experiment(c);
                if (bias) {
                    e.weights.b_qkv = Vec::LinSpaced(3 * c.n_embd, -0.7f, 0.9f);
                    e.weights.b_proj = Vec::LinSpaced(c.n_embd, 0.4f, -0.3f);
                }
                expect_fast_is_reference(c, e.weights, e.x, describe(c) + (bias ? " with biases" : ""));
            }
}

TEST(TinyForward, RandomSmallShapes) {
    // Widths across the vector of 16 outputs (C = 1 .. 40, so 3C from 3 to 120) and T up
    // to 20, as far as fast_uses_reference_loops allows.
    std::mt19937 rng(5);
    int tried = 0;
    for (int n = 0; n < 400 && tried < 120; ++n) {
        const Config c = random_config(rng, 20, 40, all_masks[n % 3], all_scales[n % 3]);
        const Experiment e = make_experiment(c);
        Trace probe;
        probe.T = c.seq_len;
        probe.C = c.n_embd;
        if (!detail::fast_uses_reference_loops(probe)) continue;
        ++tried;
        expect_fast_is_reference(c, e.weights, e.x, describe(c));
    }
    EXPECT_GE(tried, 100);
}

} // namespace
} // namespace attnviz::test
