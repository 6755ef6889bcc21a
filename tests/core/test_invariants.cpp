// test_invariants.cpp: what the lesson says must hold for any configuration, on both
// kernels: softmax rows sum to 1, the masked triangle is exactly 0, and changing input
// row p leaves every earlier output bit-identical (causal mask) or moves it (no mask).
#include "core_test_util.h"
#include "kernels.h"
#include <map>

namespace attnviz::test {
namespace {

// Softmax rows: visible prefix sums to 1, the rest exactly +0; a row that sees nothing
// (off-by-one row 0) is all NaN. Adds the masked weights it found +0 to `masked_zeros`.
void check_probs(const Trace& t, int& masked_zeros) {
    for (int h = 0; h < t.H; ++h)
        for (int i = 0; i < t.T; ++i) {
            const int n = detail::visible_count(t.config.mask, t.T, i);
            double sum = 0;
            for (int j = 0; j < t.T; ++j) {
                const float p = t.att[h](i, j);
                if (n == 0) {
                    ASSERT_TRUE(std::isnan(p)) << "h=" << h << " i=" << i << " j=" << j;
                } else if (t.visible(i, j)) {
                    ASSERT_TRUE(p >= 0.f && p <= 1.f) << p;
                    sum += p;
                } else {
                    ASSERT_EQ(bits(p), 0u) << "masked prob not +0 at h=" << h << " i=" << i << " j=" << j;
                    ++masked_zeros;
                }
            }
            if (n > 0) {
                ASSERT_NEAR(sum, 1.0, 1e-5) << "h=" << h << " i=" << i;
            }
        }
}

// What the random configurations of one mask and kernel reached: the test fails when a
// case its header promises was never checked (say, after a change to random_config).
struct Reached {
    int masked_zeros = 0;   // masked softmax weights found exactly +0
    int unchanged_rows = 0; // output rows before p found bit-identical
    int moved_rows = 0;     // output rows that see p found moved
    int nan_rows = 0;       // off-by-one row 0 found NaN
    int multi_head = 0;     // configurations with H > 1
    int own_loops = 0;      // fast kernel: configurations on its own loops, not the reference's
};

TEST(Invariants, HoldOverRandomConfigurations) {
    std::mt19937 rng(20240601);
    std::map<std::pair<MaskMode, KernelKind>, Reached> reached;
    for (MaskMode mask : all_masks)
        for (KernelKind kernel : all_kernels)
            for (int n = 0; n < 25; ++n) {
                const ScaleMode scale = all_scales[n % 3];
                const Config c = random_config(rng, 40, 48, mask, scale);
                const int T = c.seq_len;
                const int p = std::uniform_int_distribution<int>(0, T - 1)(rng);
                SCOPED_TRACE(describe(c) + " kernel=" + to_string(kernel) + " p=" + std::to_string(p));
                Reached& r = reached[{mask, kernel}];
                Experiment e = make_experiment(c);
                Trace t1, t2;
                forward(c, e.weights, e.x, kernel, t1);
                forward(c, e.weights, perturbed_input(e, p, 1.f), kernel, t2);
                check_probs(t1, r.masked_zeros);
                check_probs(t2, r.masked_zeros);
                r.multi_head += c.n_head > 1;
                r.own_loops += kernel == KernelKind::fast && !detail::fast_uses_reference_loops(t1);
                const std::vector<float> diff = max_abs_diff_per_position(t1.y, t2.y);
                for (int i = 0; i < T; ++i) {
                    const bool row_nan = mask == MaskMode::off_by_one && i == 0;
                    for (int k = 0; k < c.n_embd; ++k)
                        ASSERT_EQ(std::isnan(t1.y(i, k)), row_nan) << "y row " << i;
                    if (row_nan) {
                        EXPECT_TRUE(std::isnan(diff[size_t(i)]));
                        ++r.nan_rows;
                    } else if (i < p && mask != MaskMode::none) {
                        // Earlier positions cannot see row p: not a bit may move.
                        EXPECT_EQ(diff[size_t(i)], 0.f) << "position " << i;
                        EXPECT_TRUE(same(Mat(t1.y.row(i)), Mat(t2.y.row(i)))) << "position " << i;
                        ++r.unchanged_rows;
                    } else {
                        // Later rows see key p (and without a mask every row does). Row p
                        // moves through its own query, except under off-by-one at p = 1,
                        // whose only key is 0 (weight 1 whatever the query).
                        const bool fixed = mask == MaskMode::off_by_one && i == p && p == 1;
                        if (!fixed) {
                            EXPECT_GT(diff[size_t(i)], 0.f) << "position " << i;
                            ++r.moved_rows;
                        }
                    }
                }
            }
    for (MaskMode mask : all_masks)
        for (KernelKind kernel : all_kernels) {
            SCOPED_TRACE(std::string("mask=") + to_string(mask) + " kernel=" + to_string(kernel));
            const Reached& r = reached[{mask, kernel}];
            EXPECT_GT(r.moved_rows, 0);
            EXPECT_GT(r.multi_head, 0);
            if (mask != MaskMode::none) {
                EXPECT_GT(r.masked_zeros, 0);
                EXPECT_GT(r.unchanged_rows, 0);
            }
            if (mask == MaskMode::off_by_one) {
                EXPECT_GT(r.nan_rows, 0);
            }
            if (kernel == KernelKind::fast) {
                EXPECT_GT(r.own_loops, 0);
            }
        }
}

TEST(Invariants, CausalRowsBeforePAreIdenticalInEveryIntermediate) {
    // Not just y: every row before p of every intermediate is bit-identical.
    for (KernelKind kernel : all_kernels) {
        Config c;
        c.n_embd = 24;
        c.n_head = 3;
        c.seq_len = 150; // several fast-kernel row blocks
        c.seed = 5;
        const int p = 97;
        SCOPED_TRACE(to_string(kernel));
        Experiment e = make_experiment(c);
        Trace t1, t2;
        forward(c, e.weights, e.x, kernel, t1);
        forward(c, e.weights, perturbed_input(e, p, 1.f), kernel, t2);
        for (int h = 0; h < c.n_head; ++h) {
            EXPECT_TRUE(same(Mat(t1.att[h].topRows(p)), Mat(t2.att[h].topRows(p))));
            EXPECT_TRUE(same(Mat(t1.heads[h].topRows(p)), Mat(t2.heads[h].topRows(p))));
            EXPECT_FALSE(same(Mat(t1.heads[h].row(p)), Mat(t2.heads[h].row(p))));
        }
        EXPECT_TRUE(same(Mat(t1.y.topRows(p)), Mat(t2.y.topRows(p))));
    }
}

TEST(Invariants, ScaleModes) {
    Config c;
    c.n_embd = 12;
    c.n_head = 3;
    EXPECT_EQ(score_scale(c), 0.5f); // head_dim 4
    c.scale = ScaleMode::n_embd;
    EXPECT_EQ(score_scale(c), float(1.0 / std::sqrt(12.0)));
    c.scale = ScaleMode::none;
    EXPECT_EQ(score_scale(c), 1.f);
    c.n_embd = 8;
    c.n_head = 1;
    c.scale = ScaleMode::head_dim;
    EXPECT_EQ(bits(score_scale(c)), 0x3eb504f3u); // f32(8 ** -0.5) = 0.353553385
    // Python's double hd ** -0.5 rounded once to float32 (numpy.float32(hd ** -0.5)); a
    // float32 1/sqrt(hd) or powf differs from it for these head sizes.
    const std::pair<int, uint32_t> expected[] = {
        {6, 0x3ed105ecu}, {7, 0x3ec1848fu}, {17, 0x3e785b42u}, {24, 0x3e5105ecu}, {1058, 0x3cfbda5du}};
    for (auto [hd, b] : expected) {
        c.n_embd = hd;
        c.n_head = 1;
        EXPECT_EQ(bits(score_scale(c)), b) << "head_dim " << hd;
    }
}

TEST(Invariants, MaskedAndScaledViewsFollowRaw) {
    for (MaskMode mask : all_masks) {
        Config c;
        c.seq_len = 6;
        c.mask = mask;
        Experiment e = make_experiment(c);
        Trace t;
        forward(c, e.weights, e.x, KernelKind::reference, t);
        Mat scaled, masked;
        t.fill_scaled(1, scaled);
        t.fill_masked(1, masked);
        for (int i = 0; i < t.T; ++i)
            for (int j = 0; j < t.T; ++j) {
                EXPECT_EQ(scaled(i, j), t.raw_scores[1](i, j) * t.scale);
                const bool vis = mask == MaskMode::none || (mask == MaskMode::causal ? j <= i : j < i);
                EXPECT_EQ(t.visible(i, j), vis);
                if (vis) EXPECT_EQ(masked(i, j), scaled(i, j));
                else EXPECT_EQ(masked(i, j), -INFINITY);
            }
    }
}

TEST(Invariants, PerturbedRowBlendsExactlyAtTheEnds) {
    Config c;
    c.seq_len = 5;
    Experiment e = make_experiment(c);
    for (int p = 0; p < c.seq_len; ++p) {
        EXPECT_TRUE(same(perturbed_row(e, p, 0.f), Vec(e.x.row(p))));
        EXPECT_TRUE(same(perturbed_row(e, p, 1.f), e.replacement));
        Vec half = perturbed_row(e, p, 0.5f);
        for (int k = 0; k < c.n_embd; ++k) {
            const float lo = std::min(e.x(p, k), e.replacement[k]), hi = std::max(e.x(p, k), e.replacement[k]);
            EXPECT_GE(half[k], lo);
            EXPECT_LE(half[k], hi);
            EXPECT_NEAR(half[k], 0.5f * (e.x(p, k) + e.replacement[k]), 1e-6f);
        }
        Mat x2 = perturbed_input(e, p, 1.f);
        for (int t = 0; t < c.seq_len; ++t)
            EXPECT_TRUE(same(Vec(x2.row(t)), t == p ? e.replacement : Vec(e.x.row(t))));
    }
}

TEST(Invariants, BiasesAreAddedAfterTheSum) {
    Config c;
    c.n_embd = 32;
    c.n_head = 4;
    c.seq_len = 70; // large enough for the fast kernel's sgemm path
    Experiment e = make_experiment(c);
    Weights with_qkv = e.weights;
    with_qkv.c_attn.bias = Vec::LinSpaced(3 * c.n_embd, -0.7f, 0.9f);
    Weights with_both = with_qkv;
    with_both.c_proj.bias = Vec::LinSpaced(c.n_embd, 0.3f, -0.2f);
    Trace plain, tq, tb;
    forward(c, e.weights, e.x, KernelKind::reference, plain);
    forward(c, with_qkv, e.x, KernelKind::reference, tq);
    forward(c, with_both, e.x, KernelKind::reference, tb);
    for (int t = 0; t < c.seq_len; ++t) {
        for (int o = 0; o < 3 * c.n_embd; ++o) ASSERT_EQ(tq.qkv(t, o), plain.qkv(t, o) + with_qkv.c_attn.bias[o]);
        for (int o = 0; o < c.n_embd; ++o) ASSERT_EQ(tb.y(t, o), tq.y(t, o) + with_both.c_proj.bias[o]);
    }
    Trace fast;
    forward(c, with_both, e.x, KernelKind::fast, fast);
    ASSERT_FALSE(detail::fast_uses_reference_loops(fast));
    expect_same_trace(fast, tb, 1e-5f, "fast with biases");
    // And the update path adds them too.
    Vec row = e.replacement;
    update_row(with_both, 50, row.data(), fast);
    update_row(with_both, 50, row.data(), tb);
    expect_same_trace(fast, tb, 1e-5f, "fast update with biases");
}

TEST(Invariants, TraceBuffersAreReusedAcrossSizes) {
    // One trace through several sizes and back gives what fresh traces give.
    Trace reused;
    for (int T : {7, 3, 40, 7}) {
        for (KernelKind kernel : all_kernels) {
            Config c;
            c.n_embd = 12;
            c.n_head = T == 3 ? 6 : 2;
            c.seq_len = T;
            Experiment e = make_experiment(c);
            Trace fresh;
            forward(c, e.weights, e.x, kernel, reused);
            forward(c, e.weights, e.x, kernel, fresh);
            expect_same_trace(reused, fresh, 0.f, "T=" + std::to_string(T));
            EXPECT_EQ(reused.q.size(), size_t(c.n_head));
        }
    }
}

TEST(Invariants, BadArgumentsAreOneSentenceErrors) {
    Config c;
    Experiment e = make_experiment(c);
    Trace t;
    Mat wrong(3, 8);
    wrong.setZero();
    EXPECT_THROW(forward(c, e.weights, wrong, KernelKind::fast, t), std::invalid_argument);
    Config bad = c;
    bad.n_head = 3;
    EXPECT_THROW(forward(bad, e.weights, e.x, KernelKind::reference, t), std::invalid_argument);
    Config bigger = c;
    bigger.n_embd = 16;
    Mat x16 = Mat::Zero(4, 16);
    EXPECT_THROW(forward(bigger, e.weights, x16, KernelKind::reference, t), std::invalid_argument);
    forward(c, e.weights, e.x, KernelKind::reference, t);
    Vec row = e.replacement;
    EXPECT_THROW(update_row(e.weights, 4, row.data(), t), std::invalid_argument);
    EXPECT_THROW(update_row(e.weights, -1, row.data(), t), std::invalid_argument);
    try {
        update_row(e.weights, 9, row.data(), t);
    } catch (const std::invalid_argument& err) {
        EXPECT_NE(std::string(err.what()).find("position 9"), std::string::npos) << err.what();
    }
    EXPECT_THROW(max_abs_diff_per_position(e.x, wrong), std::invalid_argument);
}

} // namespace
} // namespace attnviz::test
