// kernels.h: the two kernels behind forward() and update_row(), for attention.cpp and
// the tests. Not part of the public API.
//
// Both kernels read tr.x and the weights and fill every other field of the trace, whose
// sizes and settings prepare_trace() has already set.
#pragma once
#include "attention.h"

namespace attnviz::detail {

// Ask Linux for 2 MiB pages under a large, freshly allocated buffer before it is first
// written: a T x T matrix per head then costs a few hundred page faults instead of a few
// hundred thousand, and walking it misses the TLB far less. Only advice.
void advise_huge_pages(Mat& m);

// Sets the trace's sizes, settings and x, reusing its buffers when the sizes match.
void prepare_trace(const Config& c, KernelKind kernel, ConstMatRef x, Trace& tr);

// Rows i whose softmax can see key j = p: with the causal or off-by-one mask only rows
// from p on, without a mask every row.
int first_affected_row(MaskMode mask, int p);
// Number of keys query i sees; they are always the prefix 0 .. n-1.
int visible_count(MaskMode mask, int T, int i);

// docs/numerics.md §3: torch's float32 order in plain loops, bit for bit.
void reference_forward(const Weights& w, Trace& tr);
// After tr.x row p changed: recompute exactly what row p touches, with the same loops.
void reference_update(const Weights& w, int p, Trace& tr);
// After every tr.x row from p on changed (a later block of a whole model): the same loops
// for rows p .. T-1 (causal mask only). With keep_masked_scores, also the raw scores of
// rows before p against the new keys, which the mask hides but the trace shows.
void reference_update_from(const Weights& w, int p, bool keep_masked_scores, Trace& tr);

// The reference kernel's pieces of one row, for the KV cache's step (kv_cache.cpp), which
// must give the forward's last row bit for bit:
// torch's vectorised reduce_all(+) over 8 float lanes (AVX2): sequential below 8 values,
// otherwise 8 lane sums, a partial last chunk into the first lanes, then a fixed tree
// (docs/numerics.md §3.7).
float lane_sum(const float* e, int L);
// One softmax row p[0 .. T) from raw scores raw[0 .. n) times scale, keys n .. T-1 masked
// with -inf: the max and the exps (sleef_expf_u10) over all T, lane_sum over all T.
void softmax_values(const float* raw, float scale, int n, int T, float* p);
// out[d] = sum_j p[j] v[j][d], j sequential over all T keys (masked ones add +0), v (T, hd).
void head_values(const float* p, const float* v, int T, int hd, float* out);
// out[k] = sum_d a[d] * b_k[d] for the n rows b_k = b + k * len, each sequential from 0.
void reference_dot_rows(const float* a, const float* b, int64_t n, int64_t len, float* out);

// OpenBLAS products, causal-aware, within 1e-5 of the reference.
void fast_forward(const Weights& w, Trace& tr);
void fast_update(const Weights& w, int p, Trace& tr);
// Below this much work the fast kernel runs the reference loops: no thread start-up, no
// allocation, and the result is the reference's, bit for bit (its forward vectorises the
// two linear layers across outputs, each output still its own sequential sum).
bool fast_uses_reference_loops(const Trace& tr);

} // namespace attnviz::detail
