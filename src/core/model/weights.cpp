// weights.cpp: SelfAttention(C, H)'s parameters as torch initialises them; see weights.h.
#include "weights.h"
#include "kernels.h"

namespace attnviz {

Weights init_weights(TorchGenerator& gen, int n_embd) {
    const int C = n_embd;
    Weights w;
    // Row-major [out][in] is torch's memory order, so uniform_ fills it in draw order.
    w.w_qkv.resize(3 * C, C);
    detail::advise_huge_pages(w.w_qkv);
    gen.kaiming_uniform(w.w_qkv.data(), 3 * C, C); // qkv = Linear(C, 3C): 3C^2 draws
    w.w_proj.resize(C, C);
    detail::advise_huge_pages(w.w_proj);
    gen.kaiming_uniform(w.w_proj.data(), C, C);    // proj = Linear(C, C): C^2 draws
    w.source = "seeded";
    return w;
}

} // namespace attnviz
