// state_internal.h: the pieces of recompute() that the lesson's path (app_state.cpp) and a
// trained model's path (recompute_model.cpp) share. Not for panels: they never compute.
#pragma once
#include "app_state.h"
#include <vector>

namespace attnviz::state_detail {

// Keeps every view's window inside the config's shapes.
void clamp_windows(AppState& s);
// The kernel a choice means for config c ("auto" asks s.auto_kernel).
KernelKind resolve_kernel(const AppState& s, const Config& c, KernelChoice k);

// The trained-model path (recompute_model.cpp). apply_trained shows s.edit_trained, or
// refuses it with one sentence in s.error and keeps what is shown; the perturbation reruns
// every block on the blended embeddings; leave_trained drops the model's traces.
bool apply_trained(AppState& s);
void apply_trained_perturbation(AppState& s);
// The lesson's module's (app_state.cpp): at most one input row differs from the recipe's x.
void apply_lesson_perturbation(AppState& s);
void leave_trained(AppState& s);
// A model read (or refused with `error`) for the views: staged on layer 0 like open_model_path,
// or the sentence shown in s.status and s.error.
bool stage_read(AppState& s, bool read, std::shared_ptr<const TrainedInput> in, const std::string& error);
// Layer s.shown.layer of the unperturbed forward in `base` and `trace` (a GPT model's recomputed
// whole by gpt_layer_trace), with the perturbation's results cleared.
void show_model_layer(AppState& s);
// A new run of the shown model in every view: show_model_layer, the slider applied again
// next, the colour ranges, the sharpness table and dy summaries afresh, every texture sent.
void show_new_run(AppState& s, bool same_run = false);

// A GPT model's part of that path (recompute_gpt.cpp): "" when it can be shown within `cap`,
// else one sentence; the forward into s.model_run.model_base (lean when large, the kernel chosen as
// the command line chooses it). Its perturbation is the core's perturb_model (view_runs.h).
std::string check_gpt(const TrainedInput& in, int64_t cap);
// A refused edit: the model and layer asked for are the ones shown again (as Staged::put_back).
void put_back_model(AppState& s);
// A toy model's (recompute_model.cpp): "" when it and its tokens can be shown within `cap`.
std::string check_toy(const TrainedInput& in, int64_t cap);
// Bytes of one ModelTrace of the model on T tokens (the clean copy an ablation keeps).
int64_t gpt_trace_bytes(const Model& m, int T);
// The detector's scores on a trace's own tokens: a compact trace's as its forward read them.
HeadScores text_scores(const ModelTrace& t);
void gpt_forward_state(AppState& s);

// The Model view's numbers (recompute_model_view.cpp): after a change (a new config, model or
// sequence; for the lesson's module a perturbation too) the head detector on what is shown
// and the grid's textures; every frame, the next-token predictions the picker or the cursor
// asks for.
void update_model_view(AppState& s, bool config_changed, bool perturb_changed, bool ablation_changed = false);

// Head ablation (recompute_ablation.cpp). After a new clean forward in s.model_run.model_base (a new
// model, tokens or kernel): the clean numbers kept (or reused), and the heads of s.ablation.applied that
// the model still has applied to it. After an edit: s.ablation.edit checked and applied, or
// refused with one sentence and put back. Both leave model_base as the ablated run (clean
// in model_clean) and the "after" numbers computed; the shown layer is redone by the caller
// (apply_trained) or by apply_ablation_edit itself. update_ablation_position: the DLA and the
// top 5 at the predictions' position, when it moved.
inline const Ablation* shown_ablation(const AppState& s) { return s.ablation.applied.empty() ? nullptr : &s.ablation.applied; }
void ablation_after_run(AppState& s);
bool apply_ablation_edit(AppState& s);
void update_ablation_position(AppState& s);

} // namespace attnviz::state_detail
