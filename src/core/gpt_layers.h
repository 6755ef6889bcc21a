// gpt_layers.h: the layers a GPT block adds to the lesson's attention, one forward function
// each, as llm.c writes them. Not part of the public API (gpt_model.cpp and the tests use it).
//
// Every buffer is row-major float32 and owned by the caller; rows are positions. Each
// function computes rows r0 .. M-1 only, so the perturbed forward (gpt_model.h) can redo the
// rows from p on and leave the rows before p untouched.
#pragma once
#include "attention.h"
#include "model.h"

namespace attnviz::detail {

// out (M, C) = LayerNorm(inp) with eps 1e-5: per row, mean and biased variance, then
// ((x * rstd) + (-rstd * mean)) * weight + bias in float32, the order of torch's CPU kernel.
// The mean and variance are summed in double and rounded once (torch uses a float32
// Welford cascade: docs/numerics.md §7.2 says what that changes).
void layernorm_forward(float* out, const float* inp, const LayerNormWeights& ln, int r0, int M, int C);

// out = gelu(inp), n values: tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as
// Hugging Face's gelu_new writes it, or erf form x 0.5 (1 + erf(x / sqrt 2)) as nn.GELU().
// The reference kernel calls the C library's tanh and erf per value; the fast one Eigen's
// vectorised tanh (a rational approximation within a few ulp) on the work team, for the
// tanh form (the erf form keeps the library's erf).
void gelu_forward(float* out, const float* inp, int64_t n, Gelu form, KernelKind kernel = KernelKind::reference);

// out (M, OC) rows r0.. = inp (M, IC) W^T + b, W (OC, IC) as nn.Linear stores it. The
// reference kernel sums each output sequentially from 0 and adds the bias after the sum
// (docs/numerics.md §3.2); the fast one calls sgemm.
void linear_forward(float* out, const float* inp, const Mat& W, const Vec& b, int r0, int M, KernelKind kernel);

// out = a + b, rows r0 .. M-1 of (M, C): the residual stream.
void residual_forward(float* out, const float* a, const float* b, int r0, int M, int C);

} // namespace attnviz::detail
