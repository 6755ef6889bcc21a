// weights.h: the module's two learned matrices, stored as torch stores them.
//
// c_attn.weight is [3C][C] and c_proj.weight is [C][C], [out][in], with y = x W^T. The
// lesson's module calls them qkv and proj (its files store qkv.weight and proj.weight);
// here they carry nanoGPT's names, as every GPT block's attention does.
// Biases are empty for the lesson's module (bias=False); checkpoints from nanoGPT and
// GPT-2 carry them, and then they are added as nn.Linear adds them.
#pragma once
#include "rng.h"
#include "tensor.h"
#include <string>

namespace attnviz {

// One nn.Linear: weight in its layout [out][in] (y = x weight^T + bias); bias empty when
// the layer has none (bias=False).
struct Linear {
    Mat weight; // (out, in)
    Vec bias;   // (out) or empty
};

struct Weights {
    Linear c_attn; // (3C, C), (3C) or empty   the lesson's qkv
    Linear c_proj; // (C, C),  (C) or empty    the lesson's proj
    std::string source = "seeded"; // "seeded", or a description of the file it came from

    int n_embd() const { return int(c_proj.weight.rows()); }
    bool has_bias() const { return c_attn.bias.size() > 0 || c_proj.bias.size() > 0; }
};

// SelfAttention(C, H) right after torch.manual_seed: qkv = Linear(C, 3C) draws first,
// then proj = Linear(C, C). Advances `gen` by 4C^2 draws.
Weights init_weights(TorchGenerator& gen, int n_embd);

} // namespace attnviz
