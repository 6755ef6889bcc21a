// view_names.h: the window's named choices, the views, the kernel, the theme, the colour
// maps and the side panel, with the names the command line and sessions use (app_state.cpp).
#pragma once
#include <string>

namespace attnviz {

enum class View { walk, qkv, scores, causality, check, train, model, generate };
constexpr int view_count = 8;
const char* to_string(View v); // "walk", "qkv", "scores", "causality", "check", "train", "model", "generate"
// On failure sets `error` to one sentence naming the value and the allowed names.
bool parse_view(const std::string& s, View& out, std::string& error);

enum class KernelChoice { automatic, reference, fast };
enum class Theme { dark, light, high_contrast };
// The colour maps: default (RdBu for signed values, viridis for weights) or cb (PuOr and
// cividis, told apart by every kind of colour vision); names in theme.h.
enum class PaletteKind { standard, cb };
// The side panel: shown unless the view would get too little room (automatic), or as the
// user set it with F2.
enum class PanelMode { automatic, shown, hidden };
const char* to_string(Theme t); // "dark", "light", "high-contrast"
bool parse_theme(const std::string& s, Theme& out, std::string& error);
// Colour-map families: "default" (RdBu reversed for signed values, viridis for weights) and
// "cb" (PuOr reversed and cividis: blue-yellow contrasts, safe for every colour vision).
const char* to_string(PaletteKind k);
// On failure sets `error` to one sentence naming the value and the allowed names.
bool parse_palette(const std::string& s, PaletteKind& out, std::string& error);

} // namespace attnviz
