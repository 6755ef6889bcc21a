// attention.cpp: the public entry points of the forward pass (see attention.h); the
// arithmetic lives in kernel_reference.cpp and kernel_fast.cpp.
#include "attention.h"
#include "kernels.h"
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#ifdef __linux__
#include <sys/mman.h>
#endif

namespace attnviz {

bool Trace::visible(int i, int j) const {
    switch (config.mask) {
    case MaskMode::causal: return j <= i;     // tril keeps the diagonal
    case MaskMode::none: return true;
    case MaskMode::off_by_one: return j < i;  // tril(diagonal=-1): not even itself
    }
    return true;
}

void Trace::fill_scaled(int h, Mat& out) const {
    out.resize(T, T);
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) out(i, j) = scaled_at(h, i, j);
}

void Trace::fill_masked(int h, Mat& out) const {
    out.resize(T, T);
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) out(i, j) = masked_at(h, i, j);
}

float score_scale(const Config& c) {
    switch (c.scale) {
    case ScaleMode::head_dim: return float(std::pow(double(c.head_dim()), -0.5));
    case ScaleMode::n_embd: return float(std::pow(double(c.n_embd), -0.5));
    case ScaleMode::none: return 1.f;
    }
    return 1.f;
}

namespace detail {

void advise_huge_pages(Mat& m) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = size_t(2) << 20;
    const size_t bytes = size_t(m.size()) * sizeof(float);
    if (bytes < 2 * huge) return;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(m.data()) + huge - 1) & ~(huge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(m.data()) + bytes) & ~(huge - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)m;
#endif
}

namespace {

// Resize, keeping the buffer when the size is unchanged, and advise a new large one.
void resize(Mat& m, int rows, int cols) {
    if (m.rows() == rows && m.cols() == cols) return;
    m.resize(rows, cols);
    advise_huge_pages(m);
}

} // namespace

int first_affected_row(MaskMode mask, int p) { return mask == MaskMode::none ? 0 : p; }

int visible_count(MaskMode mask, int T, int i) {
    switch (mask) {
    case MaskMode::causal: return i + 1;
    case MaskMode::none: return T;
    case MaskMode::off_by_one: return i;
    }
    return T;
}

void prepare_trace(const Config& c, KernelKind kernel, ConstMatRef x, Trace& tr) {
    const int T = c.seq_len, C = c.n_embd, H = c.n_head, hd = c.head_dim();
    // The scale depends only on these: keep it rather than call pow again (a few percent
    // of a forward at the lesson's size).
    const bool same_scale = tr.T > 0 && tr.config.scale == c.scale && tr.C == C && tr.H == H;
    tr.config = c;
    tr.kernel = kernel;
    tr.T = T;
    tr.C = C;
    tr.H = H;
    tr.head_dim = hd;
    if (!same_scale) tr.scale = score_scale(c);
    tr.update_cache.p = -1; // new scores: the fast update's cache is stale (buffers kept)
    // Buffers are kept when their size is unchanged: repeated forwards of one
    // configuration allocate nothing.
    resize(tr.x, T, C);
    tr.x = x;
    resize(tr.qkv, T, 3 * C);
    for (PerHead* ph : {&tr.q, &tr.k, &tr.v, &tr.heads}) {
        ph->resize(size_t(H));
        for (Mat& m : *ph) resize(m, T, hd);
    }
    for (PerHead* ph : {&tr.raw_scores, &tr.att}) {
        ph->resize(size_t(H));
        for (Mat& m : *ph) resize(m, T, T);
    }
    resize(tr.concat, T, C);
    resize(tr.y, T, C);
}

} // namespace detail

namespace {

// Shapes the caller must get right; a mismatch is a programming error upstream, reported
// as one sentence rather than a crash.
void check_weights(const Config& c, const Weights& w) {
    const int C = c.n_embd;
    if (w.c_attn.weight.rows() != 3 * C || w.c_attn.weight.cols() != C || w.c_proj.weight.rows() != C || w.c_proj.weight.cols() != C)
        throw std::invalid_argument("weights are for n_embd " + std::to_string(w.c_proj.weight.rows()) +
                                    " but the config has n_embd " + std::to_string(C) +
                                    "; load weights of the same size");
    if ((w.c_attn.bias.size() != 0 && w.c_attn.bias.size() != 3 * C) || (w.c_proj.bias.size() != 0 && w.c_proj.bias.size() != C))
        throw std::invalid_argument("bias lengths " + std::to_string(w.c_attn.bias.size()) + " and " +
                                    std::to_string(w.c_proj.bias.size()) + " do not match n_embd " +
                                    std::to_string(C) + "; give 3C and C values or none");
}

} // namespace

void forward(const Config& c, const Weights& w, ConstMatRef x, KernelKind kernel, Trace& out) {
    std::string error = validate(c, int64_t(1) << 62);
    if (!error.empty()) throw std::invalid_argument(error);
    if (x.rows() != c.seq_len || x.cols() != c.n_embd)
        throw std::invalid_argument("input is " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
                                    " but the config needs seq_len x n_embd = " + std::to_string(c.seq_len) +
                                    " x " + std::to_string(c.n_embd));
    check_weights(c, w);
    detail::prepare_trace(c, kernel, x, out);
    if (kernel == KernelKind::reference)
        detail::reference_forward(w, out);
    else
        detail::fast_forward(w, out);
}

void update_row(const Weights& w, int p, const float* new_row, Trace& tr) {
    if (p < 0 || p >= tr.T)
        throw std::invalid_argument("position " + std::to_string(p) + " is outside the sequence; give one from 0 to " +
                                    std::to_string(tr.T - 1));
    check_weights(tr.config, w);
    for (int c = 0; c < tr.C; ++c) tr.x(p, c) = new_row[c];
    if (tr.kernel == KernelKind::reference)
        detail::reference_update(w, p, tr);
    else
        detail::fast_update(w, p, tr);
}

std::vector<float> max_abs_diff_per_position(ConstMatRef a, ConstMatRef b) {
    if (a.rows() != b.rows() || a.cols() != b.cols())
        throw std::invalid_argument("outputs of shapes " + std::to_string(a.rows()) + " x " +
                                    std::to_string(a.cols()) + " and " + std::to_string(b.rows()) + " x " +
                                    std::to_string(b.cols()) + " cannot be compared; give two of one shape");
    const Eigen::Index T = a.rows(), C = a.cols();
    std::vector<float> d(size_t(T), 0.f);
    for (Eigen::Index t = 0; t < T; ++t) {
        float m = 0.f;
        for (Eigen::Index c = 0; c < C; ++c) {
            float v = std::fabs(a(t, c) - b(t, c));
            if (std::isnan(v)) { m = v; break; } // torch's max propagates NaN
            m = std::max(m, v);
        }
        d[size_t(t)] = m;
    }
    return d;
}

} // namespace attnviz
