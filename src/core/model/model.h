// model.h: the model stack. Tokens through embeddings into L attention blocks with
// residuals, then task heads: the toy models the Train view teaches with, and GPT-2 /
// nanoGPT (arch gpt), whose blocks add LayerNorm and an MLP and whose head is the tied wte.
//
// Toy models:
//   tok (N)                       N = T + 1 tokens, BOS (= V) first
//   h = wte[tok] + wpe[0..N-1]    (N, C)
//   for each block l:  h = h + attn_l(h)        attn_l is the lesson's SelfAttention
//   logits = h W_head^T           (N, V+1) prev, (N, 2) dup, (N, V) next token
//
// GPT models (nanoGPT's GPT.forward; no BOS, no task heads):
//   tok (T)                       T <= block size
//   h = wte[tok] + wpe[0..T-1]    (T, C)
//   for each block l:  h = h + attn_l(ln_1(h))  attention with biases (when the file has them)
//                      h = h + mlp_l(ln_2(h))   c_proj(gelu(c_fc(x))), 4C hidden
//   logits = ln_f(h) wte^T        (T, V)        the head is tied to wte
// The GPT forward itself is in gpt_model.h.
//
// The lesson's module is the special case the app opens on: no embeddings, one block, no
// residual (attention.h's forward on a given x). It does not go through this file.
#pragma once
#include "attention.h"
#include <functional>
#include <string>
#include <vector>

namespace attnviz {

// Toy models (the Train view's) or GPT-2 / nanoGPT whole models.
enum class Arch { toy, gpt };
// GPT-2's MLP uses the tanh approximation (Hugging Face's gelu_new); nanoGPT's nn.GELU() the
// exact erf form. Chosen by the file's layout and stated in the output.
enum class Gelu { tanh, erf };
const char* to_string(Gelu g); // "tanh (gelu_new)", "erf (nn.GELU())"

// The four toy tasks (docs/training.md §1).
//   prev       predict the previous token                -> a previous-token head
//   dup        has this token appeared earlier?          -> a duplicate-token head
//   both       both targets at once (H = 4)               -> heads of each kind
//   induction  continue a repeated segment (L = 2)        -> previous-token + induction heads
enum class Task { prev, dup, both, induction };

const char* to_string(Task t); // "prev", "dup", "both", "induction"
// On failure: false, and `error` is one sentence naming the value and the four tasks.
bool parse_task(const std::string& s, Task& out, std::string& error);

// Everything that fixes a model's shapes.
struct ModelConfig {
    Task task = Task::both; // toy models only
    int vocab = 16;   // V: toy tokens 0..V-1 print as a, b, c, ...; token V is BOS ("^").
                      // GPT: the vocabulary, wte's rows, no BOS
    int seq_len = 16; // toy: T, the body's length (T + 1 tokens, BOS first); GPT: the block size
    int n_embd = 64;  // C
    int n_head = 4;   // H
    int n_layer = 1;  // L
    // After the toy sizes, so that ModelConfig{task, V, T, C, H, L} still reads as before.
    Arch arch = Arch::toy;
    Gelu gelu = Gelu::tanh; // GPT only
    bool bias = false;      // GPT only: Linear and LayerNorm biases (nanoGPT's bias=False has none)

    int bos() const { return vocab; }
    int n_tokens() const { return arch == Arch::gpt ? seq_len : seq_len + 1; } // N: wpe's rows
    int head_dim() const { return n_embd / n_head; }
    bool has_prev_head() const { return task == Task::prev || task == Task::both; }
    bool has_dup_head() const { return task == Task::dup || task == Task::both; }
    bool has_lm_head() const { return task == Task::induction; }
};

// A task's defaults (docs/training.md §1): sizes, learning rate, batch, steps.
struct TrainDefaults {
    ModelConfig model;
    double lr = 5e-3;
    int batch = 64;
    int steps = 1000;
};
TrainDefaults task_defaults(Task t);

// Largest toy models. A step keeps, per layer, B x H x (T+1)^2 attention weights and a few
// (B (T+1), C) activations: at these caps and the probes' B = 256 that is about 0.6 GB, so
// a batch above 256 is the caller's to refuse. Tokens print as the letters a .. z.
constexpr int max_train_vocab = 26;
constexpr int max_train_seq_len = 64;
constexpr int max_train_n_embd = 256;
constexpr int max_train_n_head = 16;
constexpr int max_train_n_layer = 4;

// Empty when usable; otherwise one sentence naming the bad value and what is allowed
// (V < 2, H not dividing C, T too short for induction, sizes over the caps, L < 1).
std::string validate(const ModelConfig& c);

// The LayerNorm's parameters; bias empty when the model has none (nanoGPT's bias=False).
struct LayerNormWeights {
    Vec weight; // (C)
    Vec bias;   // (C) or empty
};

// The attention Config of a block run on N positions: the model's C and H, the causal mask
// and ÷ √head_dim every model here is trained and run with.
Config block_config(const ModelConfig& c, int N);

// One block of the stack. The toy models use attn alone; GPT models all of it.
struct Block {
    // nanoGPT's MLP: c_proj(gelu(c_fc(x))).
    struct Mlp {
        Linear c_fc;    // (4C, C), (4C) or empty
        Linear c_proj;  // (C, 4C), (C) or empty
    };
    Weights attn;       // attn.c_attn (3C, C), attn.c_proj (C, C) as nn.Linear [out][in]; biases
                        // (3C), (C) for GPT models with bias, none for the toy models
    LayerNormWeights ln_1, ln_2; // GPT only
    Mlp mlp;            // GPT only
};

struct Model {
    ModelConfig config;
    Mat wte;              // toy (V+1, C), BOS last; GPT (V, C), also the LM head
    Mat wpe;              // toy (T+1, C); GPT (block size, C)
    std::vector<Block> h; // L blocks
    LayerNormWeights ln_f; // GPT only
    Mat head_prev;        // (V+1, C)  prev and both; empty otherwise
    Mat head_dup;         // (2, C)    dup and both; empty otherwise
    Mat lm_head;          // (V, C)    induction; empty otherwise
    std::string source;   // GPT: one line on the file it came from
};

// torch.manual_seed(seed); ToyModel(task, V, T, C, H, L): weights made in docs/training.md §2's
// order: wte = randn(V+1, C), wpe = randn(T+1, C), then per block qkv and proj
// (kaiming_uniform as nn.Linear), then head_prev, head_dup, lm_head (those the task has).
Model init_model(const ModelConfig& c, uint64_t seed);

// One named parameter tensor, in model.parameters() order (the order Adam walks).
// Names are nanoGPT's, as trained files store them (docs/training.md §7): transformer.wte.weight,
// transformer.wpe.weight, transformer.h.N.attn.c_attn.weight, transformer.h.N.attn.c_proj.weight,
// head_prev.weight, head_dup.weight, lm_head.weight.
struct Param {
    std::string name;
    Mat* value;
};
std::vector<Param> parameters(Model& m);

// The forward of one sequence for the views and the commands: every block's intermediates
// in a Trace (x is that block's input h, y its attention output before the residual add).
// GPT blocks only: the residual stream around a block and its MLP. The block's input is
// h0 for layer 0 and the previous block's resid_post otherwise (not stored twice).
struct BlockTrace {
    Mat ln_2;       // (T, C)   ln_2(resid_mid), the MLP's input
    Mat mlp;        // (T, C)   c_proj(gelu(c_fc(ln_2)))
    Mat resid_mid;  // (T, C)   input + attn(ln_1(input)); empty when lean (gpt_resid_mid)
    Mat resid_post; // (T, C)   resid_mid + mlp
};

// The head scores (docs/training.md §6), per layer and head: previous-token, duplicate and
// induction (head_detector.h computes them on any sequences, train.h on the probe).
struct HeadScores {
    std::vector<std::vector<float>> prev_token; // [layer][head]
    std::vector<std::vector<float>> duplicate;
    std::vector<std::vector<float>> induction;
};

struct ModelTrace {
    std::vector<int> tokens;    // (N)
    Mat h0;                     // (N, C)  wte[tok] + wpe
    std::vector<Trace> layers;  // L traces, seq_len N; for GPT x is ln_1 of the block's input
    std::vector<BlockTrace> blocks; // GPT: L blocks; empty for toy models
    Mat h_out;                  // (N, C)  after the last block
    Mat logits_prev, logits_dup, logits_next; // (N, V+1), (N, 2), (N, V); those the task has
    Mat ln_f;                   // GPT: (T, C) ln_f(h_out)
    Mat logits;                 // GPT: (T, V) ln_f(h_out) wte^T
    bool lean = false;          // GPT: only what gpt_model.h's lean forward keeps
    // GPT compact (gpt_model.h, lean too): no layer keeps its softmax weights and the trace
    // keeps no logits; what was read of them before they went:
    bool compact = false;
    int att_pool = 1;                  // side, in cells, of one pixel of att_pooled
    std::vector<PerHead> att_pooled;   // [layer] H x (ceil(T/att_pool))^2: each pixel its cells' largest weight
    HeadScores att_scores;             // detect_on_text (head_detector.h) of every layer on `tokens`
    std::vector<double> next_nll;      // (T-1) -log softmax(logits[t])[tokens[t+1]], next_token_loss's terms
    std::vector<float> logits_delta;   // after gpt_update_compact: (T) max |Δ logits[t, :]| against its base
};
// The reference kernel is bit for bit torch's forward on the same tokens. With `ablation`
// (ablation.h) the heads it names are replaced in every block before c_proj.
struct Ablation;
void model_forward(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& out,
                   const Ablation* ablation = nullptr);
// The blocks alone, from given embeddings h0 (N, C) (h0, layers and h_out of `out`; no task
// heads): the causality view's input is a blend of two embeddings, which no token sequence
// gives. model_forward runs exactly this after wte[tok] + wpe.
void model_blocks(const Model& m, const Mat& h0, KernelKind kernel, ModelTrace& out, const Ablation* ablation = nullptr);
// Blocks l0 .. L-1 and the task heads of a trace model_forward (or model_blocks) made,
// recomputed in place with `ablation` from block l0's input (its trace's x); blocks before l0
// are kept. With their ablation unchanged, the result is model_forward with `ablation` bit
// for bit.
void model_rerun_from(const Model& m, int l0, KernelKind kernel, ModelTrace& tr, const Ablation* ablation = nullptr);

// What activation patching (patching.h) changes in a rerun: called with each layer's attention
// trace after its attention has run and before the residual add; it may change concat and must
// then recompute y (as apply_ablation does).
using LayerEdit = std::function<void(int layer, Trace& attention)>;
// model_rerun_from with `edit` instead of an ablation: blocks l0 .. L-1 from block l0's input
// (its trace's x, which the caller may have changed) and the task heads.
void model_rerun_edit(const Model& m, int l0, KernelKind kernel, ModelTrace& tr, const LayerEdit& edit);

} // namespace attnviz
