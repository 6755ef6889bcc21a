// train_work.h: the buffers of one training step and the functions train.cpp, the
// probes (train_tasks.cpp) and the tests share. Not part of the public API.
#pragma once
#include "train.h"

namespace attnviz::detail {

// A batch is cut into this many chunks (fewer when B is smaller), whatever the number
// of threads: results depend on the chunks, never on which thread ran one.
constexpr int train_chunks = 8;
int chunk_count(int B);

// One chunk's activations and gradients. B sequences, M = B N rows.
struct ChunkWork {
    int b0 = 0, B = 0;               // sequences b0 .. b0 + B - 1 of the batch
    std::vector<Mat> h;              // L+1 x (M, C)   h[0] embeddings, h[l+1] after block l
    std::vector<Mat> qkv;            // L x (M, 3C)
    std::vector<Mat> att;            // L x (B H N, N) softmax weights, row (b H + h) N + i
    std::vector<Mat> atty;           // L x (M, C)     att v, heads side by side (before proj)
    Mat logits_prev, logits_dup, logits_next; // (M, V+1), (M, 2), (M, V): those the task has
    std::vector<int> tprev, tdup, tnext;       // (M) targets, -1 where a row is not in the loss
    Mat dlogits, dh, datty, dqkv, dscratch;    // backward: (M, K), (M, C), (M, C), (M, 3C), attention's scratch
    std::vector<Mat> grads;          // this chunk's gradients, parameters() order
    double loss[3] = {0, 0, 0};      // summed -log p of prev, dup, next
};

struct TrainWorkspace {
    std::vector<ChunkWork> chunks;
    Batch batch;
    std::vector<Mat> grads; // the batch's, summed over chunks in order
};

// Rows in each mean of the loss: prev and dup B T each, next the `where` count.
struct Counts {
    int64_t prev = 0, dup = 0, next = 0;
};
Counts loss_counts(const ModelConfig& c, const Batch& b);

// Sizes the chunks for a batch of B sequences (reusing buffers that fit).
void prepare_chunks(const ModelConfig& c, int B, TrainWorkspace& w);
// The forward of one chunk's tokens (B N), filling h, qkv, att, atty and the logits.
void chunk_forward(const Model& m, const int* tok, ChunkWork& w);
// Loss and gradients of a batch, chunks on up to `threads` threads (<= 0: the team's).
float batch_loss_and_grads(const Model& m, const Batch& b, TrainWorkspace& w, std::vector<Mat>& grads, int threads);

// One Adam step over the parameters, torch 1.13's _single_tensor_adam in float32. When a
// new weight or moment is not finite, everything is put back and it returns false.
bool adam_step(AdamState& s, const std::vector<Param>& params, const std::vector<Mat>& grads);

} // namespace attnviz::detail
