// test_gpt_compact.cpp: a compact GPT trace (gpt_model.h), the window's 1024-token form,
// keeps every number the window shows: against the lean forward on the fast kernel, every
// layer it gives back has the same softmax weights bit for bit, and its pooled grid, detector
// scores, loss, logits, token change and ablation are those of the lean trace, bit for bit.
// A model of 300 positions, so that the blocks of 64 rows end in a partial one and the grid
// pools 2 x 2 cells.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "ablation.h"
#include "gpt_causality.h"
#include "gpt_test_util.h"
#include "head_detector.h"
#include <cmath>
#include <cstring>

namespace attnviz::test {
namespace {

// The same floats, bit for bit (NaN included), and the same shape.
bool same_bits(const Mat& a, const Mat& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), size_t(a.size()) * sizeof(float)) == 0;
}

Model compact_model() {
    ModelConfig c;
    c.arch = Arch::gpt;
    c.n_layer = 3;
    c.n_head = 4;
    c.n_embd = 64;
    c.vocab = 300;
    c.seq_len = 300;
    c.bias = true;
    c.gelu = Gelu::tanh;
    return random_gpt(c, 11);
}

std::vector<int> compact_tokens() {
    std::vector<int> tokens;
    for (int t = 0; t < 300; ++t) tokens.push_back((t * 37 + 11) % 120); // repeats, for the detector
    return tokens;
}

TEST(GptCompact, EveryLayerComesBackWithTheForwardsWeightsBitForBit) {
    const Model m = compact_model();
    const std::vector<int> tokens = compact_tokens();
    ModelTrace lean, compact;
    gpt_forward(m, tokens, KernelKind::fast, true, lean);
    gpt_forward_compact(m, tokens, compact);
    ASSERT_TRUE(compact.compact);
    EXPECT_EQ(compact.logits.size(), 0);
    EXPECT_EQ(compact.att_pool, 2);
    for (int l = 0; l < 3; ++l) {
        EXPECT_EQ(compact.layers[size_t(l)].att[0].size(), 0) << "a compact trace keeps no softmax weights";
        EXPECT_TRUE(same_bits(compact.blocks[size_t(l)].resid_post, lean.blocks[size_t(l)].resid_post)) << l;
        Trace tr;
        gpt_layer_trace(m, compact, l, KernelKind::fast, tr);
        for (int h = 0; h < 4; ++h) {
            const Mat& want = lean.layers[size_t(l)].att[size_t(h)];
            EXPECT_TRUE(same_bits(tr.att[size_t(h)], want)) << "layer " << l << " head " << h;
            // The raw scores: those the softmax read, and the rest of each row within float32.
            for (int i = 0; i < 300; i += 37)
                for (int j = 0; j < 300; j += 13) {
                    const float dot = tr.q[size_t(h)].row(i).dot(tr.k[size_t(h)].row(j));
                    EXPECT_NEAR(tr.raw_scores[size_t(h)](i, j), dot, 1e-5f) << l << " " << h << " " << i << " " << j;
                }
            Mat one;
            gpt_head_weights(compact, l, h, one);
            EXPECT_TRUE(same_bits(one, want)) << "the hover's head, layer " << l << " head " << h;
            // The grid: each pixel the largest weight of its 2 x 2 cells.
            const Mat& pooled = compact.att_pooled[size_t(l)][size_t(h)];
            ASSERT_EQ(pooled.rows(), 150);
            for (int i = 0; i < 150; ++i)
                for (int j = 0; j < 150; ++j)
                    ASSERT_EQ(pooled(i, j), want.block(2 * i, 2 * j, 2, 2).maxCoeff()) << l << " " << h << " " << i << " " << j;
        }
        // The rest of the shape walk: what the lean trace's recompute gives, within float32
        // (it takes the full forward's path).
        Trace full;
        gpt_layer_trace(m, lean, l, KernelKind::fast, full);
        EXPECT_LT((tr.y - full.y).cwiseAbs().maxCoeff(), 1e-5f);
        EXPECT_LT((tr.qkv - full.qkv).cwiseAbs().maxCoeff(), 1e-5f);
        EXPECT_TRUE(same_bits(tr.x, full.x));
    }
    // The detector's scores and the loss: read before the weights and logits went.
    const HeadScores want = detect_on_text({attention_of(lean)});
    EXPECT_EQ(compact.att_scores.prev_token, want.prev_token);
    EXPECT_EQ(compact.att_scores.duplicate, want.duplicate);
    EXPECT_EQ(compact.att_scores.induction, want.induction);
    // The logits: a row has the same bits however it is asked for (alone, in a block, or as
    // the forward read it for the loss), and they are the lean trace's within float32 (its one
    // product over every row rounds differently in the last bits).
    Mat rows, all;
    gpt_logits_rows(m, compact, 0, 300, all);
    EXPECT_LT((all - lean.logits).cwiseAbs().maxCoeff(), 1e-5f);
    for (int t : {0, 15, 16, 63, 64, 150, 299}) {
        gpt_logits_rows(m, compact, t, t + 1, rows);
        EXPECT_TRUE(same_bits(rows, all.middleRows(t, 1))) << t;
    }
    gpt_logits_rows(m, compact, 10, 90, rows);
    EXPECT_TRUE(same_bits(rows, all.middleRows(10, 80)));
    ModelTrace from_all = lean;
    from_all.logits = all;
    EXPECT_NEAR(next_token_loss(compact), next_token_loss(from_all), 1e-6) << "the forward's loss is of these logits";
    EXPECT_NEAR(next_token_loss(compact), next_token_loss(lean), 1e-6);
    EXPECT_THROW(gpt_logits_rows(m, compact, 10, 301, rows), std::invalid_argument);
}

TEST(GptCompact, ATokenChangeMeasuresWhatTheLeanTraceMeasures) {
    const Model m = compact_model();
    const std::vector<int> tokens = compact_tokens();
    ModelTrace lean, compact, changed;
    gpt_forward(m, tokens, KernelKind::fast, true, lean);
    gpt_forward_compact(m, tokens, compact);
    for (int p : {0, 150, 299}) {
        ModelTrace lean_changed = lean;
        gpt_update(m, p, 7, KernelKind::fast, lean_changed);
        gpt_update_compact(m, compact, p, 7, changed);
        const GptCausality want = gpt_causality(lean, lean_changed, p, 7);
        const GptCausality got = gpt_causality(compact, changed, p, 7);
        EXPECT_EQ(got.resid_max_abs, want.resid_max_abs) << p;
        // The logits' change: measured on the compact trace's own logits (see above).
        Mat before, after;
        gpt_logits_rows(m, compact, 0, 300, before);
        gpt_logits_rows(m, changed, 0, 300, after);
        const std::vector<float> measured = max_abs_diff_per_position(before, after);
        for (int t = 0; t < 300; ++t)
            ASSERT_NEAR(got.logits_max_abs[size_t(t)], measured[size_t(t)], 1e-5f) << p << " " << t;
        for (int t = p; t < 300; ++t)
            ASSERT_NEAR(got.logits_max_abs[size_t(t)], want.logits_max_abs[size_t(t)], 1e-5f) << p << " " << t;
        for (int t = 0; t < p; ++t) ASSERT_EQ(got.logits_max_abs[size_t(t)], 0.f) << "causal: " << t;
        if (p < 299) {
            EXPECT_GT(got.logits_max_abs[299], 0.f);
        }
        for (int l = 0; l < 3; ++l) {
            Trace a, b;
            gpt_layer_trace(m, changed, l, KernelKind::fast, a);
            gpt_layer_trace(m, lean_changed, l, KernelKind::fast, b);
            EXPECT_LT((a.y - b.y).cwiseAbs().maxCoeff(), 1e-5f);
            EXPECT_LT(max_abs_diff_per_position(a.att[0], b.att[0])[299], 1e-6f);
        }
        EXPECT_TRUE(changed.att_pooled.empty()) << "the grid belongs to the base's tokens";
    }
    EXPECT_THROW(gpt_update(m, 3, 7, KernelKind::fast, compact), std::invalid_argument);
    EXPECT_THROW(gpt_update_compact(m, lean, 3, 7, changed), std::invalid_argument);
}

TEST(GptCompact, AblationRerunsTheCompactTraceAsTheLeanOne) {
    const Model m = compact_model();
    const std::vector<int> tokens = compact_tokens();
    ModelTrace lean, compact;
    gpt_forward(m, tokens, KernelKind::fast, true, lean);
    gpt_forward_compact(m, tokens, compact);
    Ablation ab;
    ab.mode = AblationMode::zero;
    ab.heads = {HeadRef{1, 2}};
    gpt_rerun_from(m, 1, KernelKind::fast, &ab, lean);
    gpt_rerun_from(m, 1, KernelKind::fast, &ab, compact);
    EXPECT_TRUE(same_bits(compact.h_out, lean.h_out));
    EXPECT_NEAR(next_token_loss(compact), next_token_loss(lean), 1e-6);
    const HeadScores want = detect_on_text({attention_of(lean)});
    EXPECT_EQ(compact.att_scores.prev_token, want.prev_token);
    EXPECT_EQ(compact.att_scores.induction, want.induction);
    Trace tr;
    gpt_layer_trace(m, compact, 2, KernelKind::fast, tr, &ab);
    EXPECT_TRUE(same_bits(tr.att[1], lean.layers[2].att[1]));
    const LogitAttribution a = logit_attribution(m, compact, 299, 5, &ab);
    const LogitAttribution b = logit_attribution(m, lean, 299, 5, &ab);
    // Within float32: the compact trace's heads are the forward's att v (a BLAS product), the
    // lean one's a float32 loop over att and v.
    EXPECT_NEAR(a.logit, b.logit, 1e-5f);
    for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 4; ++h) EXPECT_NEAR(a.heads[size_t(l)][size_t(h)], b.heads[size_t(l)][size_t(h)], 1e-6f);
    EXPECT_EQ(a.heads[1][2], 0.f) << "the ablated head";
    EXPECT_NEAR(a.sum(), a.logit, 1e-4f);
    EXPECT_THROW(gpt_rerun_from(m, 0, KernelKind::reference, &ab, compact), std::invalid_argument);
}

} // namespace
} // namespace attnviz::test
