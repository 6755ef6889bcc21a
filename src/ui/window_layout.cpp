// window_layout.cpp: see window_layout.h.
#include "window_layout.h"
#include "matrix_panel.h"
#include <algorithm>
#include <cmath>
#include <string>

namespace attnviz {

namespace {

float panel_width_shown(float W, float scale) {
    // Never more than 40% of the window, whatever the text size.
    return std::round(std::min(std::clamp(W * 0.2f, 232 * scale, 300 * scale), W * 0.4f));
}

// Pages refused for --per-address, in the warning colour right-aligned on the tabs' last row,
// or on a row of its own under them (the side panel's sentence is below the fold at 1280 x
// 800); the whole sentence on hover. Returns the y of the row it drew on, or -1.
float refused_pages(const AppState& s, UiContext& ui, float x0, float x, float y, float x_end) {
    if (!s.follow.serving || s.follow.refused_address == 0) return -1;
    const std::string label = std::to_string(s.follow.refused_address) +
                              (s.follow.refused_address == 1 ? " page refused (--per-address)" : " pages refused (--per-address)");
    float at = x_end - text_size(ui.fonts->body, label).x;
    if (at <= x + 10) { // not beside the tabs: a row of its own
        at = x0;
        y += ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.y;
    }
    ImGui::SetCursorScreenPos(ImVec2(at, y));
    ImGui::AlignTextToFramePadding();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.warning), "%s", label.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", refused_pages_text(s.follow).c_str());
    if (ui.layout) {
        LayoutItem it;
        it.kind = "refused_pages", it.name = label, it.value = float(s.follow.refused_address);
        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        it.x = a.x, it.y = a.y, it.w = b.x - a.x, it.h = b.y - a.y;
        ui.layout->push_back(it);
    }
    return y;
}

} // namespace

float side_panel_width(const AppState& s, float W, float scale) {
    switch (s.screen.side_panel) {
    case PanelMode::shown: return panel_width_shown(W, scale);
    case PanelMode::hidden: return 0;
    case PanelMode::automatic: break;
    }
    // The Train view has its own settings; the lesson's side panel would only take its room.
    if (s.screen.view == View::train) return 0;
    const float w = panel_width_shown(W, scale);
    return W - w >= 640 * scale ? w : 0;
}

float draw_view_tabs(AppState& s, UiContext& ui, ImVec2 p0, float x_end) {
    const char* full[view_count] = {"1  Shape walk", "2  QKV split", "3  Scores", "4  Causality", "5  Check yourself", "6  Train", "7  Model", "8  Generate"};
    const char* short_names[view_count] = {"1 Walk", "2 QKV", "3 Scores", "4 Causality", "5 Check", "6 Train", "7 Model", "8 Gen"};
    const ImGuiStyle& st = ImGui::GetStyle();
    auto row_width = [&](const char* const* names) {
        float w = 0;
        for (int v = 0; v < view_count; ++v) w += ImGui::CalcTextSize(names[v]).x + 2 * st.FramePadding.x + st.ItemSpacing.x;
        return w - st.ItemSpacing.x;
    };
    const float avail = x_end - p0.x - ImGui::GetFrameHeight() - st.ItemSpacing.x; // after the panel toggle
    const char* const* names = row_width(full) <= avail ? full : short_names;
    // The panel toggle (F2) sits before the tabs.
    float x = p0.x, y = p0.y;
    const float row_h = ImGui::GetFrameHeight() + st.ItemSpacing.y;
    ImGui::SetCursorScreenPos(ImVec2(x, y));
    if (ImGui::ArrowButton("##panel", s.screen.panel_visible ? ImGuiDir_Left : ImGuiDir_Right))
        s.screen.side_panel = s.screen.panel_visible ? PanelMode::hidden : PanelMode::shown;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip(s.screen.panel_visible ? "Hide the side panel (F2)" : "Show the side panel (F2)");
    x += ImGui::GetFrameHeight() + st.ItemSpacing.x;
    for (int v = 0; v < view_count; ++v) {
        const float w = ImGui::CalcTextSize(names[v]).x + 2 * st.FramePadding.x;
        if (x + w > x_end && x > p0.x) { // wrap onto the next row
            x = p0.x;
            y += row_h;
        }
        ImGui::SetCursorScreenPos(ImVec2(x, y));
        const bool on = int(s.screen.view) == v;
        if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(ui.pal.accent));
        if (on) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(text_over(ImGui::ColorConvertU32ToFloat4(ui.pal.accent))));
        if (ImGui::Button(names[v])) s.screen.view = View(v);
        if (on) ImGui::PopStyleColor(2);
        if (names == short_names && ImGui::IsItemHovered()) ImGui::SetTooltip("%s (key %d)", full[v] + 3, v + 1);
        x += w + st.ItemSpacing.x;
    }
    // The run's config, right-aligned on the last row when it fits.
    // A trained model has no seed of the lesson's: its task and blocks instead.
    const std::string info = source_summary(s) + " · C = " + std::to_string(s.config.applied.n_embd) +
                             " · H = " + std::to_string(s.config.applied.n_head) + " · T = " + std::to_string(s.config.applied.seq_len) +
                             " · " + to_string(s.config.applied.mask) + " mask";
    const float tw = text_size(ui.fonts->body, info).x;
    if (const float ry = refused_pages(s, ui, p0.x, x, y, x_end); ry >= 0) return ry + ImGui::GetFrameHeight();
    if (s.screen.view != View::train && x_end - tw > x + 10) { // the Train view names its own run
        ImGui::SetCursorScreenPos(ImVec2(x_end - tw, y));
        ImGui::AlignTextToFramePadding();
        ImGui::TextDisabled("%s", info.c_str());
    }
    return y + ImGui::GetFrameHeight();
}

} // namespace attnviz
