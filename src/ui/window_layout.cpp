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
    const std::string head = s.shown.input ? (mode(s) == Mode::gpt_model ? std::string("GPT") : std::string("trained ") + to_string(s.shown.input->model->config.task)) + " · L = " +
                                             std::to_string(s.shown.input->model->config.n_layer)
                                       : "seed " + std::to_string(s.config.seed);
    const std::string info = head + " · C = " + std::to_string(s.config.n_embd) +
                             " · H = " + std::to_string(s.config.n_head) + " · T = " + std::to_string(s.config.seq_len) +
                             " · " + to_string(s.config.mask) + " mask";
    const float tw = text_size(ui.fonts->body, info).x;
    if (s.screen.view != View::train && x_end - tw > x + 10) { // the Train view names its own run
        ImGui::SetCursorScreenPos(ImVec2(x_end - tw, y));
        ImGui::AlignTextToFramePadding();
        ImGui::TextDisabled("%s", info.c_str());
    }
    return y + ImGui::GetFrameHeight();
}

} // namespace attnviz
