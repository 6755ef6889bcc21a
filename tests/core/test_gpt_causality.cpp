// test_gpt_causality.cpp: causality through a whole GPT. Changing token p leaves every
// layer's rows before p exactly as they were, and the update from p on (gpt_update) gives
// what a full forward on the new tokens gives; gpt_causality's per-layer differences.
// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics wherever Eigen's
// products inline them; the values are defined, so the warning is silenced here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "gpt_causality.h"
#include "gpt_test_util.h"

namespace attnviz::test {
namespace {

// Every row before p of every per-layer tensor the forward keeps, bit for bit.
void expect_rows_before_equal(const ModelTrace& a, const ModelTrace& b, int p, bool lean) {
    auto same = [&](const Mat& x, const Mat& y, const char* what, size_t l) {
        ASSERT_EQ(x.cols(), y.cols()) << what;
        EXPECT_TRUE(x.topRows(p) == y.topRows(p)) << what << " of layer " << l << " changed before " << p;
    };
    same(a.h0, b.h0, "h0", 0);
    for (size_t l = 0; l < a.layers.size(); ++l) {
        const Trace& x = a.layers[l];
        const Trace& y = b.layers[l];
        for (int h = 0; h < x.H; ++h) {
            same(x.att[h], y.att[h], "probs", l);
            same(x.k[h], y.k[h], "k", l);
            same(x.v[h], y.v[h], "v", l);
            if (!lean) {
                same(x.q[h], y.q[h], "q", l);
                same(x.heads[h], y.heads[h], "heads", l);
                same(x.raw_scores[h].leftCols(p), y.raw_scores[h].leftCols(p), "visible raw scores", l);
            }
        }
        if (!lean) {
            same(x.x, y.x, "ln_1", l);
            same(x.y, y.y, "attn", l);
            same(a.blocks[l].mlp, b.blocks[l].mlp, "mlp", l);
        }
        if (!lean) same(a.blocks[l].resid_mid, b.blocks[l].resid_mid, "resid_mid", l);
        same(a.blocks[l].resid_post, b.blocks[l].resid_post, "resid_post", l);
    }
    same(a.logits, b.logits, "logits", 0);
}

float max_diff(const Mat& a, const Mat& b) { return (a - b).cwiseAbs().maxCoeff(); }

void expect_traces_close(const ModelTrace& a, const ModelTrace& b, float tol) {
    for (size_t l = 0; l < a.layers.size(); ++l) {
        for (int h = 0; h < a.layers[l].H; ++h) {
            if (tol == 0.f) EXPECT_TRUE(a.layers[l].att[h] == b.layers[l].att[h]) << l;
            else EXPECT_LE(max_diff(a.layers[l].att[h], b.layers[l].att[h]), tol) << l;
        }
        if (tol == 0.f) EXPECT_TRUE(a.blocks[l].resid_post == b.blocks[l].resid_post) << l;
        else EXPECT_LE(max_diff(a.blocks[l].resid_post, b.blocks[l].resid_post), tol) << l;
    }
    if (tol == 0.f) EXPECT_TRUE(a.logits == b.logits);
    else EXPECT_LE(max_diff(a.logits, b.logits), tol);
}

class GptCausality : public ::testing::TestWithParam<std::tuple<KernelKind, bool>> {};

TEST_P(GptCausality, RowsBeforePNeverMoveAndTheUpdateEqualsAFullForward) {
    const auto [kernel, lean] = GetParam();
    const Model m = load_fixture_model(gpt_data("gpt2"));
    const std::vector<int> tokens = fixture_tokens(gpt_data("gpt2_forward.safetensors"));
    const int T = int(tokens.size());
    for (int p : {0, 5, T - 1}) {
        ModelTrace before;
        gpt_forward(m, tokens, kernel, lean, before);
        std::vector<int> changed = tokens;
        changed[size_t(p)] = (tokens[size_t(p)] + 1) % m.config.vocab;
        ModelTrace full;
        gpt_forward(m, changed, kernel, lean, full);
        expect_rows_before_equal(before, full, p, lean);
        // Something after p must move, or the test proves nothing.
        EXPECT_GT(max_diff(before.logits.bottomRows(T - p), full.logits.bottomRows(T - p)), 0.f);

        ModelTrace updated = before;
        gpt_update(m, p, changed[size_t(p)], kernel, updated);
        EXPECT_EQ(updated.tokens, changed);
        expect_rows_before_equal(before, updated, p, lean);
        // The reference kernel's update runs the forward's own loops: the same bits. The fast
        // update computes its softmax rows itself.
        expect_traces_close(updated, full, kernel == KernelKind::reference ? 0.f : 1e-5f);
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, GptCausality,
                         ::testing::Combine(::testing::Values(KernelKind::reference, KernelKind::fast),
                                            ::testing::Bool()));

// A model big enough for the fast kernel's products and the work team.
TEST(GptCausalityLarge, FastUpdateAtHalfEqualsAFullForward) {
    ModelConfig c;
    c.arch = Arch::gpt;
    c.n_layer = 2;
    c.n_head = 4;
    c.n_embd = 128;
    c.vocab = 500;
    c.seq_len = 300;
    c.bias = true;
    const Model m = random_gpt(c, 9);
    std::vector<int> tokens;
    for (int t = 0; t < 300; ++t) tokens.push_back((t * 13 + 7) % 500);
    ModelTrace before, full;
    gpt_forward(m, tokens, KernelKind::fast, true, before);
    std::vector<int> changed = tokens;
    changed[150] = 3;
    gpt_forward(m, changed, KernelKind::fast, true, full);
    ModelTrace updated = before;
    gpt_update(m, 150, 3, KernelKind::fast, updated);
    expect_rows_before_equal(before, updated, 150, true);
    expect_traces_close(updated, full, 1e-5f);
}

TEST(GptCausalityLarge, UpdateRefusesABadPositionOrToken) {
    const Model m = load_fixture_model(gpt_data("gpt2"));
    ModelTrace tr;
    gpt_forward(m, {1, 2, 3}, KernelKind::fast, false, tr);
    EXPECT_THROW(gpt_update(m, 3, 1, KernelKind::fast, tr), std::invalid_argument);
    EXPECT_THROW(gpt_update(m, -1, 1, KernelKind::fast, tr), std::invalid_argument);
    EXPECT_THROW(gpt_update(m, 1, 1000, KernelKind::fast, tr), std::invalid_argument);
    EXPECT_EQ(tr.tokens, (std::vector<int>{1, 2, 3}));
}

// gpt_causality on the tiny model: every layer's entries before p are exactly 0.0, every
// layer moves at p, and each entry is the row's max |Δ| computed here with Eigen.
TEST(GptCausalityDiffs, ZeroBeforePInEveryLayerAndTheRowMaximaFromP) {
    const Model m = load_fixture_model(gpt_data("gpt2"));
    const std::vector<int> tokens = fixture_tokens(gpt_data("gpt2_forward.safetensors"));
    const int T = int(tokens.size()), L = m.config.n_layer;
    for (KernelKind kernel : {KernelKind::reference, KernelKind::fast}) {
        for (int p : {0, 5, T - 1}) {
            ModelTrace base;
            gpt_forward(m, tokens, kernel, true, base);
            const int id = (tokens[size_t(p)] + 7) % m.config.vocab;
            ModelTrace updated = base;
            gpt_update(m, p, id, kernel, updated);
            const auto d = gpt_causality(base, updated, p, id);
            EXPECT_EQ(d.p, p);
            EXPECT_EQ(d.new_token, id);
            ASSERT_EQ(d.logits_max_abs.size(), size_t(T));
            ASSERT_EQ(d.resid_max_abs.size(), size_t(L));
            for (int l = 0; l < L; ++l) {
                const std::vector<float>& r = d.resid_max_abs[size_t(l)];
                ASSERT_EQ(r.size(), size_t(T));
                for (int t = 0; t < p; ++t) EXPECT_EQ(r[size_t(t)], 0.0f) << "layer " << l << " position " << t;
                EXPECT_GT(r[size_t(p)], 0.0f) << "layer " << l;
                for (int t = p; t < T; ++t) {
                    const Mat& a = base.blocks[size_t(l)].resid_post;
                    const Mat& b = updated.blocks[size_t(l)].resid_post;
                    EXPECT_EQ(r[size_t(t)], (a.row(t) - b.row(t)).cwiseAbs().maxCoeff()) << l << " " << t;
                }
            }
            for (int t = 0; t < p; ++t) EXPECT_EQ(d.logits_max_abs[size_t(t)], 0.0f) << t;
            EXPECT_GT(d.logits_max_abs[size_t(p)], 0.0f);
            // A full forward on the changed tokens gives the same zeros before p.
            std::vector<int> changed = tokens;
            changed[size_t(p)] = id;
            ModelTrace full;
            gpt_forward(m, changed, kernel, false, full);
            const auto f = gpt_causality(base, full, p, id);
            for (int l = 0; l < L; ++l)
                for (int t = 0; t < p; ++t) EXPECT_EQ(f.resid_max_abs[size_t(l)][size_t(t)], 0.0f) << l << " " << t;
        }
    }
}

TEST(GptCausalityDiffs, RefusesTracesThatDoNotDifferOnlyAtP) {
    const Model m = load_fixture_model(gpt_data("gpt2"));
    ModelTrace base, changed, other, shorter;
    gpt_forward(m, {1, 2, 3, 4}, KernelKind::reference, true, base);
    gpt_forward(m, {1, 9, 3, 4}, KernelKind::reference, true, changed);
    gpt_forward(m, {1, 9, 3, 5}, KernelKind::reference, true, other);
    gpt_forward(m, {1, 9, 3}, KernelKind::reference, true, shorter);
    EXPECT_NO_THROW(gpt_causality(base, changed, 1, 9));
    EXPECT_THROW(gpt_causality(base, changed, -1, 9), std::invalid_argument);
    EXPECT_THROW(gpt_causality(base, changed, 4, 9), std::invalid_argument);
    EXPECT_THROW(gpt_causality(base, changed, 1, 8), std::invalid_argument);       // not changed's token
    EXPECT_THROW(gpt_causality(base, changed, 1, 1000), std::invalid_argument);    // outside the vocabulary
    EXPECT_THROW(gpt_causality(base, other, 1, 9), std::invalid_argument);         // also differs at 3
    EXPECT_THROW(gpt_causality(base, shorter, 1, 9), std::invalid_argument);       // another length
    ModelTrace one_layer = changed;
    one_layer.blocks.pop_back();
    EXPECT_THROW(gpt_causality(base, one_layer, 1, 9), std::invalid_argument);
    EXPECT_THROW(gpt_causality(ModelTrace{}, changed, 1, 9), std::invalid_argument);
    try {
        gpt_causality(base, other, 1, 9);
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("position 3"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace attnviz::test
