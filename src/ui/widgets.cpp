// widgets.cpp: see widgets.h.
#include "widgets.h"
#include <imgui.h>

namespace attnviz {

void section_heading(const UiContext& ui, const char* title) {
    ImGui::Spacing();
    ImGui::PushFont(ui.fonts->body);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "%s", title);
    ImGui::PopFont();
    ImGui::Separator();
}

void field_label(const char* label, float label_w) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(label);
    ImGui::SameLine(label_w);
    ImGui::SetNextItemWidth(-1);
}

void wrapped_text(const std::string& text, bool dim) {
    ImGui::PushTextWrapPos(0.f);
    if (dim) ImGui::TextDisabled("%s", text.c_str());
    else ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
}

void wrapped_text(const std::string& text, ImU32 colour) {
    ImGui::PushTextWrapPos(0.f);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colour));
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
}

float view_heading(const UiContext& ui, ImVec2 p, const std::string& text) {
    ImFont* hf = ui.fonts->heading;
    ImGui::GetWindowDrawList()->AddText(hf, hf->FontSize, p, ui.pal.text, text.c_str());
    return p.y + (hf->FontSize + ui.heading_gap()); // as y += height + gap
}

float shape_label(const UiContext& ui, ImVec2 p, float x1, const std::string& shapes, const char* after) {
    ImGui::SetCursorScreenPos(p);
    ImGui::PushTextWrapPos(x1 - ImGui::GetWindowPos().x); // wrap positions are window-local
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ui.pal.accent));
    ImGui::TextUnformatted(shapes.c_str());
    ImGui::PopStyleColor();
    if (after) ImGui::TextUnformatted(after);
    ImGui::PopTextWrapPos();
    return ImGui::GetCursorScreenPos().y;
}

float window_bar_height(const UiContext& ui) { return ImGui::GetFrameHeight() + ui.tight_gap(); }

float legend_height(const UiContext& ui) { return ui.fonts->body->FontSize + ui.px(10); }

ImVec2 legend_origin(const UiContext& ui, ImVec2 p0, ImVec2 p1) {
    return ImVec2(p0.x, p1.y - legend_height(ui) + ui.px(6));
}

} // namespace attnviz
