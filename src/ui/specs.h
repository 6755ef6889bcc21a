// specs.h: the trace's tensors as labelled matrices, the same way in every view.
//
// Each builder names the tensor as nanoGPT does, gives its shape in the lesson's symbols,
// picks its colour map and range, its hue family (Q blue, K orange, V green), its axis
// captions and the sentence its tooltip says about a cell.
#pragma once
#include "matrix_panel.h"

namespace attnviz {

enum class Part { q = 0, k = 1, v = 2 };
enum class ScoreStage { raw, scaled, masked };

MatrixSpec spec_x(const AppState& s, const UiContext& ui);
// qkv (T, 3C) as one matrix: bands Q | K | V and, under them, each head's head_dim columns.
MatrixSpec spec_qkv(const AppState& s, const UiContext& ui);
// q, k or v (T, C), with bands for the heads.
MatrixSpec spec_part(const AppState& s, const UiContext& ui, Part which);
// Head h's q, k or v (T, head_dim).
MatrixSpec spec_head_part(const AppState& s, const UiContext& ui, Part which, int h);
// Head h's k transposed (head_dim, T).
MatrixSpec spec_head_k_transposed(const AppState& s, const UiContext& ui, int h);
MatrixSpec spec_scores(const AppState& s, const UiContext& ui, int h, ScoreStage stage);
MatrixSpec spec_probs(const AppState& s, const UiContext& ui, int h);
// Head h's output probs v (T, head_dim).
MatrixSpec spec_head_out(const AppState& s, const UiContext& ui, int h);
MatrixSpec spec_concat(const AppState& s, const UiContext& ui);
MatrixSpec spec_y(const AppState& s, const UiContext& ui);
// qkv.weight transposed (C, 3C): x · W_qkvᵀ = qkv.
MatrixSpec spec_w_qkv_t(const AppState& s, const UiContext& ui);
// proj.weight transposed (C, C).
MatrixSpec spec_w_proj_t(const AppState& s, const UiContext& ui);

// The hue of Q, K or V (fills and frames) and its text colour.
ImU32 part_color(const UiContext& ui, Part which);
ImU32 part_text_color(const UiContext& ui, Part which);
const char* part_name(Part which); // "q", "k", "v"

// True when the current trace differs from the unperturbed one (a perturbation is applied).
bool perturbed(const AppState& s);

} // namespace attnviz
