// model_json.h: a GPT-2 or nanoGPT model's trace as JSON (attnviz trace --model), and the
// pieces bench --model shares with it. docs/cli.md documents the keys.
//
// The trace keeps a lean ModelTrace (gpt_model.h): every layer's attention weights and
// residuals, and the layers it prints recomputed one at a time by gpt_layer_trace, so a
// large model never holds every layer's raw scores at once. The request holds values the
// command has already checked against the model; nothing here parses or reports an error.
#pragma once
#include "ablation.h"
#include "gpt_io.h"
#include "head_detector.h"
#include "json_writer.h"
#include "model.h"
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attnviz {

class BpeTokenizer;

// "model": {path, file, layout, description, n_layer, n_head, n_head_from, n_embd,
// vocab_size, block_size, gelu, bias, transposed}; `path` is the model as the user gave it.
void write_gpt_model_info(JsonWriter& w, const Model& m, const GptFileInfo& info, const std::string& path);

// Layer l of a trace gpt_forward made (with `ab`, or nullptr), recomputed by gpt_layer_trace:
// {layer, the lesson's intermediates_for_x keys, x (ln_1), y (attention output), resid_mid,
// resid_post}, each with B = 1 in front.
void write_gpt_layer(JsonWriter& w, const Model& m, const ModelTrace& tr, int l, KernelKind kernel,
                     const Ablation* ab);

// What the Model view shows of one run: the next-token loss on the text (NaN for one token:
// nothing to predict) and the top gpt_summary_top_k tokens at the last position.
constexpr int gpt_summary_top_k = 5;
struct GptRunSummary {
    double loss = 0;
    std::vector<TokenProb> top;
};
GptRunSummary summarize_gpt_run(const ModelTrace& tr);
// {loss (null when not finite), top5: [{token, prob, text (with `tok`)}]}
void write_gpt_run_summary(JsonWriter& w, const GptRunSummary& s, const BpeTokenizer* tok);

struct GptTraceRequest {
    std::string path;                // the model as given: model.path
    std::vector<int> tokens;         // 1 .. block size ids below the vocabulary size
    KernelKind kernel = KernelKind::reference;
    bool intermediates = false;      // adds "layers"
    std::optional<int> layer;        // with intermediates: that layer alone
    std::optional<int> perturb;      // position p: token p becomes `replacement`, and the
    int replacement = 0;             // per-position and per-layer differences are added
    const Ablation* ablation = nullptr; // heads to ablate (the mean mode's means computed);
                                        // adds "ablation", and "dla" at the last position
    std::optional<int> dla_pos;      // adds "dla" at this position (onto the clean top token)
    const BpeTokenizer* tokenizer = nullptr; // the top tokens' and the DLA's token as text
    bool logit_lens = false;         // adds "logit_lens" (patch_json.h) of the traced run
};

// Streams {model, kernel, T, tokens, [layers], logits, [perturbed_position, replacement,
// max_abs_diff_per_position, max_abs_diff_per_layer], [ablation {heads, mode, before,
// after, delta {loss}}], [dla]}. The clean run, then with an ablation the clean trace rerun
// from the first ablated layer, as the window does: the traced tensors are the ablated
// run's, the DLA's token the clean run's top token at its position.
void write_gpt_trace_json(std::ostream& out, const Model& m, const GptFileInfo& info, const GptTraceRequest& r);

// `attnviz tokenize`: {"ids": [...], "tokens": [...]}, each token as tok.display shows it;
// bytes that are not UTF-8 are written as U+FFFD.
void write_tokens_json(std::ostream& out, const BpeTokenizer& tok, const std::vector<int>& ids);

} // namespace attnviz
