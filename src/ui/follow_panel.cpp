// follow_panel.cpp: "Follow the teacher" (follow.h). In the teacher's window, the side
// panel's Start / Stop switch and the addresses (above the Session section), and the large
// address with its QR code over the view, readable from the back of the room. In a page the
// teacher's window served, the Follow / Explore on my own / Back to the teacher switch, at
// the top of the side panel. Drawing only: the loop serves,
// connects and applies.
#include "views.h"
#include <algorithm>
#include <cmath>
#include <imgui.h>

namespace attnviz {

namespace {

// The QR code at `p0`, `side` pixels square with its white quiet zone (4 modules each side).
void draw_qr(ImDrawList* dl, const FollowStatus& f, ImVec2 p0, float side) {
    if (f.qr_size <= 0) return;
    const int n = f.qr_size + 8;
    const float m = std::floor(side / float(n));
    if (m < 1) return;
    const float full = m * float(n);
    dl->AddRectFilled(p0, ImVec2(p0.x + full, p0.y + full), IM_COL32(255, 255, 255, 255));
    for (int y = 0; y < f.qr_size; ++y)
        for (int x = 0; x < f.qr_size; ++x)
            if (f.qr[size_t(y) * size_t(f.qr_size) + size_t(x)]) {
                const ImVec2 a(p0.x + m * float(x + 4), p0.y + m * float(y + 4));
                dl->AddRectFilled(a, ImVec2(a.x + m, a.y + m), IM_COL32(0, 0, 0, 255));
            }
}

// The side panel's section heading, as controls.cpp draws its own.
void section_title(UiContext& ui) {
    ImGui::Spacing();
    ImGui::PushFont(ui.fonts->body);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "%s", "Follow the teacher");
    ImGui::PopFont();
    ImGui::Separator();
}

void wrapped_dim(const char* text) {
    ImGui::PushTextWrapPos(0.f);
    ImGui::TextDisabled("%s", text);
    ImGui::PopTextWrapPos();
}

} // namespace

void draw_follow_section(AppState& s, UiContext& ui) {
    FollowStatus& f = s.follow;
    if (!f.page) return;
    section_title(ui);
    const float w = ImGui::GetContentRegionAvail().x;
    const int mode = f.mode == FollowMode::follow ? 0 : 1;
    if (ImGui::RadioButton("Follow", mode == 0) && mode != 0) f.back_request = true;
    if (ImGui::RadioButton("Explore on my own", mode == 1)) f.mode = FollowMode::explore;
    ImGui::BeginDisabled(f.mode == FollowMode::follow);
    if (ImGui::Button("Back to the teacher", ImVec2(w, 0))) f.back_request = true;
    ImGui::EndDisabled();
    wrapped_dim(f.note.c_str());
}

void draw_serve_section(AppState& s, UiContext& ui) {
    FollowStatus& f = s.follow;
    if (!f.can_serve) return;
    section_title(ui);
    const float w = ImGui::GetContentRegionAvail().x;
    if (ImGui::Button(f.serving ? "Stop serving" : "Serve to the class", ImVec2(w, 0))) f.toggle_request = true;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Students open the address on their laptops and their pages follow this window live.");
    if (!f.error.empty()) {
        ImGui::PushTextWrapPos(0.f);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.warning), "%s", f.error.c_str());
        ImGui::PopTextWrapPos();
    }
    if (!f.serving) return;
    for (const std::string& u : f.urls) ImGui::TextUnformatted(u.c_str());
    if (!f.code.empty()) {
        ImGui::Text("Class code: %s", f.code.c_str());
        ImGui::SameLine();
        if (ImGui::SmallButton("New code")) f.new_code_request = true;
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("A new code for the class: every page that follows now is dropped and asks for it.");
    } else {
        wrapped_dim("No class code (--no-code): anyone who reaches the address follows.");
    }
    ImGui::TextDisabled("%d %s following", f.clients, f.clients == 1 ? "page" : "pages");
    if (const std::string why = refused_pages_text(f); !why.empty()) {
        ImGui::PushTextWrapPos(0.f);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.warning), "%s", why.c_str());
        ImGui::PopTextWrapPos();
    }
    constexpr float max_qr = 160; // the QR code in the side panel at most: the large one is an overlay
    draw_qr(ImGui::GetWindowDrawList(), f, ImGui::GetCursorScreenPos(), std::min(w, ui.px(max_qr)));
    const int n = f.qr_size + 8;
    const float m = std::floor(std::min(w, ui.px(max_qr)) / float(n));
    ImGui::Dummy(ImVec2(m * float(n), m * float(n)));
    ImGui::Checkbox("show the address large", &f.show_large);
}

void draw_follow_overlay(AppState& s, UiContext& ui) {
    FollowStatus& f = s.follow;
    if (!f.serving || !f.show_large || f.urls.empty()) return;
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const float side = std::floor(std::min(vp->Size.x * 0.5f, vp->Size.y * 0.55f));
    constexpr float min_address_px = 28; // the address's font in a small window, still read from the back
    const float big = std::max(std::round(vp->Size.y / 12.f), ui.px(min_address_px));
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + vp->Size.x / 2, vp->Pos.y + vp->Size.y / 2), ImGuiCond_Always,
                            ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowBgAlpha(0.97f);
    ImGui::Begin("Follow the teacher", &f.show_large,
                 ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoCollapse);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImGui::PushFont(ui.fonts->body);
    ImGui::TextUnformatted(f.code.empty() ? "Open this on your laptop, or scan the QR code:"
                                          : "Open this on your laptop and enter the code, or scan the QR code:");
    ImGui::PopFont();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    float widest = side;
    for (const std::string& u : f.urls) {
        const std::string shown = u.substr(7, u.size() - 8); // without http:// and the last /
        const ImVec2 size = ui.fonts->address->CalcTextSizeA(big, 1e9f, 0.f, shown.c_str());
        widest = std::max(widest, size.x);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        dl->AddText(ui.fonts->address, big, p, text, shown.c_str());
        ImGui::Dummy(ImVec2(size.x, size.y));
    }
    if (!f.code.empty()) { // as large as the address: read from the back of the room
        const std::string shown = "Code: " + f.code;
        const ImVec2 size = ui.fonts->address->CalcTextSizeA(big, 1e9f, 0.f, shown.c_str());
        widest = std::max(widest, size.x);
        dl->AddText(ui.fonts->address, big, ImGui::GetCursorScreenPos(), ImGui::GetColorU32(ImGuiCol_Text), shown.c_str());
        ImGui::Dummy(ImVec2(size.x, size.y));
    }
    const ImVec2 q = ImGui::GetCursorScreenPos();
    draw_qr(dl, f, ImVec2(q.x + std::floor((widest - side) / 2), q.y), side);
    ImGui::Dummy(ImVec2(widest, side));
    ImGui::PushFont(ui.fonts->body);
    ImGui::Text("%d %s following", f.clients, f.clients == 1 ? "page" : "pages");
    ImGui::SameLine();
    if (ImGui::SmallButton("Hide")) f.show_large = false;
    ImGui::PopFont();
    ImGui::End();
}

} // namespace attnviz
