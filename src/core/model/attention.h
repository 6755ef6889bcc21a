// attention.h: the lesson's forward pass, returning every intermediate of the shape walk.
//
//   qkv = x W_qkv^T                      (T, C) -> (T, 3C)     one matmul instead of three
//   q, k, v = split(qkv), view, transpose  -> (H, T, head_dim) each
//   raw = q k^T                          (H, T, T)
//   scaled = raw * scale                 scale = f32(head_dim ** -0.5) for the lesson
//   masked = masked_fill(~tril, -inf)    (H, T, T)
//   att = softmax(masked, dim=-1)        (H, T, T)
//   heads = att v                        (H, T, head_dim)
//   concat = transpose back, view        (T, C)
//   y = concat W_proj^T                  (T, C)
// W_qkv is c_attn.weight and W_proj c_proj.weight (weights.h).
//
// Memory: a trace stores raw scores and att (two T x T per head). `scaled` and
// `masked` are one float32 multiply and one comparison away from `raw`, so they are
// derived on demand (scaled_at, masked_at, fill_scaled, fill_masked) and give exactly
// the values torch has.
#pragma once
#include "config.h"
#include "tensor.h"
#include "weights.h"
#include <limits>

namespace attnviz {

// What the fast kernel's update_row keeps between slider moves at one position p: for
// each head h and each row i != p whose softmax sees key p, the parts of its softmax and
// head output that do not involve key p (an update at p changes only q, k, v of row p):
//   max(h, i) = max over visible j != p of raw[h](i, j) * scale   (-inf if none)
//   sum(h, i) = sum over visible j != p of exp(raw[h](i, j) * scale - max(h, i))
//   u[h] row i = the same terms times v[h] row j, summed            (head_dim values)
// A later update at p then needs only raw[h](i, p) and v[h] row p for those rows.
// forward() clears it; an update at another position rebuilds it. Memory: 2HT + TC floats.
struct UpdateCache {
    int p = -1;      // position the cache is for; -1: none
    Mat max, sum;    // (H, T)
    PerHead u;       // H x (T, head_dim)
};

struct Trace {
    Config config;        // C, H, T, mask and scale this trace was computed with
    KernelKind kernel = KernelKind::reference;
    int T = 0, C = 0, H = 0, head_dim = 0;
    float scale = 1.f;    // f32 of the double head_dim^-0.5 (or C^-0.5, or 1)

    Mat x;                // (T, C)       input, B dropped
    Mat qkv;              // (T, 3C)      x W_qkv^T (+ c_attn.bias)
    PerHead q, k, v;      // H x (T, head_dim)
    PerHead raw_scores;   // H x (T, T)   q k^T, before scaling
    PerHead att;          // H x (T, T)   softmax weights; exactly 0 where masked; NaN rows
                          //              when a row is fully masked (off-by-one, row 0)
    PerHead heads;        // H x (T, head_dim)  att v
    Mat concat;           // (T, C)       heads side by side, before proj
    Mat y;                // (T, C)       concat W_proj^T (+ c_proj.bias)
    UpdateCache update_cache; // fast kernel only; see UpdateCache

    // True when key j is visible from query i under the trace's mask.
    bool visible(int i, int j) const;
    float scaled_at(int h, int i, int j) const { return raw_scores[h](i, j) * scale; }
    // -inf where masked.
    float masked_at(int h, int i, int j) const {
        return visible(i, j) ? scaled_at(h, i, j) : -std::numeric_limits<float>::infinity();
    }
    void fill_scaled(int h, Mat& out) const; // (T, T)
    void fill_masked(int h, Mat& out) const; // (T, T)
};

// f32(double(d) ** -0.5) as torch computes it, for the config's scale mode.
float score_scale(const Config& c);

// Full forward pass. `x` is (T, C). Overwrites `out` (reusing its buffers when the
// sizes match). The reference kernel follows docs/numerics.md §3 exactly; the fast
// kernel agrees with it within 1e-5 and skips work the causal mask throws away.
// A config that validate() rejects, or an x or weights of the wrong shape, throws
// std::invalid_argument with a one-sentence message (validate first to avoid it).
void forward(const Config& c, const Weights& w, ConstMatRef x, KernelKind kernel, Trace& out);

// Incremental update after input row p changed to `new_row` (length C): rows before p
// cannot change (causality), so only qkv row p, score row p and column p, and rows
// p..T-1 of the softmax, heads, concat and y are recomputed. With the causal mask the
// result equals forward() on the new input bit for bit on the reference kernel and
// within 1e-5 on the fast one. For other masks, rows before p may also change and the
// whole affected part is recomputed. The fast kernel, from the second update at one p
// on, redoes only the terms with key p (UpdateCache): `w` must be the weights the trace
// was computed with, and the other rows of tr.x must be left as they are.
// A position outside 0 .. T-1 or weights of another size throw std::invalid_argument.
void update_row(const Weights& w, int p, const float* new_row, Trace& tr);

// max_c |a[t][c] - b[t][c]| per position t (NaN where either side is NaN). a and b
// must have one shape (std::invalid_argument otherwise).
std::vector<float> max_abs_diff_per_position(ConstMatRef a, ConstMatRef b);

} // namespace attnviz
