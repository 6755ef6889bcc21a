// kernel_reference.cpp: the forward pass in plain loops, in exactly the float32 order
// PyTorch 1.13 uses on the CPU with the reference BLAS (docs/numerics.md §3), so every
// intermediate matches torch bit for bit.
//
// Every sum is sequential from 0 with one rounding per multiply and per add (the core
// is built with -ffp-contract=off). Rows are independent, so they may run on several
// threads without changing a bit.
#include "kernels.h"
#include "work_team.h"
#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz::detail {

namespace {

// Below this many multiply-adds a second thread costs more than it saves.
constexpr int64_t parallel_work = 1 << 22;

// out[k] = sum_d a[d] * b_k[d] for the n rows b_k = b + k * len, each a sequential sum
// from 0. Four sums run side by side only so the CPU can overlap them; each one still
// adds its terms in order, so the bits are those of one plain loop per output.
void dot_rows(const float* a, const float* b, int64_t n, int64_t len, float* out) {
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        const float *b0 = b + k * len, *b1 = b0 + len, *b2 = b1 + len, *b3 = b2 + len;
        float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
        for (int64_t d = 0; d < len; ++d) {
            s0 += a[d] * b0[d];
            s1 += a[d] * b1[d];
            s2 += a[d] * b2[d];
            s3 += a[d] * b3[d];
        }
        out[k] = s0;
        out[k + 1] = s1;
        out[k + 2] = s2;
        out[k + 3] = s3;
    }
    for (; k < n; ++k) {
        const float* bk = b + k * len;
        float s = 0.f;
        for (int64_t d = 0; d < len; ++d) s += a[d] * bk[d];
        out[k] = s;
    }
}

// out[o] = sum_c in[c] * W[o][c] (+ b[o]): one row of nn.Linear, y = x W^T + b.
// W is (n_out, n_in); the bias comes after the sum, as sgemm with beta = 1 adds it
// (docs/numerics.md §3.2).
void linear_row(const float* in, const Mat& W, const Vec& b, float* out) {
    dot_rows(in, W.data(), W.rows(), W.cols(), out);
    if (b.size() > 0)
        for (Eigen::Index o = 0; o < W.rows(); ++o) out[o] += b[o];
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
    float s;
    dot_rows(tr.q[h].data() + int64_t(i) * tr.head_dim, tr.k[h].data() + int64_t(j) * tr.head_dim, 1,
             tr.head_dim, &s);
    return s;
}

// raw[h][i][*]: query i against every key.
void raw_score_row(Trace& tr, int h, int i) {
    dot_rows(tr.q[h].data() + int64_t(i) * tr.head_dim, tr.k[h].data(), tr.T, tr.head_dim,
             tr.raw_scores[h].data() + int64_t(i) * tr.T);
}

// One softmax row: att[h][i][*] from raw row i (softmax_values, kernels.h).
void softmax_row(Trace& tr, int h, int i) {
    const int T = tr.T;
    softmax_values(tr.raw_scores[h].data() + int64_t(i) * T, tr.scale, visible_count(tr.config.mask, T, i), T,
                   tr.att[h].data() + int64_t(i) * T);
}

// heads[h][i] from att row i and v (head_values, kernels.h).
void head_row(Trace& tr, int h, int i) {
    head_values(tr.att[h].data() + int64_t(i) * tr.T, tr.v[h].data(), tr.T, tr.head_dim,
                tr.heads[h].data() + int64_t(i) * tr.head_dim);
}

// Rows are dealt out cyclically to `pieces` pieces (row r to piece r mod pieces), which
// also balances the causal triangle; the pieces run on the work team (work_team.h). Each
// row is computed by the same loops wherever it runs, so the bits never depend on it.
struct Split {
    int pieces = 1, threads = 1;
};

constexpr int split_pieces = 8;

Split split_for(int64_t work) {
    Split s;
    if (work >= parallel_work) {
        s.threads = work_team_threads();
        s.pieces = split_pieces;
    }
    return s;
}

// Softmax, heads, concat and y for rows r0 .. T-1.
void rows_from(const Weights& w, Trace& tr, int r0, const Split& split) {
    const int T = tr.T, H = tr.H, hd = tr.head_dim, C = tr.C;
    const int n = T - r0;
    run_pieces(split.pieces, split.threads, [&](int id) {
        for (int task = id; task < H * n; task += split.pieces) {
            const int h = task % H, i = r0 + task / H;
            softmax_row(tr, h, i);
            head_row(tr, h, i);
        }
    });
    run_pieces(split.pieces, split.threads, [&](int id) {
        for (int i = r0 + id; i < T; i += split.pieces) {
            for (int h = 0; h < H; ++h)
                for (int d = 0; d < hd; ++d) tr.concat(i, h * hd + d) = tr.heads[h](i, d);
            linear_row(tr.concat.data() + int64_t(i) * C, w.c_proj.weight, w.c_proj.bias, tr.y.data() + int64_t(i) * C);
        }
    });
}

void forward_rows(const Weights& w, Trace& tr, const Split& split) {
    const int T = tr.T, C = tr.C, H = tr.H;
    // qkv = x W_qkv^T: (T, C) -> (T, 3C), then split into q, k, v
    run_pieces(split.pieces, split.threads, [&](int id) {
        for (int t = id; t < T; t += split.pieces) {
            linear_row(tr.x.data() + int64_t(t) * C, w.c_attn.weight, w.c_attn.bias, tr.qkv.data() + int64_t(t) * 3 * C);
            split_row(tr, t);
        }
    });
    // raw = q k^T per head: (T, head_dim) x (head_dim, T) -> (T, T), every entry (the
    // mask is applied later, and the raw scores are shown before it).
    run_pieces(split.pieces, split.threads, [&](int id) {
        for (int task = id; task < H * T; task += split.pieces) {
            const int h = task % H, i = task / H;
            raw_score_row(tr, h, i);
        }
    });
    rows_from(w, tr, 0, split);
}

// Multiply-adds of the attention and projection from row r0 on.
int64_t work_from(const Trace& tr, int r0) {
    const int64_t T = tr.T, C = tr.C, n = T - r0;
    return n * C * C + n * T * C * 2;
}

} // namespace

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

// A row with every key masked has max -inf, (-inf) - (-inf) = NaN, so the whole row is NaN,
// as in torch.
void softmax_values(const float* raw, float scale, int n, int T, float* p) {
    // masked scores go into p first, then are replaced by e_j, then by p_j.
    for (int j = 0; j < n; ++j) p[j] = raw[j] * scale;
    for (int j = n; j < T; ++j) p[j] = -std::numeric_limits<float>::infinity();
    float m = p[0];
    bool any_nan = std::isnan(m);
    for (int j = 1; j < T; ++j) {
        m = p[j] > m ? p[j] : m;
        any_nan |= std::isnan(p[j]);
    }
    if (any_nan) m = std::numeric_limits<float>::quiet_NaN(); // torch's max propagates NaN
    for (int j = 0; j < T; ++j) p[j] = sleef_expf_u10(p[j] - m);
    const float inv = 1.f / lane_sum(p, T);
    for (int j = 0; j < T; ++j) p[j] = p[j] * inv;
}

// Sixteen d at a time are kept in registers; each is still its own sum in j order.
void head_values(const float* p, const float* v, int T, int hd, float* out) {
    constexpr int lanes = 16;
    for (int d0 = 0; d0 < hd; d0 += lanes) {
        const int nd = std::min(lanes, hd - d0);
        float acc[lanes] = {};
        if (nd == lanes) {
            for (int j = 0; j < T; ++j)
                for (int d = 0; d < lanes; ++d) acc[d] += p[j] * v[int64_t(j) * hd + d0 + d];
        } else {
            for (int j = 0; j < T; ++j)
                for (int d = 0; d < nd; ++d) acc[d] += p[j] * v[int64_t(j) * hd + d0 + d];
        }
        for (int d = 0; d < nd; ++d) out[d0 + d] = acc[d];
    }
}

void reference_dot_rows(const float* a, const float* b, int64_t n, int64_t len, float* out) {
    dot_rows(a, b, n, len, out);
}

void reference_forward(const Weights& w, Trace& tr) {
    // Tiny traces stay on the calling thread and in the microseconds.
    forward_rows(w, tr, split_for(work_from(tr, 0) + int64_t(tr.T) * tr.C * 3 * tr.C));
}

void reference_update(const Weights& w, int p, Trace& tr) {
    const int T = tr.T, C = tr.C;
    linear_row(tr.x.data() + int64_t(p) * C, w.c_attn.weight, w.c_attn.bias, tr.qkv.data() + int64_t(p) * 3 * C);
    split_row(tr, p);
    // New q row p changes score row p; new k row p changes score column p.
    for (int h = 0; h < tr.H; ++h) {
        raw_score_row(tr, h, p);
        for (int i = 0; i < T; ++i) tr.raw_scores[h](i, p) = raw_score(tr, h, i, p);
    }
    const int r0 = first_affected_row(tr.config.mask, p);
    rows_from(w, tr, r0, split_for(work_from(tr, r0)));
}

void reference_update_from(const Weights& w, int p, bool keep_masked_scores, Trace& tr) {
    const int T = tr.T, C = tr.C, H = tr.H;
    const Split split = split_for(work_from(tr, p) + int64_t(T - p) * C * 3 * C);
    run_pieces(split.pieces, split.threads, [&](int id) {
        for (int t = p + id; t < T; t += split.pieces) {
            linear_row(tr.x.data() + int64_t(t) * C, w.c_attn.weight, w.c_attn.bias, tr.qkv.data() + int64_t(t) * 3 * C);
            split_row(tr, t);
        }
    });
    // Rows from p against every key; rows before p see new keys only where they are masked.
    run_pieces(split.pieces, split.threads, [&](int id) {
        for (int task = id; task < H * (T - p); task += split.pieces) {
            const int h = task % H, i = p + task / H;
            raw_score_row(tr, h, i);
        }
    });
    if (keep_masked_scores)
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < p; ++i)
                for (int j = p; j < T; ++j) tr.raw_scores[h](i, j) = raw_score(tr, h, i, j);
    rows_from(w, tr, first_affected_row(tr.config.mask, p), split);
}

} // namespace attnviz::detail
