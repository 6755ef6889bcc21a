// rng.h: PyTorch 1.13's CPU generator, bit for bit (MT19937 + torch's transforms).
//
// Only what the recipes need: manual_seed, Tensor.uniform_ (for nn.Linear's kaiming
// init), torch.randn on both of its paths, including the cached normal that the scalar
// path keeps between calls, and torch.randint (the training batches).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace attnviz {

class TorchGenerator {
public:
    explicit TorchGenerator(uint64_t seed = 0) { manual_seed(seed); }

    // torch.manual_seed(seed): only seed mod 2^32 enters the engine; clears the cache.
    void manual_seed(uint64_t seed);

    // One 32-bit MT19937 output (a "draw").
    uint32_t next_u32();
    // n draws, the same as n calls of next_u32.
    void next_u32s(uint32_t* out, int64_t n);
    // Two draws, hi first: hi * 2^32 + lo.
    uint64_t next_u64();
    // Number of draws taken since the last manual_seed.
    uint64_t draws() const { return draws_; }

    // torch.rand: one draw, low 24 bits, times 2^-24.
    float uniform_float();
    // n of them.
    void uniform_floats(float* out, int64_t n);
    // Tensor.uniform_(a, b) over n float32 values in memory order.
    void uniform_(float* out, int64_t n, double a, double b);
    // torch.randn(n) as float32, choosing the vectorised (n >= 16) or scalar path.
    std::vector<float> randn(int64_t n);
    void randn(float* out, int64_t n);

    // torch.randint(low, high, (n,), generator=g) on the CPU: one draw per element, in
    // order, low + draw % (high - low). Needs 0 < high - low < 2^32.
    int64_t randint(int64_t low, int64_t high);
    void randint(int64_t* out, int64_t n, int64_t low, int64_t high);

    // nn.Linear(in, out, bias=False).weight: [out][in], kaiming_uniform_(a = sqrt(5)).
    void kaiming_uniform(float* w, int64_t out_features, int64_t in_features);
    // Advance past the draws kaiming_uniform would take, without computing values.
    void skip_draws(uint64_t n);

    bool has_cached_normal() const { return cached_normal_.has_value(); }

private:
    uint32_t mt_[624];
    int index_ = 624;
    uint64_t draws_ = 0;
    std::optional<double> cached_normal_;
    void twist();
};

// The float32 transcendental approximations torch uses on AVX2 (docs/numerics.md §2),
// exposed for tests and for the reference softmax.
float torch_log_avx2(float x);                          // LOG(x), x in (0, 1]
void torch_sincos_avx2(float theta, float& s, float& c); // SINCOS(theta), theta >= 0
float sleef_expf_u10(float d);                           // EXPF(d)

} // namespace attnviz
