// lesson.cpp: see lesson.h.
#include "lesson.h"
#include "attention.h"
#include "experiment.h"
#include "python_text.h"
#include <cmath>

namespace attnviz {

std::vector<std::string> lesson_lines() {
    std::vector<std::string> lines;
    // The lesson's recipe: manual_seed(0); SelfAttention(8, 2); x = randn(1, 4, 8);
    // x2[0, 2] = randn(8); y1 = attn(x), y2 = attn(x2).
    Config c;
    c.seed = 0;
    c.n_embd = 8;
    c.n_head = 2;
    c.seq_len = 4;
    const int p = 2;
    Experiment e = make_experiment(c);
    Trace tr;
    forward(c, e.weights, e.x, KernelKind::reference, tr);
    Mat y1 = tr.y; // (T, C)
    forward(c, e.weights, perturbed_input(e, p, 1.f), KernelKind::reference, tr);
    std::vector<float> diff = max_abs_diff_per_position(y1, tr.y); // (T)

    // torch's max propagates NaN; so do these.
    auto max_of = [&](int from, int to) {
        float m = 0.f;
        for (int t = from; t < to; ++t)
            m = (std::isnan(diff[size_t(t)]) || diff[size_t(t)] > m) ? diff[size_t(t)] : m;
        return m;
    };
    int64_t params = int64_t(e.weights.c_attn.weight.size() + e.weights.c_proj.weight.size() + e.weights.c_attn.bias.size() +
                             e.weights.c_proj.bias.size());
    lines.push_back(python_tuple({1, y1.rows(), y1.cols()}));
    lines.push_back(std::to_string(params));
    lines.push_back(python_float_repr(double(max_of(0, p))));
    lines.push_back(python_float_repr(python_round(double(max_of(p, c.seq_len)), 4)));
    return lines;
}

} // namespace attnviz
