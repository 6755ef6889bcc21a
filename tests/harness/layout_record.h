// layout_record.h: the rectangles of the last frame as JSON (attnviz_harness --layout-out,
// and the follow-stdin "screenshot"), so that tests can check pixels where a heatmap's cell
// or a bar really is. The views record the rectangles (AppState's screen.layout); only the
// writing is here, out of the shipped attnviz.
#pragma once
#include "app_state.h"
#include <string>

namespace attnviz {

// {"width", "height", "view", "step", "config": {...}, "items": [{kind, name, head, x, y, w, h,
// rows, cols, row0, col0, nrows, ncols, position, value}]}. On failure sets `error`.
bool write_layout_json(const std::string& path, const AppState& s, int width, int height, std::string& error);

} // namespace attnviz
