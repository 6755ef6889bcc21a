// The logit lens over a range of positions (logit_lens_range, what the window's table asks for)
// against the whole lens, bit for bit: a GPT longer than one block of lens_block positions on
// both kernels and compact, ranges across and inside blocks; and the toy induction model's lens
// (its residuals through lm_head, no LayerNorm) against the product written out here.
#include "core_test_util.h"
#include "logit_lens.h"
#include "model_io.h"
#include "gpt_model.h"
#include <cmath>
#include <cstring>

namespace attnviz::test {
namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Positions p0.. of `part` equal `whole`'s, bit for bit.
void expect_range_of(const LogitLens& whole, const LogitLens& part, int p0, int p1, const std::string& what) {
    ASSERT_EQ(part.rows(), whole.rows()) << what;
    for (int r = 0; r < whole.rows(); ++r) {
        ASSERT_EQ(int(part.top[size_t(r)].size()), p1 - p0) << what;
        for (int t = p0; t < p1; ++t) {
            const auto& a = whole.top[size_t(r)][size_t(t)];
            const auto& b = part.top[size_t(r)][size_t(t - p0)];
            ASSERT_EQ(a.size(), b.size()) << what;
            for (size_t i = 0; i < a.size(); ++i) {
                EXPECT_EQ(a[i].token, b[i].token) << what << " row " << r << " pos " << t;
                EXPECT_TRUE(same_bits(a[i].prob, b[i].prob)) << what << " row " << r << " pos " << t;
            }
            const float na = whole.next_prob[size_t(r)][size_t(t)], nb = part.next_prob[size_t(r)][size_t(t - p0)];
            EXPECT_TRUE(same_bits(na, nb) || (std::isnan(na) && std::isnan(nb))) << what << " row " << r << " pos " << t;
        }
    }
}

Model long_gpt() {
    ModelConfig c;
    c.arch = Arch::gpt;
    c.vocab = 300;
    c.seq_len = 200;
    c.n_embd = 32;
    c.n_head = 2;
    c.n_layer = 2;
    c.bias = true;
    return random_gpt(c, 7);
}

std::vector<int> some_tokens(int T, int V) {
    std::vector<int> t(static_cast<size_t>(T));
    for (int i = 0; i < T; ++i) t[size_t(i)] = (i * 37 + 11) % V;
    return t;
}

TEST(LogitLensRange, EqualsTheWholeLensOnEveryKernelAndTrace) {
    const Model m = long_gpt();
    const std::vector<int> tokens = some_tokens(150, m.config.vocab);
    const int T = int(tokens.size());
    // (first, end): inside a block, across a block's edge, a block's last rows, the end, all.
    const std::vector<std::pair<int, int>> ranges{{3, 9}, {60, 70}, {100, 128}, {140, 150}, {0, 150}, {149, 150}};
    for (KernelKind kernel : {KernelKind::reference, KernelKind::fast}) {
        ModelTrace tr;
        gpt_forward(m, tokens, kernel, true, tr);
        const LogitLens whole = logit_lens(m, tr, kernel);
        ASSERT_EQ(int(whole.top[0].size()), T);
        for (auto [p0, p1] : ranges)
            expect_range_of(whole, logit_lens_range(m, tr, kernel, p0, p1), p0, p1,
                            std::string(to_string(kernel)) + " " + std::to_string(p0) + ".." + std::to_string(p1));
    }
    // A compact trace keeps no logits: every row is made, the last one too.
    ModelTrace compact;
    gpt_forward_compact(m, tokens, compact);
    const LogitLens whole = logit_lens(m, compact, KernelKind::fast);
    for (auto [p0, p1] : ranges)
        expect_range_of(whole, logit_lens_range(m, compact, KernelKind::fast, p0, p1), p0, p1,
                        "compact " + std::to_string(p0) + ".." + std::to_string(p1));
    // Out-of-range ends are clamped; an empty range is empty.
    EXPECT_EQ(logit_lens_range(m, compact, KernelKind::fast, 140, 400).top[0].size(), 10u);
    EXPECT_TRUE(logit_lens_range(m, compact, KernelKind::fast, 20, 20).top[0].empty());
}

TEST(LogitLensRange, ToyInductionModelReadsEachResidualThroughLmHead) {
    Model m;
    std::string error;
    ASSERT_TRUE(load_model(std::string(ATTNVIZ_TEST_DATA) + "/generate/induction_c32_s3.safetensors", m, error)) << error;
    const ModelConfig& c = m.config;
    std::vector<int> tokens{c.bos()};
    for (int i = 0; i < c.seq_len; ++i) tokens.push_back(i % 5);
    ModelTrace tr;
    model_forward(m, tokens, KernelKind::reference, tr);
    const LogitLens lens = logit_lens(m, tr, KernelKind::reference);
    ASSERT_EQ(lens.rows(), c.n_layer + 1);
    const int T = int(tokens.size());
    for (int r = 0; r <= c.n_layer; ++r) {
        const Mat& resid = r == c.n_layer ? tr.h_out : tr.layers[size_t(r)].x;
        for (int t = 0; t < T; ++t) {
            // softmax(resid[t] lm_head^T) in double, the top token and the next one's probability.
            const Eigen::VectorXd logits = (m.lm_head.cast<double>() * resid.row(t).transpose().cast<double>());
            const Eigen::VectorXd p = (logits.array() - logits.maxCoeff()).exp() / (logits.array() - logits.maxCoeff()).exp().sum();
            Eigen::Index best = 0;
            p.maxCoeff(&best);
            EXPECT_EQ(lens.top[size_t(r)][size_t(t)][0].token, int(best)) << "row " << r << " pos " << t;
            EXPECT_NEAR(lens.top[size_t(r)][size_t(t)][0].prob, p[best], 1e-5);
            if (t + 1 < T) {
                EXPECT_NEAR(lens.next_prob[size_t(r)][size_t(t)], p[tokens[size_t(t + 1)]], 1e-5);
            }
        }
    }
    expect_range_of(lens, logit_lens_range(m, tr, KernelKind::reference, 4, 9), 4, 9, "toy");
    // A toy model that predicts no next token has no lens.
    Model prev = m;
    prev.config.task = Task::prev;
    EXPECT_THROW(logit_lens(prev, tr, KernelKind::reference), std::invalid_argument);
}

} // namespace
} // namespace attnviz::test
