// kernel_reference.cpp: the forward pass in plain loops, in exactly the float32 order
// PyTorch 1.13 uses on the CPU with the reference BLAS (torch-rng.md section 8), so every
// intermediate matches torch bit for bit.
//
// Every sum is sequential from 0 with one rounding per multiply and per add (the core
// is built with -ffp-contract=off). Rows are independent, so they may run on several
// threads without changing a bit.
#include "kernels.h"
#include <cmath>
#include <limits>

namespace attnviz::detail {

namespace {

// Below this many multiply-adds a loop is not worth waking a second thread for.
constexpr int64_t parallel_work = 1 << 16;

// out[o] = sum_c in[c] * W[o][c] (+ b[o]): one row of nn.Linear, y = x W^T + b.
// W is (n_out, n_in); the bias comes after the sum, as sgemm with beta = 1 adds it.
void linear_row(const float* in, const Mat& W, const Vec& b, float* out) {
    const Eigen::Index n_out = W.rows(), n_in = W.cols();
    const bool has_bias = b.size() > 0;
    for (Eigen::Index o = 0; o < n_out; ++o) {
        const float* w_row = W.data() + o * n_in;
        float acc = 0.f;
        for (Eigen::Index c = 0; c < n_in; ++c) acc += in[c] * w_row[c];
        if (has_bias) acc += b[o];
        out[o] = acc;
    }
}

// q, k, v = qkv.split(C, dim=2), then view(T, H, head_dim).transpose: row t of each.
void split_row(Trace& tr, int t) {
    const int C = tr.C, hd = tr.head_dim;
    const float* row = tr.qkv.data() + int64_t(t) * 3 * C;
    for (int h = 0; h < tr.H; ++h)
        for (int d = 0; d < hd; ++d) {
            tr.q[h](t, d) = row[h * hd + d];
            tr.k[h](t, d) = row[C + h * hd + d];
            tr.v[h](t, d) = row[2 * C + h * hd + d];
        }
}

// raw[h][i][j] = q[h][i] . k[h][j], sequential in d.
float raw_score(const Trace& tr, int h, int i, int j) {
    const float* q = tr.q[h].data() + int64_t(i) * tr.head_dim;
    const float* k = tr.k[h].data() + int64_t(j) * tr.head_dim;
    float acc = 0.f;
    for (int d = 0; d < tr.head_dim; ++d) acc += q[d] * k[d];
    return acc;
}

// torch's vectorised reduce_all(+) over 8 float lanes (AVX2): sequential below 8 values,
// otherwise 8 lane sums, a partial last chunk into the first lanes, then a fixed tree.
float lane_sum(const float* e, int L) {
    if (L < 8) {
        float s = e[0];
        for (int j = 1; j < L; ++j) s += e[j];
        return s;
    }
    float lane[8];
    for (int l = 0; l < 8; ++l) lane[l] = e[l];
    int j = 8;
    for (; j + 8 <= L; j += 8)
        for (int l = 0; l < 8; ++l) lane[l] += e[j + l];
    for (int l = 0; j + l < L; ++l) lane[l] += e[j + l];
    return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

// One softmax row: probs[h][i][*] from raw row i, scaled, masked with -inf. A row with
// every key masked has max -inf, (-inf) - (-inf) = NaN, so the whole row is NaN, as in torch.
void softmax_row(Trace& tr, int h, int i) {
    const int T = tr.T;
    const float* raw = tr.raw_scores[h].data() + int64_t(i) * T;
    float* p = tr.probs[h].data() + int64_t(i) * T;
    const float neg_inf = -std::numeric_limits<float>::infinity();
    // masked scores go into p first, then are replaced by e_j, then by p_j.
    for (int j = 0; j < T; ++j) p[j] = tr.visible(i, j) ? raw[j] * tr.scale : neg_inf;
    float m = p[0];
    for (int j = 1; j < T; ++j)
        if (p[j] > m || std::isnan(p[j])) m = p[j];
    for (int j = 0; j < T; ++j) p[j] = sleef_expf_u10(p[j] - m);
    const float inv = 1.f / lane_sum(p, T);
    for (int j = 0; j < T; ++j) p[j] = p[j] * inv;
}

// heads[h][i][d] = sum_j probs[h][i][j] v[h][j][d], sequential in j over all T keys
// (masked keys add +0, which changes nothing but keeps torch's order).
void head_row(Trace& tr, int h, int i) {
    const int T = tr.T, hd = tr.head_dim;
    const float* p = tr.probs[h].data() + int64_t(i) * T;
    float* out = tr.heads[h].data() + int64_t(i) * hd;
    // j outside, d inside: each out[d] is still its own sequential sum over j.
    for (int d = 0; d < hd; ++d) out[d] = 0.f;
    for (int j = 0; j < T; ++j) {
        const float pj = p[j];
        const float* v = tr.v[h].data() + int64_t(j) * hd;
        for (int d = 0; d < hd; ++d) out[d] += pj * v[d];
    }
}

// Softmax, heads, concat and y for rows r0 .. T-1.
void rows_from(const Weights& w, Trace& tr, int r0) {
    const int T = tr.T, H = tr.H, hd = tr.head_dim, C = tr.C;
    const int n = T - r0;
    const int64_t attn_work = int64_t(H) * n * T * (hd + 4);
#pragma omp parallel for schedule(dynamic, 4) if (attn_work > parallel_work)
    for (int task = 0; task < H * n; ++task) {
        const int h = task / n, i = r0 + task % n;
        softmax_row(tr, h, i);
        head_row(tr, h, i);
    }
    for (int i = r0; i < T; ++i)
        for (int h = 0; h < H; ++h)
            for (int d = 0; d < hd; ++d) tr.concat(i, h * hd + d) = tr.heads[h](i, d);
#pragma omp parallel for schedule(static) if (int64_t(n) * C * C > parallel_work)
    for (int i = r0; i < T; ++i)
        linear_row(tr.concat.data() + int64_t(i) * C, w.w_proj, w.b_proj, tr.y.data() + int64_t(i) * C);
}

} // namespace

void reference_forward(const Weights& w, Trace& tr) {
    const int T = tr.T, C = tr.C, H = tr.H;
    // qkv = x W_qkv^T: (T, C) -> (T, 3C)
#pragma omp parallel for schedule(static) if (int64_t(T) * 3 * C * C > parallel_work)
    for (int t = 0; t < T; ++t)
        linear_row(tr.x.data() + int64_t(t) * C, w.w_qkv, w.b_qkv, tr.qkv.data() + int64_t(t) * 3 * C);
    for (int t = 0; t < T; ++t) split_row(tr, t);
    // raw = q k^T per head: (T, head_dim) x (head_dim, T) -> (T, T), every entry (the
    // mask is applied later, and the raw scores are shown before it).
#pragma omp parallel for schedule(static) if (int64_t(H) * T * T * tr.head_dim > parallel_work)
    for (int task = 0; task < H * T; ++task) {
        const int h = task / T, i = task % T;
        for (int j = 0; j < T; ++j) tr.raw_scores[h](i, j) = raw_score(tr, h, i, j);
    }
    rows_from(w, tr, 0);
}

void reference_update(const Weights& w, int p, Trace& tr) {
    const int T = tr.T, C = tr.C;
    linear_row(tr.x.data() + int64_t(p) * C, w.w_qkv, w.b_qkv, tr.qkv.data() + int64_t(p) * 3 * C);
    split_row(tr, p);
    // New q row p changes score row p; new k row p changes score column p.
    for (int h = 0; h < tr.H; ++h)
        for (int j = 0; j < T; ++j) {
            tr.raw_scores[h](p, j) = raw_score(tr, h, p, j);
            tr.raw_scores[h](j, p) = raw_score(tr, h, j, p);
        }
    rows_from(w, tr, first_affected_row(tr.config.mask, p));
}

} // namespace attnviz::detail
