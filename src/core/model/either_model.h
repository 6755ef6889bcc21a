// either_model.h: the calls that take a model of either architecture, a toy one (model.h)
// or a GPT one (gpt_model.h), each choosing by m.config.arch, so that the state asks one
// question of whichever model is shown. What differs between the two:
//   forward        model_forward, or gpt_forward (lean)
//   rerun          a toy model whole (a fraction of a millisecond), a GPT model from the
//                  first layer whose ablation changed (gpt_rerun_from)
//   its head       a toy model's task head (prev, dup or next as its task predicts), GPT's
//                  next-token logits over its vocabulary
//   its score      a toy model's task metrics on its own accuracy probe (the text shown is
//                  not read), GPT's next-token loss on the text and its top tokens
#pragma once
#include "ablation.h"
#include "head_detector.h"
#include "model.h"
#include <cmath>
#include <vector>

namespace attnviz {

// The whole forward of `tokens` (model_forward, or gpt_forward lean), with `ab` ablated.
void forward_either(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& out,
                    const Ablation* ab = nullptr);

// `tr`, a run of `tokens` ablated with `from` (empty: clean), made the run ablated with `to`:
// bit for bit forward_either with `to`.
void rerun_ablated(const Model& m, const std::vector<int>& tokens, const Ablation& from, const Ablation& to,
                   KernelKind kernel, ModelTrace& tr);

// The next-token logits of a run: GPT's logits, a toy model's lm_head's logits_next (empty
// without one).
const Mat& next_token_logits(const Model& m, const ModelTrace& t);

// Row `pos` of next_token_logits as (1, V); made from the kept rows of a compact GPT trace,
// which holds no logits (gpt_logits_rows); empty outside the rows.
Mat next_token_row(const Model& m, const ModelTrace& t, int pos);

// The logits of the model's own head, which the direct logit attribution explains: GPT's
// next-token logits, a toy model's task head (dup_head, lm_head or prev_head).
const Mat& head_logits(const Model& m, const ModelTrace& t);

// Row `pos` of head_logits as (1, V), made as next_token_row makes its rows.
Mat head_logits_row(const Model& m, const ModelTrace& t, int pos);

// The model's numbers are read on the text shown (GPT: the next-token loss, the top tokens,
// a mean ablation's means); a toy model's are its task's, on its own accuracy probe.
bool scores_read_text(const Model& m);

// What the Model view prints of a run, before (clean) and after an ablation: a GPT run's
// next-token loss on its text, or a toy model's task metrics with `ab` ablated.
struct RunScore {
    double loss = NAN; // GPT: next_token_loss (NaN for a toy model)
    TaskMetrics task; // toy: task_metrics (empty for GPT)
};
RunScore score_run(const Model& m, const ModelTrace& run, KernelKind kernel, const Ablation* ab = nullptr);

// The k likeliest next tokens at `pos` of a GPT run (its head predicts text); empty for a
// toy model, whose head's numbers are its task metrics.
std::vector<TokenProb> top_next_tokens(const Model& m, const ModelTrace& t, int pos, int k);

} // namespace attnviz
