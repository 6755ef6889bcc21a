// matrix_grid.h: what draw_matrix (matrix_panel.cpp) shares with the text and the colour
// bar drawn around the cells (matrix_axes.cpp). Not for the views: they use matrix_panel.h.
#pragma once
#include "matrix_panel.h"
#include <string>

namespace attnviz {

// Where one draw of a matrix goes: the panel, the window of cells on screen and their size.
struct Grid {
    ImVec2 pos, size;        // the whole panel (chrome included), top-left and size
    ImVec2 p0, p1;           // the cells
    int r0 = 0, c0 = 0;      // first row and column shown
    int nr = 0, nc = 0;      // rows and columns shown
    float cw = 0, chh = 0;   // one cell's width and height
    std::string title;       // the title, without its shape when the shape does not fit
    float pad = 0;
};

inline float line_h(ImFont* f) { return f->FontSize; }

// Words label this axis: it runs over positions and the input has words.
inline bool has_words(const UiContext& ui, Axis a) {
    return ui.tokens && !ui.tokens->empty() && (a == Axis::position || a == Axis::key);
}
// ... and its ticks show them.
inline bool worded(const UiContext& ui, Axis a) { return ui.word_ticks && has_words(ui, a); }

// The title and the labelled column bands above the cells; returns the y below them.
float draw_title_and_bands(UiContext& ui, const MatrixSpec& m, const Grid& g);
// Column ticks at `y` (the words of key positions when every one fits its column, cut
// with "…" if need be, otherwise numbers) and row ticks ("2 saw" with words).
void draw_ticks(UiContext& ui, const MatrixSpec& m, const Grid& g, float y);
// The row caption (turned, left of the ticks) and the column caption under the cells;
// returns the y below them.
float draw_captions(UiContext& ui, const MatrixSpec& m, const Grid& g);
// The colour bar at `yb`: as wide as the cells, or as its two end numbers need, with lo,
// hi and (when there is room) the middle value under it.
void draw_colorbar(UiContext& ui, const MatrixSpec& m, const Grid& g, float yb);

} // namespace attnviz
