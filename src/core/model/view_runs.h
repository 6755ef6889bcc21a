// view_runs.h: one call per mode for what the views read, so that the window's state layer
// (src/state) makes one or two core calls per edit and never orchestrates the core piece by
// piece.
//
//   the lesson's module   run_lesson      a new config: the forward, fresh ranges and tables
//                         perturb_lesson  a slider move: one input row, rows from p on redone
//   a model (toy or GPT)  run_model_layer a new run or layer: layer l's trace of the model's run
//                         perturb_model   a slider move: position p blended (toy) or its token
//                                         replaced (GPT), every layer run again from it
//
// Each returns, beside the trace, the numbers a view prints that the trace does not hold:
// the colour ranges (largest |value| per tensor and head, grown and never shrunk while the
// config stays), the check view's sharpness table and the causality view's summaries of dy.
#pragma once
#include "ablation.h"
#include "attention.h"
#include "experiment.h"
#include "gpt_causality.h"
#include "model.h"
#include "row_sharpness.h"
#include <array>
#include <vector>

namespace attnviz {

// Largest |value| of each tensor family, for the colour maps. Shared across heads by
// default ("all"), per head when the user asks ("head").
struct RangeSet {
    float all = 0;
    std::vector<float> head;
};
struct Ranges {
    RangeSet x;            // input
    RangeSet q, k, v;      // per head: that head's head_dim columns
    RangeSet raw;          // q k^T per head (scaled scores: times trace.scale)
    RangeSet heads;        // head outputs (the column blocks of concat)
    RangeSet y, w_qkv, w_proj;
};

// The check view's table for question 3: the first heads and query rows, each under both
// scales. A slider move under the causal mask redoes only the rows from the first one that
// changed, so the view only prints it.
constexpr int sharpness_heads = 4, sharpness_rows = 8;
struct SharpnessTable {
    int heads = 0, rows = 0; // min(H, sharpness_heads), min(T, sharpness_rows)
    // Per shown head and row, row-major: [0] with the scores ÷ √head_dim, [1] ÷ √C.
    std::vector<std::array<RowSharpness, 2>> cells;
    const std::array<RowSharpness, 2>& at(int h, int i) const { return cells[size_t(h * rows + i)]; }
};

// What the causality view says about dy: the largest finite change (the bars' scale), the
// largest change before and from the perturbed row (NaN skipped), whether any is NaN, and
// how many rows before it are exactly 0.
struct DySummary {
    float top = 0, before = 0, after = 0;
    bool nan = false;
    int zeros_before = 0;
};
// The summary of dy (T) around the perturbed position p (-1: none).
DySummary summarize_dy(const std::vector<float>& dy, int p);

// One attention layer as every view shows it: its trace with the perturbation applied, the
// unperturbed copy, their difference per position and the numbers above.
struct LayerRun {
    Experiment experiment;  // the layer's config, weights and input (the lesson's recipe, or a model's block)
    Trace trace;            // with the perturbation applied (equal to base when strength is 0)
    Trace base;             // unperturbed; valid only when has_base
    bool has_base = false;
    Mat base_y;             // (T, C) unperturbed output, always kept
    std::vector<float> dy;  // (T) max_c |y[t][c] - base_y[t][c]|
    DySummary dy_summary;   // of dy, around applied_p
    SharpnessTable sharpness;
    Ranges ranges;
    int applied_p = -1;     // the row perturbed in `trace` now (-1: none)
    float applied_strength = 0;
};

// What a slider move sent to the trace: everything (`all`), or, under the causal mask, the
// rows from `row0` on and the input rows (and so the key columns) in `rows`.
struct RowChange {
    bool all = true;
    int row0 = 0;
    std::vector<int> rows;
};

// The lesson's module on experiment e (config e.config) with `kernel`: the forward, the
// unperturbed copy kept whole when `keep_base` (else only its y), dy zero, fresh ranges
// (the weights' too), the sharpness table and the dy summary.
void run_lesson(Experiment e, KernelKind kernel, bool keep_base, LayerRun& r);
// Input row p blended toward the recipe's replacement row by `strength` (0: exactly the
// recipe's input, the unperturbed trace bit for bit); the row perturbed before is put back
// first. Ranges grow over what changed; dy, its summary and the table are redone from the
// first row that changed. Returns what changed, for the textures.
RowChange perturb_lesson(LayerRun& r, int p, float strength);

// A model's runs as the views show them, beside its shown layer's LayerRun.
struct ModelRun {
    ModelTrace model_base;            // every block, unperturbed (the ablated run while heads are ablated)
    ModelTrace model_perturbed;       // every block, with position p changed (when applied_p >= 0)
    std::vector<float> dy_out;        // (T) max |Δ| of the last block's output (toy) or of the logits (GPT)
    DySummary dy_out_summary;         // of dy_out, around applied_p
    GptCausality causality;           // GPT: max |Δ| per layer and position of the token change at p (empty: none)
    DySummary resid_summary;          // GPT: of max over layers of causality.resid_max_abs, around applied_p
    int applied_replace_token = -1;   // the token blended toward (toy) or put in (GPT) at p now
    // GPT: the change model_perturbed and causality hold (-1: none), kept across a layer
    // switch, which then recomputes only the shown layer of it.
    int perturbed_p = -1, perturbed_token = -1;
};

// Layer `layer` of mr.model_base in r, unperturbed (a GPT's recomputed whole by
// gpt_layer_trace, with `ablation`), its config `c` (block_config of the model on the
// tokens), the perturbation's results cleared. `fresh`: the ranges, the table and the
// summaries anew (a new run or layer); else the ranges keep growing (the slider back at 0).
// keep_perturbed: only the layer changed, model_base is the same run, so a GPT's changed run
// (model_perturbed, causality) stays for perturb_model to reuse.
void run_model_layer(const Model& m, int layer, const Config& c, KernelKind kernel, const Ablation* ablation,
                     bool fresh, ModelRun& mr, LayerRun& r, bool keep_perturbed = false);
// Position p changed by `strength` toward `token`: a toy model's row p of h0 blended toward
// wte[token] + wpe[p] and every block run again; a GPT model's token p replaced by `token`
// (strength > 0; gpt_update from p on) with every layer's change measured. Strength 0: the
// unperturbed layer (run_model_layer, ranges kept). Ranges grow, the table and the summaries
// are redone.
void perturb_model(const Model& m, int layer, int p, float strength, int token, KernelKind kernel,
                   const Ablation* ablation, ModelRun& mr, LayerRun& r);

} // namespace attnviz
