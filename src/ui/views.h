// views.h: the panels, as free functions over AppState (Dear ImGui demo style).
//
//   draw_app          the whole window: the controls on the left, view tabs, the view
//   draw_controls     config, kernel, reset, parameter count, theme; refused edits say why
//   draw_walk_view    the shape walk: code line, shapes, why, tensors; step N of 11
//   draw_qkv_view     the one (T, 3C) projection cut into Q | K | V and heads
//   draw_scores_view  per head: scores before the mask, after it, softmax weights
//   draw_causality_view  perturb position p, watch which outputs move
//   draw_check_view   the lesson's three questions, each with a demonstration and an answer
//   draw_train_view   train a toy model and watch its heads specialise
//   draw_model_view   every layer x head, the head detector, next-token predictions (model_view.h)
//   draw_generate_view  the model writes on with a KV cache (generate_state.h)
//
// Panels only arrange widgets and heatmaps and set dirty flags; recompute() does the math.
#pragma once
#include "ui_context.h"
#include "view_layout.h"

namespace attnviz {

void draw_app(AppState& s, UiContext& ui);
void draw_controls(AppState& s, UiContext& ui);
void draw_walk_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
void draw_qkv_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
void draw_scores_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
void draw_causality_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
// The causality view for a GPT model (gpt_causality_view.cpp): replace the token at p, read
// max |Δ resid_post| per layer and position and max |Δ logits| per position.
void draw_gpt_causality_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
void draw_check_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
// The Train view (train_view.h): a toy model trained live, its loss, its heads on a probe.
void draw_train_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
// The Model view (model_view.h): every layer x head of the model shown, the head detector's
// highlights and table, and the next-token predictions.
void draw_model_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
// The Generate view (generate_view.cpp): the model writes on token by token with a KV cache:
// the next-token bars, Step / Play / Back / Reset, the text, the growing attention picture,
// the cache's K and V strips and the cached step's time against a full recompute's.
void draw_generate_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
// The check view's "Show me" of question 1, 2, 3 (Alt+1, Alt+2, Alt+3), 4, 5 or 6 (Alt+5, Alt+6, Alt+7).
// Question 2 steps H through 1, 2, 4 (those that divide C), as its buttons do one at a time.
void show_me(AppState& s, int question);

// Every shortcut, as the help overlay lists it (F1 or ?).
struct Shortcut {
    const char* keys;
    const char* what;
};
const std::vector<Shortcut>& shortcuts();
// The keys of shortcuts(). Letters, digits and arrows are ignored while a text field has focus.
void handle_keys(AppState& s);
// F1: the list of every shortcut, over the view.
void draw_help_overlay(AppState& s, UiContext& ui);
// Follow the teacher (follow_panel.cpp): the page's switch (top of the side panel), the
// teacher's serving section (above Session), and the large address over the view.
void draw_follow_section(AppState& s, UiContext& ui);
void draw_serve_section(AppState& s, UiContext& ui);
void draw_follow_overlay(AppState& s, UiContext& ui);

// A trained model in the views (trained_panel.cpp): the side panel's section, the block
// picker above every view when L >= 2 (returns its height; 0 when not drawn; its sentence,
// "block 1 of 2: input x = h + attn(h) ...", is layer_sentence in source.h), the keys , and
// . that pick the block, and the task's sentence.
void draw_trained_section(AppState& s, UiContext& ui);
float draw_layer_strip(AppState& s, UiContext& ui, ImVec2 p0, float width);
void handle_layer_keys(AppState& s);
const char* task_sentence(Task t);

// One line of the colour legend (signed map, weights map, masked, NaN, shared ranges) at
// the bottom of a view; returns its height.
float draw_legend(AppState& s, UiContext& ui, ImVec2 p0, float width, bool with_scores);
// "◀ ▶ heads 0–1 of 8": buttons that move the view's head window by `shown` heads.
void draw_head_pager(AppState& s, UiContext& ui, ViewWindow& win, int shown, ImVec2 pos);
// Zoom and window controls for a view whose matrices show only a window of cells.
void draw_window_bar(AppState& s, UiContext& ui, ViewWindow& win, ImVec2 pos, float width, bool windowed);

} // namespace attnviz
