// view_chrome.cpp: what every view draws around its matrices - the colour legend, the head
// pager, the zoom and window bar.
#include "format.h"
#include "inputs.h"
#include "specs.h"
#include "session_state.h"
#include "train_view_state.h"
#include "views.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

// A small colour-bar sample drawn by the heatmap shader.
void mini_bar(UiContext& ui, ImDrawList* dl, ImVec2 a, ImVec2 b, Colormap m, float lo, float hi) {
    if (!ui.tex || ui.tex->x.id == 0) return;
    HeatmapDraw d;
    d.data = &ui.tex->x;
    d.colorbar = true;
    d.colormap = m;
    d.lo = lo, d.hi = hi;
    d.x0 = a.x, d.y0 = a.y, d.x1 = b.x, d.y1 = b.y;
    add_heatmap(dl, *ui.renderer, d);
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), ui.pal.frame);
}

} // namespace

float draw_legend(AppState& s, UiContext& ui, ImVec2 p0, float width, bool with_scores) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const float h = f->FontSize;
    const float sw = ui.px(34), gap = ui.px(6), big_gap = ui.px(16);
    float x = p0.x;
    const float y = p0.y;
    const ImVec4 clip(p0.x, p0.y - 2, p0.x + width, p0.y + h + 4);
    auto text = [&](const std::string& t, ImU32 c) {
        dl->AddText(f, f->FontSize, ImVec2(x, y), c, t.c_str(), nullptr, 0.f, &clip);
        x += text_size(f, t).x;
    };
    auto room = [&](float w) { return x + w <= p0.x + width; };
    const float swatch_w = h * 1.6f + gap;
    mini_bar(ui, dl, ImVec2(x, y + 2), ImVec2(x + sw, y + h - 2), Colormap::diverging, -1, 1);
    x += sw + gap;
    text(signed_words(ui.pal.colormaps), ui.pal.text_dim);
    x += big_gap;
    const std::string weights = "weights 0 … 1";
    if (room(sw + gap + text_size(f, weights).x)) {
        mini_bar(ui, dl, ImVec2(x, y + 2), ImVec2(x + sw, y + h - 2), Colormap::viridis, 0, 1);
        x += sw + gap;
        text(weights, ui.pal.text_dim);
        x += big_gap;
    }
    const std::string masked = "masked (−∞)", nan = "NaN";
    if (with_scores && room(2 * swatch_w + big_gap + text_size(f, masked + nan).x)) {
        draw_swatch(ui, dl, ImVec2(x, y), ImVec2(x + h * 1.6f, y + h), 1);
        x += swatch_w;
        text(masked, ui.pal.text_dim);
        x += big_gap;
        draw_swatch(ui, dl, ImVec2(x, y), ImVec2(x + h * 1.6f, y + h), 2);
        x += swatch_w;
        text(nan, ui.pal.text_dim);
        x += big_gap;
    }
    // The Generate view outlines its new row with the same frame.
    const std::string changed = s.screen.view == View::generate ? "the new row" : "changed by the perturbation";
    if (perturbed(s) && room(swatch_w + text_size(f, changed).x)) {
        dl->AddRect(ImVec2(x, y), ImVec2(x + h * 1.6f, y + h), IM_COL32(0, 0, 0, 255), 0, 0, 3.f);
        dl->AddRect(ImVec2(x + 2, y + 2), ImVec2(x + h * 1.6f - 2, y + h - 2), IM_COL32(240, 228, 66, 255), 0, 0, 2.f);
        x += swatch_w;
        text(changed, ui.pal.text_dim);
        x += big_gap;
    }
    const std::string ranges = s.screen.shared_ranges ? "colour ranges shared across heads" : "colour ranges per head";
    if (room(text_size(f, ranges).x)) text(ranges, ui.pal.text_dim);
    return h;
}

void draw_head_pager(AppState& s, UiContext& ui, ViewWindow& win, int shown, ImVec2 pos) {
    const int H = s.run.trace.H;
    ImGui::SetCursorScreenPos(pos);
    ImGui::BeginDisabled(win.head0 <= 0);
    if (ImGui::ArrowButton("##heads_prev", ImGuiDir_Left)) win.head0 = std::max(0, win.head0 - shown);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(win.head0 + shown >= H);
    if (ImGui::ArrowButton("##heads_next", ImGuiDir_Right)) win.head0 = std::min(H - shown, win.head0 + shown);
    ImGui::EndDisabled();
    ImGui::SameLine();
    const int last = std::min(H, win.head0 + shown) - 1;
    std::string t = shown == 1 ? "head " + std::to_string(win.head0) : "heads " + std::to_string(win.head0) + "–" + std::to_string(last);
    t += " of " + std::to_string(H);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(t.c_str());
}

void draw_window_bar(AppState& s, UiContext& ui, ViewWindow& win, ImVec2 pos, float width, bool windowed) {
    ImGui::SetCursorScreenPos(pos);
    ImGui::PushID(&win);
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("Zoom");
    ImGui::SameLine();
    if (ImGui::Button(" − ")) win.zoom = std::max(0.25f, win.zoom / 1.25f);
    ImGui::SameLine();
    if (ImGui::Button(" + ")) win.zoom = std::min(16.f, win.zoom * 1.25f);
    ImGui::SameLine();
    if (ImGui::Button("Fit")) {
        win.zoom = 1;
        win.row0 = win.key0 = win.chan0 = 0;
    }
    if (windowed) {
        ImGui::SameLine();
        const float start = ImGui::GetCursorScreenPos().x;
        const float left = pos.x + width - start;
        // Three labelled fields, or none when they do not fit in `width`.
        const float labels = ImGui::CalcTextSize("from row").x + ImGui::CalcTextSize("key").x +
                             ImGui::CalcTextSize("channel").x + 6 * ImGui::GetStyle().ItemSpacing.x;
        const float field = std::round(std::min(ui.scaled(70), (left - labels) / 3));
        const int T = s.config.applied.seq_len, C = 3 * s.config.applied.n_embd;
        if (field > ui.scaled(30)) {
            ImGui::TextDisabled("from row");
            ImGui::SameLine();
            ImGui::SetNextItemWidth(field);
            ImGui::DragInt("##row0", &win.row0, 0.25f, 0, T - 1);
            ImGui::SameLine();
            ImGui::TextDisabled("key");
            ImGui::SameLine();
            ImGui::SetNextItemWidth(field);
            ImGui::DragInt("##key0", &win.key0, 0.25f, 0, T - 1);
            ImGui::SameLine();
            ImGui::TextDisabled("channel");
            ImGui::SameLine();
            ImGui::SetNextItemWidth(field);
            ImGui::DragInt("##chan0", &win.chan0, 0.25f, 0, C - 1);
        }
        if (ImGui::IsItemHovered() || ImGui::IsItemActive())
            ImGui::SetTooltip("Wheel scrolls rows, Shift+wheel columns, Ctrl+wheel zooms; drag a heatmap to pan.");
    }
    ImGui::PopID();
}

} // namespace attnviz
