// matrix_panel.cpp: see matrix_panel.h.
#include "matrix_grid.h"
#include "format.h"
#include "inputs.h"
#include <algorithm>
#include <cfloat>
#include <cmath>

namespace attnviz {

namespace {

int axis_start(Axis a, const ViewWindow& w) {
    switch (a) {
    case Axis::position: return w.row0;
    case Axis::key: return w.key0;
    case Axis::channel: return w.chan0;
    case Axis::fixed: return 0;
    }
    return 0;
}

void move_axis(Axis a, ViewWindow& w, int delta) {
    switch (a) {
    case Axis::position: w.row0 = std::max(0, w.row0 + delta); break;
    case Axis::key: w.key0 = std::max(0, w.key0 + delta); break;
    case Axis::channel: w.chan0 = std::max(0, w.chan0 + delta); break;
    case Axis::fixed: break;
    }
}

} // namespace

void set_axis_start(Axis a, ViewWindow& w, int start) {
    switch (a) {
    case Axis::position: w.row0 = std::max(0, start); break;
    case Axis::key: w.key0 = std::max(0, start); break;
    case Axis::channel: w.chan0 = std::max(0, start); break;
    case Axis::fixed: break;
    }
}

void draw_minimap(UiContext& ui, const Minimap& m, ViewWindow& win, ImVec2 p0, ImVec2 p1) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    HeatmapDraw d = m.whole;
    d.x0 = p0.x, d.y0 = p0.y, d.x1 = p1.x, d.y1 = p1.y;
    d.grid_min_px = 1e9f;
    add_heatmap(dl, *ui.renderer, d);
    dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1), ui.pal.frame);
    const float sx = (p1.x - p0.x) / float(m.cols), sy = (p1.y - p0.y) / float(m.rows);
    const ImVec2 a(p0.x + float(m.col0) * sx, p0.y + float(m.row0) * sy);
    const ImVec2 b(std::max(a.x + 3, p0.x + float(m.col0 + m.ncols) * sx), std::max(a.y + 3, p0.y + float(m.row0 + m.nrows) * sy));
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, 3.f);
    dl->AddRect(a, b, ui.pal.accent, 0, 0, 2.f);
    ImGui::SetCursorScreenPos(p0);
    ImGui::InvisibleButton("##minimap", ImVec2(std::max(p1.x - p0.x, 1.f), std::max(p1.y - p0.y, 1.f)));
    if (ImGui::IsItemActive()) {
        const ImVec2 mp = ImGui::GetIO().MousePos;
        const int c = int((mp.x - p0.x) / sx) - m.ncols / 2, r = int((mp.y - p0.y) / sy) - m.nrows / 2;
        set_axis_start(Axis(m.row_axis), win, std::clamp(r, 0, std::max(0, m.rows - m.nrows)));
        set_axis_start(Axis(m.col_axis), win, std::clamp(c, 0, std::max(0, m.cols - m.ncols)));
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The whole matrix; the outlined part is on screen. Click to move there.");
}

namespace {

// "2" or, with words, "2 “saw”", for the tooltip.
std::string index_text(const UiContext& ui, Axis a, int i) {
    std::string s = std::to_string(i);
    if (has_words(ui, a) && i >= 0 && size_t(i) < ui.tokens->size()) s += " “" + (*ui.tokens)[size_t(i)] + "”";
    return s;
}

} // namespace

ImVec2 text_size(ImFont* font, const std::string& s) {
    return font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.f, s.c_str());
}

void add_text_vertical(ImDrawList* dl, ImFont* font, ImVec2 center, ImU32 color, const char* text) {
    const ImVec2 ts = font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.f, text);
    const int first = dl->VtxBuffer.Size;
    // Drawn upright at the screen's top-left corner, where no glyph falls outside the screen
    // (ImGui drops glyphs that lie wholly outside the clip rectangle, and upright around
    // `center` the caption of a matrix at the window's left edge starts left of x = 0),
    // then every new vertex is turned a quarter about the upright centre and moved to `center`.
    const ImVec2 upright(1.f + ts.x * 0.5f, 1.f + ts.y * 0.5f);
    dl->PushClipRectFullScreen();
    dl->AddText(font, font->FontSize, ImVec2(1.f, 1.f), color, text);
    for (int i = first; i < dl->VtxBuffer.Size; ++i) {
        ImVec2& p = dl->VtxBuffer[i].pos;
        const float dx = p.x - upright.x, dy = p.y - upright.y;
        p = ImVec2(center.x + dy, center.y - dx);
    }
    dl->PopClipRect();
}

void draw_swatch(UiContext& ui, ImDrawList* dl, ImVec2 p0, ImVec2 p1, int kind) {
    if (!ui.tex || ui.tex->x.id == 0) return;
    HeatmapDraw d;
    d.data = &ui.tex->x; // any texture: the swatch ignores the data
    d.rows = d.cols = 1;
    d.swatch = kind;
    d.x0 = p0.x, d.y0 = p0.y, d.x1 = p1.x, d.y1 = p1.y;
    add_heatmap(dl, *ui.renderer, d);
    dl->AddRect(p0, p1, ui.pal.frame);
}

Chrome matrix_chrome(const UiContext& ui, const MatrixSpec& m) {
    ImFont* small = ui.fonts->small;
    ImFont* body = ui.fonts->body;
    const float pad = ui.px(3);
    Chrome c;
    if (!m.title.empty()) c.top += line_h(body) + pad;
    c.top += float(m.band_levels) * (line_h(small) + pad);
    c.top += line_h(small) + pad; // column ticks
    if (!m.row_caption.empty()) c.left += line_h(small) + pad;
    c.left += (worded(ui, m.row_axis) ? ui.row_label_w : text_size(small, std::to_string(std::max(m.rows - 1, 0))).x) +
              2 * pad;
    if (!m.col_caption.empty()) c.bottom += line_h(small) + pad;
    if (m.colorbar) c.bottom += ui.px(10) + line_h(small) + 2 * pad;
    c.right = pad;
    c.bottom += pad;
    return c;
}

namespace {

// A title's name without its shape: "y = proj(…)   (T, C) = (4, 8)" -> "y = proj(…)".
std::string short_title(const std::string& title) { return title.substr(0, title.find("   ")); }

} // namespace

float matrix_min_width(const UiContext& ui, const MatrixSpec& m) {
    ImFont* small = ui.fonts->small;
    // The title may drop its shape (short_title) rather than widen the panel.
    float w = m.title.empty() ? 0.f : text_size(ui.fonts->body, short_title(m.title)).x;
    if (!m.col_caption.empty()) w = std::max(w, text_size(small, m.col_caption).x);
    if (m.colorbar) {
        // lo and hi apart by a gap, as the colour bar prints them.
        w = std::max(w, text_size(small, format_value(m.lo, 2)).x + text_size(small, format_value(m.hi, 2)).x +
                            ui.px(12));
    }
    return w;
}

namespace {

Grid place(UiContext& ui, const MatrixSpec& m, const ViewWindow& win, ImVec2 pos, float cell, int max_rows,
           int max_cols) {
    const Chrome ch = matrix_chrome(ui, m);
    Grid g;
    g.pos = pos;
    g.pad = ui.px(3);
    g.nr = std::clamp(max_rows, 1, m.rows), g.nc = std::clamp(max_cols, 1, m.cols);
    g.r0 = std::clamp(axis_start(m.row_axis, win), 0, m.rows - g.nr);
    g.c0 = std::clamp(axis_start(m.col_axis, win), 0, m.cols - g.nc);
    g.p0 = ImVec2(std::round(pos.x + ch.left), std::round(pos.y + ch.top));
    g.p1 = ImVec2(std::round(g.p0.x + cell * float(g.nc)), std::round(g.p0.y + cell * float(g.nr)));
    g.cw = (g.p1.x - g.p0.x) / float(g.nc), g.chh = (g.p1.y - g.p0.y) / float(g.nr);
    g.size = ImVec2(ch.left + (g.p1.x - g.p0.x) + ch.right, ch.top + (g.p1.y - g.p0.y) + ch.bottom);
    // A caption, a title's name or a colour bar's numbers wider than the cells widen the
    // panel; the title's shape is written only when it fits in that width.
    g.size.x = std::max(g.size.x, ch.left + matrix_min_width(ui, m) + ch.right);
    g.title = text_size(ui.fonts->body, m.title).x <= g.size.x - ch.left ? m.title : short_title(m.title);
    return g;
}

// An invisible button over the cells: the wheel scrolls the window (Shift: sideways), Ctrl+
// wheel zooms, a drag pans. Sets res.clicked; returns whether the cells are hovered.
bool handle_mouse(const MatrixSpec& m, ViewWindow& win, const Grid& g, MatrixResult& res) {
    ImGui::SetCursorScreenPos(g.p0);
    ImGui::PushID(m.name.c_str());
    ImGui::PushID(m.head);
    ImGui::InvisibleButton("cells", ImVec2(std::max(g.p1.x - g.p0.x, 1.f), std::max(g.p1.y - g.p0.y, 1.f)));
    const bool hovered = ImGui::IsItemHovered();
    const bool active = ImGui::IsItemActive();
    res.clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    ImGui::PopID();
    ImGui::PopID();
    ImGuiIO& io = ImGui::GetIO();
    if (hovered && io.MouseWheel != 0.f) {
        if (io.KeyCtrl) win.zoom = std::clamp(win.zoom * std::pow(1.15f, io.MouseWheel), 0.25f, 16.f);
        else if (io.KeyShift) move_axis(m.col_axis, win, -int(io.MouseWheel * 3));
        else move_axis(m.row_axis, win, -int(io.MouseWheel * 3));
    }
    if (hovered && io.MouseWheelH != 0.f) move_axis(m.col_axis, win, -int(io.MouseWheelH * 3));
    if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.f)) {
        ImVec2 d = ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 2.f);
        int dc = int(-d.x / g.cw), dr = int(-d.y / g.chh);
        if (dc != 0 || dr != 0) {
            move_axis(m.col_axis, win, dc);
            move_axis(m.row_axis, win, dr);
            ImGui::ResetMouseDragDelta(ImGuiMouseButton_Left);
        }
    }
    return hovered;
}

// The cells: one shader draw per texture part that overlaps the window, then the frame.
void draw_cells(UiContext& ui, const MatrixSpec& m, const Grid& g) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    int part_start = 0;
    for (const MatrixPart& part : m.parts) {
        const int a = std::max(g.c0, part_start), b = std::min(g.c0 + g.nc, part_start + part.cols);
        if (part.tex && part.tex->id != 0 && a < b) {
            HeatmapDraw d;
            d.data = part.tex;
            d.base = part.base && part.base->id != 0 ? part.base : nullptr;
            d.offset_row = part.offset_row;
            d.offset_col = part.offset_col;
            d.transpose = part.transpose;
            d.rows = m.rows;
            d.cols = part.cols;
            d.row0 = float(g.r0);
            d.col0 = float(a - part_start);
            d.nrows = float(g.nr);
            d.ncols = float(b - a);
            d.colormap = m.colormap;
            d.lo = m.lo;
            d.hi = m.hi;
            d.scale = m.scale;
            d.mask = m.mask;
            d.grid_min_px = ui.scaled(10);
            std::copy(ui.pal.grid_rgb, ui.pal.grid_rgb + 3, d.grid_rgb);
            d.x0 = g.p0.x + float(a - g.c0) * g.cw;
            d.x1 = g.p0.x + float(b - g.c0) * g.cw;
            d.y0 = g.p0.y;
            d.y1 = g.p1.y;
            add_heatmap(dl, *ui.renderer, d);
        }
        part_start += part.cols;
    }
    if (m.frame_color)
        dl->AddRect(ImVec2(g.p0.x - 2, g.p0.y - 2), ImVec2(g.p1.x + 2, g.p1.y + 2), m.frame_color, 0, 0, 2.f);
}

// Values printed in the cells when they fit, with one number of decimals for the whole
// panel (the most that fits every visible cell), so that no cell is silently left blank.
void draw_values(UiContext& ui, const MatrixSpec& m, const Grid& g) {
    ImFont* body = ui.fonts->body;
    ImFont* value_font = g.cw >= ui.scaled(58) && g.chh >= 2.2f * body->FontSize ? body : ui.fonts->small;
    if (!m.print_values || !m.value || g.chh < value_font->FontSize + 2 || g.cw < ui.scaled(16) || g.nr * g.nc > 4096)
        return;
    int decimals = -1;
    for (int d = 3; d >= 1 && decimals < 0; --d) {
        bool all = true;
        for (int r = g.r0; r < g.r0 + g.nr && all; ++r)
            for (int c = g.c0; c < g.c0 + g.nc && all; ++c)
                all = text_size(value_font, format_value(m.value(r, c), d)).x <= g.cw - 4;
        if (all) decimals = d;
    }
    if (decimals < 1) return;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (int r = g.r0; r < g.r0 + g.nr; ++r)
        for (int c = g.c0; c < g.c0 + g.nc; ++c) {
            const float v = m.value(r, c);
            const ImVec2 a(g.p0.x + float(c - g.c0) * g.cw, g.p0.y + float(r - g.r0) * g.chh);
            const std::string s = format_value(v, decimals);
            const ImVec2 ts = text_size(value_font, s);
            const ImVec2 at(std::round(a.x + (g.cw - ts.x) * 0.5f), std::round(a.y + (g.chh - ts.y) * 0.5f));
            ImU32 color;
            if (std::isnan(v)) {
                dl->AddRectFilled(ImVec2(at.x - 2, at.y), ImVec2(at.x + ts.x + 2, at.y + ts.y), IM_COL32(15, 15, 15, 255));
                color = IM_COL32(255, 255, 255, 255);
            } else if (std::isinf(v) && v < 0) {
                // A light pill keeps "−∞" readable over the hatch.
                dl->AddRectFilled(ImVec2(at.x - 3, at.y), ImVec2(at.x + ts.x + 3, at.y + ts.y), IM_COL32(225, 225, 225, 255), 3.f);
                color = IM_COL32(20, 20, 20, 255);
            } else {
                const float t = m.hi > m.lo ? (v - m.lo) / (m.hi - m.lo) : 0.5f;
                color = text_over(colormap_color(m.colormap, t, ui.pal.colormaps));
            }
            dl->AddText(value_font, value_font->FontSize, at, color, s.c_str());
        }
}

// Separators between column blocks (heads, Q | K | V) and the perturbed row's outline.
void draw_marks(UiContext& ui, const MatrixSpec& m, const Grid& g) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (int s : m.separators)
        if (s > g.c0 && s < g.c0 + g.nc) {
            const float x = std::round(g.p0.x + float(s - g.c0) * g.cw);
            dl->AddLine(ImVec2(x, g.p0.y - 1), ImVec2(x, g.p1.y + 1), m.separator_color ? m.separator_color : ui.pal.background,
                        std::max(2.f, ui.px(2)));
        }
    if (m.highlight_row >= g.r0 && m.highlight_row < g.r0 + g.nr) {
        const float y = g.p0.y + float(m.highlight_row - g.r0) * g.chh;
        dl->AddRect(ImVec2(g.p0.x - 3, y - 1), ImVec2(g.p1.x + 3, y + g.chh + 1), ui.pal.accent, 0, 0, 2.f);
    }
}

// The hovered cell: its outline and a tooltip with the value (and the unperturbed one when
// it differs). Sets res.row and res.col.
void draw_hover(UiContext& ui, const MatrixSpec& m, const Grid& g, MatrixResult& res) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    const int c = std::clamp(g.c0 + int((mp.x - g.p0.x) / g.cw), g.c0, g.c0 + g.nc - 1);
    const int r = std::clamp(g.r0 + int((mp.y - g.p0.y) / g.chh), g.r0, g.r0 + g.nr - 1);
    res.hovered = true;
    res.row = r;
    res.col = c;
    const ImVec2 a(g.p0.x + float(c - g.c0) * g.cw, g.p0.y + float(r - g.r0) * g.chh);
    ImGui::GetWindowDrawList()->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(a.x + g.cw + 1, a.y + g.chh + 1), ui.pal.hover, 0,
                                        0, 2.f);
    if (!m.value) return;
    const float v = m.value(r, c);
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(m.describe ? m.describe(r, c, v).c_str() : format_exact(v).c_str());
    ImGui::TextDisabled("row %s, column %s; exact value %s", index_text(ui, m.row_axis, r).c_str(),
                        index_text(ui, m.col_axis, c).c_str(), format_exact(v).c_str());
    if (m.base_value) {
        const float b = m.base_value(r, c);
        const bool same = (std::isnan(b) && std::isnan(v)) || b == v;
        if (!same) ImGui::Text("changed by the perturbation: was %s", format_exact(b).c_str());
    }
    ImGui::EndTooltip();
}

// The first windowed matrix that offers an overview gets one (single-texture matrices):
// the side panel draws the whole matrix next frame with this window outlined.
void offer_minimap(UiContext& ui, const MatrixSpec& m, const Grid& g) {
    if (!m.minimap || !ui.minimap || ui.minimap->active || (g.nr >= m.rows && g.nc >= m.cols) || m.parts.size() != 1)
        return;
    Minimap& mm = *ui.minimap;
    mm.active = true;
    mm.title = m.title;
    mm.rows = m.rows, mm.cols = m.cols, mm.row0 = g.r0, mm.col0 = g.c0, mm.nrows = g.nr, mm.ncols = g.nc;
    mm.row_axis = int(m.row_axis), mm.col_axis = int(m.col_axis);
    mm.view = ui.view;
    HeatmapDraw& d = mm.whole;
    const MatrixPart& part = m.parts.front();
    d = HeatmapDraw{};
    d.data = part.tex;
    d.offset_row = part.offset_row, d.offset_col = part.offset_col, d.transpose = part.transpose;
    d.rows = m.rows, d.cols = m.cols;
    d.row0 = 0, d.col0 = 0, d.nrows = float(m.rows), d.ncols = float(m.cols);
    d.colormap = m.colormap, d.lo = m.lo, d.hi = m.hi, d.scale = m.scale, d.mask = m.mask;
}

} // namespace

MatrixResult draw_matrix(UiContext& ui, const MatrixSpec& m, ViewWindow& win, ImVec2 pos, float cell, int max_rows,
                         int max_cols) {
    MatrixResult res;
    if (m.rows <= 0 || m.cols <= 0 || m.parts.empty()) return res;
    const Grid g = place(ui, m, win, pos, cell, max_rows, max_cols);
    res.size = g.size;
    const bool hovered = handle_mouse(m, win, g, res);
    draw_cells(ui, m, g);
    draw_values(ui, m, g);
    draw_marks(ui, m, g);
    draw_ticks(ui, m, g, draw_title_and_bands(ui, m, g));
    const float below = draw_captions(ui, m, g);
    if (m.colorbar) draw_colorbar(ui, m, g, below);
    if (hovered) draw_hover(ui, m, g, res);
    if (ui.layout)
        ui.layout->push_back(LayoutItem{"heatmap", m.name, m.head, g.p0.x, g.p0.y, g.p1.x - g.p0.x, g.p1.y - g.p0.y, m.rows,
                                        m.cols, g.r0, g.c0, g.nr, g.nc, -1, 0});
    offer_minimap(ui, m, g);
    ImGui::SetCursorScreenPos(pos);
    ImGui::Dummy(res.size);
    return res;
}

} // namespace attnviz
