// text_fit.h: text cut to the pixels it has, in an ImGui font, and the side panel's input
// sections (input_panel.cpp). The labels themselves (position_label) are the state layer's
// (inputs.h); only their widths in a font are measured here.
#pragma once
#include "app_state.h"
#include <string>
#include <vector>

struct ImFont;

namespace attnviz {

struct UiContext;

// The side panel's sections (input_panel.cpp).
void draw_words_section(AppState& s, UiContext& ui);
void draw_weights_section(AppState& s, UiContext& ui);
void draw_export_section(AppState& s, UiContext& ui);
// The Get GPT-2 section (hub_panel.cpp).
void draw_get_gpt2_section(AppState& s, UiContext& ui);

// `text` cut (by characters, with "…") to fit `width` pixels in `font`; "" when not even
// its first character and "…" fit.
std::string fit_text(ImFont* font, const std::string& text, float width);
// Width in `font` of the widest position_label of `tokens`, its word part capped at 4.5
// em (longer labels are cut to it with fit_text); 0 without words.
float widest_position_label(ImFont* font, const std::vector<std::string>& tokens);

} // namespace attnviz
