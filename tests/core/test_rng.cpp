// test_rng.cpp: the generator (docs/numerics.md §1, §2) against values read off PyTorch
// 1.13 itself: its first outputs for seed 0, Box-Muller's internals, and long streams.
#include "core_test_util.h"
#include "rng.h"
#include "weights.h"
#include <cstring>

namespace attnviz::test {
namespace {

float from_bits(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

TEST(Generator, RawDrawsSeed0) {
    const uint32_t expected[8] = {2357136044u, 2546248239u, 3071714933u, 3626093760u,
                                  2588848963u, 3684848379u, 2340255427u, 3638918503u};
    TorchGenerator gen(0);
    for (uint32_t e : expected) EXPECT_EQ(gen.next_u32(), e);
    EXPECT_EQ(gen.draws(), 8u);
}

TEST(Generator, MatchesStdMt19937BeyondOneTwist) {
    // The engine is the classic MT19937 (docs/numerics.md §1.1), so its 10,000th output is
    // the one the C++ standard fixes for default seed 5489: 4123659995.
    TorchGenerator gen(5489);
    uint32_t last = 0;
    for (int i = 0; i < 10000; ++i) last = gen.next_u32();
    EXPECT_EQ(last, 4123659995u);
}

TEST(Generator, UniformSeed0) {
    const uint32_t expected_bits[8] = {0x3efe1558, 0x3f44aa2f, 0x3db533a8, 0x3e073300,
                                       0x3e9d6686, 0x3f2252fb, 0x3efaed86, 0x3f657d67};
    TorchGenerator gen(0);
    for (uint32_t b : expected_bits) EXPECT_EQ(bits(gen.uniform_float()), b);
}

TEST(Generator, RandnVectorisedSeed0) {
    const uint32_t expected_bits[8] = {0xbf901b85, 0xbf93808a, 0xbe804bd6, 0xbede255d,
                                       0x3f594515, 0x3f312783, 0xbea1cc6d, 0xc0075fc1};
    TorchGenerator gen(0);
    std::vector<float> v = gen.randn(16);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(bits(v[i]), expected_bits[i]) << "randn(16)[" << i << "]";
    // Second half of the first block: the sines of its first four pairs, as torch gives them.
    EXPECT_EQ(v[8], 0.322274923f);
    EXPECT_EQ(v[9], -1.26333475f);
    EXPECT_EQ(v[10], 0.349983186f);
    EXPECT_EQ(v[11], 0.30813393f);
    EXPECT_EQ(gen.draws(), 16u);
    EXPECT_FALSE(gen.has_cached_normal());
}

TEST(Generator, BoxMullerBlockInternalsSeed0) {
    // The first four pairs of randn(16)'s block at seed 0: U1 = 1 - d[j] and the angle from
    // U2 = d[j+8], with LOG, COS and SIN as torch computes them (docs/numerics.md §1.6).
    const float u1[4] = {0.50374341f, 0.231778204f, 0.911522567f, 0.867969513f};
    const float log_u1[4] = {-0.685688257f, -1.46197438f, -0.0926389247f, -0.141598687f};
    const float theta[4] = {2.86279511f, 3.97289753f, 2.19216228f, 2.5240643f};
    const float cos_t[4] = {-0.961387038f, -0.673912287f, -0.582146347f, -0.815312028f};
    const float sin_t[4] = {0.275199831f, -0.738811374f, 0.813084006f, 0.579021811f};
    for (int j = 0; j < 4; ++j) {
        EXPECT_EQ(torch_log_avx2(u1[j]), log_u1[j]) << j;
        float s = 0, c = 0;
        torch_sincos_avx2(theta[j], s, c);
        EXPECT_EQ(c, cos_t[j]) << j;
        EXPECT_EQ(s, sin_t[j]) << j;
    }
}

TEST(Generator, RandnScalarSeed0) {
    const uint32_t expected_bits[8] = {0x3fc53f5c, 0xbe963c50, 0xc00b7149, 0x3f1184b6,
                                       0xbf8ad1a1, 0xbfb3052d, 0x3ece837a, 0x3f5688e5};
    TorchGenerator gen(0);
    std::vector<float> v = gen.randn(8);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(bits(v[i]), expected_bits[i]) << "randn(8)[" << i << "]";
    EXPECT_EQ(gen.draws(), 16u); // 4 pairs, 4 draws each
}

TEST(Generator, Random64AndDoubleUniformsSeed0) {
    TorchGenerator gen(0);
    EXPECT_EQ(gen.next_u64(), 0x8c7f0aac97c4aa2full);
    EXPECT_EQ(gen.next_u64(), 0xb716a675d821ccc0ull);
}

TEST(Generator, CachedNormalSurvivesOtherCalls) {
    TorchGenerator gen(0);
    EXPECT_EQ(bits(gen.randn(1)[0]), 0x3fc53f5cu); // 1.54099607, caches r sin(theta)
    EXPECT_TRUE(gen.has_cached_normal());
    uint64_t before = gen.draws();
    gen.randn(16);          // vectorised: neither uses nor clears the cache
    float scratch[3];
    gen.uniform_(scratch, 3, -1.0, 1.0); // neither does uniform_
    EXPECT_EQ(gen.draws(), before + 16 + 3);
    EXPECT_TRUE(gen.has_cached_normal());
    std::vector<float> next = gen.randn(2);
    EXPECT_EQ(bits(next[0]), 0xbe963c50u); // -0.293428898, the cached value
    EXPECT_EQ(gen.draws(), before + 16 + 3 + 4);
    EXPECT_TRUE(gen.has_cached_normal());  // next[1] left its own sine behind
    gen.manual_seed(0);
    EXPECT_FALSE(gen.has_cached_normal());
    EXPECT_EQ(gen.draws(), 0u);
}

TEST(Generator, RandnSplitAcrossCallsEqualsOneCall) {
    // randn(3) leaves a cached value that randn(5) hands out first (docs/numerics.md §1.7).
    TorchGenerator one(7), two(7);
    std::vector<float> whole = one.randn(8);
    std::vector<float> a = two.randn(3), b = two.randn(5);
    a.insert(a.end(), b.begin(), b.end());
    EXPECT_TRUE(same(a, whole));
}

TEST(Generator, RandnTailRedrawsSixteen) {
    // n = 20: one block of 16, then 16 fresh uniforms over slots 4..19.
    TorchGenerator gen(3);
    std::vector<float> v = gen.randn(20);
    EXPECT_EQ(gen.draws(), 36u);
    // The first 4 values are the first block's, as randn(16) gives them.
    TorchGenerator first(3);
    std::vector<float> block = first.randn(16);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(bits(v[i]), bits(block[i])) << i;
    // Slots 4..19 are the block made from draws 20..35.
    TorchGenerator tail(3);
    tail.skip_draws(20);
    std::vector<float> second = tail.randn(16);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(bits(v[4 + i]), bits(second[i])) << i;
}

TEST(Generator, SeedIsTakenModulo2To32) {
    TorchGenerator big((uint64_t(1) << 32) + 77), small(77);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(big.next_u32(), small.next_u32()) << i;
    TorchGenerator big_n((uint64_t(1) << 32) + 77), small_n(77);
    EXPECT_TRUE(same(big_n.randn(100), small_n.randn(100)));
}

TEST(Generator, SkipDrawsEqualsDrawing) {
    for (uint64_t n : {0ull, 1ull, 623ull, 624ull, 625ull, 5000ull}) {
        TorchGenerator a(11), b(11);
        for (uint64_t i = 0; i < n; ++i) a.next_u32();
        b.skip_draws(n);
        EXPECT_EQ(a.draws(), b.draws());
        EXPECT_EQ(a.next_u32(), b.next_u32()) << n;
    }
}

TEST(Generator, KaimingUniformIsFused) {
    // C = 8, seed 0: bound 1/sqrt(8), W[0][0] = fma(0.49625659, w, -b). The unfused
    // forms would be -0.00264698267 and 0.189661473.
    TorchGenerator gen(0);
    Weights w = init_weights(gen, 8);
    EXPECT_EQ(bits(w.c_attn.weight(0, 0)), 0xbb2d7922u);
    EXPECT_EQ(bits(w.c_attn.weight(0, 1)), 0x3e42369cu);
    EXPECT_EQ(gen.draws(), 256u);
    EXPECT_EQ(w.c_attn.weight.rows(), 24);
    EXPECT_EQ(w.c_proj.weight.rows(), 8);
    for (int i = 0; i < w.c_attn.weight.size(); ++i) {
        ASSERT_LE(std::fabs(w.c_attn.weight.data()[i]), 0.353553385f);
    }
}

// FNV-1a over the float32 bits, to compare long streams with torch without a data file.
uint64_t fnv1a(const std::vector<float>& v) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (float f : v) {
        h ^= bits(f);
        h *= 0x100000001b3ull;
    }
    return h;
}

TEST(Generator, LongStreamsMatchTorch) {
    // The hashes were computed from torch 1.13 (AVX2) itself:
    //   def fnv(a): h = 0xcbf29ce484222325; then for each uint32 b of a: h = ((h ^ b) * 0x100000001b3) mod 2^64
    //   torch.manual_seed(0); fnv(torch.randn(65536))            -> 0xa7ea693afff93465
    //   torch.manual_seed(7); fnv(torch.randn(100003))           -> 0x8b5529f24260b794
    //   torch.manual_seed(5); fnv(nn.Linear(300, 900, bias=False).weight) -> 0x901335e3c210f7ac
    //   torch.manual_seed(11); fnv(cat(randn(k) for k in [1,3,15,2,7,5,9,1,13]*50)) -> 0xf491da7925f6ef9d
    // Hundreds of thousands of values through LOG, SINCOS and the fused uniform_ catch
    // one-ulp slips that a handful of table entries can miss.
    TorchGenerator g0(0);
    EXPECT_EQ(fnv1a(g0.randn(65536)), 0xa7ea693afff93465ull);
    TorchGenerator g7(7);
    EXPECT_EQ(fnv1a(g7.randn(100003)), 0x8b5529f24260b794ull);
    TorchGenerator g5(5);
    std::vector<float> w(900 * 300);
    g5.kaiming_uniform(w.data(), 900, 300);
    EXPECT_EQ(fnv1a(w), 0x901335e3c210f7acull);
    TorchGenerator g11(11);
    std::vector<float> scalar;
    for (int rep = 0; rep < 50; ++rep)
        for (int k : {1, 3, 15, 2, 7, 5, 9, 1, 13}) {
            std::vector<float> v = g11.randn(k);
            scalar.insert(scalar.end(), v.begin(), v.end());
        }
    EXPECT_EQ(scalar.size(), 2800u);
    EXPECT_EQ(fnv1a(scalar), 0xf491da7925f6ef9dull);
}

TEST(Generator, ExpfMatchesSleefNotLibm) {
    // docs/numerics.md §2.3: d = -1.10955286 gives 0x3EA8CF46; a correctly rounded expf 0x3EA8CF45.
    EXPECT_EQ(bits(sleef_expf_u10(from_bits(0xBF8E05D4))), 0x3EA8CF46u);
    EXPECT_EQ(sleef_expf_u10(0.f), 1.f);
    EXPECT_EQ(sleef_expf_u10(-INFINITY), 0.f);
    EXPECT_EQ(sleef_expf_u10(-105.f), 0.f);
    EXPECT_TRUE(std::isinf(sleef_expf_u10(101.f)));
    EXPECT_TRUE(std::isnan(sleef_expf_u10(NAN)));
    // Within an ulp or two of the true value over the softmax's range.
    for (float d = -20.f; d <= 0.f; d += 0.0137f) {
        double e = std::exp(double(d));
        EXPECT_NEAR(sleef_expf_u10(d), e, 2.5e-7 * e) << d;
    }
}

TEST(Generator, LogAndSincosAreClose) {
    // Beyond the values read off torch: the approximations stay within a few ulp of libm.
    for (float x = 1e-6f; x <= 1.f; x *= 1.37f) {
        EXPECT_NEAR(torch_log_avx2(x), std::log(double(x)), 4e-7 * std::max(1.0, std::fabs(std::log(double(x)))))
            << x;
    }
    EXPECT_EQ(torch_log_avx2(1.f), 0.f);
    for (float t = 0.f; t < 6.2832f; t += 0.01f) {
        float s, c;
        torch_sincos_avx2(t, s, c);
        EXPECT_NEAR(s, std::sin(double(t)), 3e-7) << t;
        EXPECT_NEAR(c, std::cos(double(t)), 3e-7) << t;
    }
}

} // namespace
} // namespace attnviz::test
