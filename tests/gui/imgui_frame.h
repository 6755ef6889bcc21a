// imgui_frame.h: a real ImGui frame without a window or GL (patterns are drawn without
// textures), for tests that click the panels: the fonts, the dark theme and a UiContext
// that records the layout, then frames that draw what the test asks for.
#pragma once
#include "app_state.h"
#include "theme.h"
#include "ui_context.h"
#include <imgui.h>
#include <string>
#include <vector>

namespace attnviz_gui_test {

struct ImGuiFrame {
    ImGuiContext* ctx = nullptr;
    attnviz::Fonts fonts;
    attnviz::UiContext ui;
    std::vector<attnviz::LayoutItem> layout;

    explicit ImGuiFrame(float scale = 1) {
        ctx = ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.DisplaySize = ImVec2(1280, 720);
        io.DeltaTime = 1.f / 60;
        io.IniFilename = nullptr;
        fonts = attnviz::load_fonts(scale);
        unsigned char* px = nullptr;
        int w = 0, h = 0;
        io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);
        attnviz::apply_theme(attnviz::Theme::dark, scale);
        ui.fonts = &fonts;
        ui.pal = attnviz::make_palette(attnviz::Theme::dark, attnviz::PaletteKind::standard);
        ui.scale = scale;
        ui.layout = &layout;
    }
    ~ImGuiFrame() { ImGui::DestroyContext(ctx); }
    ImGuiFrame(const ImGuiFrame&) = delete;
    ImGuiFrame& operator=(const ImGuiFrame&) = delete;

    // One frame with the mouse at `mouse` and button 0 `down`: `before` runs after NewFrame
    // (the keys), `draw` inside one full-screen window whose layout it records.
    template <class Before, class Draw>
    void frame(ImVec2 mouse, bool down, Before before, Draw draw) {
        ImGuiIO& io = ImGui::GetIO();
        io.MousePos = mouse;
        io.MouseDown[0] = down;
        ImGui::NewFrame();
        before();
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(io.DisplaySize);
        ImGui::Begin("view", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove);
        layout.clear();
        draw();
        ImGui::End();
        ImGui::Render();
    }
    template <class Draw>
    void frame(ImVec2 mouse, bool down, Draw draw) {
        frame(mouse, down, [] {}, draw);
    }
    const attnviz::LayoutItem* find(const std::string& kind, const std::string& name) const {
        for (const attnviz::LayoutItem& it : layout)
            if (it.kind == kind && it.name == name) return &it;
        return nullptr;
    }
};

} // namespace attnviz_gui_test
