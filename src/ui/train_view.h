// train_view.h: the Train view's pieces (train_view*.cpp), each drawing one part of the
// view from TrainViewState and recording edits; refresh_train_view() computed what they show.
//
//   draw_train_view      the whole view: settings and controls on top, curves and the
//                        scrubber on the left, the heads on the right
//   draw_train_settings  task, seed, C, H, L, lr, batch; Train / Pause, Step, Reset, speed
//   draw_train_curves    the loss on a log scale and the accuracy, up to the shown step
//   draw_train_scrubber  the history slider over the snapshots
//   draw_train_heads     every head of every layer on the probe: pattern, scores, label
#pragma once
#include "train_view_state.h"
#include "ui_context.h"
#include <imgui.h>

namespace attnviz {

// Returns the y below what it drew.
// `compact`: the task as a list and the settings behind a button, for short windows.
float draw_train_settings(AppState& s, TrainViewState& t, UiContext& ui, ImVec2 p0, float width, bool compact);
// Without `with_accuracy` only the loss is plotted (the accuracy's numbers in its title).
void draw_train_curves(TrainViewState& t, UiContext& ui, ImVec2 p0, ImVec2 p1, bool with_accuracy);
float draw_train_scrubber(TrainViewState& t, UiContext& ui, ImVec2 p0, float width);
// `compact`: short role names and score labels, for narrow head boxes.
void draw_train_heads(TrainViewState& t, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact);

// One head's pattern on the picture's probe, (N, N) cells of `cell` pixels from `at`, with
// the letters along the top and the left when `letters` (they take a small font's line and
// width outside the square). The check view's comparison draws its heads with it too.
void draw_head_pattern(UiContext& ui, ImDrawList* dl, const HeadView& hv, const TrainPicture& pic, ImVec2 at, float cell,
                       bool letters);

// The step the view shows: the scrubbed snapshot, or the run's latest.
int64_t shown_step(const TrainViewState& t);

} // namespace attnviz
