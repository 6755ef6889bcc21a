// test_fast_kernel.cpp: the fast kernel (OpenBLAS products, causal-aware blocks) against
// the plain-loop reference kernel, on every intermediate, within 1e-5.
#include "blas.h"
#include "core_test_util.h"
#include "kernels.h"
#include <cstring>

namespace attnviz::test {
namespace {

constexpr float tol = 1e-5f;

void compare_kernels(const Config& c, int& used_fast_path) {
    SCOPED_TRACE(describe(c));
    Experiment e = make_experiment(c);
    Trace ref, fast;
    forward(c, e.weights, e.x, KernelKind::reference, ref);
    forward(c, e.weights, e.x, KernelKind::fast, fast);
    EXPECT_EQ(fast.kernel, KernelKind::fast);
    if (!detail::fast_uses_reference_loops(fast)) ++used_fast_path;
    expect_same_trace(fast, ref, tol, "fast vs reference");
}

// The comparisons below test the OpenBLAS products, not Eigen's fallback for a machine
// without OpenBLAS, and OpenBLAS runs the kernels this CPU has: OpenBLAS 0.3.21 alone
// gives a CPU model newer than itself its SSE3 kernels ("Prescott"), 4 to 5 times slower.
TEST(FastKernel, RunsOnOpenBLASWithThisCPUsKernels) {
    ASSERT_TRUE(detail::blas_loaded()) << "OpenBLAS (libopenblas0-pthread) was not loaded";
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        EXPECT_STRNE(detail::blas_core_name(), "Prescott") << "an AVX2 CPU on OpenBLAS's SSE3 kernels";
    }
    EXPECT_STRNE(detail::blas_core_name(), "none");
}

TEST(FastKernel, AgreesOnChosenShapes) {
    // Edges: T = 1, H = 1, head_dim = 1, sizes around the row block (64) and the
    // vector widths (8, 16), and the largest T the tests afford.
    const int shapes[][3] = {{1, 8, 2},    {1, 96, 3},   {2, 5, 5},    {63, 16, 1},  {64, 16, 16},
                             {65, 20, 4},  {129, 33, 11}, {200, 7, 7},  {17, 64, 1},  {300, 48, 6},
                             {257, 24, 24}, {100, 96, 8}, {31, 1, 1},   {150, 40, 40}};
    int used_fast = 0, total = 0;
    for (MaskMode mask : all_masks)
        for (ScaleMode scale : all_scales)
            for (const auto& s : shapes) {
                Config c;
                c.seq_len = s[0];
                c.n_embd = s[1];
                c.n_head = s[2];
                c.seed = uint64_t(s[0]) * 1000 + uint64_t(s[1]);
                c.mask = mask;
                c.scale = scale;
                compare_kernels(c, used_fast);
                ++total;
            }
    EXPECT_GE(used_fast, total * 2 / 3); // most shapes take the sgemm path, not the loops
}

TEST(FastKernel, AgreesOnRandomShapes) {
    std::mt19937 rng(7);
    int used_fast = 0;
    for (int n = 0; n < 36; ++n) {
        const Config c = random_config(rng, 300, 64, all_masks[n % 3], all_scales[(n / 3) % 3]);
        compare_kernels(c, used_fast);
    }
    EXPECT_GE(used_fast, 24);
}

// Below fast_uses_reference_loops' size the fast kernel is the reference kernel, so the
// lesson's example gives torch's bits whichever kernel the window or the CLI chose.
TEST(FastKernel, IsTheReferenceBitForBitAtTinySizes) {
    const json j = load_json("lesson_example.json");
    const Config lesson = case_config(j);
    const Experiment le = make_experiment(lesson);
    Trace fast;
    forward(lesson, le.weights, le.x, KernelKind::fast, fast);
    ASSERT_TRUE(detail::fast_uses_reference_loops(fast));
    EXPECT_TRUE(same(fast.y, flat(j.at("y1")), 0.f)) << "lesson y";
    std::mt19937 rng(5);
    int tried = 0;
    for (int n = 0; n < 200 && tried < 40; ++n) {
        const Config c = random_config(rng, 20, 40, all_masks[n % 3], all_scales[n % 3]);
        Experiment e = make_experiment(c);
        if (n % 2) {
            e.weights.c_attn.bias = Vec::LinSpaced(3 * c.n_embd, -0.7f, 0.9f);
            e.weights.c_proj.bias = Vec::LinSpaced(c.n_embd, 0.4f, -0.3f);
        }
        Trace ref, f;
        forward(c, e.weights, e.x, KernelKind::reference, ref);
        forward(c, e.weights, e.x, KernelKind::fast, f);
        if (!detail::fast_uses_reference_loops(f)) continue;
        ++tried;
        expect_same_trace(f, ref, 0.f, describe(c));
    }
    EXPECT_GE(tried, 30);
}

TEST(FastKernel, LargeScoresStayFinite) {
    // Unscaled scores over a wide head: a sharp softmax must not overflow. The scores
    // are sums of 256 products of size ~5, so the summation order alone moves them by
    // ~1e-4; the tolerance is scaled to that.
    Config c;
    c.n_embd = 256;
    c.n_head = 1;
    c.seq_len = 70;
    c.scale = ScaleMode::none;
    Experiment e = make_experiment(c);
    Mat x = e.x * 4.f;
    Trace ref, fast;
    forward(c, e.weights, x, KernelKind::reference, ref);
    forward(c, e.weights, x, KernelKind::fast, fast);
    EXPECT_TRUE(fast.y.allFinite());
    expect_same_trace(fast, ref, 3e-4f, "sharp softmax");
}

} // namespace
} // namespace attnviz::test

#ifdef _OPENMP
#include <omp.h>
namespace attnviz::test {
namespace {

TEST(FastKernel, LeavesTheCallersThreadSettingAlone) {
    // A mid-sized problem runs on the calling thread and tells Eigen so for that call
    // only; the caller's OpenMP setting must be what it was.
    const int saved = omp_get_max_threads();
    omp_set_num_threads(2); // whatever earlier tests left, a setting the kernel must keep
    const int before = omp_get_max_threads();
    for (int T : {40, 400}) {
        Config c;
        c.seq_len = T;
        c.n_embd = 32;
        c.n_head = 4;
        Experiment e = make_experiment(c);
        Trace t;
        forward(c, e.weights, e.x, KernelKind::fast, t);
        Vec row = e.replacement;
        update_row(e.weights, T / 2, row.data(), t);
        EXPECT_EQ(omp_get_max_threads(), before) << "T=" << T;
    }
    omp_set_num_threads(saved);
}

} // namespace
} // namespace attnviz::test
#endif
