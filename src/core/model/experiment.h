// experiment.h: the lesson's recipe, and the perturbation that tests causality.
//
//   torch.manual_seed(seed); attn = SelfAttention(C, H); x = torch.randn(1, T, C)
//   y1 = attn(x); x2 = x.clone(); x2[0, p] = torch.randn(C); y2 = attn(x2)
//
// The replacement row is the generator's next randn(C) after x, whatever p is, so it is
// drawn once and kept. A strength alpha in [0, 1] blends the original row toward it:
// row = x[p] + alpha * (replacement - x[p]); alpha = 1 gives the replacement exactly,
// alpha = 0 the original exactly.
#pragma once
#include "attention.h"

namespace attnviz {

struct Experiment {
    Config config;
    Weights weights;
    Mat x;               // (T, C)  torch.randn(1, T, C), B dropped
    Vec replacement;     // (C)     the next torch.randn(C)
    uint64_t draws_after_weights = 0, draws_after_x = 0, draws_after_row = 0;
};

// Runs the generator exactly as the recipe does. With `weights` given (loaded from a
// file), the generator still advances past the 4C^2 weight draws, so the same seed gives
// the same x whichever weights are used.
Experiment make_experiment(const Config& c);
Experiment make_experiment(const Config& c, const Weights& weights);

// The perturbed row for position p at strength alpha (alpha = 1: the replacement).
Vec perturbed_row(const Experiment& e, int p, float alpha);
// x with row p replaced by perturbed_row(e, p, alpha).
Mat perturbed_input(const Experiment& e, int p, float alpha);

} // namespace attnviz
