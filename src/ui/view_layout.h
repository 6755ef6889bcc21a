// view_layout.h: rows of labelled matrices and operators ("x · Wᵀ = qkv"), laid out with
// one cell size for the whole view so that cells line up and compare across panels.
//
// The cell size is the largest that fits every row in the area (capped so a 4 x 4 matrix
// does not fill the screen), times the view's zoom. When that would make cells too small
// to read, cells keep a readable size and each matrix shows a window of them instead.
#pragma once
#include "matrix_panel.h"
#include <imgui.h>
#include <string>
#include <vector>

namespace attnviz {

struct RowItem {
    MatrixSpec spec;    // a matrix, unless `op` is set
    std::string op;     // an operator between matrices: "·", "=", "→", "softmax →"
    std::string note;   // a caption under an operator
};
struct Row {
    std::string caption;        // a line above the row, e.g. "head 0" or "↓ split(C, dim=2)"
    ImU32 caption_color = 0;    // 0: dim text
    std::vector<RowItem> items;
};

struct RowsResult {
    float cell = 0;          // pixels per cell
    bool windowed = false;   // some matrix shows only a window of its cells
    float bottom = 0;        // screen y below the last row
    std::vector<std::vector<MatrixResult>> panels; // [row][item] (empty results for operators)
    std::vector<std::vector<ImVec2>> origins;      // [row][item] top-left of each item
};

// Cell size that fits `rows` in `size`, before zoom; `max_cell` caps it.
float fit_cell(const UiContext& ui, const std::vector<Row>& rows, ImVec2 size, float max_cell);
// Lays out and draws `rows` in the rectangle [p0, p1].
RowsResult draw_rows(UiContext& ui, ViewWindow& win, const std::vector<Row>& rows, ImVec2 p0, ImVec2 p1,
                     float max_cell);

// `rows` with every matrix cut to its first n x n cells: what must fit when the matrices too
// big for readable cells are drawn as a window of them.
std::vector<Row> windowed_rows(std::vector<Row> rows, int n);

// The smallest cell the views use before they switch to a window of cells.
float readable_cell(const UiContext& ui);

} // namespace attnviz
