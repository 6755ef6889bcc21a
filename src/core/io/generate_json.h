// generate_json.h: what `attnviz generate` records of a generation, and its JSON.
// docs/cli.md documents the keys.
//
//   {"prompt_tokens": [...], "tokens": [...], "text": "...",        text: with a tokenizer
//    "kernel": "reference", "cache": true, "block_size": 64,
//    "sampling": {"greedy": true} | {"greedy": false, "temperature", "top_k", "top_p", "seed"},
//    "steps": [{"pos", "token", "text", "prob", "top5": [{"token", "logit", "prob"}], "ms"}],
//    "stop": "max_new" | "block_size", "check": {"max_abs_diff_logits": ...}}   check: --check
//
// A step's pos is where its token goes in the sequence (the prompt fills 0 .. P-1); its
// logits are the last row of the sequence before it. prob is the chosen token's probability
// in the distribution it was drawn from (sampling_probs: after temperature, top-k and top-p;
// greedy: the plain softmax). top5 are the five largest raw logits (ties: the lower id
// first), each with its probability in that same distribution (0 for a token cut). ms is
// the step's own time as the command measured it. The command checks every value before it
// fills these; nothing here parses or reports an error.
#pragma once
#include "model.h"
#include "sampling.h"
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attnviz {

class BpeTokenizer;

constexpr int generate_top_logits = 5;

struct GenerateTop {
    int token = 0;
    float logit = 0; // raw, before any transform
    float prob = 0;  // after the transforms; 0 when they cut the token
};

struct GenerateStep {
    int pos = 0;
    int token = 0;
    float prob = 0;
    std::vector<GenerateTop> top5; // highest raw logit first
    double ms = 0;
};

// The step's record from its logits row (V values) and the distribution it was drawn from.
GenerateStep generate_step(int pos, int token, const float* logits, const std::vector<float>& probs, double ms);

struct GenerateRun {
    std::vector<int> prompt_tokens;  // as the model read them (a toy model's BOS first)
    std::vector<int> tokens;         // the generated ids, in order
    std::vector<GenerateStep> steps; // one per generated token
    bool stopped_at_block_size = false;
    KernelKind kernel = KernelKind::reference;
    bool cache = true;               // false: --no-cache, a full forward per step
    int block_size = 0;
    SamplingOptions sampling;
    std::optional<float> max_abs_diff_logits; // --check
};

// One token as text: its bytes with a GPT tokenizer (`tok`), a toy model's letter, or ""
// (a GPT model without a tokenizer: only ids).
std::string generated_token_text(const Model& m, const BpeTokenizer* tok, int token);
// The generated tokens as one text: decoded with the tokenizer, a toy model's letters
// separated by spaces (as --text takes them), or "" without either.
std::string generated_text(const Model& m, const BpeTokenizer* tok, const std::vector<int>& tokens);
// True when the model's tokens have text: a toy model, or a GPT model with `tok`.
bool has_token_text(const Model& m, const BpeTokenizer* tok);

// Writes the object above (no trailing newline).
void write_generate_json(std::ostream& out, const Model& m, const GenerateRun& r, const BpeTokenizer* tok);

} // namespace attnviz
