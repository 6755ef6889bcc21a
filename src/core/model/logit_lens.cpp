// logit_lens.cpp: every residual's prediction through ln_f and the tied unembedding; see
// logit_lens.h. GCC 12's -Wmaybe-uninitialized inside Eigen is silenced as in model.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "logit_lens.h"
#include "gpt_model.h"
#include "layers.h"
#include "work_team.h"
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnviz {

using namespace detail;

namespace {

// The k largest logits of a row, highest first (ties: the lower id first), with their
// probabilities, and the probability of `next` (-1: none).
void read_row(const float* row, int V, int k, int next, std::vector<TokenProb>& top, float& next_prob) {
    const Eigen::Map<const Eigen::ArrayXf> r(row, V);
    const float mx = r.maxCoeff();
    const Eigen::ArrayXf e = (r - mx).exp();
    double sum = 0;
    for (Eigen::Index j = 0; j < e.size(); ++j) sum += double(e[j]);
    auto better = [&](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); };
    std::vector<int> best;
    best.reserve(size_t(k) + 1);
    for (int j = 0; j < V; ++j) {
        if (int(best.size()) == k && !better(j, best.back())) continue;
        best.insert(std::upper_bound(best.begin(), best.end(), j, better), j);
        if (int(best.size()) > k) best.pop_back();
    }
    top.clear();
    for (int j : best) top.push_back({j, float(double(e[j]) / sum)});
    next_prob = next >= 0 ? float(double(e[next]) / sum) : NAN;
}

} // namespace

LogitLens logit_lens(const Model& m, const ModelTrace& tr, KernelKind kernel, int k) {
    if (m.config.arch != Arch::gpt)
        throw std::invalid_argument("the logit lens reads a GPT model's residual stream through ln_f; a toy model has no ln_f.");
    const int T = int(tr.tokens.size()), C = m.config.n_embd, V = m.config.vocab, L = m.config.n_layer;
    if (tr.h0.rows() != T || int(tr.blocks.size()) != L)
        throw std::invalid_argument("the trace has no residual stream of every layer; run gpt_forward first.");
    for (const BlockTrace& b : tr.blocks)
        if (b.resid_post.rows() != T)
            throw std::invalid_argument("the trace has no residual stream of every layer; run gpt_forward first.");
    k = std::clamp(k, 1, V);
    LogitLens out;
    out.top.assign(size_t(L + 1), std::vector<std::vector<TokenProb>>(size_t(T)));
    out.next_prob.assign(size_t(L + 1), std::vector<float>(size_t(T), NAN));
    Mat ln(lens_block, C), logits(lens_block, V);
    const int threads = work_team_threads();
    for (int r = 0; r <= L; ++r) {
        const Mat& resid = gpt_resid_pre(tr, r); // r = 0: h0; else layer r - 1's resid_post
        for (int b0 = 0; b0 < T; b0 += lens_block) {
            const int n = std::min(T, b0 + lens_block) - b0;
            const float* in = resid.data() + int64_t(b0) * C;
            const bool own = r == L && tr.logits.rows() == T && tr.logits.cols() == V;
            if (!own) layernorm_forward(ln.data(), in, m.ln_f, 0, n, C);
            if (own) {
                // The last layer's lens is ln_f(h_out) wte^T: the forward's own logits.
                logits.topRows(n) = tr.logits.middleRows(b0, n);
            } else if (kernel == KernelKind::fast) {
                linear_forward_rows(logits.data(), ln.data(), m.wte, Vec(), 0, n, kernel); // the team's column groups
            } else {
                // The reference loop is one row at a time: rows side by side, the same bits.
                run_pieces(n, threads, [&](int i) {
                    linear_forward_rows(logits.data(), ln.data(), m.wte, Vec(), i, i + 1, kernel);
                });
            }
            run_pieces(n, threads, [&](int i) {
                const int pos = b0 + i;
                const int next = pos + 1 < T ? tr.tokens[size_t(pos + 1)] : -1;
                read_row(logits.data() + int64_t(i) * V, V, k, next, out.top[size_t(r)][size_t(pos)],
                         out.next_prob[size_t(r)][size_t(pos)]);
            });
        }
    }
    return out;
}

} // namespace attnviz
