// logit_lens.h: the logit lens (nostalgebraist's): the residual stream after every layer read as
// if it were the last. For the embedding (resid_pre of layer 0, h0) and each layer's
// resid_post, at every position:
//
//   logits = ln_f(row) wte^T    ln_f with the row's own mean and variance (not the last
//                               layer's scale, as TransformerLens's accumulated_resid keeps)
//   probs  = softmax(logits)    the top k tokens and the probability of the next token
//
// The last row's lens is the model's own prediction (the trace's logits when it keeps them,
// made again in a compact trace). The logits are made in blocks of
// lens_block positions (one residual's (T, V) logits are never all held) with the trace's
// kernel's linear layer (the reference kernel: torch's logits bit for bit); the softmax takes
// the largest logit out, sums float exp in double and divides in double. A toy model with a
// next-token head (the induction task) has no ln_f: its lens is each block's input, and the
// last block's output, through lm_head as it stands (the rows are its trace's layers' x and
// h_out); other toy tasks predict no next token and are refused.
#pragma once
#include "head_detector.h" // TokenProb
#include "model.h"
#include <vector>

namespace attnviz {

constexpr int lens_top_k = 5;
constexpr int lens_block = 16;

struct LogitLens {
    // Row 0 the embedding, row 1 + l layer l's resid_post.
    std::vector<std::vector<std::vector<TokenProb>>> top; // [row][pos] the top k, highest first
    std::vector<std::vector<float>> next_prob;            // [row][pos] p(tokens[pos + 1]); NaN at T - 1
    int rows() const { return int(top.size()); }
};

// From a GPT trace of m that keeps every layer's resid_post (full, lean or compact), or a toy
// induction model's trace. Throws std::invalid_argument with one sentence for a toy model
// without a next-token head or a trace without every layer's residual stream.
LogitLens logit_lens(const Model& m, const ModelTrace& tr, KernelKind kernel, int k = lens_top_k);

// Positions p0 .. p1-1 of logit_lens(m, tr, kernel, k) alone (top[row][i] and next_prob[row][i]
// are position p0 + i's), bit for bit: the products run on the same aligned blocks of
// lens_block positions (on the fast kernel each block a range touches is made whole, since
// sgemm's last bits may depend on its rows). The window's table asks for the cells it shows.
// p0 and p1 are clamped to 0 .. T.
LogitLens logit_lens_range(const Model& m, const ModelTrace& tr, KernelKind kernel, int p0, int p1,
                           int k = lens_top_k);

// What the lens reads of a trace, copied (for a job that outlives the trace): the tokens and
// every residual (GPT: resid_post; toy: each block's x and h_out, and logits_next), and a
// GPT trace's logits when it has fewer than `copy_logits_below` (the last row is then the
// forward's, bit for bit; above it the kernel makes that row again).
ModelTrace lens_inputs(const Model& m, const ModelTrace& tr, int64_t copy_logits_below);

} // namespace attnviz
