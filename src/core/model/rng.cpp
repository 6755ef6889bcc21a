// rng.cpp: PyTorch 1.13's CPU generator, bit for bit; see rng.h and docs/numerics.md §1-§2.
//
// Every float32 operation here is rounded on its own (the core is built with
// -ffp-contract=off); where torch's AVX2 binary fused a multiply and an add, std::fma
// says so explicitly.
#include "rng.h"
#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnviz {

namespace {

float from_bits(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

uint32_t to_bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

// 2^k as a float32, exact for k in [-126, 127].
float pow2(int k) { return from_bits(uint32_t(k + 127) << 23); }

// Polynomial coefficients (bits) of LOG (docs/numerics.md §2.1) and EXPF (§2.3).
constexpr uint32_t log_p[9] = {0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F, 0x3E11E9BF,
                               0xBE2AAE50, 0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA};
constexpr uint32_t expf_k[5] = {0x3AB696C9, 0x3C0888A6, 0x3D2AAA7A, 0x3E2AAAAB, 0x3F000000};

constexpr int mt_n = 624;
constexpr int mt_m = 397;

// One Box-Muller block of the vectorised randn (docs/numerics.md §1.6): 8 pairs, the first
// half of the block gives the radius, the second half the angle.
void box_muller_block(float* d) {
    const float two_pi = from_bits(0x40C90FDB);
    for (int j = 0; j < 8; ++j) {
        float u1 = 1.f - d[j]; // (0, 1], exact
        float u2 = d[j + 8];
        float radius = std::sqrt(-2.f * torch_log_avx2(u1));
        float theta = two_pi * u2;
        float s, c;
        torch_sincos_avx2(theta, s, c);
        d[j] = radius * c;
        d[j + 8] = radius * s;
    }
}

} // namespace

// ---------------------------------------------------------------------------------------
// The engine: MT19937 seeded with init_genrand(seed mod 2^32).

void TorchGenerator::manual_seed(uint64_t seed) {
    mt_[0] = uint32_t(seed & 0xFFFFFFFFu);
    for (int i = 1; i < mt_n; ++i)
        mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + uint32_t(i);
    index_ = mt_n; // twist before the first output
    draws_ = 0;
    cached_normal_.reset();
}

namespace {

// New state word from word i, word i+1 and word i+M (indices mod 624).
uint32_t mix(uint32_t here, uint32_t next, uint32_t far) {
    const uint32_t y = (here & 0x80000000u) | (next & 0x7FFFFFFFu);
    return far ^ (y >> 1) ^ ((y & 1u) ? 0x9908B0DFu : 0u);
}

} // namespace

void TorchGenerator::twist() {
    // The classic loop mt[i] = mix(mt[i], mt[(i+1) % N], mt[(i+M) % N]), split where the
    // indices wrap; words past the wrap are the ones already renewed, as in the classic.
    int i = 0;
    for (; i < mt_n - mt_m; ++i) mt_[i] = mix(mt_[i], mt_[i + 1], mt_[i + mt_m]);
    for (; i < mt_n - 1; ++i) mt_[i] = mix(mt_[i], mt_[i + 1], mt_[i + mt_m - mt_n]);
    mt_[mt_n - 1] = mix(mt_[mt_n - 1], mt_[0], mt_[mt_m - 1]);
    index_ = 0;
}

namespace {

uint32_t temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    y ^= y >> 18;
    return y;
}

} // namespace

uint32_t TorchGenerator::next_u32() {
    if (index_ >= mt_n) twist();
    ++draws_;
    return temper(mt_[index_++]);
}

void TorchGenerator::next_u32s(uint32_t* out, int64_t n) {
    // The same draws as n calls of next_u32, a state block at a time so the loop vectorises.
    while (n > 0) {
        if (index_ >= mt_n) twist();
        const int k = int(std::min<int64_t>(n, mt_n - index_));
        for (int i = 0; i < k; ++i) out[i] = temper(mt_[index_ + i]);
        index_ += k;
        draws_ += uint64_t(k);
        out += k;
        n -= k;
    }
}

uint64_t TorchGenerator::next_u64() {
    uint64_t hi = next_u32();
    uint64_t lo = next_u32();
    return (hi << 32) | lo;
}

void TorchGenerator::skip_draws(uint64_t n) {
    // Tempering does not feed back into the state, so skipping only needs the twists.
    while (n > 0) {
        if (index_ >= mt_n) twist();
        uint64_t k = std::min<uint64_t>(n, uint64_t(mt_n - index_));
        index_ += int(k);
        draws_ += k;
        n -= k;
    }
}

// ---------------------------------------------------------------------------------------
// Integers: torch's random_from_to with a range below 2^32 takes one 32-bit draw.

int64_t TorchGenerator::randint(int64_t low, int64_t high) {
    const uint64_t range = uint64_t(high - low);
    return low + int64_t(uint64_t(next_u32()) % range);
}

void TorchGenerator::randint(int64_t* out, int64_t n, int64_t low, int64_t high) {
    for (int64_t i = 0; i < n; ++i) out[i] = randint(low, high);
}

// ---------------------------------------------------------------------------------------
// Uniforms and nn.Linear's initialisation.

float TorchGenerator::uniform_float() {
    return float(next_u32() & 0xFFFFFFu) * pow2(-24); // low 24 bits, exact
}

// Draws into `out` as float32 uniforms in [0, 1): low 24 bits times 2^-24, in place.
void TorchGenerator::uniform_floats(float* out, int64_t n) {
    constexpr int64_t chunk = 1024;
    uint32_t draws[chunk];
    for (int64_t i = 0; i < n; i += chunk) {
        const int64_t k = std::min(chunk, n - i);
        next_u32s(draws, k);
        for (int64_t j = 0; j < k; ++j) out[i + j] = float(draws[j] & 0xFFFFFFu) * pow2(-24);
    }
}

void TorchGenerator::uniform_(float* out, int64_t n, double a, double b) {
    const float lo = float(a), hi = float(b);
    const float w = hi - lo;
    uniform_floats(out, n);
    for (int64_t i = 0; i < n; ++i) out[i] = std::fma(out[i], w, lo); // fused in torch's AVX2 kernel
}

void TorchGenerator::kaiming_uniform(float* w, int64_t out_features, int64_t in_features) {
    // torch.nn.init.kaiming_uniform_(W, a=sqrt(5)), all in double, in torch's order
    // (docs/numerics.md §1.4).
    const double a = std::sqrt(5.0);
    const double gain = std::sqrt(2.0 / (1.0 + a * a));
    const double std_dev = gain / std::sqrt(double(in_features));
    const double bound = std::sqrt(3.0) * std_dev;
    uniform_(w, out_features * in_features, -bound, bound);
}

// ---------------------------------------------------------------------------------------
// torch.randn: vectorised Box-Muller for n >= 16, scalar double Box-Muller with a cached
// second normal for n < 16 (docs/numerics.md §1.5-§1.7).

std::vector<float> TorchGenerator::randn(int64_t n) {
    std::vector<float> v(size_t(n > 0 ? n : 0));
    randn(v.data(), n);
    return v;
}

void TorchGenerator::randn(float* out, int64_t n) {
    if (n <= 0) return;
    if (n >= 16) {
        uniform_floats(out, n);
        for (int64_t i = 0; i + 16 <= n; i += 16) box_muller_block(out + i);
        if (n % 16 != 0) {
            // The tail redraws 16 uniforms over the last 16 slots, overwriting the end
            // of the last full block.
            uniform_floats(out + n - 16, 16);
            box_muller_block(out + n - 16);
        }
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        if (cached_normal_) {
            out[i] = float(*cached_normal_);
            cached_normal_.reset();
            continue;
        }
        const double mask53 = double(uint64_t(1) << 53);
        double u1 = double(next_u64() & ((uint64_t(1) << 53) - 1)) / mask53; // angle
        double u2 = double(next_u64() & ((uint64_t(1) << 53) - 1)) / mask53; // radius
        double r = std::sqrt(-2.0 * std::log(1.0 - u2));
        double theta = 2.0 * M_PI * u1;
        cached_normal_ = r * std::sin(theta);
        out[i] = float(r * std::cos(theta));
    }
}

// ---------------------------------------------------------------------------------------
// LOG(x), avx_mathfun's log256_ps with GCC's contractions, for x in (0, 1]
// (docs/numerics.md §2.1).

float torch_log_avx2(float x) {
    x = std::max(x, pow2(-126));
    const uint32_t bits = to_bits(x);
    const int E = int(bits >> 23) - 127;
    float m = from_bits((bits & ~0x7F800000u) | 0x3F000000u); // [0.5, 1)
    float e = float(E) + 1.f;
    float t;
    if (m < from_bits(0x3F3504F3)) { // SQRTHF
        t = (m - 1.f) + m;
        e = e - 1.f;
    } else {
        t = m - 1.f;
    }
    const float z = t * t;
    float y = from_bits(log_p[0]);
    for (int k = 1; k <= 8; ++k) y = std::fma(y, t, from_bits(log_p[k]));
    y = y * t;
    y = std::fma(y, z, e * from_bits(0xB95E8083)); // Q1
    y = y - 0.5f * z;
    const float r = t + y;
    return std::fma(e, from_bits(0x3F318000), r); // Q2
}

// SINCOS(theta), avx_mathfun's sincos256_ps, for theta >= 0 (docs/numerics.md §2.2).
void torch_sincos_avx2(float theta, float& s_out, float& c_out) {
    const bool sign_sin = std::signbit(theta);
    const float a = std::fabs(theta);
    const float y = a * from_bits(0x3FA2F983); // 4/pi
    int32_t j = int32_t(y);
    j = (j + 1) & ~1;
    const float yj = float(j);
    const bool swap_sin = (j & 4) != 0;
    const bool poly_mask = (j & 2) == 0;
    const bool neg_cos = ((j - 2) & 4) == 0;

    float x = std::fma(yj, from_bits(0xBF490000), a); // DP1
    x = std::fma(yj, from_bits(0xB97DA000), x);       // DP2
    x = std::fma(yj, from_bits(0xB3222169), x);       // DP3
    const float z = x * x;

    float c = std::fma(z, from_bits(0x37CCF5CE), from_bits(0xBAB6061A));
    c = std::fma(z, c, from_bits(0x3D2AAAA5));
    c = c * z;
    c = std::fma(c, z, -(0.5f * z));
    c = c + 1.f;

    float s = std::fma(z, from_bits(0xB94CA1F9), from_bits(0x3C08839E));
    s = std::fma(z, s, from_bits(0xBE2AAAA3));
    s = s * z;
    s = std::fma(s, x, x);

    float sin_v = poly_mask ? s : c;
    float cos_v = poly_mask ? c : s;
    if (sign_sin != swap_sin) sin_v = -sin_v;
    if (neg_cos) cos_v = -cos_v;
    s_out = sin_v;
    c_out = cos_v;
}

// EXPF(d): SLEEF 3.5 expf u10 (AVX2 build), used by torch's softmax (docs/numerics.md §2.3).
float sleef_expf_u10(float d) {
    if (std::isnan(d)) return d;
    if (d < -104.f) return 0.f; // covers -inf
    if (d > 100.f) return INFINITY;
    // Round to nearest, ties to even: adding and removing 1.5 * 2^23 leaves no fraction
    // bits (|d * R| <= 151 here), and each float add rounds that way by default.
    const float big = 12582912.f;
    const int32_t q = int32_t((d * from_bits(0x3FB8AA3B) + big) - big);
    const float qf = float(q);
    float s = std::fma(qf, from_bits(0xBF317200), d);
    s = std::fma(qf, from_bits(0xB5BFBE8E), s);
    float u = from_bits(0x39502BDA);
    for (uint32_t k : expf_k) u = std::fma(u, s, from_bits(k));
    u = std::fma(u, s * s, s);
    u = u + 1.f;
    const int32_t q_half = q >> 1; // arithmetic shift
    return (u * pow2(q_half)) * pow2(q - q_half);
}

} // namespace attnviz
