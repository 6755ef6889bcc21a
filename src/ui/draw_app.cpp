// draw_app.cpp: the whole window's layout - the side panel on the left (or hidden), the
// view's tabs, the view, the status line and the overlays - once per frame.
#include "format.h"
#include "inputs.h"
#include "text_fit.h"
#include "session_state.h"
#include "specs.h"
#include <imgui_stdlib.h>
#include "views.h"
#include "window_layout.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

void draw_app(AppState& s, UiContext& ui) {
    handle_keys(s);
    handle_layer_keys(s);
    // The positions' labels on every axis: a trained model's letters ("0 ^", "1 a", ...), else
    // the words given as input.
    ui.tokens = &position_words(s);
    ui.row_label_w = widest_position_label(ui.fonts->small, *ui.tokens);
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->Pos);
    ImGui::SetNextWindowSize(vp->Size);
    const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse;
    // No background: the frame is cleared to the same colour first, and a software renderer
    // (llvmpipe) would blend a full-window quad for nothing every frame.
    ImGui::Begin("attnviz", nullptr, fixed | ImGuiWindowFlags_NoBackground);
    const float W = vp->Size.x, Hh = vp->Size.y;
    const float panel_w = side_panel_width(s, W, ui.scale);
    s.screen.panel_visible = panel_w > 0;

    // Controls: a fixed child on the left (it scrolls if the window is short), unless hidden (F2).
    if (s.screen.panel_visible) {
        ImGui::SetCursorPos(ImVec2(0, 0));
        ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(ui.px(10), ui.px(8)));
        ImGui::BeginChild("controls", ImVec2(panel_w, Hh), false, ImGuiWindowFlags_AlwaysUseWindowPadding);
        draw_controls(s, ui);
        ImGui::EndChild();
        ImGui::PopStyleVar();
    }

    // The view: tabs on top, then the view in a child that clips it.
    const float margin = ui.px(12);
    const ImVec2 v0(vp->Pos.x + panel_w + margin, vp->Pos.y + ui.px(8));
    const float tabs_bottom = draw_view_tabs(s, ui, v0, vp->Pos.x + W - margin);
    float top = tabs_bottom + ui.px(10);
    top += draw_layer_strip(s, ui, ImVec2(v0.x, top), vp->Pos.x + W - margin - v0.x);
    const ImVec2 area0(v0.x, top), area1(vp->Pos.x + W - margin, vp->Pos.y + Hh - ui.px(6));
    // What Ctrl+P saves: the view with its margins, without the side panel and the tabs.
    s.screen.view_rect[0] = area0.x - margin, s.screen.view_rect[1] = area0.y - ui.px(6);
    s.screen.view_rect[2] = vp->Pos.x + W, s.screen.view_rect[3] = vp->Pos.y + Hh;
    ImGui::SetCursorScreenPos(area0);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
    ImGui::PushStyleColor(ImGuiCol_ChildBg, ImVec4(0, 0, 0, 0));
    ImGui::BeginChild("view", ImVec2(area1.x - area0.x, area1.y - area0.y), false,
                      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    if (s.ready) {
        switch (s.screen.view) {
        case View::walk: draw_walk_view(s, ui, area0, area1); break;
        case View::qkv: draw_qkv_view(s, ui, area0, area1); break;
        case View::scores: draw_scores_view(s, ui, area0, area1); break;
        case View::causality: draw_causality_view(s, ui, area0, area1); break;
        case View::check: draw_check_view(s, ui, area0, area1); break;
        case View::train: draw_train_view(s, ui, area0, area1); break;
        case View::model: draw_model_view(s, ui, area0, area1); break;
        case View::generate: draw_generate_view(s, ui, area0, area1); break;
        }
    }
    ImGui::EndChild();
    ImGui::PopStyleColor();
    ImGui::PopStyleVar();
    ImGui::End();
    draw_help_overlay(s, ui);
    draw_follow_overlay(s, ui);
}

} // namespace attnviz
