// test_update_row.cpp: the incremental update after one input row changes must give what
// a full forward on the new input gives: bit for bit on the reference kernel, within 1e-5
// on the fast one, for every mask, several positions and strengths, and chains of updates.
#include "core_test_util.h"

namespace attnviz::test {
namespace {

float tolerance(KernelKind k) { return k == KernelKind::reference ? 0.f : 1e-5f; }

void check_positions(const Config& c) {
    Experiment e = make_experiment(c);
    const int T = c.seq_len;
    for (KernelKind kernel : all_kernels)
        for (int p : {0, T / 2, T - 1})
            for (float alpha : {1.f, 0.5f}) {
                SCOPED_TRACE(describe(c) + " kernel=" + to_string(kernel) + " p=" + std::to_string(p) +
                             " alpha=" + std::to_string(alpha));
                Trace updated, full;
                forward(c, e.weights, e.x, kernel, updated);
                Vec row = perturbed_row(e, p, alpha);
                update_row(e.weights, p, row.data(), updated);
                forward(c, e.weights, perturbed_input(e, p, alpha), kernel, full);
                expect_same_trace(updated, full, tolerance(kernel), "update vs forward");
            }
}

TEST(UpdateRow, EqualsFullForward) {
    for (MaskMode mask : all_masks) {
        for (auto [T, C, H] : {std::tuple{4, 8, 2}, {1, 6, 3}, {12, 16, 4}, {37, 20, 5}, {140, 32, 4}}) {
            Config c;
            c.seq_len = T;
            c.n_embd = C;
            c.n_head = H;
            c.seed = uint64_t(T + C);
            c.mask = mask;
            check_positions(c);
        }
    }
}

TEST(UpdateRow, RepeatedUpdatesEqualFullRecomputes) {
    for (MaskMode mask : all_masks)
        for (KernelKind kernel : all_kernels)
            for (int T : {9, 130}) {
                Config c;
                c.seq_len = T;
                c.n_embd = 24;
                c.n_head = 3;
                c.seed = 99;
                c.mask = mask;
                const int p = T / 3;
                SCOPED_TRACE(describe(c) + " kernel=" + to_string(kernel));
                Experiment e = make_experiment(c);
                Trace updated, original;
                forward(c, e.weights, e.x, kernel, updated);
                forward(c, e.weights, e.x, kernel, original);
                for (float alpha : {0.3f, 0.9f, 0.f}) {
                    Vec row = perturbed_row(e, p, alpha);
                    update_row(e.weights, p, row.data(), updated);
                    Trace full;
                    forward(c, e.weights, perturbed_input(e, p, alpha), kernel, full);
                    expect_same_trace(updated, full, tolerance(kernel), "alpha " + std::to_string(alpha));
                }
                // Back at alpha 0 the input is x again, exactly.
                if (kernel == KernelKind::reference) expect_same_trace(updated, original, 0.f, "back to x");
            }
}

TEST(UpdateRow, TwoDifferentRowsInSuccession) {
    for (MaskMode mask : all_masks)
        for (KernelKind kernel : all_kernels) {
            Config c;
            c.seq_len = 90;
            c.n_embd = 16;
            c.n_head = 2;
            c.mask = mask;
            SCOPED_TRACE(describe(c) + " kernel=" + to_string(kernel));
            Experiment e = make_experiment(c);
            Trace updated;
            forward(c, e.weights, e.x, kernel, updated);
            Mat x = e.x;
            for (auto [p, scale] : {std::pair{70, 2.f}, {5, -1.f}, {89, 0.5f}}) {
                Vec row = e.replacement * scale;
                x.row(p) = row;
                update_row(e.weights, p, row.data(), updated);
            }
            Trace full;
            forward(c, e.weights, x, kernel, full);
            expect_same_trace(updated, full, tolerance(kernel), "three updates");
        }
}

} // namespace
} // namespace attnviz::test
