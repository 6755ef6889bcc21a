// ablation_scores.h: the training recipe's head scores (train.h's head_scores,
// docs/training.md §6) of a toy model with heads ablated (ablation.h), for `attnviz heads
// --ablate` and the Model view: what every other head attends to once a head is gone.
//
// The probe is the recipe's own (torch.Generator().manual_seed(1234): 256 sequences of BOS
// and uniform random tokens, then 256 of [BOS, r, r, filler] with |r| = T // 3), each run by
// model_forward with the ablation, and the scores are head_detector.h's on those traces,
// which on this probe are head_scores' definitions and pooling (test_head_detector.cpp). An
// ablation changes no pattern of its own layer or of any layer before it, only later ones.
#pragma once
#include "ablation.h"
#include "train.h"

namespace attnviz {

// The recipe's probe sequences (N = T + 1 tokens each): `uniform` for the previous-token and
// duplicate scores, `repeated` for the induction score.
struct RecipeProbe {
    std::vector<std::vector<int>> uniform, repeated;
};
RecipeProbe recipe_probe(const ModelConfig& c);

// head_scores(m) with `ab` applied (nullptr or empty: the clean model, within a few ulps of
// head_scores, which runs the training forward). Toy models only; a GPT model throws
// std::invalid_argument.
HeadScores ablated_head_scores(const Model& m, KernelKind kernel, const Ablation* ab);

} // namespace attnviz
