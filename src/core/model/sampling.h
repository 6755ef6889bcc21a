// sampling.h: the next token from one row of logits, in the order Hugging Face's generate
// applies its logits warpers (docs/numerics.md, "Sampling"):
//
//   scores = logits / temperature                      TemperatureLogitsWarper
//   top-k:  scores below the k-th largest -> -inf      TopKLogitsWarper (ties at the k-th kept)
//   top-p:  sort ascending, cumulative softmax; those whose cumulative probability is
//           <= 1 - p -> -inf, the largest always kept   TopPLogitsWarper (min_tokens_to_keep 1)
//   probs = softmax(scores)                            (in double, then float32)
//   token = the first id whose cumulative prob exceeds u (times the float32 probs' sum), u
//           one draw of TorchGenerator's uniform double from the seed, torch.rand's float64
//           (not torch.multinomial's draw: same distribution)
//
// Greedy: argmax of the raw logits, ties to the lowest id (torch.argmax), and the probability
// reported is the plain softmax's.
#pragma once
#include "rng.h"
#include <cstdint>
#include <string>
#include <vector>

namespace attnviz {

struct SamplingOptions {
    bool greedy = true;
    double temperature = 1.0; // > 0 and finite
    int top_k = 0;            // 0: off; else >= 1 (above V: all kept)
    double top_p = 1.0;       // in (0, 1]; 1: off
    uint64_t seed = 0;        // the draw's generator, torch.manual_seed(seed)
};

// Empty when usable; else one sentence naming the value and what to give instead
// (a temperature <= 0 or not finite says to use greedy decoding).
std::string validate(const SamplingOptions& o);

// The distribution a draw is made from, (V) values summing to 1: after temperature, top-k and
// top-p (0 for a token they cut); greedy: the plain softmax of the logits. NaN logits throw
// std::invalid_argument.
void sampling_probs(const float* logits, int V, const SamplingOptions& o, std::vector<float>& probs);

// Greedy's token: the first index of the largest logit.
int argmax_token(const float* logits, int V);

// Draws tokens one after another from one generator seeded with o.seed: the same options
// and logits give the same tokens.
class Sampler {
public:
    explicit Sampler(const SamplingOptions& o);
    // The next token; `prob` (optional) gets its probability under sampling_probs, `probs`
    // (optional) the whole distribution.
    int next(const float* logits, int V, float* prob = nullptr, std::vector<float>* probs = nullptr);
    const SamplingOptions& options() const { return o_; }

private:
    SamplingOptions o_;
    TorchGenerator g_;
    std::vector<float> probs_;
};

} // namespace attnviz
