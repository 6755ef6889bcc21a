// weights_io.h: attention weights from safetensors files, whichever program wrote them.
//
// Four naming schemes give the module's two matrices (and biases when present):
//   lesson       qkv.weight [3C][C], proj.weight [C][C]       safetensors.torch.save_file(attn.state_dict())
//                (+ qkv.bias [3C], proj.bias [C])
//   nanoGPT      c_attn.weight [3C][C], c_proj.weight [C][C]  one CausalSelfAttention's state_dict
//                (+ c_attn.bias [3C], c_proj.bias [C])
//   GPT-2 (HF)   <prefix>h.N.attn.c_attn.weight [C][3C]       Conv1D: stored TRANSPOSED, y = x W + b
//                <prefix>h.N.attn.c_proj.weight [C][C]        (transposed too), with their biases
//   nanoGPT model <prefix>h.N.attn.c_attn.weight [3C][C]      nn.Linear layout, e.g. "transformer."
// The layout of c_attn (Conv1D [C][3C] or nn.Linear [3C][C]) is read from its shape, and
// the square c_proj follows the same decision. Every other tensor is ignored.
//
// C comes from the shapes; H from the caller, else from __metadata__["n_head"].
#pragma once
#include "safetensors.h"
#include "weights.h"
#include <functional>
#include <optional>

namespace attnviz {

enum class WeightScheme { lesson, nanogpt_block, layered };

struct LoadedWeights {
    Weights weights;        // c_attn.weight (3C, C), c_proj.weight (C, C) in nn.Linear layout
                            // [out][in]; the biases filled when the file has them; source = description
    int n_embd = 0;         // C, from the shapes
    int n_head = 0;         // H, from the caller or the file's __metadata__
    bool n_head_from_file = false;
    WeightScheme scheme = WeightScheme::lesson;
    bool conv1d = false;    // stored as GPT-2's Conv1D ([in][out]) and transposed on load
    int layer = 0;          // the layer read (0 for single-block files)
    std::vector<int> layers;   // every layer the file has (just 0 for single-block files)
    std::string prefix;        // e.g. "transformer." before h.N (layered files)
    std::string qkv_name, proj_name, qkv_bias_name, proj_bias_name; // the names used ("" = absent)
    std::vector<std::string> tensor_names; // every tensor in the file, in data order
    std::string description; // one line, e.g. "gpt2.safetensors: GPT-2 (Hugging Face) layer 3 of
                             // 0 to 11 (h.3.attn.c_attn.weight), n_embd 768, n_head 12, transposed
                             // from Conv1D, with biases"
};

// "lesson", "nanoGPT attention block", "GPT-2 (Hugging Face)" or "nanoGPT model",
// from the scheme and the layout.
std::string scheme_name(const LoadedWeights& w);

// Reads one tensor as float32 (from a file, or from memory for tests and fuzzing).
using TensorReader = std::function<bool(const TensorInfo&, std::vector<float>&, std::string&)>;

// Pick the scheme, check names and shapes, read the tensors and check that every value
// is finite. `layer` selects h.N in layered files (single-block files have only layer 0).
bool weights_from_safetensors(const SafetensorsFile& file, const TensorReader& read, std::optional<int> n_head,
                              int layer, LoadedWeights& out, std::string& error);

// From a file on disk: only the header and the tensors used are read.
bool load_weights(const std::string& path, std::optional<int> n_head, int layer, LoadedWeights& out,
                  std::string& error);
// From a whole file held in memory; `name` stands for the path in error sentences.
bool load_weights_from_memory(const uint8_t* bytes, size_t size, const std::string& name,
                              std::optional<int> n_head, int layer, LoadedWeights& out, std::string& error);

// Write the lesson's names (qkv.weight, proj.weight; qkv.bias, proj.bias only when
// present) as F32 with __metadata__ {"format": "pt", "n_head": "<H>"}. Refuses
// inconsistent shapes, an n_head that does not divide C, and non-finite values.
// load_weights on the result gives the same floats bit for bit.
bool save_weights(const std::string& path, const Weights& weights, int n_head, std::string& error);
// The same file's bytes in memory (what the classroom server sends); `name` stands for the
// path in error sentences.
bool weights_bytes(const std::string& name, const Weights& weights, int n_head, std::string& out, std::string& error);

} // namespace attnviz
