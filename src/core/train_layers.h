// train_layers.h: the training path's layers, one forward and one backward function each,
// as llm.c writes them. Not part of the public API (train.cpp and the tests use it).
//
// Every buffer is row-major float32 and owned by the caller. Shapes use B (sequences in
// this chunk of the batch), N = T + 1 positions, M = B N rows, C, H, hd = C / H. The
// products are Eigen's: the training path must match torch within 1e-4, not bit for bit
// (model_forward's reference kernel is the bit-exact one), and it must be fast.
// A backward function ADDS into weight gradients (dW) and OVERWRITES input gradients.
#pragma once
#include "tensor.h"
#include <cstdint>

namespace attnviz::detail {

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

// out (M, OC) = inp (M, IC) W^T, W (OC, IC) as nn.Linear stores it.
void matmul_forward(float* out, const float* inp, const Mat& W, int M);
// dinp (M, IC) = dout W (or += when accumulate), dW (OC, IC) += dout^T inp.
void matmul_backward(float* dinp, Mat& dW, const float* dout, const float* inp, const Mat& W, int M,
                     bool accumulate);

// Causal self-attention on qkv (M, 3C) = [q | k | v], each head hd columns of its third:
//   att (B, H, N, N) = softmax(mask(q k^T * scale)), exactly 0 above the diagonal
//   out (M, C): head h's columns = att[b, h] v[b, h]
void attention_forward(float* out, float* att, const float* qkv, int B, int N, int C, int H, float scale);
// dqkv (M, 3C) from dout (M, C), through att v, the softmax (masked entries have att = 0
// and so no gradient) and q k^T * scale. scratch holds attention_scratch_floats(N, hd).
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att,
                        int B, int N, int C, int H, float scale);

int64_t attention_scratch_floats(int N, int hd);

// out = a + b, n values: the residual stream h + attn(h).
void residual_forward(float* out, const float* a, const float* b, int64_t n);

// Softmax cross-entropy of the rows of logits (M, K) whose target is >= 0 (-1: not in the
// loss). Returns the sum of -log p[target] over those rows (in double) and writes
// dlogits = (softmax - onehot) * inv_count there, 0 in the other rows: the gradient of
// the mean over `count` rows, inv_count = 1 / count.
double crossentropy_forward_backward(float* dlogits, const float* logits, const int* targets, int M, int K,
                                     float inv_count);

} // namespace attnviz::detail
