// kernel_fast.cpp: the forward pass with Eigen products and OpenMP, agreeing with the
// reference kernel within 1e-5 and skipping what the causal mask throws away.
//
// Per head: raw = q k^T by products over chunks of rows (every score: the GUI shows them
// before the mask), then in blocks of rows the softmax over each row's visible prefix and
// heads_block = probs_block[:, :keys] v[:keys], where keys is the block's last visible
// key, so the masked upper triangle is neither exponentiated nor multiplied.
//
// Threads: one OpenMP region per call. The (T, C) products are cut into row chunks,
// each an Eigen product on its own rows; the heads are handed out as tasks (cut into
// parts when there are fewer heads than threads); threads take the next piece when done. Small problems run
// on the calling thread alone. No T x T temporary exists beyond the trace itself.
// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics (the
// _mm512_undefined_ps idiom) wherever Eigen's products inline them; the values are
// defined, so the warning is silenced for this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "kernels.h"
#include <algorithm>
#include <limits>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace attnviz::detail {

namespace {

// Rows of raw scores per product: the (rows, T) result is zeroed, accumulated and then
// read by the softmax while it is still in L2 (one (T, T) product per head goes through
// memory three times and measured about 20% slower at T = 1024).
constexpr int raw_chunk_rows = 128;
// Rows per softmax + probs v step.
constexpr int block_rows = 64;
// Multiply-adds below which one thread is faster than two.
constexpr int64_t parallel_work = 4 << 20;
// Multiply-adds below which the reference loops beat Eigen's set-up costs.
constexpr int64_t reference_loop_work = 1 << 14;

struct Team {
    int size = 1, id = 0;
};

// Inside the region: who am I. A serial region also tells Eigen not to start threads of
// its own (the setting lasts only for this region).
Team join_team(bool parallel) {
    Team t;
#ifdef _OPENMP
    if (!parallel) omp_set_num_threads(1);
    t.size = omp_get_num_threads();
    t.id = omp_get_thread_num();
#endif
    return t;
}

// Rows r0 .. T-1 of a (T, C) product, cut into chunks that the team takes one at a time,
// so a thread the OS delays leaves its share to the others; each chunk repacks the
// weights, so chunks stay at least min_chunk_rows tall.
constexpr int min_chunk_rows = 128;

template <class F>
void for_row_chunks(const Team& team, int r0, int T, F&& rows) {
    const int64_t n = T - r0;
    const int chunks = int(std::max<int64_t>(1, std::min<int64_t>(4 * team.size, n / min_chunk_rows)));
#pragma omp for schedule(dynamic, 1)
    for (int k = 0; k < chunks; ++k) rows(r0 + int(n * k / chunks), r0 + int(n * (k + 1) / chunks));
}

// probs row from raw row over the n visible keys (a prefix); 0 beyond, unless the zeros
// are known to be there already (an update keeps the mask). With no visible key the row
// is NaN, as torch's softmax of an all -inf row.
void softmax_row(const float* raw, float scale, int n, int T, float* p, bool zero_rest) {
    if (n == 0) {
        std::fill(p, p + T, std::numeric_limits<float>::quiet_NaN());
        return;
    }
    Eigen::Map<const Eigen::ArrayXf> r(raw, n);
    Eigen::Map<Eigen::ArrayXf> e(p, n);
    // scale > 0 and rounding is monotonic, so max_j(raw_j * scale) = max_j(raw_j) * scale.
    const float m = r.maxCoeff() * scale;
    e = (r * scale - m).exp();
    e *= 1.f / e.sum();
    if (zero_rest) std::fill(p + n, p + T, 0.f);
}

// Softmax and head outputs for rows i0 .. i1-1 of head h (raw scores already there).
// `fresh`: the probs buffer may hold anything, so the masked part is zeroed too.
void attend_block(Trace& tr, int h, int i0, int i1, bool fresh) {
    const int T = tr.T, n = i1 - i0;
    const MaskMode mask = tr.config.mask;
    const Mat& raw = tr.raw_scores[h];
    Mat& probs = tr.probs[h];
    for (int i = i0; i < i1; ++i)
        softmax_row(raw.data() + int64_t(i) * T, tr.scale, visible_count(mask, T, i), T,
                    probs.data() + int64_t(i) * T, fresh);
    // Keys beyond the last row's visible prefix have probability 0 in every row of the
    // block. At least one key, so a NaN row (off-by-one row 0) still gives NaN outputs.
    const int keys = std::max(1, visible_count(mask, T, i1 - 1));
    tr.heads[h].middleRows(i0, n).noalias() = probs.block(i0, 0, n, keys) * tr.v[h].topRows(keys);
}

// Rows r0 .. T-1 of every head, shared among the team, a head per task (or a part of
// one when there are fewer heads than threads; parts that see more keys go first): raw
// scores if asked (a full forward rather than an update), then softmax and head outputs.
void attend_rows(Trace& tr, int r0, bool with_raw, const Team& team) {
    const int T = tr.T, H = tr.H, n = T - r0;
    const int parts = H >= 2 * team.size ? 1 : std::min(n, (4 * team.size + H - 1) / H);
#pragma omp for schedule(dynamic, 1)
    for (int task = 0; task < H * parts; ++task) {
        const int h = task % H, part = parts - 1 - task / H;
        const int a = r0 + int(int64_t(n) * part / parts), b = r0 + int(int64_t(n) * (part + 1) / parts);
        for (int c0 = a; c0 < b; c0 += raw_chunk_rows) {
            const int c1 = std::min(b, c0 + raw_chunk_rows);
            if (with_raw) // (rows, head_dim) x (head_dim, T): every key, the mask comes later
                tr.raw_scores[h].middleRows(c0, c1 - c0).noalias() =
                    tr.q[h].middleRows(c0, c1 - c0) * tr.k[h].transpose();
            for (int i0 = c0; i0 < c1; i0 += block_rows) attend_block(tr, h, i0, std::min(c1, i0 + block_rows), with_raw);
        }
    }
}

// qkv rows [a, b) = x W_qkv^T (+ b_qkv), split into q, k, v.
void qkv_rows(const Weights& w, Trace& tr, int a, int b) {
    const int n = b - a, C = tr.C, hd = tr.head_dim;
    if (n <= 0) return;
    tr.qkv.middleRows(a, n).noalias() = tr.x.middleRows(a, n) * w.w_qkv.transpose();
    if (w.b_qkv.size() > 0) tr.qkv.middleRows(a, n).rowwise() += w.b_qkv;
    for (int h = 0; h < tr.H; ++h) {
        tr.q[h].middleRows(a, n) = tr.qkv.block(a, h * hd, n, hd);
        tr.k[h].middleRows(a, n) = tr.qkv.block(a, C + h * hd, n, hd);
        tr.v[h].middleRows(a, n) = tr.qkv.block(a, 2 * C + h * hd, n, hd);
    }
}

// concat rows [a, b) from the heads, then y rows [a, b) = concat W_proj^T (+ b_proj).
void project_rows(const Weights& w, Trace& tr, int a, int b) {
    const int n = b - a, hd = tr.head_dim;
    if (n <= 0) return;
    for (int h = 0; h < tr.H; ++h) tr.concat.block(a, h * hd, n, hd) = tr.heads[h].middleRows(a, n);
    tr.y.middleRows(a, n).noalias() = tr.concat.middleRows(a, n) * w.w_proj.transpose();
    if (w.b_proj.size() > 0) tr.y.middleRows(a, n).rowwise() += w.b_proj;
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
    const int64_t T = tr.T, C = tr.C;
    const bool parallel = T * C * 4 * C + T * T * C * 3 / 2 > parallel_work;
#pragma omp parallel if (parallel)
    {
        const Team team = join_team(parallel);
        // Each loop ends with a barrier: scores need all of k, projections all of concat.
        for_row_chunks(team, 0, tr.T, [&](int a, int b) { qkv_rows(w, tr, a, b); }); // (T, C) x (C, 3C)
        attend_rows(tr, 0, true, team);
        for_row_chunks(team, 0, tr.T, [&](int a, int b) { project_rows(w, tr, a, b); }); // (T, C) x (C, C)
    }
}

void fast_update(const Weights& w, int p, Trace& tr) {
    if (fast_uses_reference_loops(tr)) {
        reference_update(w, p, tr);
        return;
    }
    qkv_rows(w, tr, p, p + 1);
    // New q row p changes score row p; new k row p changes score column p.
    for (int h = 0; h < tr.H; ++h) {
        tr.raw_scores[h].row(p).noalias() = tr.q[h].row(p) * tr.k[h].transpose();
        tr.raw_scores[h].col(p).noalias() = tr.q[h] * tr.k[h].row(p).transpose();
    }
    const int r0 = first_affected_row(tr.config.mask, p);
    const int64_t T = tr.T, C = tr.C, n = T - r0;
    const bool parallel = n * C * C + (T * T - int64_t(r0) * r0) * C / 2 > parallel_work;
#pragma omp parallel if (parallel)
    {
        const Team team = join_team(parallel);
        attend_rows(tr, r0, false, team);
        for_row_chunks(team, r0, tr.T, [&](int a, int b) { project_rows(w, tr, a, b); });
    }
}

} // namespace attnviz::detail
