// experiment.cpp: the lesson's recipe and its causality perturbation; see experiment.h.
#include "experiment.h"

namespace attnviz {

namespace {

// x = torch.randn(1, T, C), then the replacement row torch.randn(C), from `gen` as the
// recipe leaves it after the weights.
void draw_inputs(TorchGenerator& gen, Experiment& e) {
    const int T = e.config.seq_len, C = e.config.n_embd;
    e.draws_after_weights = gen.draws();
    e.x.resize(T, C);
    gen.randn(e.x.data(), int64_t(T) * C);
    e.draws_after_x = gen.draws();
    e.replacement.resize(C);
    gen.randn(e.replacement.data(), C);
    e.draws_after_row = gen.draws();
}

} // namespace

Experiment make_experiment(const Config& c) {
    Experiment e;
    e.config = c;
    TorchGenerator gen(c.seed);
    e.weights = init_weights(gen, c.n_embd);
    draw_inputs(gen, e);
    return e;
}

Experiment make_experiment(const Config& c, const Weights& weights) {
    Experiment e;
    e.config = c;
    TorchGenerator gen(c.seed);
    gen.skip_draws(4 * uint64_t(c.n_embd) * uint64_t(c.n_embd)); // where init_weights would be
    e.weights = weights;
    draw_inputs(gen, e);
    return e;
}

Vec perturbed_row(const Experiment& e, int p, float alpha) {
    const Vec original = e.x.row(p);
    // The ends are exact: alpha = 0 is the lesson's x, alpha = 1 the lesson's x2 row.
    if (alpha == 0.f) return original;
    if (alpha == 1.f) return e.replacement;
    Vec row(original.size());
    for (Eigen::Index c = 0; c < row.size(); ++c)
        row[c] = original[c] + alpha * (e.replacement[c] - original[c]);
    return row;
}

Mat perturbed_input(const Experiment& e, int p, float alpha) {
    Mat x2 = e.x;
    x2.row(p) = perturbed_row(e, p, alpha);
    return x2;
}

} // namespace attnviz
