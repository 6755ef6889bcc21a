// theme.h: colours, fonts and ImGui style in one place, with their parameters (theme and
// font scale), so that a theme switch or a new font size is one call.
//
// Colour meanings hold in every view, so a colour learnt in one reads the same in all: Q, K
// and V keep their Okabe-Ito hue (blue, orange, bluish green); signed values use the
// diverging map, probabilities viridis; masked cells and NaN have their own patterns,
// drawn by the heatmap shader.
#pragma once
#include "app_state.h"
#include "heatmap_renderer.h"
#include <imgui.h>
#include <string>

namespace attnviz {

struct Fonts {
    ImFont* body = nullptr;       // DejaVu Sans: labels, text
    ImFont* small = nullptr;      // cell values, ticks, captions
    ImFont* heading = nullptr;    // view titles, the causality question
    ImFont* mono[3] = {nullptr, nullptr, nullptr}; // DejaVu Sans Mono, large to small: the lesson's code
    ImFont* address = nullptr;    // the served address, large over the view: digits, '.' and ':' at 128 px
    bool from_files = false;      // false: the DejaVu files were missing, ImGui's own font is used
    std::string warning;          // one line when falling back
};

// Rebuilds ImGui's font atlas at `scale` (1..3) with the glyphs the lesson needs
// (√ ∞ − × · → ᵀ ½ Δ ...). The caller re-creates the GL font texture afterwards.
Fonts load_fonts(float scale);

struct Palette {
    ImU32 background, panel, text, text_dim, frame;
    ImU32 q, k, v;            // Okabe-Ito blue, orange, bluish green
    ImU32 q_text, k_text, v_text; // the same hues, readable as text on this background
    ImU32 head_band[2];       // alternating head bands
    ImU32 accent;             // the current step's code, selections
    ImU32 code_highlight;     // background of the highlighted code
    ImU32 bar, bar_outline;   // the causality chart's bars (outputs that moved)
    ImU32 exact_zero;         // "0.0 (exactly)"
    ImU32 warning;            // refused edits, the mask-off cheat, NaN notes
    ImU32 hover;              // the hovered cell's outline
    float grid_rgb[3];        // cell borders (the shader's uniform)
    float clear_rgb[3];       // the window background
    PaletteKind colormaps = PaletteKind::standard; // the heatmaps' colour maps
};

Palette make_palette(Theme t, PaletteKind k = PaletteKind::standard);

// The legend's words for the signed map, e.g. "signed: − blue, 0 white, + red".
const char* signed_words(PaletteKind k);
// ImGui's colours and sizes for the theme, scaled for the font scale.
void apply_theme(Theme t, float scale);

// Sizes in pixels for the current font scale.
float px(float base, float scale);

// CPU copy of the shader's colour maps (for picking readable text over a cell).
ImVec4 colormap_color(Colormap m, float t, PaletteKind k = PaletteKind::standard);
// Black or white, whichever reads better over `c`.
ImU32 text_over(ImVec4 c);

} // namespace attnviz
