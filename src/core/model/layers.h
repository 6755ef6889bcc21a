// layers.h: the layers of the toy models and of GPT blocks, one section per op with its
// forward and backward side by side, as llm.c writes them: encoder, layernorm, matmul,
// attention, residual, gelu, crossentropy. Not part of the public API (gpt_model.cpp,
// ablation.cpp, train.cpp and the tests use it).
//
// Every buffer is row-major float32 and owned by the caller; rows are positions. Two
// callers, two contracts:
//   The GPT forward (gpt_model.h): a function that takes r0 computes rows r0 .. M-1 only,
//   so the perturbed forward can redo the rows from p on and leave the rows before p
//   untouched. Its reference kernel is bit for bit torch's.
//   Training (train.cpp): shapes use B (sequences in this chunk of the batch), N = T + 1
//   positions, M = B N rows, C, H, hd = C / H. The products are Eigen's: the training
//   path must match torch within 1e-4, not bit for bit (model_forward's reference kernel
//   is the bit-exact one), and it must be fast. A backward function ADDS into weight
//   gradients (dW) and OVERWRITES input gradients.
// Only the toy models are trained, and they have no LayerNorm or MLP: those two layers
// have a forward alone.
#pragma once
#include "attention.h"
#include "model.h"
#include <cstdint>

namespace attnviz::detail {

// ---------------------------------------------------------------------------------------
// Encoder: token and position embeddings

// out (M, C) = wte[tok] + wpe[position]: the token's row plus its position's row.
void encoder_forward(float* out, const int* tok, const Mat& wte, const Mat& wpe, int B, int N);
// dwte[tok] += dout, dwpe[position] += dout, rows in order (so the sums are deterministic).
void encoder_backward(Mat& dwte, Mat& dwpe, const float* dout, const int* tok, int B, int N);

// Block 0's qkv from its embedding tables (train_work.h): out (M, 3C) row (b, t) =
// tok_table[tok] + pos_table[t], both tables (rows, K) with K = 3C.
void embedding_product_forward(float* out, const int* tok, const Mat& tok_table, const Mat& pos_table, int B, int N);
// dtok[tok] += dout row, dpos[t] += dout row, rows in order: the G_tok and G_pos of train_work.h.
void embedding_product_backward(Mat& dtok, Mat& dpos, const float* dout, const int* tok, int B, int N);
// From the batch's G_tok (V+1, K) and G_pos (N, K), W (K, C): dwte += G_tok W,
// dwpe += G_pos W, dW += G_tok^T wte + G_pos^T wpe.
void embedding_product_weights_backward(Mat& dwte, Mat& dwpe, Mat& dW, const Mat& gtok, const Mat& gpos,
                                        const Mat& wte, const Mat& wpe, const Mat& W);

// ---------------------------------------------------------------------------------------
// LayerNorm

// out (M, C) rows r0.. = LayerNorm(inp) with eps 1e-5: per row, mean and biased variance, then
// ((x * rstd) + (-rstd * mean)) * weight + bias in float32, the order of torch's CPU kernel.
// The mean and variance are summed in double and rounded once (torch uses a float32
// Welford cascade: docs/numerics.md §7.2 says what that changes).
void layernorm_forward(float* out, const float* inp, const LayerNormWeights& ln, int r0, int M, int C);

// ---------------------------------------------------------------------------------------
// Matmul: nn.Linear, W (OC, IC) as nn.Linear stores it, in two contracts

// The GPT forward's: out (M, OC) rows r0.. = inp (M, IC) W^T + b, reference or fast kernel.
// The reference kernel sums each output sequentially from 0 and adds the bias after the sum
// (docs/numerics.md §3.2), bit for bit torch's; the fast one calls sgemm.
void linear_forward_rows(float* out, const float* inp, const Mat& W, const Vec& b, int r0, int M, KernelKind kernel);

// Training's: out (M, OC) = inp (M, IC) W^T, no bias, one Eigen product over all M rows.
void matmul_forward(float* out, const float* inp, const Mat& W, int M);
// dinp (M, IC) = dout W (or += when accumulate), dW (OC, IC) += dout^T inp.
void matmul_backward(float* dinp, Mat& dW, const float* dout, const float* inp, const Mat& W, int M,
                     bool accumulate);

// ---------------------------------------------------------------------------------------
// Attention (training's; the GPT forward runs attention.h's kernels)

// Causal self-attention on qkv (M, 3C) = [q | k | v], each head hd columns of its third:
//   att (B, H, N, N) = softmax(mask(q k^T * scale)), exactly 0 above the diagonal
//   out (M, C): head h's columns = att[b, h] v[b, h]
void attention_forward(float* out, float* att, const float* qkv, int B, int N, int C, int H, float scale);
// dqkv (M, 3C) from dout (M, C), through att v, the softmax (masked entries have att = 0
// and so no gradient) and q k^T * scale. scratch holds attention_scratch_floats(N, hd).
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att,
                        int B, int N, int C, int H, float scale);

int64_t attention_scratch_floats(int N, int hd);

// ---------------------------------------------------------------------------------------
// Residual

// out = a + b, n values: training's residual stream h + attn(h).
void residual_forward(float* out, const float* a, const float* b, int64_t n);
// out = a + b, rows r0 .. M-1 of (M, C): the GPT forward's residual stream.
void residual_forward_rows(float* out, const float* a, const float* b, int r0, int M, int C);

// ---------------------------------------------------------------------------------------
// GELU

// out = gelu(inp), n values: tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as
// Hugging Face's gelu_new writes it, or erf form x 0.5 (1 + erf(x / sqrt 2)) as nn.GELU().
// The reference kernel calls the C library's tanh and erf per value; the fast one Eigen's
// vectorised tanh (a rational approximation within a few ulp) on the work team, for the
// tanh form (the erf form keeps the library's erf).
void gelu_forward(float* out, const float* inp, int64_t n, Gelu form, KernelKind kernel = KernelKind::reference);

// ---------------------------------------------------------------------------------------
// Crossentropy

// Softmax cross-entropy of the rows of logits (M, K) whose target is >= 0 (-1: not in the
// loss). Returns the sum of -log p[target] over those rows (in double) and writes
// dlogits = (softmax - onehot) * inv_count there, 0 in the other rows: the gradient of
// the mean over `count` rows, inv_count = 1 / count.
double crossentropy_forward_backward(float* dlogits, const float* logits, const int* targets, int M, int K,
                                     float inv_count);

// ---------------------------------------------------------------------------------------
// Next-token loss

// -log softmax(row)[target] of one row of n logits: log sum exp(row - max) with Eigen's
// vectorised float exp (each term within an ulp or two), summed in double; next_token_loss's
// term, and a compact GPT forward's (gpt_model.h).
double nll_row(const float* row, int n, int target);

} // namespace attnviz::detail
