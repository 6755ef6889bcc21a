// matrix_panel.h: one labelled heatmap - title, column bands (Q | K | V, heads), ticks,
// axis captions, the cells with their values, a hover tooltip and an optional colour bar.
//
// The cells are drawn by the render layer's heatmap shader (add_heatmap); this file only
// arranges them and draws text and outlines over them. A matrix bigger than its box shows
// a window of cells that starts at the view's ViewWindow; the wheel scrolls it, Ctrl+wheel
// zooms, dragging pans.
#pragma once
#include "ui_context.h"
#include <functional>
#include <string>
#include <vector>

namespace attnviz {

// Which of the view's window offsets an axis follows.
enum class Axis { position, key, channel, fixed };

// A column block of the shown matrix that comes from one texture.
struct MatrixPart {
    const Texture* tex = nullptr;
    const Texture* base = nullptr; // unperturbed values (outlines changed cells), optional
    int cols = 0;                  // columns of the shown matrix this part supplies
    int offset_row = 0, offset_col = 0;
    bool transpose = false;
};

// A labelled range of columns drawn above the cells (level 0 on top).
struct Band {
    int c0 = 0, c1 = 0; // [c0, c1)
    std::string label;
    ImU32 color = 0;
    int level = 0;
};

struct MatrixSpec {
    std::string name;         // layout name: the tensor table's name ("masked"), or "k_t", "w_qkv_t", "w_proj_t"
    int head = -1;
    std::string title;        // e.g. "q, head 0   (T, head_dim) = (4, 4)"
    ImU32 title_color = 0;    // 0: the text colour
    std::vector<MatrixPart> parts;
    int rows = 0, cols = 0;
    Axis row_axis = Axis::position, col_axis = Axis::channel;
    std::string row_caption, col_caption; // "query position i", "key position j"
    Colormap colormap = Colormap::diverging;
    float lo = -1, hi = 1;
    float scale = 1;
    MaskShade mask = MaskShade::none;
    // Values as shown (after scale and mask), for the printed cells and the tooltip.
    std::function<float(int, int)> value;
    std::function<float(int, int)> base_value; // unperturbed, when known
    // Tooltip sentence for cell (r, c) of value v, e.g. "query 2 → key 1: weight 0.281".
    std::function<std::string(int, int, float)> describe;
    std::vector<Band> bands;
    int band_levels = 0;
    std::vector<int> separators;   // columns before which a thick separator is drawn
    ImU32 separator_color = 0;
    ImU32 frame_color = 0;         // the hue family (Q, K, V), or 0
    bool colorbar = false;         // a colour bar with its scale under the cells
    int highlight_row = -1;        // outlined row (the perturbed position)
    bool print_values = true;
    bool minimap = false;          // offer an overview when only a window of cells is shown
};

// Chrome around the cells, in pixels, for this spec.
struct Chrome {
    float left = 0, top = 0, right = 0, bottom = 0;
};
Chrome matrix_chrome(const UiContext& ui, const MatrixSpec& m);
// The narrowest the cells' column may be drawn without cutting the title, the column caption
// or running the colour bar's numbers together; a panel with narrower cells is widened.
float matrix_min_width(const UiContext& ui, const MatrixSpec& m);

struct MatrixResult {
    ImVec2 size;              // the whole panel, chrome included
    bool hovered = false;
    int row = -1, col = -1;   // hovered cell
    bool clicked = false;     // the hovered cell was clicked
};

// Draws `m` with its top-left corner at `pos` (screen), `cell` pixels per cell, at most
// max_rows x max_cols cells. Wheel and drag over the cells move `win`.
MatrixResult draw_matrix(UiContext& ui, const MatrixSpec& m, ViewWindow& win, ImVec2 pos, float cell,
                         int max_rows, int max_cols);

// Moves the window start of an axis (used by the overview).
void set_axis_start(Axis a, ViewWindow& w, int start);
// The overview: the whole matrix of `m` in [p0, p1] with the window outlined; a click or a
// drag moves the window there.
void draw_minimap(UiContext& ui, const Minimap& m, ViewWindow& win, ImVec2 p0, ImVec2 p1);

// Text turned 90 degrees counter-clockwise (read from bottom to top), centred on `center`.
void add_text_vertical(ImDrawList* dl, ImFont* font, ImVec2 center, ImU32 color, const char* text);
// A legend swatch of the masked (1) or NaN (2) look.
void draw_swatch(UiContext& ui, ImDrawList* dl, ImVec2 p0, ImVec2 p1, int kind);
// Text size in a font at its own size.
ImVec2 text_size(ImFont* font, const std::string& s);

} // namespace attnviz
