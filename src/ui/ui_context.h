// ui_context.h: what every panel draws with this frame (textures, the heatmap renderer,
// fonts and colours) and where it records the rectangles it drew.
#pragma once
#include "app_state.h"
#include "heatmap_renderer.h"
#include "theme.h"
#include "trace_textures.h"
#include <cmath>
#include <string>
#include <vector>

namespace attnviz {

struct UiContext {
    const TraceTextures* tex = nullptr;      // the current trace
    const TraceTextures* base_tex = nullptr; // the unperturbed trace (ids 0 where not kept)
    const std::vector<Texture>* grid_probs = nullptr; // the Model view: a trained model's every block, [layer * H + head]
    HeatmapRenderer* renderer = nullptr;
    const Fonts* fonts = nullptr;
    Palette pal{};
    float scale = 1;                         // font scale
    std::vector<LayoutItem>* layout = nullptr;
    Minimap* minimap = nullptr;              // filled by the first windowed matrix that offers one
    int view = 0;                            // the view being drawn
    // Words as input (inputs.h): they label the position axes (query rows, key columns)
    // of every matrix; nullptr or empty: the positions are numbers.
    const std::vector<std::string>* tokens = nullptr;
    float row_label_w = 0;                   // widest position_label in the small font
    bool word_ticks = true;                  // false: ticks show numbers (no room), tooltips the words
    bool short_row_labels = false;           // rows show the word alone ("c", not "3 c"): no room for both

    // Spacings and sizes at the font scale. px() rounds to whole pixels, for positions and
    // gaps, so edges stay on the pixel grid; scaled() does not, for widths and thresholds
    // that are only compared or clamped. The named ones are the gaps every view shares.
    float px(float n) const { return std::round(n * scale); }
    float scaled(float n) const { return n * scale; }
    float gap() const { return px(8); }         // between a view's blocks: heading, text, matrices
    float heading_gap() const { return px(4); } // under a view's heading
    float tight_gap() const { return px(4); }   // around a bar of buttons
};

} // namespace attnviz
