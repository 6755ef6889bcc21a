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
    ModelGrads grads;                // this chunk's gradients; block 0's qkv (left unset) and
                                     // the embeddings get theirs from dqkv0_tok/pos (below)
    Mat dqkv0_tok, dqkv0_pos;        // (V+1, 3C), (N, 3C): block 0's dqkv rows summed by token, by position
    double loss[3] = {0, 0, 0};      // summed -log p of prev, dup, next
};

// Block 0 reads the embeddings h0 = wte[tok] + wpe[t] themselves, so its qkv rows are
// qkv0 = wte[tok] W^T + wpe[t] W^T: two tables of V+1 and N rows, made once per step,
// instead of an (M, C) x (C, 3C) product per chunk. The backward is the same identity
// read the other way: with G_tok[v] (G_pos[t]) the sum of the dqkv rows of token v
// (position t), dW += G_tok^T wte + G_pos^T wpe, dwte += G_tok W, dwpe += G_pos W.
// Sums are the same sums as the products', in another order (docs/training.md §5).
struct EmbeddingTables {
    Mat qkv0_tok; // (V+1, 3C) wte W_qkv0^T
    Mat qkv0_pos; // (N, 3C)   wpe W_qkv0^T
};
void make_embedding_tables(const Model& m, EmbeddingTables& t);

struct TrainWorkspace {
    std::vector<ChunkWork> chunks;
    Batch batch;
    EmbeddingTables tables;
    ModelGrads grads; // the batch's, summed over chunks in order
};

// Rows in each mean of the loss: prev and dup B T each, next the `where` count.
struct Counts {
    int64_t prev = 0, dup = 0, next = 0;
};
Counts loss_counts(const ModelConfig& c, const Batch& b);

// Sizes the chunks for a batch of B sequences (reusing buffers that fit).
void prepare_chunks(const ModelConfig& c, int B, TrainWorkspace& w);
// The forward of one chunk's tokens (B N), filling h, qkv, att, atty and the logits;
// `t` made by make_embedding_tables for this model's weights.
void chunk_forward(const Model& m, const EmbeddingTables& t, const int* tok, ChunkWork& w);
// Loss and gradients of a batch, chunks on up to `threads` threads (<= 0: the team's).
float batch_loss_and_grads(const Model& m, const Batch& b, TrainWorkspace& w, ModelGrads& grads, int threads);

// One Adam step over the parameters, torch 1.13's _single_tensor_adam in float32; grads[i]
// is params[i]'s (ModelGrads::in_parameters_order). When a new weight or moment is not
// finite, everything is put back and it returns false.
bool adam_step(AdamState& s, const std::vector<Param>& params, const std::vector<const Mat*>& grads);

} // namespace attnviz::detail
