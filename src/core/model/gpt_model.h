// gpt_model.h: GPT-2 and nanoGPT whole models, as nanoGPT's GPT.forward runs them (model.h
// has the types and the diagram). One sequence, B = 1.
//
// Memory at GPT-2 small, T = 1024 (L = 12, H = 12, C = 768, V = 50257): the weights are
// 0.5 GB, every layer's attention weights (L H T^2 floats) 0.6 GB and the logits 0.2 GB.
// A full trace also keeps each layer's raw scores (another 0.6 GB) and the rest of the
// shape walk, so large models run lean: each layer keeps att, k, v (the update's keys and
// values) and resid_post, and gpt_layer_trace recomputes one layer's whole shape walk (and
// gpt_resid_mid its resid_mid) when a view needs it.
#pragma once
#include "model.h"

namespace attnviz {

// Empty when a GPT config is usable; else one sentence naming the value: sizes below 1,
// n_head not dividing n_embd.
std::string validate_gpt(const ModelConfig& c);

// torch.manual_seed(seed)-free random weights of a config, for tests and benchmarks: every
// matrix N(0, 0.02) from our generator (LayerNorm weights 1, biases 0). Not torch's init.
Model random_gpt(const ModelConfig& c, uint64_t seed);

// The whole forward on tokens (T of them, 1 <= T <= block size, each < vocab): h0, every
// layer's Trace (x = ln_1 of the block's input) and BlockTrace, h_out, ln_f and logits.
// lean: see above (reference or fast). Bad tokens or lengths throw std::invalid_argument
// with one sentence.
// With `ablation` (ablation.h) the heads it names are replaced before c_proj in every layer
// (here and in gpt_update, gpt_rerun_from and gpt_layer_trace).
void gpt_forward(const Model& m, const std::vector<int>& tokens, KernelKind kernel, bool lean, ModelTrace& out,
                 const Ablation* ablation = nullptr);

// What the head detector reads and nothing more: gpt_forward (lean) up to the last layer's
// attention weights, without that layer's MLP, ln_f and the logits (GPT-2 small's logits
// alone are a third of a short sequence's forward). h_out, ln_f and logits are left empty.
void gpt_attention_forward(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& out,
                           const Ablation* ablation = nullptr);

// gpt_forward (lean) whose head makes the last position's logits alone: row T-1 of `logits`
// (the other rows are allocated, not computed), as nanoGPT's forward does when it generates.
// Generating without a cache (kv_cache.h) needs nothing more, and the other rows' logits are
// a third of the work at GPT-2 small's sizes. Row T-1 is gpt_forward's bit for bit on the
// reference kernel, within 1e-5 on the fast one (one row's product instead of T rows').
void gpt_forward_last(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& out);

// Layers l0 .. L-1, ln_f and the logits of a trace gpt_forward made, recomputed in place
// with `ablation` (lean as the trace is); layers before l0 are kept as they are. When those
// layers' ablation did not change (first_difference in ablation.h), the result is
// gpt_forward with `ablation` bit for bit: ablating a late head costs only the late layers.
// A trace gpt_attention_forward made is rerun as it was made (up to the last attention).
void gpt_rerun_from(const Model& m, int l0, KernelKind kernel, const Ablation* ablation, ModelTrace& tr);

// Token p changes to new_token in a trace gpt_forward made: by causality nothing before p
// can change in any layer, so only rows p .. T-1 are recomputed, with the keys and values
// of the rows before p reused. The result equals gpt_forward on the new tokens: bit for
// bit on the reference kernel, within 1e-4 on the fast one (its softmax rows are computed
// here, not by the attention kernel). Throws std::invalid_argument on a bad p or token.
void gpt_update(const Model& m, int p, int new_token, KernelKind kernel, ModelTrace& tr,
                const Ablation* ablation = nullptr);

// Activation patching's rerun (patching.h): layers l0 .. L-1 of a trace gpt_forward made
// (not compact) recomputed from row r0 on with gpt_update's loop, then h_out's rows from r0;
// ln_f and the logits are left as they were. `edit`, when set, is called with each layer's
// attention trace after its attention has run and before the residual add: it may change
// concat on rows r0.. and must then recompute y there (as apply_ablation does). The caller
// changes what it patches first (a row of gpt_resid_pre(tr, l0)). On the reference kernel
// rows before r0 are as gpt_forward's; on the fast kernel r0 = 0 repeats the lean forward's
// calls, so an unchanged trace comes back bit for bit.
void gpt_rerun_rows(const Model& m, int l0, int r0, KernelKind kernel, ModelTrace& tr, const LayerEdit& edit = {});

// Layer l's whole shape walk (qkv, raw scores, ... y), recomputed from its input in `tr`:
// what a lean trace dropped. The same kernel gives the same numbers as the forward did.
void gpt_layer_trace(const Model& m, const ModelTrace& tr, int l, KernelKind kernel, Trace& out,
                     const Ablation* ablation = nullptr);

// ---- Compact traces: GPT-2 small on its whole 1024-token context in the window (issue 29)
//
// gpt_forward_compact is the lean forward on the fast kernel, but no layer keeps its softmax
// weights and the trace keeps no logits. Each layer keeps q, k, v, its heads' outputs (att v)
// and resid_post: at GPT-2 small, T = 1024, 0.19 GB instead of the lean trace's 0.9 GB.
// Before a layer's weights go the forward reads what the window shows of every layer: the
// Model view grid's picture (att_pooled: each pixel the largest weight of its pool x pool
// cells, the pool the smallest that keeps a side within compact_grid_side) and the head
// detector's scores on the tokens (att_scores). The logits are made in blocks of rows, each
// row's next-token loss term kept (next_nll), and dropped (in blocks of 128 rows: they may
// differ from gpt_logits_rows' in the last bits). Then:
//   gpt_layer_trace   a layer back whole, its softmax weights bit for bit those the forward
//                     pooled and scored (the same blocks of rows and the same softmax)
//   gpt_logits_rows   any logits, the forward's own bits
//   gpt_update_compact  the causality view's token change, into a second compact trace
// gpt_rerun_from (ablation) reruns a compact trace compact.
constexpr int compact_grid_side = 256;
void gpt_forward_compact(const Model& m, const std::vector<int>& tokens, ModelTrace& out,
                         const Ablation* ablation = nullptr);

// One head's softmax weights (T, T) of a compact trace's layer l, bit for bit as
// gpt_layer_trace gives them, without the rest of the layer (the grid's hover).
void gpt_head_weights(const ModelTrace& tr, int l, int h, Mat& att);

// Logits rows r0 .. r1-1 of a GPT trace (from its ln_f) into out (r1 - r0, V), on the fast
// kernel: a compact trace's logits, as its forward made them. Each row is made in its aligned
// block of logits_block rows, so a row has the same bits however it is asked for (a full
// trace's one product over every row may differ from them in the last bits).
constexpr int logits_block = 16;
void gpt_logits_rows(const Model& m, const ModelTrace& tr, int r0, int r1, Mat& out);

// Token p of compact `base` changed to new_token, into `out` (compact): gpt_update's rows from
// p on. out keeps no pooled grid or scores (they are base's tokens'), and out.logits_delta is
// every position's largest |Δ logit| against base (rows before p are not recomputed: 0).
void gpt_update_compact(const Model& m, const ModelTrace& base, int p, int new_token, ModelTrace& out,
                        const Ablation* ablation = nullptr);

// Layer l's resid_mid (input + attention output): the trace's own, or, in a lean trace, the
// same float32 add on `layer`, the layer's trace from gpt_layer_trace.
Mat gpt_resid_mid(const ModelTrace& tr, const Trace& layer, int l);

// The block's input residual of layer l: h0 for layer 0, else the previous resid_post.
const Mat& gpt_resid_pre(const ModelTrace& tr, int l);

} // namespace attnviz
