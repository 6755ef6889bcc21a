// kv_cache.h: generation, one token at a time, with a KV cache (issue 30).
//
// Under the causal mask no position looks ahead, so a new token changes nothing about the
// positions before it: their keys and values in every layer stay as they were. A model that
// writes on keeps them (the cache) and computes only the new position:
//
//   prefill(prompt)   the model's forward over the prompt; every layer's k and v kept
//   step(token)       the new position only: h = wte[token] + wpe[T]; per layer its x row
//                     (GPT: ln_1 of its residual row), its q, k, v (k and v appended to the
//                     layer's cache), its one row of scores against keys 0 .. T, softmax,
//                     att v, c_proj (GPT: the residual, ln_2, the MLP, the residual), then
//                     the head's logits row (GPT: ln_f and the tied wte; toy: lm_head)
//
// On the reference kernel a step's logits and softmax rows are those of the full forward
// over the whole sequence bit for bit (the step runs the forward's own row functions; the
// one sum that depends on the sequence's length, the softmax's, switches to 8 lanes at 8
// positions, so the step that crosses 8 reruns the sequence: docs/numerics.md §9); on the
// fast kernel within 1e-5. A cached step costs one row of every product; the full forward T
// rows.
//
// Models: GPT-2 / nanoGPT (Arch::gpt), and the toy models with a next-token head (the
// induction task's lm_head; tokens then include the BOS the model was trained with, first).
// The lesson's plain module (one attention layer, no embeddings) has its own step below,
// which appends a given row of x.
#pragma once
#include "attention.h"
#include "model.h"
#include <cstdint>
#include <string>
#include <vector>

namespace attnviz {

// One layer's keys and values: per head (rows, head_dim), rows 0 .. T-1 in use (the
// matrices may hold more rows, reserved ahead).
struct LayerKv {
    PerHead k, v;
};

struct KvCache {
    int T = 0;                   // positions held
    std::vector<LayerKv> layers; // [layer]
    int n_embd = 0;              // C
    std::vector<int> tokens;     // the T tokens held (a toy model's BOS first)
    // Whether the rows were made by a forward over 8 or more positions, whose softmax sums run
    // in 8 lanes (below 8 they are sequential, as torch's; docs/numerics.md, "The KV cache"):
    // a reference step that crosses 8 either way runs the whole sequence once more.
    bool lane_sums = false;
    // The bytes the cache's T positions hold: 2 (k and v) * L * T * C * 4.
    int64_t bytes() const;
};

// What a prefill or a step computed at its last (the new) position.
struct KvStepRow {
    int pos = -1;              // the position (0-based) this row is for
    std::vector<Mat> att;      // [layer] (H, pos + 1): each head's softmax row over keys 0 .. pos
    Vec logits;                // (V) next-token logits at pos
};

// Empty when `m` can generate; else one sentence (a toy model without a next-token head
// names its task and says that only the induction task's models and GPT models write on).
std::string generation_support(const Model& m);
// The most positions the model takes: its block size (GPT) or n_tokens() (toy, BOS included).
int generation_block_size(const Model& m);

// The model's forward over `tokens` (1 .. block size, checked as the forwards check them;
// std::invalid_argument with one sentence otherwise), every layer's k and v into `cache`
// (replacing what it held), `last` for the last position.
void kv_prefill(const Model& m, const std::vector<int>& tokens, KernelKind kernel, KvCache& cache, KvStepRow& last);

// One new token at position cache.T: appended to the cache, `out` its row. Throws
// std::invalid_argument on a token outside the vocabulary or a cache already at the block
// size. `kernel` must be the one the cache was made with for the bit-for-bit promise.
void kv_step(const Model& m, int token, KernelKind kernel, KvCache& cache, KvStepRow& out);

// Forget positions T .. : the cache as it was after T positions (Back in the window).
void kv_truncate(KvCache& cache, int T);

// The slow way, and the check: the full forward over `tokens` and its last position's row.
// For a GPT model this is gpt_forward_last (lean, the head on the last row alone, as nanoGPT's
// forward when it generates); the result is what kv_step would give.
void full_last_row(const Model& m, const std::vector<int>& tokens, KernelKind kernel, KvStepRow& out);

// ---- The lesson's module: one attention layer on rows of x, no embeddings, causal mask.

// What a step of the lesson's module computed for its new row t.
struct AttentionStepRow {
    int pos = -1;
    Vec qkv;        // (3C)
    Mat raw_scores; // (H, pos + 1) q k^T before scaling, keys 0 .. pos
    Mat att;        // (H, pos + 1) softmax
    Mat heads;      // (H, head_dim) att v
    Vec y;          // (C) c_proj of the heads side by side
};

// The cache of the layer from a forward trace `tr` (its k and v rows): c.mask must be
// causal (std::invalid_argument otherwise: without the mask a new row would change earlier
// ones, and a cache would be wrong).
void attention_cache_from(const Trace& tr, LayerKv& kv, int& T);
// Append row x_row (C values) at position T: q, k, v, one row of scores, softmax, att v, y.
// Bit for bit the row forward() gives on the T + 1 rows, on the reference kernel.
void attention_step(const Config& c, const Weights& w, const float* x_row, KernelKind kernel, LayerKv& kv, int& T,
                    AttentionStepRow& out);

} // namespace attnviz
