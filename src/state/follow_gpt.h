// follow_gpt.h: a teacher's GPT-2 or nanoGPT model on the pages that follow attnviz --serve
// (docs/web.md). The model stays on the teacher's computer: the window sends what is on
// screen, and a page shows it as received, computing nothing of the model.
//
//   the message's follow_gpt  gpt_follow_header: the model's sizes, the layer, the tokens (ids
//                             and labels), the perturbation, the colour ranges, the summaries,
//                             the Model view's detector, predictions and ablation numbers (JSON;
//                             a float's shortest text reads back bit for bit)
//   part "layer"              the shown layer's trace (and its unperturbed copy while a token is
//                             changed), dy and the causality view's table (safetensors, F32)
//   part "weights"            the shown layer's c_attn and c_proj (the walk and QKV views)
//   part "grid"               every layer's softmax weights, the Model view's grid (at most
//                             gpt_grid_cap bytes; above it the grid is not sent)
//
// The window's side reads only what the views read (the shown layer's LayerRun, ModelRun's
// causality, the Model view's numbers); the page's side puts what it received into the same
// fields, with a TrainedInput whose Model holds the sizes and no weights (received = true).
#pragma once
#include "app_state.h"
#include <nlohmann/json.hpp>
#include <string>

namespace attnviz {

enum class GptPart { layer, weights, grid };
constexpr int gpt_part_count = 3;
const char* to_string(GptPart p); // "layer", "weights", "grid"

// The grid is sent while every layer's softmax weights take at most this (GPT-2 small: T <= 341).
constexpr int64_t gpt_grid_cap = int64_t(64) << 20;

// The one sentence a page says of a GPT model it cannot compute.
extern const char* const gpt_lives_on_teacher;

// The parts view `v` draws from: the layer always, the weights in the walk and QKV views,
// the grid in the Model view (when it is sent at all).
bool gpt_part_needed(GptPart p, View v);

// ---- The teacher's window (a GptModel shown)

// The small part of the message (no tensors).
nlohmann::json gpt_follow_header(const AppState& s);
// What a part's bytes depend on: equal keys, equal bytes (the server rebuilds a part only
// when its key changes). "" for a part that is not sent (the grid over gpt_grid_cap).
std::string gpt_part_key(const AppState& s, GptPart p);
// The part as a safetensors file in memory; false with one sentence when it cannot be made.
bool gpt_part_bytes(const AppState& s, GptPart p, std::string& out, std::string& error);

// ---- A page that follows

// Shows what the teacher's window sent: `header` (gpt_follow_header) and the parts' bytes,
// parts[int(GptPart)]; a null part keeps what is shown of it (the same file as before; the
// grid and the weights may also be absent when the view does not draw them). The screen's
// settings (view, step, theme) are the caller's, from the session beside it. On failure
// `error` is one sentence and the state is as it was.
bool show_received_gpt(AppState& s, const nlohmann::json& header, const std::string* const parts[gpt_part_count],
                       std::string& error);
// An edit a received layer cannot take (another layer, text, token, ablation): refused
// with gpt_lives_on_teacher in s.error, the edit put back. Called by recompute().
void refuse_received_edit(AppState& s);

} // namespace attnviz
