// trained_json.h: a toy model's trace as JSON (attnviz trace --weights TRAINED.safetensors
// --text "a b c a b d", or trace --model with that file). docs/cli.md documents the keys.
//
// The model reads BOS (^) and then the words, each a token of its vocabulary (a, b, c, ...).
// The JSON keeps the lesson trace's keys where they mean the same (n_embd, n_head, B, T,
// text, tokens, head_dim, scale_float32, mask, scale, kernel, param_count, weights, x, y1,
// perturbed_position, y2, max_abs_diff_per_position), with x the embeddings wte + wpe and
// y1 the final residual stream (the heads' input); what a stack adds is new keys:
// n_layer, token_ids, logits, and with intermediates "layers", one object per block with
// its input x, the shape walk's intermediates under intermediates_for_x's names and its
// attention output y (before the residual add). The request holds values the command has
// already checked against the model; nothing here parses or reports an error.
#pragma once
#include "ablation.h"
#include "json_writer.h"
#include "model.h"
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attnviz {

// {loss, accuracy {prev, dup, next: those the task has}}
void write_task_metrics(JsonWriter& w, const TaskMetrics& t);

struct TrainedTraceRequest {
    std::string path;               // the file as given: weights.file and its description
    std::string text;               // --text as given
    std::vector<int> tokens;        // BOS, then the words' token ids
    std::vector<std::string> words; // "^", then the words
    KernelKind kernel = KernelKind::reference;
    bool intermediates = false;     // adds "layers"
    std::optional<int> perturb;     // position 1 .. N-1: its token becomes the vocabulary's
                                    // next (wrapping), and y2 and the differences are added
    const Ablation* ablation = nullptr; // heads to ablate (the mean mode's means computed):
                                        // adds "ablation" on the accuracy probe, and "dla"
    std::optional<int> dla_pos;     // adds "dla" at this position (default with an ablation:
                                    // the last), onto the clean run's top class there
};

// Streams the trace object described at the top. With an ablation the traced tensors are
// the ablated run's, and "ablation" holds the task's loss and accuracy on the accuracy
// probe (train.h) before, after and their difference.
void write_trained_trace_json(std::ostream& out, const Model& m, const TrainedTraceRequest& r);

} // namespace attnviz
