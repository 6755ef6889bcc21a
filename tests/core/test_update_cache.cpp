// test_update_cache.cpp: the fast kernel's slider update keeps per-row softmax terms for
// one position p (UpdateCache) and reuses them while the slider stays at p. After any
// sequence of updates (many at one p, then at another p, back at the first, after a new
// forward) every intermediate must be within 1e-5 of a fresh fast forward on the same
// input, for every mask and for p at the start, middle and end of the sequence.
#include "core_test_util.h"
#include "kernels.h"

namespace attnviz::test {
namespace {

constexpr float tol = 1e-5f;

// Large enough for the fast kernel's Eigen path (checked below), small enough to be quick.
Config cache_config(MaskMode mask) {
    Config c;
    c.seq_len = 96;
    c.n_embd = 64;
    c.n_head = 4;
    c.seed = 7;
    c.mask = mask;
    return c;
}

// A slider drag: the recipe, the input the trace should now be of, and the trace.
struct Drag {
    const Experiment& e;
    Mat x;
    Trace trace; // updated incrementally
};

// Row p to the recipe's perturbation at strength alpha, then compare with a fresh forward.
void move(Drag& d, int p, float alpha, const std::string& what) {
    const Vec row = perturbed_row(d.e, p, alpha);
    d.x.row(p) = row;
    update_row(d.e.weights, p, row.data(), d.trace);
    EXPECT_EQ(d.trace.update_cache.p, p) << what << ": the update at p did not keep its cache";
    Trace fresh;
    forward(d.e.config, d.e.weights, d.x, KernelKind::fast, fresh);
    expect_same_trace(d.trace, fresh, tol, what);
}

void drag(Drag& d, int p, std::initializer_list<float> alphas, const std::string& what) {
    for (float alpha : alphas) move(d, p, alpha, what + " p=" + std::to_string(p) + " alpha=" + std::to_string(alpha));
}

TEST(UpdateCache, UsesTheSgemmPath) {
    for (MaskMode mask : all_masks) {
        Config c = cache_config(mask);
        Experiment e = make_experiment(c);
        Trace tr;
        forward(c, e.weights, e.x, KernelKind::fast, tr);
        EXPECT_FALSE(detail::fast_uses_reference_loops(tr)) << describe(c);
    }
}

TEST(UpdateCache, DragsAtOnePositionThenAnotherThenBack) {
    for (MaskMode mask : all_masks) {
        const Config c = cache_config(mask);
        const int T = c.seq_len;
        const Experiment e = make_experiment(c);
        for (int p : {0, T / 2, T - 1}) {
            SCOPED_TRACE(describe(c) + " first p=" + std::to_string(p));
            const int other = p == T / 2 ? T - 1 : T / 2;
            Drag d{e, e.x, {}};
            forward(c, e.weights, d.x, KernelKind::fast, d.trace);
            drag(d, p, {1.f, 0.25f, -1.5f, 3.f, 0.f, 0.7f}, "first drag");
            drag(d, other, {0.5f, -2.f, 1.f}, "second position");
            drag(d, p, {0.6f, 2.f, -0.3f}, "back at the first");
        }
    }
}

TEST(UpdateCache, NewForwardClearsTheCache) {
    for (MaskMode mask : all_masks) {
        const Config c = cache_config(mask);
        const int T = c.seq_len;
        const Experiment e = make_experiment(c);
        for (int p : {0, T / 2, T - 1}) {
            SCOPED_TRACE(describe(c) + " p=" + std::to_string(p));
            Drag d{e, e.x, {}};
            forward(c, e.weights, d.x, KernelKind::fast, d.trace);
            drag(d, p, {1.f, -0.5f}, "before");
            // Another input (every row but p changes) into the same trace's buffers: the
            // cached terms of the other rows are no longer true.
            d.x = e.x * -0.8f;
            d.x.row(p) = perturbed_row(e, p, -0.5f);
            forward(c, e.weights, d.x, KernelKind::fast, d.trace);
            EXPECT_EQ(d.trace.update_cache.p, -1);
            drag(d, p, {0.4f, 2.f}, "after a new forward");
        }
    }
}

TEST(UpdateCache, CopiedTraceKeepsDragging) {
    // The GUI copies its unperturbed trace over the shown one when the position changes.
    const Config c = cache_config(MaskMode::causal);
    const Experiment e = make_experiment(c);
    const int p = 40;
    Drag d{e, e.x, {}};
    forward(c, e.weights, d.x, KernelKind::fast, d.trace);
    drag(d, p, {1.f, 0.5f}, "original");
    Drag copy{e, d.x, d.trace};
    drag(copy, p, {-1.f, 2.f}, "copy");
    drag(copy, p + 1, {1.f}, "copy, next position");
}

} // namespace
} // namespace attnviz::test
