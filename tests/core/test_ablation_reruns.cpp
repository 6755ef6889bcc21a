// test_ablation_reruns.cpp: the shortcuts an ablation takes, each against the long way round:
// a toy model rerun from its first ablated block (model_rerun_from), the head detector's
// attention-only GPT forward (gpt_attention_forward), and the repeated probe redone from
// the clean probe's traces (detect_repeat_induction's `clean`), bit for bit.
#include "ablation.h"
#include "gpt_test_util.h"
#include "head_detector.h"
#include "model_io.h"
#include <cstring>

namespace attnviz::test {
namespace {

Model toy(const std::string& file) {
    Model m;
    std::string error;
    if (!load_model(std::string(ATTNVIZ_TEST_DATA) + "/model_view/" + file, m, error)) ADD_FAILURE() << error;
    return m;
}

bool same(const Mat& a, const Mat& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), size_t(a.size()) * sizeof(float)) == 0;
}

Ablation heads(const ModelConfig& c, const std::string& text, AblationMode mode = AblationMode::zero) {
    Ablation ab;
    ab.mode = mode;
    std::string error;
    EXPECT_TRUE(parse_heads(text, c, ab.heads, error)) << error;
    return ab;
}

TEST(AblationReruns, ToyRerunFromTheFirstAblatedBlockIsTheAblatedForward) {
    const Model m = toy("induction.safetensors");
    const std::vector<int> tok{m.config.bos(), 0, 1, 2, 3, 0, 1, 2, 3, 4, 5};
    for (const char* text : {"1.0", "0.1", "0.1,1.1"}) {
        const Ablation ab = heads(m.config, text);
        ModelTrace want, got;
        model_forward(m, tok, KernelKind::reference, want, &ab);
        model_forward(m, tok, KernelKind::reference, got);
        model_rerun_from(m, ab.first_layer(), KernelKind::reference, got, &ab);
        for (size_t l = 0; l < want.layers.size(); ++l) {
            EXPECT_TRUE(same(want.layers[l].y, got.layers[l].y)) << text << " layer " << l;
            EXPECT_TRUE(same(want.layers[l].att[1], got.layers[l].att[1])) << text << " layer " << l;
        }
        EXPECT_TRUE(same(want.logits_next, got.logits_next)) << text;
        // And the ablation did change the output (the rerun is not a no-op).
        ModelTrace clean;
        model_forward(m, tok, KernelKind::reference, clean);
        EXPECT_FALSE(same(clean.logits_next, got.logits_next)) << text;
    }
}

TEST(AblationReruns, AttentionOnlyForwardHasEveryLayersWeights) {
    const Model m = load_fixture_model(gpt_data("gpt2"));
    std::vector<int> tok;
    for (int t = 0; t < 24; ++t) tok.push_back((t * 37 + 11) % m.config.vocab);
    const Ablation ab = heads(m.config, "0.2");
    for (KernelKind k : {KernelKind::reference, KernelKind::fast}) {
        ModelTrace full, part;
        gpt_forward(m, tok, k, true, full, &ab);
        gpt_attention_forward(m, tok, k, part, &ab);
        ASSERT_EQ(part.layers.size(), full.layers.size());
        for (size_t l = 0; l < full.layers.size(); ++l)
            for (int h = 0; h < m.config.n_head; ++h)
                EXPECT_TRUE(same(full.layers[l].att[size_t(h)], part.layers[l].att[size_t(h)])) << l << "." << h;
        EXPECT_EQ(part.logits.size(), 0);
        EXPECT_EQ(part.h_out.size(), 0);
    }
}

// The detector's induction score with an ablation, from scratch and from the clean probe.
void expect_reused_probe_is_exact(const Model& m, const std::string& text, AblationMode mode) {
    HeadDetection clean, fresh, reused;
    detect_repeat_induction(m, KernelKind::reference, clean, 4);
    ASSERT_TRUE(clean.probe);
    ASSERT_EQ(clean.probe->size(), 4u);
    Ablation ab = heads(m.config, text, mode);
    if (mode == AblationMode::mean) compute_ablation_means(m, ablation_probe(m, {1, 2, 3, 1, 2, 3}), KernelKind::reference, ab);
    detect_repeat_induction(m, KernelKind::reference, fresh, 4, detector_repeat_seed, std::nullopt, &ab);
    detect_repeat_induction(m, KernelKind::reference, reused, 4, detector_repeat_seed, std::nullopt, &ab, &clean);
    EXPECT_FALSE(fresh.probe) << "a detection with an ablation keeps no probe";
    ASSERT_EQ(fresh.repeat_induction.size(), reused.repeat_induction.size());
    bool moved = false;
    for (size_t l = 0; l < fresh.repeat_induction.size(); ++l)
        for (size_t h = 0; h < fresh.repeat_induction[l].size(); ++h) {
            EXPECT_EQ(fresh.repeat_induction[l][h], reused.repeat_induction[l][h]) << text << " " << l << "." << h;
            moved = moved || fresh.repeat_induction[l][h] != clean.repeat_induction[l][h];
        }
    EXPECT_TRUE(moved) << text << ": the ablation changed no later head's score";
}

TEST(AblationReruns, ReusedProbeGivesTheSameScoresOnAToyModel) {
    const Model m = toy("induction.safetensors");
    expect_reused_probe_is_exact(m, "0.1", AblationMode::zero);
    expect_reused_probe_is_exact(m, "0.0,0.1", AblationMode::mean);
}

TEST(AblationReruns, ReusedProbeGivesTheSameScoresOnAGpt) {
    const Model m = load_fixture_model(gpt_data("gpt2"));
    expect_reused_probe_is_exact(m, "0.1", AblationMode::zero);
    expect_reused_probe_is_exact(m, "0.3,1.2", AblationMode::zero);
}

TEST(AblationReruns, AProbeOfAnotherCountIsNotReused) {
    const Model m = toy("induction.safetensors");
    HeadDetection clean, a, b;
    detect_repeat_induction(m, KernelKind::reference, clean, 4);
    const Ablation ab = heads(m.config, "0.1");
    detect_repeat_induction(m, KernelKind::reference, a, 6, detector_repeat_seed, std::nullopt, &ab, &clean);
    detect_repeat_induction(m, KernelKind::reference, b, 6, detector_repeat_seed, std::nullopt, &ab);
    EXPECT_EQ(a.repeat_induction, b.repeat_induction);
    EXPECT_EQ(a.repeat_count, 6);
}

} // namespace
} // namespace attnviz::test
