// weights.h: the module's two learned matrices, stored as torch stores them.
//
// qkv.weight is [3C][C] and proj.weight is [C][C], [out][in], with y = x W^T.
// Biases are empty for the lesson's module (bias=False); checkpoints from nanoGPT and
// GPT-2 carry them, and then they are added as nn.Linear adds them.
#pragma once
#include "rng.h"
#include "tensor.h"
#include <string>

namespace attnviz {

struct Weights {
    Mat w_qkv;  // (3C, C)  qkv.weight
    Mat w_proj; // (C, C)   proj.weight
    Vec b_qkv;  // (3C) or empty
    Vec b_proj; // (C) or empty
    std::string source = "seeded"; // "seeded", or a description of the file it came from

    int n_embd() const { return int(w_proj.rows()); }
    bool has_bias() const { return b_qkv.size() > 0 || b_proj.size() > 0; }
};

// SelfAttention(C, H) right after torch.manual_seed: qkv = Linear(C, 3C) draws first,
// then proj = Linear(C, C). Advances `gen` by 4C^2 draws.
Weights init_weights(TorchGenerator& gen, int n_embd);

} // namespace attnviz
