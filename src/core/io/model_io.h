// model_io.h: trained models as safetensors files, in the layout of docs/training.md §7.
//
//   transformer.wte.weight              (V+1, C)   token embedding, BOS last
//   transformer.wpe.weight              (T+1, C)   position embedding
//   transformer.h.N.attn.c_attn.weight  (3C, C)    block N's qkv, nn.Linear layout [out][in]
//   transformer.h.N.attn.c_proj.weight  (C, C)     block N's proj
//   head_prev.weight                    (V+1, C)   prev and both
//   head_dup.weight                     (2, C)     dup and both
//   lm_head.weight                      (V, C)     induction
//   __metadata__  {"attnviz_task": "both", "n_head": "4", "n_layer": "1", "vocab_size": "16"}
//
// All F32, sorted by name, the header padded with spaces to a multiple of 8: byte for byte
// what PyTorch's writer of that layout gives, so torch's files and ours are the same format.
//
// Which files are trained models: those whose __metadata__ has attnviz_task. A nanoGPT or
// GPT-2 checkpoint has transformer.wte.weight too, but no attnviz_task; it stays a file of
// attention layers for load_weights (weights_io.h), which refuses trained models.
#pragma once
#include "model.h"
#include "safetensors.h"
#include "weights_io.h"
#include <string>
#include <vector>

namespace attnviz {

// The metadata key that marks a trained model.
constexpr const char* trained_task_key = "attnviz_task";

// True when the file's __metadata__ has attnviz_task.
bool is_trained_model(const SafetensorsFile& file);
// The same from a path; false when the file cannot be read as safetensors at all (the
// caller's loader then says why).
bool is_trained_model_file(const std::string& path);

// One tensor of the layout: its name, its shape and where it lives in a Model.
struct ModelTensor {
    std::string name;
    int rows = 0, cols = 0;
    Mat* (*member)(Model&, int layer) = nullptr;
    int layer = -1; // the block for c_attn / c_proj, else -1
};
// Every tensor a model of this config has, in parameters() order.
std::vector<ModelTensor> model_layout(const ModelConfig& c);

// Write `m` in the layout above through the safetensors writer (a temporary file renamed
// over `path`, so an existing file is replaced whole or not at all). Refuses a model
// whose shapes do not match its config, or that holds a NaN or infinite value.
bool save_model(const std::string& path, const Model& m, std::string& error);
// The same file's bytes in memory (what the classroom server sends); `name` stands for the
// path in error sentences.
bool model_bytes(const std::string& name, const Model& m, std::string& out, std::string& error);

// Read a trained model: the task from attnviz_task, V from vocab_size (and wte's rows),
// T from wpe's rows - 1, C from wte's columns, L from the blocks present (and n_layer),
// H from n_head. A file whose tensors or metadata do not make one consistent model (a
// missing or extra tensor, a shape that disagrees, a head of another task, a non-finite
// value) is refused with one sentence that starts with the file's name.
bool model_from_safetensors(const SafetensorsFile& file, const TensorReader& read, Model& out, std::string& error);
bool load_model(const std::string& path, Model& out, std::string& error);
bool load_model_from_memory(const uint8_t* bytes, size_t size, const std::string& name, Model& out,
                            std::string& error);

// "a", "b", ... for tokens 0..V-1 and "^" for BOS (token V); past "z", "t26", "t27", ...
std::string token_name(const ModelConfig& c, int token);
// "a, b, c, ... p" (or every name when V is small): for sentences naming the vocabulary.
std::string vocabulary_text(const ModelConfig& c);
// The token of a word, or -1 when the word is not in the vocabulary. "^" is BOS.
int token_of(const ModelConfig& c, const std::string& word);

} // namespace attnviz
