// heatmap_renderer.h: heatmaps drawn by the shaders in shaders/heatmap_*.glsl, inside
// ImGui's draw lists.
//
// A panel asks for a heatmap at a screen rectangle with add_heatmap(); that records the
// request and adds an ImDrawList callback, so the heatmap is drawn in ImGui's order (under
// the text and outlines the panel draws on top of it) when the loop renders ImGui's draw
// data. Panels never call gl* themselves: the callback runs here, at render time.
#pragma once
#include "texture.h"
#include <deque>
#include <string>

struct ImDrawList;

namespace attnviz {

enum class Colormap { diverging = 0, viridis = 1 };

// The shader's mask uniform: which cells read as -inf (row i is the query, column j the key).
enum class MaskShade { none = 0, causal = 1, off_by_one = 2 }; // causal: j > i; off_by_one: j >= i

struct HeatmapDraw {
    const Texture* data = nullptr;  // the values
    const Texture* base = nullptr;  // optional: the unperturbed values; changed cells get outlined
    int offset_row = 0, offset_col = 0; // texture cell of the shown matrix's (0, 0)
    int rows = 0, cols = 0;         // shape of the shown matrix
    bool transpose = false;         // shown cell (r, c) is texture cell (c, r) (+ offsets)
    float row0 = 0, col0 = 0, nrows = 1, ncols = 1; // the window of cells in the rectangle
    Colormap colormap = Colormap::diverging;
    float lo = -1, hi = 1;          // values at the two ends of the colour map
    float scale = 1;                // every value is multiplied by this
    MaskShade mask = MaskShade::none;
    bool colorbar = false;          // draw the colour map itself, lo at the left, hi at the right
    int swatch = 0;                 // legend: 1 the masked (-inf) look, 2 the NaN look
    float grid_min_px = 10;         // cell borders when cells are at least this big
    float grid_rgb[3] = {0.2f, 0.2f, 0.2f};
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0; // screen rectangle, ImGui coordinates
};

// GL storage the lazy per-head (T, T) textures may hold together (texture.h,
// TextureBudget): at (2048, 2048, 16) one is 16 MiB and the scores view draws four (raw
// scores and weights of two heads), so 128 MiB holds two pages of heads for browsing,
// where sending all 32 at once would take 512 MiB.
constexpr int64_t head_texture_budget = int64_t(128) << 20;

struct HeatmapRenderer;
// One recorded heatmap and the renderer that draws it: the draw callback's user data.
struct QueuedHeatmap {
    HeatmapRenderer* renderer = nullptr;
    HeatmapDraw draw;
};

struct HeatmapRenderer {
    unsigned program = 0, vao = 0;
    int loc_rect = -1, loc_data = -1, loc_base = -1, loc_has_base = -1, loc_size = -1, loc_offset = -1,
        loc_transpose = -1, loc_window = -1, loc_rect_px = -1, loc_colormap = -1, loc_range = -1,
        loc_scale = -1, loc_mask = -1, loc_colorbar = -1, loc_swatch = -1, loc_grid_min = -1, loc_grid_color = -1,
        loc_palette = -1;
    int palette = 0;                 // colour maps of every heatmap: 0 default (RdBu, viridis), 1 cb (PuOr, cividis)
    std::deque<QueuedHeatmap> queue; // this frame's requests; a deque keeps their addresses
    int drawn = 0;                 // heatmaps drawn by the last render (for tests and benchmarks)
    double upload_ms = 0;          // of the last render: sending the deferred texture rows (benchmarks)
    TextureBudget budget;          // the lazy textures it draws; cap head_texture_budget
};

// Compiles the shaders and makes the vertex array. On failure sets `error` (with the
// driver's compile log).
bool create_heatmap_renderer(HeatmapRenderer& r, std::string& error);
void destroy_heatmap_renderer(HeatmapRenderer& r);
// Forgets last frame's requests and starts a budget frame; call before the panels run.
void begin_heatmap_frame(HeatmapRenderer& r);
// Records `d` and adds the callbacks that draw it to `draw_list`.
void add_heatmap(ImDrawList* draw_list, HeatmapRenderer& r, const HeatmapDraw& d);

} // namespace attnviz
