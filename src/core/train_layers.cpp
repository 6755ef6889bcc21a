// train_layers.cpp: the training path's layers; see train_layers.h.
#include "train_layers.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attnviz::detail {

namespace {

using Stride = Eigen::OuterStride<>;
using View = Eigen::Map<Mat, 0, Stride>;
using ConstView = Eigen::Map<const Mat, 0, Stride>;
using Dense = Eigen::Map<Mat>;
using ConstDense = Eigen::Map<const Mat>;

} // namespace

// ---------------------------------------------------------------------------------------
// Embeddings

void encoder_forward(float* out, const int* tok, const Mat& wte, const Mat& wpe, int B, int N) {
    const int C = int(wte.cols());
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < N; ++t) {
            const float* te = wte.data() + int64_t(tok[b * N + t]) * C;
            const float* pe = wpe.data() + int64_t(t) * C;
            float* o = out + (int64_t(b) * N + t) * C;
            for (int c = 0; c < C; ++c) o[c] = te[c] + pe[c];
        }
}

void encoder_backward(Mat& dwte, Mat& dwpe, const float* dout, const int* tok, int B, int N) {
    const int C = int(dwte.cols());
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < N; ++t) {
            const float* d = dout + (int64_t(b) * N + t) * C;
            float* te = dwte.data() + int64_t(tok[b * N + t]) * C;
            float* pe = dwpe.data() + int64_t(t) * C;
            for (int c = 0; c < C; ++c) {
                te[c] += d[c];
                pe[c] += d[c];
            }
        }
}

// ---------------------------------------------------------------------------------------
// Linear layers (no bias in the toy models)

void matmul_forward(float* out, const float* inp, const Mat& W, int M) {
    const int OC = int(W.rows()), IC = int(W.cols());
    Dense(out, M, OC).noalias() = ConstDense(inp, M, IC) * W.transpose();
}

void matmul_backward(float* dinp, Mat& dW, const float* dout, const float* inp, const Mat& W, int M,
                     bool accumulate) {
    const int OC = int(W.rows()), IC = int(W.cols());
    ConstDense d(dout, M, OC);
    if (dinp) {
        if (accumulate)
            Dense(dinp, M, IC).noalias() += d * W;
        else
            Dense(dinp, M, IC).noalias() = d * W;
    }
    dW.noalias() += d.transpose() * ConstDense(inp, M, IC);
}

// ---------------------------------------------------------------------------------------
// Attention: the only layer that mixes positions. Per sequence b and head h, with
// q, k, v the (N, hd) column blocks of qkv's rows for b:
//   s = q k^T * scale, masked above the diagonal; att = softmax(s) row by row; y = att v.
// The loops visit only j <= i (the causal triangle) and run their innermost loop over
// contiguous floats (hd channels, or keys of a transposed k), so they vectorise without
// reordering any sum; at hd = 16 and N = 17 that beats a general matrix product.

namespace {

// dst (hd, N) = the (N, hd) block at src (row stride ld) transposed.
void transpose_block(float* dst, const float* src, int N, int hd, int ld) {
    for (int j = 0; j < N; ++j)
        for (int d = 0; d < hd; ++d) dst[int64_t(d) * N + j] = src[int64_t(j) * ld + d];
}

// out[0..n) = sum over r in [r0, r1) of a[r] * X[r][0..n), X's rows ld apart: every
// product of this layer is one of these. Sixteen outputs at a time stay in registers.
void vecmat(float* __restrict out, const float* __restrict a, const float* __restrict X, int64_t ld, int r0, int r1,
            int n) {
    constexpr int lanes = 16;
    int c0 = 0;
    for (; c0 + lanes <= n; c0 += lanes) {
        float acc[lanes] = {};
        for (int r = r0; r < r1; ++r) {
            const float ar = a[r];
            const float* x = X + r * ld + c0;
            for (int c = 0; c < lanes; ++c) acc[c] += ar * x[c];
        }
        for (int c = 0; c < lanes; ++c) out[c0 + c] = acc[c];
    }
    if (c0 < n) {
        const int m = n - c0;
        float acc[lanes] = {};
        for (int r = r0; r < r1; ++r) {
            const float ar = a[r];
            const float* x = X + r * ld + c0;
            for (int c = 0; c < m; ++c) acc[c] += ar * x[c];
        }
        for (int c = 0; c < m; ++c) out[c0 + c] = acc[c];
    }
}

// One softmax row of n visible scores, in place: exps by Eigen's vectorised exp.
void softmax_inplace(float* row, int n) {
    Eigen::Map<Eigen::ArrayXf> r(row, n);
    r = (r - r.maxCoeff()).exp();
    r *= 1.f / r.sum();
}

} // namespace

void attention_forward(float* out, float* att, const float* qkv, int B, int N, int C, int H, float scale) {
    const int hd = C / H;
    const int ld = 3 * C;
    std::vector<float> kt(size_t(hd) * N);
    for (int b = 0; b < B; ++b) {
        const float* base = qkv + int64_t(b) * N * ld;
        for (int h = 0; h < H; ++h) {
            const float* q = base + h * hd;
            const float* v = base + 2 * C + h * hd;
            transpose_block(kt.data(), base + C + h * hd, N, hd, ld);
            float* a = att + (int64_t(b) * H + h) * N * N;
            for (int i = 0; i < N; ++i) {
                float* row = a + int64_t(i) * N;
                vecmat(row, q + int64_t(i) * ld, kt.data(), N, 0, hd, i + 1); // q_i . k_j, j <= i
                for (int j = 0; j <= i; ++j) row[j] *= scale;
                softmax_inplace(row, i + 1);
                for (int j = i + 1; j < N; ++j) row[j] = 0.f; // masked: exactly 0
                // y_i = sum_j att_ij v_j over the visible keys
                vecmat(out + (int64_t(b) * N + i) * C + h * hd, row, v, ld, 0, i + 1, hd);
            }
        }
    }
}

void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att,
                        int B, int N, int C, int H, float scale) {
    const int hd = C / H;
    const int ld = 3 * C;
    float* vt = scratch;                       // (hd, N) v transposed
    float* ds = scratch + int64_t(hd) * N;     // (N, N)  d scores
    float* col = ds + int64_t(N) * N;          // (N)     one column of att or ds
    for (int b = 0; b < B; ++b) {
        const float* base = qkv + int64_t(b) * N * ld;
        float* dbase = dqkv + int64_t(b) * N * ld;
        const float* dy = dout + int64_t(b) * N * C;
        for (int h = 0; h < H; ++h) {
            const float* q = base + h * hd;
            const float* k = base + C + h * hd;
            const float* a = att + (int64_t(b) * H + h) * N * N;
            transpose_block(vt, base + 2 * C + h * hd, N, hd, ld);
            for (int i = 0; i < N; ++i) {
                const float* p = a + int64_t(i) * N;
                float* g = ds + int64_t(i) * N;
                // y_i = sum_j att_ij v_j: d att_ij = dy_i . v_j
                vecmat(g, dy + int64_t(i) * C + h * hd, vt, N, 0, hd, i + 1);
                // softmax: ds_ij = att_ij (datt_ij - sum_k att_ik datt_ik), times the scale
                float dot = 0.f;
                for (int j = 0; j <= i; ++j) dot += p[j] * g[j];
                for (int j = 0; j <= i; ++j) g[j] = p[j] * (g[j] - dot) * scale;
                for (int j = i + 1; j < N; ++j) g[j] = 0.f;
                // s_ij = q_i . k_j: dq_i = sum_j ds_ij k_j
                vecmat(dbase + int64_t(i) * ld + h * hd, g, k, ld, 0, i + 1, hd);
            }
            for (int j = 0; j < N; ++j) {
                // dv_j = sum_i att_ij dy_i and dk_j = sum_i ds_ij q_i, over the queries i >= j
                for (int i = j; i < N; ++i) col[i] = a[int64_t(i) * N + j];
                vecmat(dbase + int64_t(j) * ld + 2 * C + h * hd, col, dy + h * hd, C, j, N, hd);
                for (int i = j; i < N; ++i) col[i] = ds[int64_t(i) * N + j];
                vecmat(dbase + int64_t(j) * ld + C + h * hd, col, q, ld, j, N, hd);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Residual and loss

void residual_forward(float* out, const float* a, const float* b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

double crossentropy_forward_backward(float* dlogits, const float* logits, const int* targets, int M, int K,
                                     float inv_count) {
    double loss = 0.0;
    for (int r = 0; r < M; ++r) {
        const float* z = logits + int64_t(r) * K;
        float* dz = dlogits + int64_t(r) * K;
        const int y = targets[r];
        if (y < 0) {
            std::fill(dz, dz + K, 0.f);
            continue;
        }
        // log-softmax with the row max taken out, as torch's log_softmax does
        float m = z[0];
        for (int j = 1; j < K; ++j) m = std::max(m, z[j]);
        float sum = 0.f;
        for (int j = 0; j < K; ++j) {
            dz[j] = std::exp(z[j] - m);
            sum += dz[j];
        }
        const float log_sum = std::log(sum);
        loss -= double(z[y] - m - log_sum);
        const float inv = 1.f / sum;
        for (int j = 0; j < K; ++j) dz[j] = dz[j] * inv * inv_count;
        dz[y] -= inv_count;
    }
    return loss;
}

} // namespace attnviz::detail
