// kernel_fast.cpp: the forward pass with Eigen products and OpenMP, agreeing with the
// reference kernel within 1e-5 and skipping what the causal mask throws away.
//
// Work per head runs in row blocks: raw = q_block k^T (full rows: the scores are shown
// before the mask), the softmax over the visible prefix of each row, and
// heads_block = probs_block[:, :keys] v[:keys], where keys is the last visible key of the
// block, so the masked upper triangle is neither exponentiated nor multiplied.
// Blocks are independent tasks, spread over the threads; the big (T, C) products use
// Eigen's own threading. No T x T temporary beyond the trace itself.
#include "kernels.h"
#include <algorithm>
#include <limits>

namespace attnviz::detail {

namespace {

constexpr int block_rows = 64;          // rows of one task: 64 x T scores stay in L2
constexpr int64_t parallel_work = 1 << 16;
constexpr int64_t reference_loop_work = 1 << 14;

// probs row from raw row over the n visible keys (a prefix); 0 beyond. With no visible
// key the row is NaN, as torch's softmax of an all -inf row.
void softmax_row(const float* raw, float scale, int n, int T, float* p) {
    if (n == 0) {
        std::fill(p, p + T, std::numeric_limits<float>::quiet_NaN());
        return;
    }
    Eigen::Map<const Eigen::ArrayXf> r(raw, n);
    Eigen::Map<Eigen::ArrayXf> e(p, n);
    e = r * scale;
    const float m = e.maxCoeff();
    e = (e - m).exp();
    e *= 1.f / e.sum();
    std::fill(p + n, p + T, 0.f);
}

// Rows i0 .. i1-1 of head h: raw scores (if asked), softmax, head outputs.
void attend_block(Trace& tr, int h, int i0, int i1, bool with_raw) {
    const int T = tr.T, n = i1 - i0;
    const MaskMode mask = tr.config.mask;
    Mat& raw = tr.raw_scores[h];
    Mat& probs = tr.probs[h];
    if (with_raw) raw.middleRows(i0, n).noalias() = tr.q[h].middleRows(i0, n) * tr.k[h].transpose();
    for (int i = i0; i < i1; ++i)
        softmax_row(raw.data() + int64_t(i) * T, tr.scale, visible_count(mask, T, i), T,
                    probs.data() + int64_t(i) * T);
    // Keys beyond the last row's visible prefix have probability 0 in every row of the
    // block. At least one key, so a NaN row (off-by-one row 0) still gives NaN outputs.
    const int keys = std::max(1, visible_count(mask, T, i1 - 1));
    tr.heads[h].middleRows(i0, n).noalias() = probs.block(i0, 0, n, keys) * tr.v[h].topRows(keys);
}

// Scores (if asked), softmax and heads for rows r0 .. T-1 of every head.
void attend_rows(Trace& tr, int r0, bool with_raw) {
    const int T = tr.T, H = tr.H;
    const int n_blocks = (T - r0 + block_rows - 1) / block_rows;
    const int64_t work = int64_t(H) * (T - r0) * T * tr.head_dim;
    // Later blocks see more keys: hand them out first so the threads finish together.
#pragma omp parallel for schedule(dynamic, 1) if (work > parallel_work)
    for (int task = 0; task < H * n_blocks; ++task) {
        const int b = n_blocks - 1 - task / H, h = task % H;
        const int i0 = r0 + b * block_rows, i1 = std::min(T, i0 + block_rows);
        attend_block(tr, h, i0, i1, with_raw);
    }
}

// concat rows r0.. from the heads, then y rows r0.. = concat W_proj^T (+ b_proj).
void project_rows(const Weights& w, Trace& tr, int r0) {
    const int n = tr.T - r0, hd = tr.head_dim;
    for (int h = 0; h < tr.H; ++h) tr.concat.block(r0, h * hd, n, hd) = tr.heads[h].bottomRows(n);
    tr.y.bottomRows(n).noalias() = tr.concat.bottomRows(n) * w.w_proj.transpose();
    if (w.b_proj.size() > 0) tr.y.bottomRows(n).rowwise() += w.b_proj;
}

} // namespace

bool fast_uses_reference_loops(const Trace& tr) {
    const int64_t T = tr.T, C = tr.C;
    return T * C * 4 * C + 2 * T * T * C < reference_loop_work;
}

void fast_forward(const Weights& w, Trace& tr) {
    if (fast_uses_reference_loops(tr)) {
        reference_forward(w, tr);
        return;
    }
    const int T = tr.T, C = tr.C, hd = tr.head_dim;
    // qkv = x W_qkv^T: (T, C) x (C, 3C)
    tr.qkv.noalias() = tr.x * w.w_qkv.transpose();
    if (w.b_qkv.size() > 0) tr.qkv.rowwise() += w.b_qkv;
    for (int h = 0; h < tr.H; ++h) {
        tr.q[h] = tr.qkv.block(0, h * hd, T, hd);
        tr.k[h] = tr.qkv.block(0, C + h * hd, T, hd);
        tr.v[h] = tr.qkv.block(0, 2 * C + h * hd, T, hd);
    }
    attend_rows(tr, 0, true);
    project_rows(w, tr, 0);
}

void fast_update(const Weights& w, int p, Trace& tr) {
    if (fast_uses_reference_loops(tr)) {
        reference_update(w, p, tr);
        return;
    }
    const int C = tr.C, hd = tr.head_dim;
    tr.qkv.row(p).noalias() = tr.x.row(p) * w.w_qkv.transpose();
    if (w.b_qkv.size() > 0) tr.qkv.row(p) += w.b_qkv;
    for (int h = 0; h < tr.H; ++h) {
        tr.q[h].row(p) = tr.qkv.row(p).segment(h * hd, hd);
        tr.k[h].row(p) = tr.qkv.row(p).segment(C + h * hd, hd);
        tr.v[h].row(p) = tr.qkv.row(p).segment(2 * C + h * hd, hd);
        // New q row p changes score row p; new k row p changes score column p.
        tr.raw_scores[h].row(p).noalias() = tr.q[h].row(p) * tr.k[h].transpose();
        tr.raw_scores[h].col(p).noalias() = tr.q[h] * tr.k[h].row(p).transpose();
    }
    const int r0 = first_affected_row(tr.config.mask, p);
    attend_rows(tr, r0, false);
    project_rows(w, tr, r0);
}

} // namespace attnviz::detail
