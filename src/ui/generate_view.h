// generate_view.h: the Generate view's parts shared by its two files: generate_view.cpp (the
// layout, the buttons, the text and the next-token bars) and generate_picture.cpp (the
// attention picture, the KV cache's strips and the step's measurements). Not an API.
#pragma once
#include "views.h"
#include <string>

namespace attnviz::generate_ui {

// Recorded for --layout-out when wholly in sight (the view scrolls at large text).
void record(UiContext& ui, const char* kind, const std::string& name, int position, float value, ImVec2 a, ImVec2 b,
            int rows = 0, int cols = 0);

constexpr int kv_layers_shown = 6;
float kv_strip_height(const UiContext& ui, int layers);
// The picture's height for `width` and at most `height` pixels (the window, its labels and
// the new row's strip).
float attention_picture_height(const AppState& s, const UiContext& ui, float width, float height);
// The kept layer's head `h`: the last rows and columns around the new row, with their labels,
// and the new row over every position beneath when the window does not hold them all.
void attention_picture(AppState& s, UiContext& ui, ImVec2 p0, float width, float height, int h);
// Every layer's K and V strips, T × C each, and their bytes.
void kv_strips(AppState& s, UiContext& ui, float width);
// The last step's numbers: the two times and the check.
void measurements(AppState& s, UiContext& ui);

} // namespace attnviz::generate_ui
