// window_layout.h: the window's frame around the views - how wide the side panel is (or
// whether it is hidden), and the row of view tabs - chosen so that nothing falls off the
// window or overlaps at any text size (1280 x 720 at text size 2 is the hardest case).
#pragma once
#include "ui_context.h"
#include <imgui.h>

namespace attnviz {

// The side panel's width in a window W pixels wide, or 0 when it is hidden: F2 decides,
// otherwise (automatic) it is shown when the view keeps at least 640 × scale pixels.
float side_panel_width(const AppState& s, float W, float scale);

// The view tabs from p0 to x_end: full names ("1  Shape walk") when they fit, else short
// ones ("1 Walk"), else wrapped onto more rows; then the run's config on the right when it
// fits. Returns the y below the tabs.
float draw_view_tabs(AppState& s, UiContext& ui, ImVec2 p0, float x_end);

} // namespace attnviz
