// head_detector.h: what each head of a model attends to, as TransformerLens's head_detector
// and the training recipe's head_scores (train.h, docs/training.md §6) measure it, but on
// any sequences: the text the views show, and repeated random token sequences.
//
//   prev_token  mean of a[i, i-1] over queries i >= 1
//   duplicate   over the queries that have an earlier key with the same token, the mean of
//               the attention mass on those keys (NaN when no query has one)
//   induction   on a text: over the queries whose token appeared earlier (at j < i), the
//               mean mass on the keys j + 1 just after those occurrences; on a repeated
//               sequence [s0 .. s0+R) = [s0+R .. s0+2R): the mean of a[i, i-R+1] over the
//               second copy's queries i whose next token is known, i = s0+R .. s0+2R-2
//               (s0 = 1 after a BOS, 0 without one)
//
// The repeated sequences start with the model's BOS when it has one (bos_token): the toy
// models' own, and for GPT-2's vocabulary <|endoftext|> (50256), which TransformerLens's
// to_tokens puts first (its head_detector and induction examples run on [BOS, r, r]). A
// GPT whose vocabulary has no BOS (a nanoGPT model on characters, the test models) reads
// r, r, filler from position 0.
//
// Means are over every (sequence, query) pair together, as the recipe pools its batch, so
// the detector on the recipe's probe batch gives head_scores' numbers (the test checks it).
#pragma once
#include "model.h"
#include "rng.h"
#include "train.h"
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace attnviz {

// One sequence's attention: its tokens (N) and, per layer, that layer's softmax weights,
// H matrices of (N, N). Pointers into a ModelTrace (or a Trace), which must outlive it.
struct SequenceAttention {
    const std::vector<int>* tokens = nullptr;
    std::vector<const PerHead*> layers;
};
SequenceAttention attention_of(const ModelTrace& t);

// Previous-token and duplicate scores of every head over the sequences, and the induction
// score of a text (the header's definitions). Layers and heads are those of the first
// sequence; every sequence must have as many. Fills prev_token, duplicate and induction.
HeadScores detect_on_text(const std::vector<SequenceAttention>& seqs);
// The induction score on repeated sequences whose first copy starts at `start` and is
// `repeat` tokens long: [layer][head].
std::vector<std::vector<float>> detect_induction_on_repeats(const std::vector<SequenceAttention>& seqs, int start,
                                                            int repeat);

// The token a model's sequences start with, or -1 for none: the toy models' BOS (V); for a
// GPT model with GPT-2's vocabulary (50257 ids, or nanoGPT's 50304, padded to a multiple of
// 64) <|endoftext|> = 50256, GPT-2's bos_token; none for any other GPT vocabulary. The one
// place the detector asks.
constexpr int gpt2_vocab_size = 50257;
constexpr int nanogpt_gpt2_vocab_size = 50304;
constexpr int gpt2_endoftext = 50256;
int bos_token(const ModelConfig& c);
bool starts_with_bos(const ModelConfig& c); // bos_token(c) >= 0

// `count` sequences of `length` tokens: `bos` first when it is >= 0, then r, r, filler,
// with r = randint(0, V, (count, repeat)) and filler = randint(0, V, (count, rest)) drawn
// from `g` in that order, as the recipe draws its induction probe. repeat * 2 must fit.
std::vector<std::vector<int>> repeated_sequences(int vocab, int bos, TorchGenerator& g, int count, int length,
                                                 int repeat);
// The same with the model's vocabulary and bos_token(c).
std::vector<std::vector<int>> repeated_sequences(const ModelConfig& c, TorchGenerator& g, int count, int length,
                                                 int repeat);

// What the Model view shows: the scores of the text, and the induction score on repeated
// random sequences of the model's vocabulary.
struct HeadDetection {
    HeadScores text;                              // prev_token, duplicate, induction on the text
    std::vector<std::vector<float>> repeat_induction; // [layer][head]; empty: not measured
    int repeat_count = 0, repeat_len = 0;          // sequences and the copy's length R
    uint64_t repeat_seed = 0;
    int repeat_bos = -1;                           // the token they start with; -1: none
    // The clean model's traces of those sequences (what the detector read, lean for a GPT),
    // kept so that a detection with an ablation reruns each only from its first ablated
    // layer (detect_repeat_induction's `clean`). Empty when measured with an ablation.
    std::shared_ptr<const std::vector<ModelTrace>> probe;
};

// The repeated probe the app uses: `count` sequences of the model's whole length (the toy
// models' T + 1 with BOS, a GPT's block size), R = T // 3 as the recipe's probe, from
// torch.Generator().manual_seed(seed); when T // 3 is over detector_max_repeat,
// R = detector_max_repeat and the sequences are the BOS (if any) and the two copies alone.
// `bos`: the first token, -1 for none; by default bos_token(m.config) (a caller that knows
// the model's tokenizer may give its BOS id instead). Runs the model on each (model_forward,
// or gpt_forward for a GPT, with `kernel`). A bos outside the vocabulary throws
// std::invalid_argument.
constexpr int detector_repeat_count = 32;
constexpr int detector_max_repeat = 48;
constexpr uint64_t detector_repeat_seed = 1234;
// With `ablation` (ablation.h) every probe sequence runs with those heads replaced: what the
// other heads do once they are gone (an induction head whose previous-token head is
// ablated loses its stripe).
// `clean`: a detection of the same model, count, seed and bos without an ablation; its
// probe traces are then rerun from the ablation's first layer instead of from the tokens
// (the same numbers bit for bit, in (L - l0) / L of the time). Ignored when it does not match.
void detect_repeat_induction(const Model& m, KernelKind kernel, HeadDetection& out, int count = detector_repeat_count,
                             uint64_t seed = detector_repeat_seed, std::optional<int> bos = std::nullopt,
                             const Ablation* ablation = nullptr, const HeadDetection* clean = nullptr);

// How many repeated sequences the window's probe reads for model m: all
// detector_repeat_count of them on a small model; a large one reads fewer (about 2e10
// multiply-adds in all, at least 2), so that the probe stays a few seconds. The Model view
// and `attnviz bench --ablate` (which times what the window does) both use it.
int window_probe_count(const Model& m);

// Heads whose score passes `threshold` (the Train view's 0.6), strongest score first, for
// the grid's highlights: kind 0 previous-token, 1 duplicate, 2 induction (the repeated
// sequence's score when measured, else the text's).
struct HeadRole {
    int layer = 0, head = 0;
    int kind = 0;
    float score = 0;
};
constexpr float detector_threshold = 0.6f;
std::vector<HeadRole> head_roles(const HeadDetection& d, float threshold = detector_threshold);
const char* role_tag(int kind); // "prev", "dup", "ind"

// Softmax of one logits row in float32 with the maximum subtracted first (torch's order for
// a row: max, then exp(x - max) summed left to right, then each divided by the sum), and
// the k largest, highest first (ties: the lower id first, as torch.topk on CPU gives them).
struct TokenProb {
    int token = 0;
    float prob = 0;
};
std::vector<float> softmax_logits(const float* logits, int n);
std::vector<TokenProb> top_k(const std::vector<float>& probs, int k);

} // namespace attnviz
