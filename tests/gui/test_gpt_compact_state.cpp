// test_gpt_compact_state.cpp: a GPT model shown from a compact trace (gpt_model.h, the
// window's form for GPT-2 small's 1024 tokens), through recompute() without a window.
// On the tiny GPT-2 the threshold is lowered so that it runs compact, and every number the
// views show is checked against the same model shown lean on the fast kernel: the shown
// layer, the grid's pictures and hovered weights, the detector, the predictions, the
// causality view's table, and a layer switch that keeps the changed run. Then GPT-2 small's
// real shapes (random weights) on 1024 tokens, as the window opens them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "app_state.h"
#include "gpt_model.h"
#include "gpt_test_dir.h"
#include "head_detector.h"
#include "inputs.h"
#include "state_test_support.h"
#include <cmath>
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

const std::string sentence = "The cat sat on the mat, and the cat saw the dog on the mat again.";

std::shared_ptr<const TrainedInput> tiny_input() {
    std::shared_ptr<const TrainedInput> in;
    std::string error;
    EXPECT_TRUE(read_gpt_input(tiny_gpt_dir(true), std::nullopt, sentence, "", in, error)) << error;
    return in;
}

// The model shown on the fast kernel: compact (threshold 0) or lean as usual.
AppState shown(const std::shared_ptr<const TrainedInput>& in, bool compact) {
    AppState s = lesson_state();
    if (compact) s.gpt_compact_above = 0;
    s.kernel_choice.edit = KernelChoice::fast;
    request_trained_model(s, in);
    recompute(s);
    return s;
}

} // namespace

TEST(GptCompactState, EveryViewShowsTheLeanRunsNumbers) {
    const auto in = tiny_input();
    AppState c = shown(in, true), l = shown(in, false);
    ASSERT_TRUE(shown_model(c) && shown_model(l)) << c.error << l.error;
    ASSERT_TRUE(c.model_run.model_base.compact);
    ASSERT_FALSE(l.model_run.model_base.compact);
    ASSERT_EQ(c.kernel, KernelKind::fast);
    const int T = c.config.applied.seq_len;
    for (int layer : {0, 1}) {
        request_layer(c, layer);
        request_layer(l, layer);
        recompute(c);
        recompute(l);
        // The shown layer: its softmax weights the forward's (the lean trace's) bit for bit,
        // and the rest of its walk within float32 (the lean one takes the full forward's path).
        for (int h = 0; h < 4; ++h) {
            EXPECT_TRUE(same_bits(c.run.trace.att[size_t(h)], l.model_run.model_base.layers[size_t(layer)].att[size_t(h)])) << layer << " " << h;
            // The grid's tooltip: the same weights, on the shown layer and (recomputed) on the other.
            const Mat* shown_w = grid_head_weights(c, layer, h);
            ASSERT_TRUE(shown_w);
            EXPECT_TRUE(same_bits(*shown_w, l.model_run.model_base.layers[size_t(layer)].att[size_t(h)]));
        }
        EXPECT_LT((c.run.trace.y - l.run.trace.y).cwiseAbs().maxCoeff(), 1e-5f);
        // The grid's pictures: one pixel per cell at this T (pool 1), each the weight itself.
        ASSERT_EQ(c.model_run.model_base.att_pool, 1);
        EXPECT_TRUE(same_bits(c.model_run.model_base.att_pooled[size_t(layer)][2], l.model_run.model_base.layers[size_t(layer)].att[2]));
    }
    // The hovered head of another layer: nothing until the next recompute makes it.
    c.model_view.hover_layer = 0;
    c.model_view.hover_head = 3;
    EXPECT_EQ(grid_head_weights(c, 0, 3), nullptr);
    recompute(c);
    const Mat* hovered = grid_head_weights(c, 0, 3);
    ASSERT_TRUE(hovered);
    EXPECT_TRUE(same_bits(*hovered, l.model_run.model_base.layers[0].att[3]));
    // The detector (read before the weights went) and the predictions (one row of logits).
    EXPECT_EQ(c.model_view.detection.text.prev_token, l.model_view.detection.text.prev_token);
    EXPECT_EQ(c.model_view.detection.text.induction, l.model_view.detection.text.induction);
    c.screen.view = l.screen.view = View::model;
    c.model_view.predict_pos = l.model_view.predict_pos = 5;
    recompute(c);
    recompute(l);
    for (int pos : {5, T - 1}) {
        const std::vector<TokenProb>& a = c.model_view.predictions[size_t(pos)];
        const std::vector<TokenProb>& b = l.model_view.predictions[size_t(pos)];
        ASSERT_EQ(a.size(), 5u) << pos;
        ASSERT_EQ(b.size(), 5u) << pos;
        for (size_t k = 0; k < 5; ++k) {
            EXPECT_EQ(a[k].token, b[k].token) << pos;
            EXPECT_NEAR(a[k].prob, b[k].prob, 1e-6f) << pos;
        }
    }
    EXPECT_NEAR(c.ablation.numbers.clean.loss, l.ablation.numbers.clean.loss, 1e-6);
}

TEST(GptCompactState, ATokenChangeIsExactlyZeroBeforePAndALayerSwitchKeepsIt) {
    const auto in = tiny_input();
    AppState c = shown(in, true), l = shown(in, false);
    const int p = 6, T = c.config.applied.seq_len;
    for (AppState* s : {&c, &l}) {
        request_perturbation(*s, p, 1.f);
        recompute(*s);
        ASSERT_EQ(s->run.applied_p, p);
    }
    for (size_t layer = 0; layer < 2; ++layer)
        EXPECT_EQ(c.model_run.causality.resid_max_abs[layer], l.model_run.causality.resid_max_abs[layer]) << layer;
    for (int t = 0; t < T; ++t) {
        if (t < p) {
            ASSERT_EQ(c.model_run.causality.logits_max_abs[size_t(t)], 0.f) << t;
        }
        EXPECT_NEAR(c.model_run.causality.logits_max_abs[size_t(t)], l.model_run.causality.logits_max_abs[size_t(t)], 1e-5f) << t;
    }
    EXPECT_EQ(c.model_run.resid_summary.zeros_before, p);
    // Another layer: the changed run is kept (no second token replacement), its layer shown.
    // A mark left in the kept measure stays; a token replaced again would overwrite it.
    const float exact = c.model_run.causality.logits_max_abs[0];
    c.model_run.causality.logits_max_abs[0] = 42.f;
    request_layer(c, 1);
    request_layer(l, 1);
    recompute(c);
    recompute(l);
    EXPECT_EQ(c.model_run.causality.logits_max_abs[0], 42.f) << "the changed run was made again";
    c.model_run.causality.logits_max_abs[0] = exact;
    EXPECT_EQ(c.run.applied_p, p);
    EXPECT_LT((c.run.trace.y - l.run.trace.y).cwiseAbs().maxCoeff(), 1e-5f);
    ASSERT_EQ(c.run.dy.size(), l.run.dy.size());
    for (int t = 0; t < T; ++t) EXPECT_NEAR(c.run.dy[size_t(t)], l.run.dy[size_t(t)], 1e-6f) << t;
    for (int t = 0; t < p; ++t) EXPECT_EQ(c.run.dy[size_t(t)], 0.f) << t;
    // Another replacement is a new change.
    std::string error;
    ASSERT_TRUE(set_replacement_text(c, "7", error)) << error;
    recompute(c);
    EXPECT_EQ(c.model_run.causality.new_token, 7);
    EXPECT_EQ(c.model_run.model_perturbed.tokens[size_t(p)], 7);
}

// GPT-2 small's shapes with random weights on its whole 1024-token context: the window's
// form of it, compact, on every layer. Slow under the sanitizers (a forward of 1024 tokens
// through 12 layers), so they leave it out.
TEST(GptCompactState, Gpt2SmallShapesOpenOn1024Tokens) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "a GPT-2 small forward at T = 1024 takes minutes under the sanitizers";
#endif
    ModelConfig mc;
    mc.arch = Arch::gpt;
    mc.n_layer = 12;
    mc.n_head = 12;
    mc.n_embd = 768;
    mc.vocab = 50257;
    mc.seq_len = 1024;
    mc.bias = true;
    mc.gelu = Gelu::tanh;
    auto in = std::make_shared<TrainedInput>();
    in->model = std::make_shared<Model>(random_gpt(mc, 3));
    in->layout = "GPT-2 (Hugging Face)";
    for (int t = 0; t < 1024; ++t) in->tokens.push_back(int((int64_t(t) * 7919 + 13) % 50257));
    EXPECT_EQ(check_model(in, gui_memory_cap, gui_gpt_memory_cap), "") << "the window takes it";
    EXPECT_LE(gpt_window_bytes(*in->model, 1024), gui_gpt_memory_cap);
    AppState s = lesson_state();
    request_trained_model(s, in);
    recompute(s);
    ASSERT_TRUE(shown_model(s)) << s.error;
    ASSERT_TRUE(s.model_run.model_base.compact);
    EXPECT_EQ(s.config.applied.seq_len, 1024);
    EXPECT_EQ(s.model_run.model_base.att_pool, 4);
    ASSERT_EQ(s.model_run.model_base.att_pooled.size(), 12u);
    EXPECT_EQ(s.model_run.model_base.att_pooled[11][11].rows(), 256);
    EXPECT_EQ(s.model_run.model_base.logits.size(), 0) << "no logits kept";
    EXPECT_EQ(s.model_view.detection.text.prev_token.size(), 12u);
    // Layer 7's shown weights are what its pooled picture was made of.
    request_layer(s, 7);
    recompute(s);
    ASSERT_EQ(s.shown.layer, 7);
    const Mat& w = s.run.trace.att[5];
    EXPECT_EQ(s.model_run.model_base.att_pooled[7][5](100, 20), w.block(400, 80, 4, 4).maxCoeff());
    EXPECT_FLOAT_EQ(w.row(1023).sum(), 1.f);
    EXPECT_EQ(w(10, 11), 0.f) << "causal";
    s.screen.view = View::model;
    recompute(s);
    ASSERT_EQ(s.model_view.predictions.size(), 1024u);
    EXPECT_EQ(s.model_view.predictions[1023].size(), 5u);
    // Ablation keeps a second run beside the first: over the cap here, refused in one sentence.
    request_ablation(s, {HeadRef{3, 2}}, AblationMode::zero);
    recompute(s);
    EXPECT_TRUE(s.ablation.applied.empty());
    EXPECT_NE(s.error.find("keeps the clean run beside the ablated one"), std::string::npos) << s.error;
    request_perturbation(s, 1000, 1.f);
    recompute(s);
    ASSERT_EQ(s.run.applied_p, 1000);
    for (int t = 0; t < 1000; ++t) ASSERT_EQ(s.model_run.causality.logits_max_abs[size_t(t)], 0.f) << t;
    EXPECT_GT(s.model_run.causality.logits_max_abs[1000], 0.f);
}
