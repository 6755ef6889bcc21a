// ui_context.h: what every panel draws with this frame (textures, the heatmap renderer,
// fonts and colours) and where it records the rectangles it drew.
#pragma once
#include "app_state.h"
#include "heatmap_renderer.h"
#include "theme.h"
#include "trace_textures.h"
#include <algorithm>
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
    // that are only compared or clamped. The named ones are the gaps every view shares; a
    // size that only one panel has is a named constant beside its use, passed to px() or scaled().
    float px(float n) const { return std::round(n * scale); }
    float scaled(float n) const { return n * scale; }
    float gap() const { return px(8); }         // between a view's blocks: heading, text, matrices
    float heading_gap() const { return px(4); } // under a view's heading
    float tight_gap() const { return px(4); }   // around a bar of buttons
    float small_gap() const { return px(4); }   // inside a block: a label and what it labels, rows of bars
    float text_pad() const { return px(6); }    // around a line of text: over its font's height for a row
                                                // (a table's row, a tag, a header), or between labels on a line
    float label_gap() const { return px(8); }   // after a label's, title's or number's width, before the next thing
    float box_pad() const { return px(8); }     // inside a box, between its edge and its text
    float legend_pad() const { return px(10); } // a legend's line over its font's height
    float box_gap() const { return px(12); }    // between boxes side by side
    float legend_gap() const { return px(14); } // between a legend's entries
    float column_gap() const { return px(16); } // between a view's columns
    float small_cell() const { return px(6); }  // the largest cell of a small pattern among text
    // Lines: 2 pixels at least, so that a frame still shows at text size 1.
    float rule() const { return std::max(2.f, px(2)); }       // a frame round a sample or a cell
    float thick_rule() const { return std::max(2.f, px(3)); } // a frame that marks a whole pattern (a head's role)
};

} // namespace attnviz
