// ablation.h: what a head is for, shown causally. A head is ablated by replacing its output
// (TransformerLens's hook_z: the head's head_dim columns of y = att @ v, transposed back,
// before c_proj) by zero or by its mean over a probe, and the model is run again; each
// head's direct logit attribution (DLA) is what its output adds, alone, to one logit.
//
//   z_h       (T, hd)   head h's output, the columns h*hd .. (h+1)*hd-1 of Trace::concat
//   zero      z_h := 0                      every position
//   mean      z_h := mean of z_h over the probe (every sequence and every position), the
//                    clean model's (no head ablated): a toy model's accuracy probe (seed
//                    4321, 256 sequences, train.h), a GPT model's shown text
//   then      y = concat W_proj^T (+ c_proj.bias), the block's residual add, and every later block
//
// This is PyTorch's forward with a hook that sets the head's slice of y before c_proj
// (scripts/gen_ablation_reference.py): on the reference kernel the same float32 loops, so
// the result is torch's within rounding of the replaced values only (zero: bit for bit).
// In a trace of an ablated layer, heads[h] and att[h] keep what the head computed (its
// pattern is unchanged: it only stops being read), concat holds the replaced slice and y
// the projection of it. Later layers see the change through the residual stream.
//
// DLA at position pos onto token tok (TransformerLens's logit attribution):
//   toy      the residual stream is h_out = wte[tok] + wpe[pos] + sum of every head's
//            z_h W_proj[:, h]^T; the unembedding U is lm_head (induction), head_prev (prev,
//            both) or head_dup (dup); a component's DLA is its (C) vector . U[tok]
//   GPT      h_out = embed + pos_embed + sum over layers (heads + c_proj.bias) + sum of MLP outputs;
//            ln_f is frozen at the clean run's scale sigma = sqrt(var(h_out[pos]) + 1e-5):
//            a component's DLA is ((c - mean(c)) / sigma * ln_f.weight) . wte[tok], and
//            ln_f.bias . wte[tok] is a term of its own
//   Every term added up is the logit, within float rounding (the test asks 1e-4).
#pragma once
#include "model.h"
#include <cstdint>
#include <string>
#include <vector>

namespace attnviz {

struct ModelTrace;

enum class AblationMode { zero, mean };
const char* to_string(AblationMode m); // "zero", "mean"
// "zero" or "mean"; on failure one sentence naming the value and the two modes.
bool parse_ablation_mode(const std::string& s, AblationMode& out, std::string& error);

struct HeadRef {
    int layer = 0, head = 0;
    bool operator==(const HeadRef& o) const { return layer == o.layer && head == o.head; }
    bool operator<(const HeadRef& o) const { return layer != o.layer ? layer < o.layer : head < o.head; }
};
std::string to_string(const HeadRef& h); // "1.0" (layer.head), as the command line takes it

// "0.1", "0.1,1.0", "1.0 1.1": heads of a model with `c`'s layers and heads, sorted and
// without repeats. On failure false and one sentence naming the item and the allowed range
// ("L.H with L 0..1 and H 0..3").
bool parse_heads(const std::string& text, const ModelConfig& c, std::vector<HeadRef>& out, std::string& error);

// The heads to ablate and what replaces them. Empty: the clean model.
struct Ablation {
    AblationMode mode = AblationMode::zero;
    std::vector<HeadRef> heads; // sorted, no repeats
    std::vector<Vec> means;     // mean mode: per entry of `heads`, its (head_dim) mean z
    bool empty() const { return heads.empty(); }
    bool has(int layer, int head) const;
    bool in_layer(int layer) const;
    int first_layer() const; // the lowest ablated layer; INT32_MAX when empty
    // The replacement of head (layer, head) (head_dim values), or nullptr when not ablated.
    // Zero mode returns a vector of zeros.
    const Vec* replacement(int layer, int head, int head_dim) const;
};

// The first layer whose ablated heads differ between a and b (mode, heads or means);
// INT32_MAX when they are the same. A run on a can be turned into a run on b by
// recomputing only from this layer on.
int first_difference(const Ablation& a, const Ablation& b);

// The probe whose mean z the mean mode uses: a toy model's accuracy probe (train.h, seed
// 4321, 256 sequences of BOS + T letters); a GPT model's `text_tokens` alone.
std::vector<std::vector<int>> ablation_probe(const Model& m, const std::vector<int>& text_tokens);
// Fills ab.means for ab.heads from the clean model on `probe` (ab.mode is left as it is).
void compute_ablation_means(const Model& m, const std::vector<std::vector<int>>& probe, KernelKind kernel,
                            Ablation& ab);

// In a trace of layer `layer` whose attention has just run on rows r0..T-1: the ablated
// heads' columns of concat replaced on those rows, and y recomputed there (the same kernel's
// linear layer, with c_proj.bias when the weights have it). Nothing when no head of the layer is
// ablated. The forwards of model.h and gpt_model.h call it; so can a test.
void apply_ablation(const Ablation& ab, int layer, const Weights& w, int r0, KernelKind kernel, Trace& tr);

// A toy model's task loss and accuracy on the accuracy probe (seed 4321, 256 sequences):
// loss as the recipe's loss_of (the sum of the task's cross-entropies), accuracy as its
// accuracy() (keys "prev", "dup", "next" as the task has them), with the heads ablated.
struct TaskMetrics {
    double loss = 0;
    std::vector<std::pair<std::string, double>> accuracy; // in the order prev, dup, next
};
TaskMetrics task_metrics(const Model& m, KernelKind kernel, const Ablation* ab = nullptr);

// A GPT trace's next-token loss on its own tokens: the mean over t = 0 .. T-2 of
// -log softmax(logits[t])[tokens[t + 1]] (F.cross_entropy(logits[:-1], tokens[1:])), NaN for
// one token.
double next_token_loss(const ModelTrace& tr);

// Direct logit attribution at one position onto one token; see the top of this file.
struct LogitAttribution {
    int pos = 0, token = 0;
    float logit = 0;                      // the trace's logit (toy: the unembedding's) at (pos, token)
    float scale = 1;                      // GPT: ln_f's frozen sigma; toy: 1
    std::vector<std::vector<float>> heads; // [layer][head]
    float embed = 0, pos_embed = 0;       // wte[tok] and wpe[pos]
    std::vector<float> attn_bias;         // GPT with biases: per layer c_proj.bias's term; else empty
    std::vector<float> mlp;               // GPT: per layer the MLP output's term; else empty
    float ln_bias = 0;                    // GPT with biases: ln_f.bias . wte[tok]
    float sum() const;                    // every term added up: the logit within rounding
};
// The unembedding the DLA of a toy model reads (see the top); a GPT model's wte.
const Mat& dla_unembedding(const Model& m);
// From a trace of `m` made with `ab` (lean or not: z is att v when the trace dropped heads).
// Throws std::invalid_argument with one sentence for a pos or token outside the trace.
LogitAttribution logit_attribution(const Model& m, const ModelTrace& tr, int pos, int token,
                                   const Ablation* ab = nullptr);

} // namespace attnviz
