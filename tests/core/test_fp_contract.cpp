// test_fp_contract.cpp: the core must not let the compiler fuse a*b + c into one FMA
// (torch rounds the product first), in the -march=native build as in the portable one.
//
// qkv[0][0] = x0*w0 + x1*w1 with x = (1, 1 + 2^-12), w = (-1, 1 + 2^-12):
// (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds (tie to even) to 1 + 2^-11, so the unfused sum
// is exactly 2^-11; a fused multiply-add would keep the 2^-24 and give 2^-11 + 2^-24.
#include "core_test_util.h"

namespace attnviz::test {
namespace {

TEST(FpContract, ReferenceKernelRoundsEveryProduct) {
    Config c;
    c.n_embd = 2;
    c.n_head = 1;
    c.seq_len = 1;
    const float a = 1.f + 0x1p-12f;
    Weights w;
    w.c_attn.weight.resize(6, 2);
    for (int o = 0; o < 6; ++o) {
        w.c_attn.weight(o, 0) = -1.f;
        w.c_attn.weight(o, 1) = a;
    }
    w.c_proj.weight = Mat::Identity(2, 2);
    Mat x(1, 2);
    x << 1.f, a;
    for (KernelKind kernel : {KernelKind::reference}) {
        Trace t;
        forward(c, w, x, kernel, t);
        for (int o = 0; o < 6; ++o) EXPECT_EQ(t.qkv(0, o), 0x1p-11f) << "qkv[0][" << o << "] was fused";
    }
}

TEST(FpContract, GeneratorUnfusedWhereTorchIsUnfused) {
    // LOG rounds y * t and y - 0.5 z on their own (docs/numerics.md §2.1); these are two of
    // the values torch's LOG gives in randn(16) at seed 0. A compiler's contraction cannot
    // move them (0.5 z is exact, and y * t feeds an fma, not an add), so this pins LOG's
    // values; ReferenceKernelRoundsEveryProduct is what proves the build unfused.
    EXPECT_EQ(torch_log_avx2(0.50374341f), -0.685688257f);
    EXPECT_EQ(torch_log_avx2(0.231778204f), -1.46197438f);
}

} // namespace
} // namespace attnviz::test
