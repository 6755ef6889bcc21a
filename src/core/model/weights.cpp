// weights.cpp: SelfAttention(C, H)'s parameters as torch initialises them; see weights.h.
#include "weights.h"
#include "kernels.h"

namespace attnviz {

Weights init_weights(TorchGenerator& gen, int n_embd) {
    const int C = n_embd;
    Weights w;
    // Row-major [out][in] is torch's memory order, so uniform_ fills it in draw order.
    w.c_attn.weight.resize(3 * C, C);
    detail::advise_huge_pages(w.c_attn.weight);
    gen.kaiming_uniform(w.c_attn.weight.data(), 3 * C, C); // qkv = Linear(C, 3C): 3C^2 draws
    w.c_proj.weight.resize(C, C);
    detail::advise_huge_pages(w.c_proj.weight);
    gen.kaiming_uniform(w.c_proj.weight.data(), C, C);     // proj = Linear(C, C): C^2 draws
    w.source = "seeded";
    return w;
}

} // namespace attnviz
