// matrix_panel.cpp: see matrix_panel.h.
#include "matrix_panel.h"
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

// Every k-th index gets a tick label, k from 1, 2, 5, 10, 20, 50, ... so labels never touch.
int tick_step(float cell, float label_extent) {
    const int steps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};
    for (int k : steps)
        if (cell * float(k) >= label_extent) return k;
    return 10000;
}

float line_h(ImFont* f) { return f->FontSize; }

// Words label this axis: it runs over positions and the input has words.
bool has_words(const UiContext& ui, Axis a) {
    return ui.tokens && !ui.tokens->empty() && (a == Axis::position || a == Axis::key);
}
// ... and its ticks show them.
bool worded(const UiContext& ui, Axis a) { return ui.word_ticks && has_words(ui, a); }

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
    const float pad = std::round(3 * ui.scale);
    Chrome c;
    if (!m.title.empty()) c.top += line_h(body) + pad;
    c.top += float(m.band_levels) * (line_h(small) + pad);
    c.top += line_h(small) + pad; // column ticks
    if (!m.row_caption.empty()) c.left += line_h(small) + pad;
    c.left += (worded(ui, m.row_axis) ? ui.row_label_w : text_size(small, std::to_string(std::max(m.rows - 1, 0))).x) +
              2 * pad;
    if (!m.col_caption.empty()) c.bottom += line_h(small) + pad;
    if (m.colorbar) c.bottom += std::round(10 * ui.scale) + line_h(small) + 2 * pad;
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
                            std::round(12 * ui.scale));
    }
    return w;
}

MatrixResult draw_matrix(UiContext& ui, const MatrixSpec& m, ViewWindow& win, ImVec2 pos, float cell, int max_rows,
                         int max_cols) {
    MatrixResult res;
    if (m.rows <= 0 || m.cols <= 0 || m.parts.empty()) return res;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* small = ui.fonts->small;
    ImFont* body = ui.fonts->body;
    const Palette& pal = ui.pal;
    const float pad = std::round(3 * ui.scale);
    const Chrome ch = matrix_chrome(ui, m);

    // The window of cells.
    const int nr = std::clamp(max_rows, 1, m.rows), nc = std::clamp(max_cols, 1, m.cols);
    const int r0 = std::clamp(axis_start(m.row_axis, win), 0, m.rows - nr);
    const int c0 = std::clamp(axis_start(m.col_axis, win), 0, m.cols - nc);
    const ImVec2 p0(std::round(pos.x + ch.left), std::round(pos.y + ch.top));
    const ImVec2 p1(std::round(p0.x + cell * float(nc)), std::round(p0.y + cell * float(nr)));
    const float cw = (p1.x - p0.x) / float(nc), chh = (p1.y - p0.y) / float(nr);
    res.size = ImVec2(ch.left + (p1.x - p0.x) + ch.right, ch.top + (p1.y - p0.y) + ch.bottom);
    // A title wider than the cells widens the panel rather than being cut.
    // A caption, a title's name or a colour bar's numbers wider than the cells widen the
    // panel; the title's shape is written only when it fits in that width.
    const float min_w = matrix_min_width(ui, m);
    res.size.x = std::max(res.size.x, ch.left + min_w + ch.right);
    const std::string title = text_size(body, m.title).x <= res.size.x - ch.left ? m.title : short_title(m.title);
    const ImVec2 panel_max(pos.x + res.size.x, pos.y + res.size.y);

    // Interaction: an invisible button over the cells.
    ImGui::SetCursorScreenPos(p0);
    ImGui::PushID(m.name.c_str());
    ImGui::PushID(m.head);
    ImGui::InvisibleButton("cells", ImVec2(std::max(p1.x - p0.x, 1.f), std::max(p1.y - p0.y, 1.f)));
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
        int dc = int(-d.x / cw), dr = int(-d.y / chh);
        if (dc != 0 || dr != 0) {
            move_axis(m.col_axis, win, dc);
            move_axis(m.row_axis, win, dr);
            ImGui::ResetMouseDragDelta(ImGuiMouseButton_Left);
        }
    }

    // Cells: one shader draw per texture part that overlaps the window.
    int part_start = 0;
    for (const MatrixPart& part : m.parts) {
        const int a = std::max(c0, part_start), b = std::min(c0 + nc, part_start + part.cols);
        if (part.tex && part.tex->id != 0 && a < b) {
            HeatmapDraw d;
            d.data = part.tex;
            d.base = part.base && part.base->id != 0 ? part.base : nullptr;
            d.offset_row = part.offset_row;
            d.offset_col = part.offset_col;
            d.transpose = part.transpose;
            d.rows = m.rows;
            d.cols = part.cols;
            d.row0 = float(r0);
            d.col0 = float(a - part_start);
            d.nrows = float(nr);
            d.ncols = float(b - a);
            d.colormap = m.colormap;
            d.lo = m.lo;
            d.hi = m.hi;
            d.scale = m.scale;
            d.mask = m.mask;
            d.grid_min_px = 10 * ui.scale;
            std::copy(pal.grid_rgb, pal.grid_rgb + 3, d.grid_rgb);
            d.x0 = p0.x + float(a - c0) * cw;
            d.x1 = p0.x + float(b - c0) * cw;
            d.y0 = p0.y;
            d.y1 = p1.y;
            add_heatmap(dl, *ui.renderer, d);
        }
        part_start += part.cols;
    }
    if (m.frame_color) dl->AddRect(ImVec2(p0.x - 2, p0.y - 2), ImVec2(p1.x + 2, p1.y + 2), m.frame_color, 0, 0, 2.f);

    // Values printed in the cells when they fit, with one number of decimals for the whole
    // panel (the most that fits every visible cell), so that no cell is silently left blank.
    ImFont* value_font = cw >= 58 * ui.scale && chh >= 2.2f * body->FontSize ? body : small;
    int decimals = -1;
    if (m.print_values && m.value && chh >= value_font->FontSize + 2 && cw >= 16 * ui.scale && nr * nc <= 4096) {
        for (int d = 3; d >= 1 && decimals < 0; --d) {
            bool all = true;
            for (int r = r0; r < r0 + nr && all; ++r)
                for (int c = c0; c < c0 + nc && all; ++c)
                    all = text_size(value_font, format_value(m.value(r, c), d)).x <= cw - 4;
            if (all) decimals = d;
        }
    }
    if (decimals >= 1) {
        for (int r = r0; r < r0 + nr; ++r)
            for (int c = c0; c < c0 + nc; ++c) {
                const float v = m.value(r, c);
                const ImVec2 a(p0.x + float(c - c0) * cw, p0.y + float(r - r0) * chh);
                const std::string s = format_value(v, decimals);
                const ImVec2 ts = text_size(value_font, s);
                const ImVec2 at(std::round(a.x + (cw - ts.x) * 0.5f), std::round(a.y + (chh - ts.y) * 0.5f));
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
                    color = text_over(colormap_color(m.colormap, t, pal.colormaps));
                }
                dl->AddText(value_font, value_font->FontSize, at, color, s.c_str());
            }
    }

    // Separators between column blocks (heads, Q | K | V).
    for (int s : m.separators)
        if (s > c0 && s < c0 + nc) {
            const float x = std::round(p0.x + float(s - c0) * cw);
            dl->AddLine(ImVec2(x, p0.y - 1), ImVec2(x, p1.y + 1), m.separator_color ? m.separator_color : pal.background,
                        std::max(2.f, std::round(2 * ui.scale)));
        }
    // The perturbed row.
    if (m.highlight_row >= r0 && m.highlight_row < r0 + nr) {
        const float y = p0.y + float(m.highlight_row - r0) * chh;
        dl->AddRect(ImVec2(p0.x - 3, y - 1), ImVec2(p1.x + 3, y + chh + 1), pal.accent, 0, 0, 2.f);
    }

    // Title, bands, ticks and captions.
    const ImVec4 clip(pos.x, pos.y, std::max(panel_max.x, pos.x + 1), panel_max.y);
    float y = pos.y;
    if (!m.title.empty()) {
        dl->AddText(body, body->FontSize, ImVec2(p0.x, y), m.title_color ? m.title_color : pal.text, title.c_str());
        y += line_h(body) + pad;
    }
    for (int level = 0; level < m.band_levels; ++level) {
        for (const Band& b : m.bands) {
            if (b.level != level) continue;
            const int a = std::max(b.c0, c0), e = std::min(b.c1, c0 + nc);
            if (a >= e) continue;
            const ImVec2 b0(p0.x + float(a - c0) * cw + 1, y), b1(p0.x + float(e - c0) * cw - 1, y + line_h(small) + 1);
            dl->AddRectFilled(b0, b1, b.color, 2.f);
            const ImVec2 ts = text_size(small, b.label);
            if (ts.x <= b1.x - b0.x - 2) {
                const ImVec4 bclip(b0.x, b0.y, b1.x, b1.y);
                dl->AddText(small, small->FontSize, ImVec2(std::round((b0.x + b1.x - ts.x) * 0.5f), y), text_over(ImGui::ColorConvertU32ToFloat4(b.color)),
                            b.label.c_str(), nullptr, 0.f, &bclip);
            }
        }
        y += line_h(small) + pad;
    }
    {
        // Column ticks: the words of key positions when every one fits its column (cut
        // with "…" if need be), otherwise numbers.
        std::vector<std::string> words;
        if (worded(ui, m.col_axis))
            for (int c = c0; c < c0 + nc; ++c) {
                words.push_back(fit_text(small, position_word(*ui.tokens, c), cw - 4));
                if (words.back().empty()) {
                    words.clear();
                    break;
                }
            }
        const int k = words.empty() ? tick_step(cw, text_size(small, std::to_string(m.cols - 1)).x + 6) : 1;
        for (int c = ((c0 + k - 1) / k) * k; c < c0 + nc; c += k) {
            std::string s = words.empty() ? std::to_string(c) : words[size_t(c - c0)];
            const ImVec2 ts = text_size(small, s);
            dl->AddText(small, small->FontSize, ImVec2(std::round(p0.x + (float(c - c0) + 0.5f) * cw - ts.x * 0.5f), y),
                        pal.text_dim, s.c_str());
        }
        // Row ticks: "2 saw" with words.
        const bool row_words = worded(ui, m.row_axis);
        const int kr = tick_step(chh, small->FontSize * 1.1f);
        for (int r = ((r0 + kr - 1) / kr) * kr; r < r0 + nr; r += kr) {
            std::string s = std::to_string(r);
            if (row_words) {
                const std::string label = fit_text(small, position_label(*ui.tokens, r), ui.row_label_w);
                if (!label.empty()) s = label;
            }
            const ImVec2 ts = text_size(small, s);
            dl->AddText(small, small->FontSize,
                        ImVec2(p0.x - pad - ts.x, std::round(p0.y + (float(r - r0) + 0.5f) * chh - ts.y * 0.5f)),
                        pal.text_dim, s.c_str());
        }
    }
    if (!m.row_caption.empty()) {
        // Centred on the cells, within the panel; too long for the panel, only its last word
        // ("query position i" -> "i") is written.
        std::string cap = m.row_caption;
        const float room = res.size.y;
        if (text_size(small, cap).x > room) cap = cap.substr(cap.find_last_of(' ') + 1);
        const float half = text_size(small, cap).x * 0.5f;
        const float cy = std::clamp((p0.y + p1.y) * 0.5f, pos.y + half, std::max(pos.y + half, pos.y + room - half));
        add_text_vertical(dl, small, ImVec2(pos.x + line_h(small) * 0.5f, cy), pal.text_dim, cap.c_str());
    }
    float yb = p1.y + pad;
    if (!m.col_caption.empty()) {
        std::string cap = m.col_caption;
        const ImVec2 ts = text_size(small, cap);
        dl->AddText(small, small->FontSize, ImVec2(std::round(std::max(p0.x, (p0.x + p1.x - ts.x) * 0.5f)), yb), pal.text_dim,
                    cap.c_str(), nullptr, 0.f, &clip);
        yb += line_h(small) + pad;
    }
    if (m.colorbar) {
        const float bar_h = std::round(10 * ui.scale);
        HeatmapDraw d;
        d.data = m.parts.front().tex;
        d.colorbar = true;
        d.colormap = m.colormap;
        d.lo = m.lo;
        d.hi = m.hi;
        // As wide as the cells, or as its two end numbers need.
        const float bar_x1 = std::max(p1.x, p0.x + text_size(small, format_value(m.lo, 2)).x +
                                                text_size(small, format_value(m.hi, 2)).x + std::round(12 * ui.scale));
        d.x0 = p0.x, d.x1 = bar_x1, d.y0 = yb, d.y1 = yb + bar_h;
        if (d.data && d.data->id) add_heatmap(dl, *ui.renderer, d);
        dl->AddRect(ImVec2(p0.x - 1, yb - 1), ImVec2(bar_x1 + 1, yb + bar_h + 1), pal.frame);
        const float ty = yb + bar_h + pad * 0.5f;
        const std::string lo = format_value(m.lo, 2), hi = format_value(m.hi, 2);
        const ImVec2 lo_s = text_size(small, lo), hi_s = text_size(small, hi);
        dl->AddText(small, small->FontSize, ImVec2(p0.x, ty), pal.text_dim, lo.c_str());
        dl->AddText(small, small->FontSize, ImVec2(bar_x1 - hi_s.x, ty), pal.text_dim, hi.c_str());
        const std::string mid = format_value(0.5f * (m.lo + m.hi), 2);
        const ImVec2 mid_s = text_size(small, mid);
        if (bar_x1 - p0.x > lo_s.x + hi_s.x + mid_s.x + 16 * ui.scale)
            dl->AddText(small, small->FontSize, ImVec2(std::round((p0.x + bar_x1 - mid_s.x) * 0.5f), ty), pal.text_dim, mid.c_str());
        if (ui.layout)
            ui.layout->push_back(LayoutItem{"colorbar", m.name, m.head, p0.x, yb, bar_x1 - p0.x, bar_h, 0, 0, 0, 0, 0, 0, -1, 0});
    }

    // Hover: outline and tooltip.
    if (hovered) {
        const ImVec2 mp = io.MousePos;
        const int c = std::clamp(c0 + int((mp.x - p0.x) / cw), c0, c0 + nc - 1);
        const int r = std::clamp(r0 + int((mp.y - p0.y) / chh), r0, r0 + nr - 1);
        res.hovered = true;
        res.row = r;
        res.col = c;
        const ImVec2 a(p0.x + float(c - c0) * cw, p0.y + float(r - r0) * chh);
        dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(a.x + cw + 1, a.y + chh + 1), pal.hover, 0, 0, 2.f);
        if (m.value) {
            const float v = m.value(r, c);
            ImGui::BeginTooltip();
            ImGui::TextUnformatted(m.describe ? m.describe(r, c, v).c_str() : format_exact(v).c_str());
            ImGui::TextDisabled("row %s, column %s; exact value %s", index_text(ui, m.row_axis, r).c_str(),
                                index_text(ui, m.col_axis, c).c_str(), format_exact(v).c_str());
            if (m.base_value) {
                const float b = m.base_value(r, c);
                const bool same = (std::isnan(b) && std::isnan(v)) || b == v;
                if (!same)
                    ImGui::Text("changed by the perturbation: was %s", format_exact(b).c_str());
            }
            ImGui::EndTooltip();
        }
    }

    if (ui.layout)
        ui.layout->push_back(LayoutItem{"heatmap", m.name, m.head, p0.x, p0.y, p1.x - p0.x, p1.y - p0.y, m.rows, m.cols,
                                        r0, c0, nr, nc, -1, 0});
    // The first windowed matrix that offers an overview gets one (single-texture matrices).
    if (m.minimap && ui.minimap && !ui.minimap->active && (nr < m.rows || nc < m.cols) && m.parts.size() == 1) {
        Minimap& mm = *ui.minimap;
        mm.active = true;
        mm.title = m.title;
        mm.rows = m.rows, mm.cols = m.cols, mm.row0 = r0, mm.col0 = c0, mm.nrows = nr, mm.ncols = nc;
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
    ImGui::SetCursorScreenPos(pos);
    ImGui::Dummy(res.size);
    return res;
}

} // namespace attnviz
