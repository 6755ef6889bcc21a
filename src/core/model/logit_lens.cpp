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

namespace {

bool is_gpt(const Model& m) { return m.config.arch == Arch::gpt; }

// Row r's residual: r = 0 the embedding, else layer r - 1's output. A toy trace keeps each
// block's input as its layer's x and the last block's output as h_out.
const Mat& lens_resid(const Model& m, const ModelTrace& tr, int r) {
    if (is_gpt(m)) return gpt_resid_pre(tr, r);
    const int L = m.config.n_layer;
    return r == L ? tr.h_out : tr.layers[size_t(r)].x;
}

// The model's own logits of the last row, when the trace keeps them whole.
const Mat* own_logits(const Model& m, const ModelTrace& tr, int T) {
    const Mat& l = is_gpt(m) ? tr.logits : tr.logits_next;
    return l.rows() == T && l.cols() == m.config.vocab ? &l : nullptr;
}

void check_lens_input(const Model& m, const ModelTrace& tr) {
    if (!is_gpt(m) && !m.config.has_lm_head())
        throw std::invalid_argument("the logit lens reads the residual stream through the next-token head, which this toy model's task (" +
                                    std::string(to_string(m.config.task)) + ") does not have; give a GPT model or an induction model.");
    const int T = int(tr.tokens.size()), L = m.config.n_layer;
    bool whole = int(tr.layers.size()) == L && (is_gpt(m) ? int(tr.blocks.size()) == L && tr.h0.rows() == T : tr.h_out.rows() == T);
    for (int r = 0; whole && r <= L; ++r) whole = lens_resid(m, tr, r).rows() == T;
    if (T == 0 || !whole)
        throw std::invalid_argument("the trace has no residual stream of every layer; run the model's forward first.");
}

} // namespace

LogitLens logit_lens(const Model& m, const ModelTrace& tr, KernelKind kernel, int k) {
    return logit_lens_range(m, tr, kernel, 0, int(tr.tokens.size()), k);
}

LogitLens logit_lens_range(const Model& m, const ModelTrace& tr, KernelKind kernel, int p0, int p1, int k) {
    check_lens_input(m, tr);
    const int T = int(tr.tokens.size()), C = m.config.n_embd, V = m.config.vocab, L = m.config.n_layer;
    p0 = std::clamp(p0, 0, T);
    p1 = std::clamp(p1, p0, T);
    const int n_pos = p1 - p0;
    k = std::clamp(k, 1, V);
    const Mat& unembed = is_gpt(m) ? m.wte : m.lm_head;
    const Mat* own = own_logits(m, tr, T);
    LogitLens out;
    out.top.assign(size_t(L + 1), std::vector<std::vector<TokenProb>>(size_t(n_pos)));
    out.next_prob.assign(size_t(L + 1), std::vector<float>(size_t(n_pos), NAN));
    // Per block of lens_block positions, every row's residual (through ln_f for a GPT) stacked
    // in one matrix, row r's n positions at r * n, and all their logits in one product: wte is
    // packed once per block rather than once per row and block. The blocks a range touches
    // are made whole on the fast kernel (sgemm's last bits may depend on the rows beside).
    const int rows = L + 1, made = own ? L : rows; // the last row's lens is the forward's own logits
    Mat stacked(rows * lens_block, C), logits(rows * lens_block, V);
    const int threads = work_team_threads();
    for (int b0 = p0 / lens_block * lens_block; b0 < p1; b0 += lens_block) {
        const int n = std::min(T, b0 + lens_block) - b0;
        // The positions of this block the range asks for.
        const int i0 = std::max(p0, b0) - b0, i1 = std::min(p1, b0 + n) - b0;
        for (int r = 0; r < made; ++r) {
            const float* in = lens_resid(m, tr, r).data() + int64_t(b0) * C;
            float* x = stacked.data() + int64_t(r) * n * C;
            if (is_gpt(m)) layernorm_forward(x, in, m.ln_f, 0, n, C);
            else std::copy(in, in + int64_t(n) * C, x); // a toy model's lens reads the residual as it stands
        }
        if (own) logits.middleRows(int64_t(L) * n, n) = own->middleRows(b0, n);
        if (kernel == KernelKind::fast) {
            linear_forward_rows(logits.data(), stacked.data(), unembed, Vec(), 0, made * n, kernel); // the team's column groups
        } else {
            // The reference loop is one row at a time: only the rows asked for, side by side, the same bits.
            const int w = i1 - i0;
            run_pieces(made * w, threads, [&](int j) {
                const int row = (j / w) * n + i0 + j % w;
                linear_forward_rows(logits.data(), stacked.data(), unembed, Vec(), row, row + 1, kernel);
            });
        }
        const int w = i1 - i0;
        run_pieces(rows * w, threads, [&](int j) {
            const int r = j / w, i = i0 + j % w, pos = b0 + i;
            const int next = pos + 1 < T ? tr.tokens[size_t(pos + 1)] : -1;
            const size_t at = size_t(pos - p0);
            read_row(logits.data() + (int64_t(r) * n + i) * V, V, k, next < V ? next : -1, out.top[size_t(r)][at],
                     out.next_prob[size_t(r)][at]);
        });
    }
    return out;
}

ModelTrace lens_inputs(const Model& m, const ModelTrace& tr, int64_t copy_logits_below) {
    ModelTrace c;
    c.tokens = tr.tokens;
    c.h0 = tr.h0;
    c.h_out = tr.h_out;
    c.layers.resize(tr.layers.size());
    if (m.config.arch == Arch::gpt) {
        c.blocks.resize(tr.blocks.size());
        for (size_t l = 0; l < tr.blocks.size(); ++l) c.blocks[l].resid_post = tr.blocks[l].resid_post;
        if (tr.logits.size() < copy_logits_below) c.logits = tr.logits;
    } else {
        for (size_t l = 0; l < tr.layers.size(); ++l) c.layers[l].x = tr.layers[l].x;
        c.logits_next = tr.logits_next;
    }
    return c;
}

} // namespace attnviz
