// matrix_axes.cpp: the text and the colour bar around a matrix's cells (matrix_grid.h):
// title, column bands, ticks, captions and the colour bar with its numbers.
#include "format.h"
#include "inputs.h"
#include "text_fit.h"
#include "matrix_grid.h"
#include <algorithm>
#include <cmath>
#include <vector>

namespace attnviz {

namespace {

// Every k-th index gets a tick label, k from 1, 2, 5, 10, 20, 50, ... so labels never touch.
int tick_step(float cell, float label_extent) {
    const int steps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};
    for (int k : steps)
        if (cell * float(k) >= label_extent) return k;
    return 10000;
}

} // namespace

float draw_title_and_bands(UiContext& ui, const MatrixSpec& m, const Grid& g) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* small = ui.fonts->small;
    ImFont* body = ui.fonts->body;
    float y = g.pos.y;
    if (!m.title.empty()) {
        dl->AddText(body, body->FontSize, ImVec2(g.p0.x, y), m.title_color ? m.title_color : ui.pal.text, g.title.c_str());
        y += line_h(body) + g.pad;
    }
    for (int level = 0; level < m.band_levels; ++level) {
        for (const Band& b : m.bands) {
            if (b.level != level) continue;
            const int a = std::max(b.c0, g.c0), e = std::min(b.c1, g.c0 + g.nc);
            if (a >= e) continue;
            const ImVec2 b0(g.p0.x + float(a - g.c0) * g.cw + 1, y), b1(g.p0.x + float(e - g.c0) * g.cw - 1, y + line_h(small) + 1);
            dl->AddRectFilled(b0, b1, b.color, 2.f);
            const ImVec2 ts = text_size(small, b.label);
            if (ts.x <= b1.x - b0.x - 2) {
                const ImVec4 bclip(b0.x, b0.y, b1.x, b1.y);
                dl->AddText(small, small->FontSize, ImVec2(std::round((b0.x + b1.x - ts.x) * 0.5f), y), text_over(ImGui::ColorConvertU32ToFloat4(b.color)),
                            b.label.c_str(), nullptr, 0.f, &bclip);
            }
        }
        y += line_h(small) + g.pad;
    }
    return y;
}

void draw_ticks(UiContext& ui, const MatrixSpec& m, const Grid& g, float y) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* small = ui.fonts->small;
    std::vector<std::string> words;
    if (worded(ui, m.col_axis))
        for (int c = g.c0; c < g.c0 + g.nc; ++c) {
            words.push_back(fit_text(small, position_word(*ui.tokens, c), g.cw - 4));
            if (words.back().empty()) {
                words.clear();
                break;
            }
        }
    const int k = words.empty() ? tick_step(g.cw, text_size(small, std::to_string(m.cols - 1)).x + 6) : 1;
    for (int c = ((g.c0 + k - 1) / k) * k; c < g.c0 + g.nc; c += k) {
        std::string s = words.empty() ? std::to_string(c) : words[size_t(c - g.c0)];
        const ImVec2 ts = text_size(small, s);
        dl->AddText(small, small->FontSize, ImVec2(std::round(g.p0.x + (float(c - g.c0) + 0.5f) * g.cw - ts.x * 0.5f), y),
                    ui.pal.text_dim, s.c_str());
    }
    const bool row_words = worded(ui, m.row_axis);
    const int kr = tick_step(g.chh, small->FontSize * 1.1f);
    for (int r = ((g.r0 + kr - 1) / kr) * kr; r < g.r0 + g.nr; r += kr) {
        std::string s = std::to_string(r);
        if (row_words) {
            const std::string label = fit_text(
                small, ui.short_row_labels ? position_word(*ui.tokens, r) : position_label(*ui.tokens, r), ui.row_label_w);
            if (!label.empty()) s = label;
        }
        const ImVec2 ts = text_size(small, s);
        dl->AddText(small, small->FontSize,
                    ImVec2(g.p0.x - g.pad - ts.x, std::round(g.p0.y + (float(r - g.r0) + 0.5f) * g.chh - ts.y * 0.5f)),
                    ui.pal.text_dim, s.c_str());
    }
}

float draw_captions(UiContext& ui, const MatrixSpec& m, const Grid& g) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* small = ui.fonts->small;
    if (!m.row_caption.empty()) {
        // Centred on the cells, within the panel; too long for the panel, only its last word
        // ("query position i" -> "i") is written.
        std::string cap = m.row_caption;
        const float room = g.size.y;
        if (text_size(small, cap).x > room) cap = cap.substr(cap.find_last_of(' ') + 1);
        const float half = text_size(small, cap).x * 0.5f;
        const float cy = std::clamp((g.p0.y + g.p1.y) * 0.5f, g.pos.y + half, std::max(g.pos.y + half, g.pos.y + room - half));
        add_text_vertical(dl, small, ImVec2(g.pos.x + line_h(small) * 0.5f, cy), ui.pal.text_dim, cap.c_str());
    }
    float yb = g.p1.y + g.pad;
    if (!m.col_caption.empty()) {
        const ImVec2 panel_max(g.pos.x + g.size.x, g.pos.y + g.size.y);
        const ImVec4 clip(g.pos.x, g.pos.y, std::max(panel_max.x, g.pos.x + 1), panel_max.y);
        const ImVec2 ts = text_size(small, m.col_caption);
        dl->AddText(small, small->FontSize, ImVec2(std::round(std::max(g.p0.x, (g.p0.x + g.p1.x - ts.x) * 0.5f)), yb),
                    ui.pal.text_dim, m.col_caption.c_str(), nullptr, 0.f, &clip);
        yb += line_h(small) + g.pad;
    }
    return yb;
}

void draw_colorbar(UiContext& ui, const MatrixSpec& m, const Grid& g, float yb) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* small = ui.fonts->small;
    const float bar_h = ui.px(10);
    HeatmapDraw d;
    d.data = m.parts.front().tex;
    d.colorbar = true;
    d.colormap = m.colormap;
    d.lo = m.lo;
    d.hi = m.hi;
    const float bar_x1 = std::max(g.p1.x, g.p0.x + text_size(small, format_value(m.lo, 2)).x +
                                              text_size(small, format_value(m.hi, 2)).x + ui.px(12));
    d.x0 = g.p0.x, d.x1 = bar_x1, d.y0 = yb, d.y1 = yb + bar_h;
    if (d.data && d.data->id) add_heatmap(dl, *ui.renderer, d);
    dl->AddRect(ImVec2(g.p0.x - 1, yb - 1), ImVec2(bar_x1 + 1, yb + bar_h + 1), ui.pal.frame);
    const float ty = yb + bar_h + g.pad * 0.5f;
    const std::string lo = format_value(m.lo, 2), hi = format_value(m.hi, 2);
    const ImVec2 lo_s = text_size(small, lo), hi_s = text_size(small, hi);
    dl->AddText(small, small->FontSize, ImVec2(g.p0.x, ty), ui.pal.text_dim, lo.c_str());
    dl->AddText(small, small->FontSize, ImVec2(bar_x1 - hi_s.x, ty), ui.pal.text_dim, hi.c_str());
    const std::string mid = format_value(0.5f * (m.lo + m.hi), 2);
    const ImVec2 mid_s = text_size(small, mid);
    if (bar_x1 - g.p0.x > lo_s.x + hi_s.x + mid_s.x + ui.scaled(16))
        dl->AddText(small, small->FontSize, ImVec2(std::round((g.p0.x + bar_x1 - mid_s.x) * 0.5f), ty), ui.pal.text_dim, mid.c_str());
    if (ui.layout)
        ui.layout->push_back(LayoutItem{"colorbar", m.name, m.head, g.p0.x, yb, bar_x1 - g.p0.x, bar_h, 0, 0, 0, 0, 0, 0, -1, 0});
}

} // namespace attnviz
