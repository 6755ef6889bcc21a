// layout_record.h: the rectangles of the last frame as JSON (--layout-out), so that tests
// can check pixels where a heatmap's cell or a bar really is.
#pragma once
#include "app_state.h"
#include <string>

namespace attnviz {

// {"width", "height", "view", "step", "config": {...}, "items": [{kind, name, head, x, y, w, h,
// rows, cols, row0, col0, nrows, ncols, position, value}]}. On failure sets `error`.
bool write_layout_json(const std::string& path, const AppState& s, int width, int height, std::string& error);

} // namespace attnviz
