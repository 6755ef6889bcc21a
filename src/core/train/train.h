// train.h: training the toy models step for step as PyTorch does (docs/training.md): its data,
// its loss, the backward pass (written by hand, one function per layer, as llm.c does),
// Adam as torch 1.13's single-tensor loop, and the head scores that name what each head
// has become.
#pragma once
#include "model.h"
#include "rng.h"
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

// One batch of B sequences of N = T + 1 tokens, BOS first, and the task's targets.
// Draws, in order, from the batch generator (torch.Generator().manual_seed(seed + 1)):
// randint(0, V, (B, T)); for induction also randint(3, T // 2, (B,)) then randint(0, 2, (B,)).
struct Batch {
    int B = 0, N = 0;
    std::vector<int> tok;       // (B, N)
    std::vector<int> prev;      // (B, N) prev and both: the previous token (BOS at 0)
    std::vector<int> dup;       // (B, N) dup and both: 1 when the token appeared earlier
    std::vector<uint8_t> where; // (B, N) induction: positions whose next token is known
};
void make_batch(const ModelConfig& c, TorchGenerator& g, int B, Batch& out);

// d loss / d parameter, shaped as the Model (model.h) whose parameters() it mirrors: what
// training changes, and nothing else (toy models have no LayerNorm, MLP or biases).
struct BlockGrads {
    Mat w_qkv;  // (3C, C)  transformer.h.l.attn.c_attn.weight
    Mat w_proj; // (C, C)   transformer.h.l.attn.c_proj.weight
};
struct ModelGrads {
    Mat wte;                   // (V+1, C)
    Mat wpe;                   // (T+1, C)
    std::vector<BlockGrads> h; // L blocks
    Mat head_prev;             // (V+1, C)  prev and both; empty otherwise
    Mat head_dup;              // (2, C)    dup and both; empty otherwise
    Mat lm_head;               // (V, C)    induction; empty otherwise
    // The gradients in parameters() order, one per Param: Adam's m and v, and the sessions
    // saved with them, are kept in that order.
    std::vector<Mat*> in_parameters_order(const ModelConfig& c);
    std::vector<const Mat*> in_parameters_order(const ModelConfig& c) const;
};

// Adam's betas and eps, torch's defaults, which training keeps.
constexpr double adam_beta1 = 0.9, adam_beta2 = 0.999, adam_eps = 1e-8;

// Adam(lr, betas (0.9, 0.999), eps 1e-8, no weight decay), torch 1.13's single-tensor loop.
struct AdamState {
    double lr = 5e-3;
    int64_t step = 0;
    std::vector<Mat> m, v; // one per parameter, parameters() order
};

namespace detail {
struct TrainWorkspace;
}

// Buffers a run reuses from step to step (activations and per-chunk gradients). Holds no
// state that changes a result: a copied run starts with fresh buffers of its own.
class TrainScratch {
public:
    TrainScratch();
    ~TrainScratch();
    TrainScratch(const TrainScratch&);
    TrainScratch& operator=(const TrainScratch&);
    TrainScratch(TrainScratch&&) noexcept;
    TrainScratch& operator=(TrainScratch&&) noexcept;
    detail::TrainWorkspace& get();

private:
    std::unique_ptr<detail::TrainWorkspace> p_;
};

// A training run: the model, the optimiser and the batch generator. Stepping 100 then
// 100 more gives bit for bit the weights of 200 at once, for any number of threads.
struct TrainRun {
    Model model;
    AdamState adam;
    TorchGenerator batch_gen;
    int batch = 64;
    uint64_t seed = 0;
    std::vector<float> losses; // per step, the batch's loss before that step's update
    TrainScratch scratch;
};

// Largest batch: with the model caps (model.h) a step's activations stay near 1 GiB.
constexpr int max_train_batch = 256;

// torch.manual_seed(seed) for the weights, Generator().manual_seed(seed + 1) for batches.
// Throws std::invalid_argument with one sentence for a config validate() refuses, a
// learning rate that is not a positive number, or a batch outside 1 .. max_train_batch.
TrainRun start_training(const ModelConfig& c, uint64_t seed, double lr, int batch);

// One step: batch, forward, loss, backward, Adam. Returns the loss. `threads` 0 means the
// work team's default. A non-finite loss, gradient or updated weight leaves the run as it was (model,
// optimiser, batch generator and losses) and returns NaN (the caller names the step and
// stops). The batch is cut into a fixed number of chunks whatever `threads` is, each
// chunk's gradients summed in chunk order, so the thread count never changes a bit.
float train_step(TrainRun& run, int threads = 0);

// Step-0 style gradients for tests: loss and d loss / d param for one batch, without
// updating anything.
float loss_and_grads(const Model& m, const Batch& b, ModelGrads& grads, int threads = 0);

// The head scores of docs/training.md §6, per layer and head, on fixed probe sequences
// (probe seed 1234, 256 sequences).
// (HeadScores is in model.h.)
HeadScores head_scores(const Model& m);

// Accuracy (docs/training.md §6) on probe seed 4321, 256 sequences: keys "prev", "dup", "next"
// (those the task has).
std::map<std::string, double> accuracy(const Model& m);

} // namespace attnviz
