// widgets.h: the small pieces the panels repeat, drawn one way everywhere: the side panel's
// section heading, text wrapped at the panel's edge, a view's heading and its shape line in
// the accent colour, and the heights every view reserves for its window bar and legend.
// The named spacings themselves (ui.px, ui.gap) are UiContext's (ui_context.h).
#pragma once
#include "ui_context.h"
#include <string>

namespace attnviz {

// The side panel's section heading: a little space, the title in the accent colour, a rule.
void section_heading(const UiContext& ui, const char* title);

// A side panel field's label: the text at the frame's height, then the field (the next
// item) from x = label_w to the panel's edge.
void field_label(const char* label, float label_w);

// Text wrapped at the window's edge, in the text colour or dimmed (ImGui's disabled colour).
void wrapped_text(const std::string& text, bool dim = false);
// Text wrapped at the window's edge in one colour (a refused edit in the warning colour).
void wrapped_text(const std::string& text, ImU32 colour);

// A view's heading at p in the heading font and the text colour; returns the y under it
// (the heading's height and ui.heading_gap()).
float view_heading(const UiContext& ui, ImVec2 p, const std::string& text);

// A view's shape line ("(T, C) · (C, 3C) → (T, 3C)") in the accent colour at p, wrapped at
// the screen x `x1`, then `after` (when given) in the text colour under it in the same wrap.
// Returns ImGui's cursor y under the text (before the item spacing is taken off).
float shape_label(const UiContext& ui, ImVec2 p, float x1, const std::string& shapes, const char* after = nullptr);

// The height a view keeps for its zoom and window bar (draw_window_bar) above its matrices.
float window_bar_height(const UiContext& ui);
// The height a view keeps for its colour legend (draw_legend) at the bottom, and where in it
// the legend's line starts.
float legend_height(const UiContext& ui);
ImVec2 legend_origin(const UiContext& ui, ImVec2 p0, ImVec2 p1);

} // namespace attnviz
