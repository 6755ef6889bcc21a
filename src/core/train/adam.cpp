// adam.cpp: torch.optim.Adam as torch 1.13 runs it on the CPU (_single_tensor_adam, no
// weight decay, no amsgrad), in its float32 order:
//   step += 1; bias corrections bc1 = 1 - b1^step, bc2 = 1 - b2^step in double
//   m = m * b1 + (1 - b1) g                 exp_avg.mul_(b1).add_(g, alpha=1-b1)
//   v = v * b2 + (1 - b2) g g               exp_avg_sq.mul_(b2).addcmul_(g, g, value=1-b2)
//   denom = sqrt(v) / sqrt(bc2) + eps
//   p = p + (-lr / bc1) (m / denom)         param.addcdiv_(exp_avg, denom, value=-step_size)
// Python's doubles (alpha, value, the bias corrections) enter each float32 kernel as
// float32 scalars.
// GCC 12's false -Wmaybe-uninitialized inside its AVX-512 intrinsics, where Eigen's
// fixed-size arrays inline them (see layers.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "train_work.h"
#include <cmath>

namespace attnviz::detail {

bool adam_step(AdamState& s, const std::vector<Param>& params, const std::vector<const Mat*>& grads) {
    const int64_t step = s.step + 1;
    const double bc1 = 1.0 - std::pow(adam_beta1, double(step));
    const double bc2 = 1.0 - std::pow(adam_beta2, double(step));
    const float b1 = float(adam_beta1), b2 = float(adam_beta2);
    const float one_minus_b1 = float(1.0 - adam_beta1), one_minus_b2 = float(1.0 - adam_beta2);
    const float bc2_sqrt = float(std::sqrt(bc2));
    const float eps = float(adam_eps);
    const float neg_step_size = float(-(s.lr / bc1));

    // One pass that only looks, so that a step making a weight or moment non-finite
    // changes nothing; then the same arithmetic again, written. Blocks of 16 go through
    // Eigen's arrays so that sqrt and the division run on vectors (std::sqrt in a plain
    // loop stays scalar for errno's sake); each lane does exactly the scalar tail's float
    // operations, so the bits are the same.
    using Block = Eigen::Array<float, 16, 1>;
    auto update = [&](size_t i, bool write) {
        float* p = params[i].value->data();
        float* m = s.m[i].data();
        float* v = s.v[i].data();
        const float* g = grads[i]->data();
        const int64_t n = params[i].value->size();
        bool finite = true;
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) {
            Block mj;
            for (int c = 0; c < 16; ++c) mj[c] = std::fma(g[j + c], one_minus_b1, m[j + c] * b1); // add_ with alpha: fused in torch's AVX2 kernel
            const Eigen::Map<const Block> gj(g + j);
            const Block vj = Eigen::Map<const Block>(v + j) * b2 + (one_minus_b2 * gj) * gj;
            Block root;
            for (int c = 0; c < 16; ++c) root[c] = std::sqrt(vj[c]); // Eigen's sqrt may be approximate
            const Block denom = root / bc2_sqrt + eps;
            const Block pj = Eigen::Map<const Block>(p + j) + neg_step_size * (mj / denom);
            if (write) {
                Eigen::Map<Block>(m + j) = mj;
                Eigen::Map<Block>(v + j) = vj;
                Eigen::Map<Block>(p + j) = pj;
            } else {
                finite = finite && mj.isFinite().all() && vj.isFinite().all() && pj.isFinite().all();
            }
        }
        for (; j < n; ++j) {
            const float mj = std::fma(g[j], one_minus_b1, m[j] * b1);
            const float vj = v[j] * b2 + (one_minus_b2 * g[j]) * g[j];
            const float denom = std::sqrt(vj) / bc2_sqrt + eps;
            const float pj = p[j] + neg_step_size * (mj / denom);
            if (write) {
                m[j] = mj;
                v[j] = vj;
                p[j] = pj;
            } else {
                finite = finite && std::isfinite(mj) && std::isfinite(vj) && std::isfinite(pj);
            }
        }
        return finite;
    };
    for (size_t i = 0; i < params.size(); ++i)
        if (!update(i, false)) return false;
    for (size_t i = 0; i < params.size(); ++i) update(i, true);
    s.step = step;
    return true;
}

} // namespace attnviz::detail
