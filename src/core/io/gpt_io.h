// gpt_io.h: whole GPT-2 and nanoGPT models from safetensors files.
//
//   Hugging Face GPT-2   a directory with model.safetensors (and config.json), or the file
//                        itself; names [transformer.]wte.weight, wpe.weight, h.N.ln_1.weight,
//                        h.N.attn.c_attn.weight [C][3C] (Conv1D: y = x W + b, transposed
//                        here into nn.Linear's [3C][C]), h.N.attn.c_proj, h.N.ln_2,
//                        h.N.mlp.c_fc [C][4C], h.N.mlp.c_proj [4C][C], ln_f, all with biases.
//                        GELU: tanh (gelu_new).
//   nanoGPT              one file, names transformer.h.N.… (any prefix before wte.weight, e.g.
//                        torch.compile's _orig_mod.), nn.Linear layout [out][in], with or
//                        without biases (bias=False). GELU: erf (nn.GELU()).
// The layout is read from c_attn's shape. L from the blocks h.0 .. h.(L-1), C and V from
// wte, block size from wpe; H from the caller (--n-head), else config.json's n_head, else
// __metadata__["n_head"], else the file is refused with a sentence asking for --n-head.
// config.json's vocab_size, n_embd, n_layer and n_positions must agree with the shapes, and
// its activation_function ("gelu_new" or "gelu") chooses the GELU when present. Mask
// buffers (attn.bias, attn.masked_bias) and a tied lm_head.weight are ignored.
//
// Memory: the file is mapped (MappedSafetensors) and each tensor decoded once from the
// mapping into the model (Conv1D through one tensor-sized buffer for the transpose), then
// the mapping goes: the peak is the model's floats plus the file's pages, which the kernel
// may drop as soon as they are unmapped.
#pragma once
#include "model.h"
#include <optional>
#include <string>

namespace attnviz {

struct GptFileInfo {
    std::string file;        // the safetensors file read
    std::string layout;      // "GPT-2 (Hugging Face)" or "nanoGPT"
    std::string prefix;      // before wte.weight: "", "transformer.", "_orig_mod.transformer."
    bool conv1d = false;     // Conv1D weights, transposed on load
    bool config_json = false; // a config.json was read
    std::string n_head_from; // "--n-head", "config.json", "__metadata__"
    std::string hub_id;      // the Hub id --model named ("gpt2"), when read from the cache; else ""
};

// True when the path is a directory, or a safetensors file whose tensors include a
// [prefix]wte.weight and no attnviz_task (a toy model is model_io.h's).
bool looks_like_gpt(const std::string& path);

// Read a whole model. On failure: false and one sentence naming the file and the problem
// (no such file, not safetensors, truncated, a missing tensor, a wrong shape, n_head not
// dividing C or missing, config.json disagreeing, a non-finite value); `out` is untouched.
bool load_gpt(const std::string& path, std::optional<int> n_head, Model& out, GptFileInfo& info,
              std::string& error);

} // namespace attnviz
