// kernel_fast.cpp: the forward pass with OpenBLAS products (blas.h) on the work team
// (work_team.h), agreeing with the reference kernel within 1e-5 and skipping what the
// causal mask throws away. Eigen does the element-wise work and the one-row products of
// an update.
//
// Three steps, each a set of independent pieces that the team's threads claim one at a
// time (a step starts when the previous one is done: scores need all of k, the projection
// all of concat):
//   qkv       column groups of x W_qkv^T, whole heads each, copied into q, k and v; a
//             column group repacks only x (a row group would repack all of W_qkv);
//   attention (head, row range) tasks: raw = q k^T in 128-row products (every score: the
//             GUI shows them before the mask), then in blocks of rows the softmax over each
//             row's visible prefix and heads_block = probs_block[:, :keys] v[:keys], where
//             keys is the block's last visible key, so the masked upper triangle is neither
//             exponentiated nor multiplied; the task copies its rows into concat;
//   proj      column groups of concat W_proj^T.
// The pieces depend only on the problem's size, never on the threads that ran them, so
// the result is the same with one thread or two. Small problems run on the calling
// thread alone. No T x T temporary exists beyond the trace itself.
// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics (the
// _mm512_undefined_ps idiom) wherever Eigen's products inline them; the values are
// defined, so the warning is silenced for this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "blas.h"
#include "kernels.h"
#include "work_team.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attnviz::detail {

namespace {

// Rows of raw scores per product: the (rows, T) result is zeroed, accumulated and then
// read by the softmax while it is still in L2 (one (T, T) product per head goes through
// memory three times and measured about 20% slower at T = 1024).
constexpr int raw_chunk_rows = 128;
// Rows per softmax + att v step.
constexpr int block_rows = 64;
// Multiply-adds from which a step is cut into pieces for several threads; below, one
// thread does the step in one product (a piece costs a wake-up and a repacking).
constexpr int64_t parallel_work = 8 << 20;
// Pieces per step when it is cut: enough that a thread the OS delays leaves its share to
// the others, few enough that each product stays large.
constexpr int step_pieces = 8;
// Multiply-adds below which the reference loops beat the products' set-up costs.
constexpr int64_t reference_loop_work = 1 << 14;

// How a step runs: cut into pieces or not (from the problem's size alone, so that the
// result never depends on the threads), and on how many threads.
struct Plan {
    bool cut = false;
    int threads = 1;
};

Plan plan_for(int64_t work) {
    Plan plan;
    plan.cut = work >= parallel_work;
    plan.threads = plan.cut ? work_team_threads() : 1;
    return plan;
}

// Boundaries of `parts` ranges of [r0, T) with about equal work, row i costing
// fixed + (keys row i sees).
std::vector<int> split_rows(MaskMode mask, int T, int r0, int parts, int64_t fixed) {
    std::vector<int64_t> cost(size_t(T - r0) + 1, 0);
    for (int i = r0; i < T; ++i) cost[size_t(i - r0) + 1] = cost[size_t(i - r0)] + fixed + visible_count(mask, T, i) + 1;
    std::vector<int> at(size_t(parts) + 1, T);
    at[0] = r0;
    size_t i = 0;
    for (int k = 1; k < parts; ++k) {
        const int64_t goal = cost.back() * k / parts;
        while (i < cost.size() - 1 && cost[i] < goal) ++i;
        at[size_t(k)] = std::max(at[size_t(k) - 1], r0 + int(i));
    }
    return at;
}

// att row from raw row over the n visible keys (a prefix); 0 beyond, unless the zeros
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
// `fresh`: the att buffer may hold anything, so the masked part is zeroed too.
void attend_block(Trace& tr, int h, int i0, int i1, bool fresh) {
    const int T = tr.T, n = i1 - i0;
    const MaskMode mask = tr.config.mask;
    const Mat& raw = tr.raw_scores[h];
    Mat& att = tr.att[h];
    for (int i = i0; i < i1; ++i)
        softmax_row(raw.data() + int64_t(i) * T, tr.scale, visible_count(mask, T, i), T,
                    att.data() + int64_t(i) * T, fresh);
    // Keys beyond the last row's visible prefix have probability 0 in every row of the
    // block. At least one key, so a NaN row (off-by-one row 0) still gives NaN outputs.
    const int keys = std::max(1, visible_count(mask, T, i1 - 1));
    blas_product(att.block(i0, 0, n, keys), tr.v[h].topRows(keys), false, tr.heads[h].middleRows(i0, n));
}

// Rows [a, b) of head h: raw scores if asked (a full forward rather than an update), then
// softmax, head outputs and their columns of concat.
void attend_rows(Trace& tr, int h, int a, int b, bool with_raw) {
    for (int c0 = a; c0 < b; c0 += raw_chunk_rows) {
        const int c1 = std::min(b, c0 + raw_chunk_rows);
        if (with_raw) // (rows, head_dim) x (head_dim, T): every key, the mask comes later
            blas_product(tr.q[h].middleRows(c0, c1 - c0), tr.k[h], true, tr.raw_scores[h].middleRows(c0, c1 - c0));
        for (int i0 = c0; i0 < c1; i0 += block_rows) attend_block(tr, h, i0, std::min(c1, i0 + block_rows), with_raw);
    }
    if (b > a) tr.concat.block(a, h * tr.head_dim, b - a, tr.head_dim) = tr.heads[h].middleRows(a, b - a);
}

// Rows r0 .. T-1 of every head as H x parts tasks of about equal work; the parts that
// see the most keys are handed out first.
void attention_step(Trace& tr, int r0, bool with_raw, const Plan& plan) {
    const int T = tr.T, H = tr.H;
    const int parts = plan.cut ? std::min(T - r0, (step_pieces + H - 1) / H) : 1;
    const std::vector<int> at = split_rows(tr.config.mask, T, r0, parts, with_raw ? T : 0);
    run_pieces(H * parts, plan.threads, [&](int task) {
        const int h = task % H, part = parts - 1 - task / H;
        attend_rows(tr, h, at[size_t(part)], at[size_t(part) + 1], with_raw);
    });
}

// Boundaries of `pieces` column groups of [0, n): multiples of `unit` columns.
std::vector<int> split_columns(int n, int unit, int pieces) {
    const int units = (n + unit - 1) / unit;
    pieces = std::max(1, std::min(pieces, units));
    std::vector<int> at(size_t(pieces) + 1);
    for (int k = 0; k <= pieces; ++k) at[size_t(k)] = std::min(n, units * k / pieces * unit);
    return at;
}

// qkv = x W_qkv^T (+ c_attn.bias) for every row, in column groups of whole heads (head blocks
// of q, k and v are columns h*head_dim of each third), each copied into q, k, v.
void qkv_step(const Weights& w, Trace& tr, const Plan& plan) {
    const int H = tr.H, hd = tr.head_dim;
    const std::vector<int> at = split_columns(3 * H, 1, plan.cut ? step_pieces : 1); // in head blocks
    run_pieces(int(at.size()) - 1, plan.threads, [&](int k) {
        const int b0 = at[size_t(k)], b1 = at[size_t(k) + 1], c0 = b0 * hd, n = (b1 - b0) * hd;
        auto out = tr.qkv.middleCols(c0, n);
        blas_product(tr.x, w.c_attn.weight.middleRows(c0, n), true, out); // (T, C) x (C, n)
        if (w.c_attn.bias.size() > 0) out.rowwise() += w.c_attn.bias.segment(c0, n);
        for (int b = b0; b < b1; ++b) {
            PerHead& dst = b < H ? tr.q : b < 2 * H ? tr.k : tr.v;
            dst[size_t(b % H)] = tr.qkv.middleCols(b * hd, hd);
        }
    });
}

// y rows r0 .. T-1 = concat W_proj^T (+ c_proj.bias), in column groups.
void proj_step(const Weights& w, Trace& tr, int r0, const Plan& plan) {
    const int n = tr.T - r0;
    if (n <= 0) return;
    const std::vector<int> at = split_columns(tr.C, 16, plan.cut ? step_pieces : 1);
    run_pieces(int(at.size()) - 1, plan.threads, [&](int k) {
        const int c0 = at[size_t(k)], m = at[size_t(k) + 1] - c0;
        auto out = tr.y.block(r0, c0, n, m);
        blas_product(tr.concat.middleRows(r0, n), w.c_proj.weight.middleRows(c0, m), true, out); // (n, C) x (C, m)
        if (w.c_proj.bias.size() > 0) out.rowwise() += w.c_proj.bias.segment(c0, m);
    });
}

// Largest raw score among keys [j0, j1) of a row, -inf when the range is empty.
float max_of(const float* raw, int j0, int j1) {
    if (j1 <= j0) return -std::numeric_limits<float>::infinity();
    return Eigen::Map<const Eigen::ArrayXf>(raw + j0, j1 - j0).maxCoeff();
}

// e_j = exp(raw_j * scale - m) for keys [j0, j1) into p; returns their sum.
float exp_range(const float* raw, float scale, float m, int j0, int j1, float* p) {
    if (j1 <= j0) return 0.f;
    Eigen::Map<Eigen::ArrayXf> e(p + j0, j1 - j0);
    e = (Eigen::Map<const Eigen::ArrayXf>(raw + j0, j1 - j0) * scale - m).exp();
    return e.sum();
}

// The update cache (UpdateCache in attention.h) of head h for rows i0 .. i1-1 after an
// update at p. Every one of these rows except p sees key p. Each row's terms without key p
// go into its att row (0 at key p; the masked part is 0 already), and one product
// (rows, keys) x (keys, head_dim) sums them against v. Row p's u row is not used.
void build_cache_block(Trace& tr, int h, int p, int i0, int i1) {
    const int T = tr.T;
    const MaskMode mask = tr.config.mask;
    UpdateCache& cache = tr.update_cache;
    Mat& att = tr.att[h];
    for (int i = i0; i < i1; ++i) {
        if (i == p) continue;
        const int n = visible_count(mask, T, i); // > p: row i sees key p
        const float* raw = tr.raw_scores[h].data() + int64_t(i) * T;
        float* e = att.data() + int64_t(i) * T;
        // scale > 0, so the largest scaled score is the largest raw score scaled.
        const float m = std::max(max_of(raw, 0, p), max_of(raw, p + 1, n)) * tr.scale;
        e[p] = 0.f;
        cache.max(h, i) = m;
        cache.sum(h, i) = exp_range(raw, tr.scale, m, 0, p, e) + exp_range(raw, tr.scale, m, p + 1, n, e);
    }
    const int keys = std::max(1, visible_count(mask, T, i1 - 1));
    blas_product(att.block(i0, 0, i1 - i0, keys), tr.v[h].topRows(keys), false, cache.u[size_t(h)].middleRows(i0, i1 - i0));
}

// Rows [a, b) of head h after an update at p (raw row p and column p are new): the cache
// built first if asked, then each row's softmax and head output from it and the one new
// score raw(i, p) and v row p, and their columns of concat. Row p, whose query changed,
// is recomputed whole. The att come from the raw scores each time, so repeated updates
// do not drift.
void update_rows(Trace& tr, int h, int p, int a, int b, bool build) {
    const int T = tr.T, hd = tr.head_dim;
    const MaskMode mask = tr.config.mask;
    const float scale = tr.scale;
    const UpdateCache& cache = tr.update_cache;
    const Mat& raw = tr.raw_scores[h];
    Mat& att = tr.att[h];
    const Mat& u = cache.u[size_t(h)];
    for (int i0 = a; i0 < b; i0 += block_rows) {
        const int i1 = std::min(b, i0 + block_rows);
        if (build) build_cache_block(tr, h, p, i0, i1);
        for (int i = i0; i < i1; ++i) {
            const int n = visible_count(mask, T, i);
            const float* r = raw.data() + int64_t(i) * T;
            float* e = att.data() + int64_t(i) * T;
            if (i == p) {
                softmax_row(r, scale, n, T, e, false);
                const int keys = std::max(1, n); // a NaN row still gives NaN outputs
                tr.heads[h].row(i).noalias() = att.block(i, 0, 1, keys) * tr.v[h].topRows(keys);
                continue;
            }
            // Fold key p into the cached max and sum: m = max(M, s_p), and the cached
            // terms rescale by exp(M - m) (0 when the row sees no other key, M = -inf).
            const float s_p = r[p] * scale, cached_max = cache.max(h, i);
            const float m = std::max(cached_max, s_p);
            const float old_part = std::exp(cached_max - m), new_part = std::exp(s_p - m);
            const float inv = 1.f / (cache.sum(h, i) * old_part + new_part);
            Eigen::Map<Eigen::ArrayXf>(e, n) = (Eigen::Map<const Eigen::ArrayXf>(r, n) * scale - m).exp() * inv;
            tr.heads[h].row(i) = (u.row(i) * old_part + tr.v[h].row(p) * new_part) * inv;
        }
    }
    if (b > a) tr.concat.block(a, h * hd, b - a, hd) = tr.heads[h].middleRows(a, b - a);
}

// Rows r0 .. T-1 of every head after an update at p, as attention_step cuts them.
void update_step(Trace& tr, int p, int r0, bool build, const Plan& plan) {
    const int T = tr.T, H = tr.H;
    const int parts = plan.cut ? std::min(T - r0, (step_pieces + H - 1) / H) : 1;
    const std::vector<int> at = split_rows(tr.config.mask, T, r0, parts, tr.head_dim);
    run_pieces(H * parts, plan.threads, [&](int task) {
        const int h = task % H, part = parts - 1 - task / H;
        update_rows(tr, h, p, at[size_t(part)], at[size_t(part) + 1], build);
    });
}

// An empty cache for position p, sized for the trace (buffers kept when they fit).
void reset_cache(Trace& tr, int p) {
    UpdateCache& cache = tr.update_cache;
    cache.p = p;
    if (cache.max.rows() != tr.H || cache.max.cols() != tr.T) {
        cache.max.resize(tr.H, tr.T);
        cache.sum.resize(tr.H, tr.T);
    }
    cache.u.resize(size_t(tr.H));
    for (Mat& m : cache.u)
        if (m.rows() != tr.T || m.cols() != tr.head_dim) m.resize(tr.T, tr.head_dim);
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
    const SerialEigen serial; // the pieces are the parallelism
    const int64_t T = tr.T, C = tr.C;
    // Multiply-adds: qkv, raw scores (all T^2), att v (the visible half), proj.
    const Plan plan = plan_for(T * C * 3 * C + T * T * C + T * T * C / 2 + T * C * C);
    qkv_step(w, tr, plan);
    attention_step(tr, 0, true, plan);
    proj_step(w, tr, 0, plan);
}

void fast_update(const Weights& w, int p, Trace& tr) {
    if (fast_uses_reference_loops(tr)) {
        reference_update(w, p, tr);
        return;
    }
    const SerialEigen serial;
    const int C = tr.C, H = tr.H, hd = tr.head_dim;
    const int64_t T = tr.T;
    const int r0 = first_affected_row(tr.config.mask, p);
    const int64_t n = T - r0;
    // The first update at p builds the cache (UpdateCache in attention.h): the att v
    // product of the rows that see key p, without it. Later ones at the same p need none.
    const bool build = tr.update_cache.p != p;
    if (build) reset_cache(tr, p);
    // Multiply-adds: row p's q, k, v and scores, the exps of the affected rows (about 8
    // each), the cache's att v when it is built, and the projection of the rows.
    const int64_t visible = (T * T - int64_t(r0) * r0) / 2;
    const Plan plan =
        plan_for(3 * int64_t(C) * C + 2 * T * C + visible * H * 8 + (build ? visible * C : 0) + n * C * C);
    // A head per piece: its q, k, v columns of qkv row p ((1, C) x (C, head_dim) each,
    // reading that head's rows of W_qkv), then score row p (new q) and column p (new k).
    run_pieces(H, plan.threads, [&](int h) {
        for (int part = 0; part < 3; ++part) {
            const int c0 = part * C + h * hd;
            auto out = tr.qkv.row(p).segment(c0, hd);
            out.noalias() = tr.x.row(p) * w.c_attn.weight.middleRows(c0, hd).transpose();
            if (w.c_attn.bias.size() > 0) out += w.c_attn.bias.segment(c0, hd);
            PerHead& dst = part == 0 ? tr.q : part == 1 ? tr.k : tr.v;
            dst[size_t(h)].row(p) = out;
        }
        tr.raw_scores[h].row(p).noalias() = tr.q[h].row(p) * tr.k[h].transpose();
        tr.raw_scores[h].col(p).noalias() = tr.q[h] * tr.k[h].row(p).transpose();
    });
    // Rows r0 .. T-1 of softmax, heads, concat and y: from the cache, and the projection
    // of their rows.
    update_step(tr, p, r0, build, plan);
    proj_step(w, tr, r0, plan);
}

} // namespace attnviz::detail
