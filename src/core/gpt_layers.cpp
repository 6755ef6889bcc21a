// gpt_layers.cpp: LayerNorm, GELU, nn.Linear and the residual add for GPT blocks; see
// gpt_layers.h. GCC 12's -Wmaybe-uninitialized inside Eigen's AVX-512 products is silenced
// as in model.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "gpt_layers.h"
#include "blas.h"
#include "work_team.h"
#include <algorithm>
#include <cmath>

namespace attnviz::detail {

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

void linear_forward(float* out, const float* inp, const Mat& W, const Vec& b, int r0, int M, KernelKind kernel) {
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

void residual_forward(float* out, const float* a, const float* b, int r0, int M, int C) {
    for (int64_t i = int64_t(r0) * C; i < int64_t(M) * C; ++i) out[i] = a[i] + b[i];
}

} // namespace attnviz::detail
