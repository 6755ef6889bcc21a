// theme.cpp: see theme.h.
#include "theme.h"
#include "text_util.h"
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz {

namespace {

const char* sans_path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const char* mono_path = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";

// Latin-1 (× · ½ ²), Greek (Δ), phonetic extensions (ᵀ), punctuation (– …), super- and
// subscripts (⁻ ¹), arrows (→ ↓), mathematical operators (√ ∞ − ≈ ≤), geometric shapes.
constexpr ImWchar glyph_ranges[] = {
    0x0020, 0x00FF, 0x0370, 0x03FF, 0x1D00, 0x1DBF, 0x2000, 0x206F, 0x2070, 0x209F,
    0x2190, 0x21FF, 0x2200, 0x22FF, 0x25A0, 0x25FF, 0,
};

bool file_exists(const char* path) {
    FILE* f = std::fopen(path, "rb");
    if (!f) return false;
    std::fclose(f);
    return true;
}

ImU32 rgb(int r, int g, int b) { return IM_COL32(r, g, b, 255); }

// Mixes c toward white (t > 0) for text on a dark background.
ImU32 lighten(ImU32 c, float t) {
    ImVec4 v = ImGui::ColorConvertU32ToFloat4(c);
    v.x += (1 - v.x) * t;
    v.y += (1 - v.y) * t;
    v.z += (1 - v.z) * t;
    return ImGui::ColorConvertFloat4ToU32(v);
}
ImU32 darken(ImU32 c, float t) {
    ImVec4 v = ImGui::ColorConvertU32ToFloat4(c);
    v.x *= 1 - t;
    v.y *= 1 - t;
    v.z *= 1 - t;
    return ImGui::ColorConvertFloat4ToU32(v);
}

// The shader's tables (shaders/heatmap_frag.glsl), in 0..255.
constexpr float diverging_table[11][3] = {
    {5, 48, 97},      {33, 102, 172},  {67, 147, 195}, {146, 197, 222}, {209, 229, 240}, {247, 247, 247},
    {253, 219, 199}, {244, 165, 130}, {214, 96, 77},  {178, 24, 43},   {103, 0, 31}};
constexpr float viridis_table[11][3] = {
    {68, 1, 84},     {72, 36, 117},  {65, 68, 135},  {53, 95, 141},  {42, 120, 142}, {33, 145, 140},
    {34, 168, 132}, {68, 191, 112}, {122, 209, 81}, {189, 223, 38}, {253, 231, 37}};
constexpr float diverging_cb_table[11][3] = {
    {45, 0, 75},      {84, 39, 136},   {128, 115, 172}, {178, 171, 210}, {216, 218, 235}, {247, 247, 247},
    {254, 224, 182}, {253, 184, 99},  {224, 130, 20},  {179, 88, 6},    {127, 59, 8}};
constexpr float cividis_table[11][3] = {
    {0, 34, 78}, {8, 51, 112}, {53, 69, 108}, {79, 87, 108}, {102, 105, 112},
    {125, 124, 120}, {148, 142, 119}, {174, 163, 113}, {200, 184, 102}, {229, 207, 82}, {254, 232, 56}};

} // namespace

const char* signed_words(PaletteKind k) {
    return k == PaletteKind::cb ? "signed: − purple, 0 white, + orange" : "signed: − blue, 0 white, + red";
}

float px(float base, float scale) { return std::round(base * scale); }

Fonts load_fonts(float scale) {
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    Fonts f;
    if (!file_exists(sans_path) || !file_exists(mono_path)) {
        f.warning = std::string("attnviz: warning: ") + (file_exists(sans_path) ? mono_path : sans_path) +
                    " is missing (install fonts-dejavu-core); using ImGui's built-in font, which lacks √ ∞ − ᵀ.";
        ImFontConfig cfg;
        cfg.SizePixels = px(13, scale);
        f.body = f.small = f.heading = io.Fonts->AddFontDefault(&cfg);
        f.mono[0] = f.mono[1] = f.mono[2] = f.address = f.body;
        return f;
    }
    ImFontConfig cfg;
    cfg.OversampleH = 2;
    cfg.OversampleV = 1;
    cfg.PixelSnapH = true;
    auto add = [&](const char* path, float size) {
        return io.Fonts->AddFontFromFileTTF(path, px(size, scale), &cfg, glyph_ranges);
    };
    f.body = add(sans_path, 16);    // the first font added is ImGui's default
    f.small = add(sans_path, 13);
    f.heading = add(sans_path, 21);
    f.mono[0] = add(mono_path, 17);
    f.mono[1] = add(mono_path, 14);
    f.mono[2] = add(mono_path, 12);
    // The address a class types in, drawn some 60 to 130 px high: its own font at 128 px,
    // so it is scaled down and sharp rather than the heading's 21 px scaled up and blurred.
    // Only the glyphs an IPv4 address and port need ('.' to ':') and the class code's line
    // ("Code: " and capitals), and no oversampling, as it is only ever scaled down: the atlas
    // grows by about 44 glyphs of 128 px.
    static const ImWchar address_ranges[] = {' ', ' ', '.', ':', 'A', 'Z', 'd', 'e', 'o', 'o', 0};
    ImFontConfig big_cfg;
    big_cfg.OversampleH = big_cfg.OversampleV = 1;
    f.address = io.Fonts->AddFontFromFileTTF(sans_path, 128, &big_cfg, address_ranges);
    f.from_files = f.body && f.small && f.heading && f.mono[0] && f.mono[1] && f.mono[2] && f.address;
    if (!f.from_files) {
        io.Fonts->Clear();
        f = Fonts{};
        f.warning = "attnviz: warning: the DejaVu fonts could not be loaded; using ImGui's built-in font.";
        f.body = f.small = f.heading = io.Fonts->AddFontDefault();
        f.mono[0] = f.mono[1] = f.mono[2] = f.address = f.body;
    }
    io.Fonts->Build();
    return f;
}

Palette make_palette(Theme t, PaletteKind k) {
    Palette p{};
    p.colormaps = k;
    p.q = rgb(0, 114, 178);
    p.k = rgb(230, 159, 0);
    p.v = rgb(0, 158, 115);
    p.bar = rgb(213, 94, 0);        // vermillion: an output that moved
    p.exact_zero = rgb(0, 158, 115);
    const bool dark = t != Theme::light;
    if (dark) {
        const bool hc = t == Theme::high_contrast;
        p.background = hc ? rgb(0, 0, 0) : rgb(30, 32, 36);
        p.panel = hc ? rgb(0, 0, 0) : rgb(38, 41, 46);
        p.text = hc ? rgb(255, 255, 255) : rgb(230, 232, 235);
        p.text_dim = hc ? rgb(220, 220, 220) : rgb(160, 166, 175);
        p.frame = hc ? rgb(255, 255, 255) : rgb(90, 96, 106);
        p.q_text = lighten(p.q, 0.35f);
        p.k_text = p.k;
        p.v_text = lighten(p.v, 0.25f);
        p.head_band[0] = rgb(70, 76, 86);
        p.head_band[1] = rgb(98, 105, 118);
        p.accent = rgb(86, 180, 233);
        p.code_highlight = IM_COL32(86, 180, 233, 70);
        p.bar_outline = rgb(255, 255, 255);
        p.exact_zero = lighten(p.exact_zero, 0.3f);
        p.warning = rgb(240, 228, 66);
        p.hover = rgb(255, 255, 255);
        const float g = hc ? 0.0f : 0.16f;
        p.grid_rgb[0] = p.grid_rgb[1] = p.grid_rgb[2] = g;
        const ImVec4 bg = ImGui::ColorConvertU32ToFloat4(p.background);
        p.clear_rgb[0] = bg.x, p.clear_rgb[1] = bg.y, p.clear_rgb[2] = bg.z;
    } else {
        p.background = rgb(246, 246, 243);
        p.panel = rgb(236, 236, 232);
        p.text = rgb(20, 20, 24);
        p.text_dim = rgb(85, 88, 95);
        p.frame = rgb(150, 150, 150);
        p.q_text = darken(p.q, 0.1f);
        p.k_text = darken(p.k, 0.35f);
        p.v_text = darken(p.v, 0.2f);
        p.head_band[0] = rgb(200, 200, 196);
        p.head_band[1] = rgb(170, 170, 166);
        p.accent = rgb(0, 114, 178);
        p.code_highlight = IM_COL32(0, 114, 178, 50);
        p.bar_outline = rgb(0, 0, 0);
        p.exact_zero = darken(p.exact_zero, 0.2f);
        p.warning = rgb(213, 94, 0);
        p.hover = rgb(0, 0, 0);
        p.grid_rgb[0] = p.grid_rgb[1] = p.grid_rgb[2] = 0.97f;
        const ImVec4 bg = ImGui::ColorConvertU32ToFloat4(p.background);
        p.clear_rgb[0] = bg.x, p.clear_rgb[1] = bg.y, p.clear_rgb[2] = bg.z;
    }
    return p;
}

void apply_theme(Theme t, float scale) {
    ImGuiStyle style;
    if (t == Theme::light) ImGui::StyleColorsLight(&style);
    else ImGui::StyleColorsDark(&style);
    const Palette p = make_palette(t);
    auto c4 = [](ImU32 c) { return ImGui::ColorConvertU32ToFloat4(c); };
    style.Colors[ImGuiCol_WindowBg] = c4(p.background);
    style.Colors[ImGuiCol_ChildBg] = c4(p.panel);
    style.Colors[ImGuiCol_Text] = c4(p.text);
    style.Colors[ImGuiCol_TextDisabled] = c4(p.text_dim);
    if (t == Theme::high_contrast) {
        style.Colors[ImGuiCol_Border] = c4(p.frame);
        style.Colors[ImGuiCol_FrameBg] = ImVec4(0.15f, 0.15f, 0.15f, 1);
        style.FrameBorderSize = 1;
    }
    style.WindowRounding = 0;
    style.ChildRounding = 3;
    style.FrameRounding = 3;
    style.GrabRounding = 3;
    style.WindowBorderSize = 0;
    style.ItemSpacing = ImVec2(8, 6);
    style.FramePadding = ImVec2(6, 4);
    style.WindowPadding = ImVec2(10, 8);
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
}

ImVec4 colormap_color(Colormap m, float t, PaletteKind k) {
    const bool cb = k == PaletteKind::cb;
    const auto& table = m == Colormap::viridis ? (cb ? cividis_table : viridis_table) : (cb ? diverging_cb_table : diverging_table);
    float x = std::clamp(std::isfinite(t) ? t : 0.f, 0.f, 1.f) * 10.f;
    int i = std::min(int(std::floor(x)), 9);
    float f = x - float(i);
    ImVec4 c;
    c.x = (table[i][0] + (table[i + 1][0] - table[i][0]) * f) / 255.f;
    c.y = (table[i][1] + (table[i + 1][1] - table[i][1]) * f) / 255.f;
    c.z = (table[i][2] + (table[i + 1][2] - table[i][2]) * f) / 255.f;
    c.w = 1;
    return c;
}

ImU32 text_over(ImVec4 c) {
    float luma = 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z;
    return luma > 0.45f ? IM_COL32(15, 15, 15, 255) : IM_COL32(255, 255, 255, 255);
}

} // namespace attnviz
