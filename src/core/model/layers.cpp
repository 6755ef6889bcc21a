// layers.cpp: every layer of the toy models and GPT blocks, one section per op; see layers.h.
// GCC 12 reports -Wmaybe-uninitialized (and, for Eigen's fixed-size arrays of 16,
// -Wuninitialized) inside its own AVX-512 intrinsics (the _mm512_undefined_ps idiom)
// wherever Eigen inlines them; the values are defined, so the warnings are silenced for
// this file, as in kernel_fast.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "layers.h"
#include "blas.h"
#include "work_team.h"
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
// Encoder: token and position embeddings

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

void embedding_product_forward(float* out, const int* tok, const Mat& tok_table, const Mat& pos_table, int B, int N) {
    encoder_forward(out, tok, tok_table, pos_table, B, N); // the same gather-add, on rows of 3C
}

void embedding_product_backward(Mat& dtok, Mat& dpos, const float* dout, const int* tok, int B, int N) {
    encoder_backward(dtok, dpos, dout, tok, B, N); // the same scatter, on rows of 3C
}

void embedding_product_weights_backward(Mat& dwte, Mat& dwpe, Mat& dW, const Mat& gtok, const Mat& gpos,
                                        const Mat& wte, const Mat& wpe, const Mat& W) {
    dwte.noalias() += gtok * W;                                    // (V+1, C)
    dwpe.noalias() += gpos * W;                                    // (N, C)
    dW.noalias() += gtok.transpose() * wte + gpos.transpose() * wpe; // (K, C)
}

// ---------------------------------------------------------------------------------------
// LayerNorm (forward only: the toy models that are trained have none)

void layernorm_forward(float* out, const float* inp, const LayerNormWeights& ln, int r0, int M, int C) {
    const float eps = 1e-5f;
    const bool has_bias = ln.bias.size() > 0;
    for (int t = r0; t < M; ++t) {
        const float* x = inp + int64_t(t) * C;
        float* y = out + int64_t(t) * C;
        // mean and biased variance (unbiased=False), as LayerNorm normalises
        double sum = 0.0;
        for (int c = 0; c < C; ++c) sum += x[c];
        const double mean_d = sum / C;
        double sq = 0.0;
        for (int c = 0; c < C; ++c) sq += (x[c] - mean_d) * (x[c] - mean_d);
        const float mean = float(mean_d), var = float(sq / C);
        const float rstd = 1.f / std::sqrt(std::max(var, 0.f) + eps);
        const float shift = -rstd * mean;
        for (int c = 0; c < C; ++c) {
            const float n = x[c] * rstd + shift; // one rounding each: -ffp-contract=off
            y[c] = has_bias ? n * ln.weight[c] + ln.bias[c] : n * ln.weight[c];
        }
    }
}

// ---------------------------------------------------------------------------------------
// Matmul: nn.Linear, two ways. linear_forward_rows is the GPT forward's (bias, the
// reference or fast kernel, rows from r0); matmul_forward/backward are training's (no
// bias in the toy models, one Eigen product over all rows).

void linear_forward_rows(float* out, const float* inp, const Mat& W, const Vec& b, int r0, int M, KernelKind kernel) {
    const int OC = int(W.rows()), IC = int(W.cols());
    const int n = M - r0;
    if (n <= 0) return;
    const float* in = inp + int64_t(r0) * IC;
    float* o = out + int64_t(r0) * OC;
    if (kernel == KernelKind::fast) {
        // Column groups of W side by side on the work team, one sgemm each (blas.h).
        const int64_t work = int64_t(n) * OC * IC;
        const int threads = work >= (int64_t(1) << 22) ? work_team_threads() : 1;
        const int pieces = threads > 1 ? 4 * threads : 1;
        const int step = (OC + pieces - 1) / pieces;
        run_pieces(pieces, threads, [&](int k) {
            const int c0 = k * step, c1 = std::min(OC, c0 + step);
            if (c1 <= c0) return;
            sgemm(true, n, c1 - c0, IC, in, IC, W.data() + int64_t(c0) * IC, IC, o + c0, OC);
            if (b.size() > 0)
                for (int t = 0; t < n; ++t)
                    for (int c = c0; c < c1; ++c) o[int64_t(t) * OC + c] += b[c];
        });
        return;
    }
    for (int t = 0; t < n; ++t) {
        const float* x = in + int64_t(t) * IC;
        float* y = o + int64_t(t) * OC;
        for (int c = 0; c < OC; ++c) {
            const float* w = W.data() + int64_t(c) * IC;
            float s = 0.f;
            for (int k = 0; k < IC; ++k) s += x[k] * w[k];
            y[c] = b.size() > 0 ? s + b[c] : s;
        }
    }
}

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

constexpr int lanes = 16;
int round_up(int n) { return (n + lanes - 1) / lanes * lanes; }

// dst (hd, Np) = the (N, hd) block at src (row stride ld) transposed, zeros in the
// Np - N padding columns so that rows of scores are whole blocks of 16.
void transpose_block(float* dst, const float* src, int N, int hd, int ld) {
    const int Np = round_up(N);
    for (int d = 0; d < hd; ++d)
        for (int j = N; j < Np; ++j) dst[int64_t(d) * Np + j] = 0.f;
    for (int j = 0; j < N; ++j)
        for (int d = 0; d < hd; ++d) dst[int64_t(d) * Np + j] = src[int64_t(j) * ld + d];
}

// out[0..W) = sum over r in [r0, r1) of a[r] * X[r][0..W), W a multiple of 16. Even and
// odd r go into separate accumulators, so two chains of adds overlap. The accumulators
// are Eigen arrays of fixed size, which stay in vector registers (plain float arrays of
// 16 were kept on the stack by GCC 12, four times slower).
template <int W>
void vecmat_block(float* __restrict out, const float* __restrict a, const float* __restrict X, int64_t ld, int r0,
                  int r1) {
    using Block = Eigen::Array<float, W, 1>;
    Block even = Block::Zero(), odd = Block::Zero();
    int r = r0;
    for (; r + 1 < r1; r += 2) {
        even += a[r] * Eigen::Map<const Block>(X + r * ld);
        odd += a[r + 1] * Eigen::Map<const Block>(X + (r + 1) * ld);
    }
    if (r < r1) even += a[r] * Eigen::Map<const Block>(X + r * ld);
    Eigen::Map<Block> o(out);
    o = even + odd;
}

// out[0..n) = sum over r in [r0, r1) of a[r] * X[r][0..n), X's rows ld apart: every
// product of this layer is one of these.
void vecmat(float* __restrict out, const float* __restrict a, const float* __restrict X, int64_t ld, int r0, int r1,
            int n) {
    int c0 = 0;
    for (; c0 + 2 * lanes <= n; c0 += 2 * lanes) vecmat_block<2 * lanes>(out + c0, a, X + c0, ld, r0, r1);
    for (; c0 + lanes <= n; c0 += lanes) vecmat_block<lanes>(out + c0, a, X + c0, ld, r0, r1);
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

// Masks for a block of 16 whose first k lanes are visible: keep_mask + 16 - k is k ones
// then zeros, hide_mask + 16 - k is k zeros then -inf. Lanes are masked by arithmetic in
// registers: scalar writes into a block just before it is loaded as a vector stall the
// store forwarding, which cost more than the exps themselves.
constexpr float inf = std::numeric_limits<float>::infinity();
alignas(64) constexpr float keep_mask[2 * lanes] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
alignas(64) constexpr float hide_mask[2 * lanes] = {0,    0,    0,    0,    0,    0,    0,    0,
                                                    0,    0,    0,    0,    0,    0,    0,    0,
                                                    -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,
                                                    -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf};

// e[0 .. W) = exp(x - max) for the first n of x (n >= 1), 0 in the rest of the W =
// round_up(n) floats (whatever finite values x holds there); returns the sum of the
// blocks (lane sums, then Eigen's sum of the 16) and the max in m. x and e may be the same.
float exp_blocks(float* e, const float* x, int n, float& m) {
    using Block = Eigen::Array<float, lanes, 1>;
    using Const = Eigen::Map<const Block>;
    const int W = round_up(n);
    auto visible = [n](int c) { return std::min(lanes, n - c); };
    Block mx = Const(x) + Const(hide_mask + lanes - visible(0));
    for (int c = lanes; c < W; c += lanes) mx = mx.max(Const(x + c) + Const(hide_mask + lanes - visible(c)));
    m = mx.maxCoeff();
    Block sum = Block::Zero();
    for (int c = 0; c < W; c += lanes) {
        // min(.., 0): a hidden lane above the max must not overflow to inf (inf * 0 = NaN)
        const Block b = (Const(x + c) - m).min(0.f).exp() * Const(keep_mask + lanes - visible(c));
        Eigen::Map<Block>(e + c) = b;
        sum += b;
    }
    return sum.sum();
}

// Softmax of the first n of the scores s (scaled, n >= 1) into row[0 .. N), zeros from n
// on (masked: exactly 0). s holds round_up(n) floats and is overwritten.
void softmax_row(float* __restrict row, float* __restrict s, int n, int N) {
    using Block = Eigen::Array<float, lanes, 1>;
    float m;
    const float inv = 1.f / exp_blocks(s, s, n, m);
    const int W = round_up(n);
    for (int c = 0; c < W && c < N; c += lanes) {
        const Block b = Eigen::Map<const Block>(s + c) * inv;
        if (c + lanes <= N) {
            Eigen::Map<Block>(row + c) = b;
        } else { // the row's last floats, through a whole-block store (see the masks above)
            alignas(64) float t[lanes];
            Eigen::Map<Block> tail(t);
            tail = b;
            std::copy(t, t + (N - c), row + c);
        }
    }
    for (int j = W; j < N; ++j) row[j] = 0.f;
}

} // namespace

void attention_forward(float* out, float* att, const float* qkv, int B, int N, int C, int H, float scale) {
    const int hd = C / H;
    const int ld = 3 * C;
    const int Np = round_up(N);
    std::vector<float> kt(static_cast<size_t>(hd) * Np), s(static_cast<size_t>(Np));
    for (int b = 0; b < B; ++b) {
        const float* base = qkv + int64_t(b) * N * ld;
        for (int h = 0; h < H; ++h) {
            const float* q = base + h * hd;
            const float* v = base + 2 * C + h * hd;
            transpose_block(kt.data(), base + C + h * hd, N, hd, ld);
            float* a = att + (int64_t(b) * H + h) * N * N;
            for (int i = 0; i < N; ++i) {
                float* row = a + int64_t(i) * N;
                // q_i . k_j for j <= i (and a few masked j, in whole blocks, dropped)
                const int W = round_up(i + 1);
                vecmat(s.data(), q + int64_t(i) * ld, kt.data(), Np, 0, hd, W);
                for (int j = 0; j < W; ++j) s[size_t(j)] *= scale;
                softmax_row(row, s.data(), i + 1, N);
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
    const int Np = round_up(N);
    float* vt = scratch;                       // (hd, Np) v transposed
    float* ds = vt + int64_t(hd) * Np;         // (N, N)   d scores
    float* col = ds + int64_t(N) * N;          // (N)      one column of att or ds
    float* datt = col + N;                     // (Np)     one row of d att
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
                vecmat(datt, dy + int64_t(i) * C + h * hd, vt, Np, 0, hd, round_up(i + 1));
                // softmax: ds_ij = att_ij (datt_ij - sum_k att_ik datt_ik), times the scale
                float dot = 0.f;
                for (int j = 0; j <= i; ++j) dot += p[j] * datt[j];
                for (int j = 0; j <= i; ++j) g[j] = p[j] * (datt[j] - dot) * scale;
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

int64_t attention_scratch_floats(int N, int hd) {
    const int Np = round_up(N);
    return int64_t(hd) * Np + int64_t(N) * N + N + Np;
}

// ---------------------------------------------------------------------------------------
// Residual: the residual stream's adds

void residual_forward(float* out, const float* a, const float* b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void residual_forward_rows(float* out, const float* a, const float* b, int r0, int M, int C) {
    const int64_t i0 = int64_t(r0) * C;
    residual_forward(out + i0, a + i0, b + i0, int64_t(M) * C - i0);
}

// ---------------------------------------------------------------------------------------
// GELU (forward only, as LayerNorm)

void gelu_forward(float* out, const float* inp, int64_t n, Gelu form, KernelKind kernel) {
    if (form == Gelu::tanh && kernel == KernelKind::fast) {
        // The same expression on arrays: 38 M values at GPT-2 small, T = 1024, where the
        // library's scalar tanhf was a sixth of the forward.
        const float k = float(std::sqrt(2.0 / M_PI));
        constexpr int64_t chunk = 1 << 14;
        const int64_t pieces = (n + chunk - 1) / chunk;
        const int threads = n >= (int64_t(1) << 20) ? work_team_threads() : 1;
        run_pieces(int(pieces), threads, [&](int piece) {
            const int64_t i0 = int64_t(piece) * chunk, m = std::min(chunk, n - i0);
            Eigen::Map<const Eigen::ArrayXf> x(inp + i0, m);
            Eigen::Map<Eigen::ArrayXf> y(out + i0, m);
            y = 0.5f * x * (1.f + (k * (x + 0.044715f * (x * x * x))).tanh());
        });
        return;
    }
    if (form == Gelu::tanh) {
        // 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
        const float k = float(std::sqrt(2.0 / M_PI));
        for (int64_t i = 0; i < n; ++i) {
            const float x = inp[i];
            const float inner = k * (x + 0.044715f * (x * x * x));
            out[i] = 0.5f * x * (1.f + std::tanh(inner));
        }
    } else {
        const float r = float(M_SQRT1_2);
        for (int64_t i = 0; i < n; ++i) {
            const float x = inp[i];
            out[i] = x * 0.5f * (1.f + std::erf(x * r));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Crossentropy: the loss and its gradient in one pass

double crossentropy_forward_backward(float* dlogits, const float* logits, const int* targets, int M, int K,
                                     float inv_count) {
    // exps in whole blocks of 16, as softmax_row takes them
    std::vector<float> e(static_cast<size_t>(round_up(K)));
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
        if (K < lanes) { // dup's two classes: a block of 16 would be mostly padding
            Eigen::Map<const Eigen::ArrayXf> zr(z, K);
            Eigen::Map<Eigen::ArrayXf> ex(dz, K);
            const float m = zr.maxCoeff();
            ex = (zr - m).exp();
            const float total = ex.sum();
            loss -= double(z[y] - m - std::log(total));
            ex *= (1.f / total) * inv_count;
            dz[y] -= inv_count;
            continue;
        }
        std::copy(z, z + K, e.data());
        float m;
        const float total = exp_blocks(e.data(), e.data(), K, m);
        loss -= double(z[y] - m - std::log(total));
        const float f = (1.f / total) * inv_count;
        for (int k = 0; k < K; ++k) dz[k] = e[size_t(k)] * f;
        dz[y] -= inv_count;
    }
    return loss;
}

double nll_row(const float* row, int n, int target) {
    const Eigen::Map<const Eigen::ArrayXf> r(row, n);
    const float mx = r.maxCoeff();
    const Eigen::ArrayXf e = (r - mx).exp();
    double sum = 0;
    for (Eigen::Index k = 0; k < e.size(); ++k) sum += double(e[k]);
    return std::log(sum) + double(mx) - double(row[target]);
}

} // namespace attnviz::detail
