// web_probe.cpp: what the browser test (tests/web) asks the page, in the web build only.
// Dear ImGui's test-engine hooks (IMGUI_ENABLE_TEST_ENGINE, third_party/web.cmake) report
// every widget's rectangle and label as it is drawn; the test finds a widget by its label
// ("##strength") and drags it with the mouse like a user.
#include "web_platform.h"
#include <cstdio>
#include <emscripten.h>
#include <imgui.h>
#include <imgui_internal.h>
#include <string>
#include <unordered_map>

namespace {

std::unordered_map<ImGuiID, ImRect> item_rects;    // by id, as last drawn
std::unordered_map<std::string, ImRect> by_label;  // by label, as last drawn
std::string answer;                                // the text the last call returned

} // namespace

void ImGuiTestEngineHook_ItemAdd(ImGuiContext*, const ImRect& bb, ImGuiID id) { item_rects[id] = bb; }
void ImGuiTestEngineHook_ItemInfo(ImGuiContext*, ImGuiID id, const char* label, ImGuiItemStatusFlags) {
    auto it = item_rects.find(id);
    if (label && it != item_rects.end()) by_label[label] = it->second;
}
void ImGuiTestEngineHook_Log(ImGuiContext*, const char*, ...) {}
const char* ImGuiTestEngine_FindItemDebugLabel(ImGuiContext*, ImGuiID) { return nullptr; }

namespace attnviz {

void web_probe_frame() {
    if (ImGuiContext* g = ImGui::GetCurrentContext()) g->TestEngineHookItems = true;
}

} // namespace attnviz

// The widget with this label as last drawn: "x y w h" in canvas pixels, or "" if none.
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_web_widget(const char* label) {
    answer.clear();
    auto it = by_label.find(label ? label : "");
    if (it != by_label.end()) {
        char text[96];
        const ImRect& r = it->second;
        std::snprintf(text, sizeof text, "%.1f %.1f %.1f %.1f", r.Min.x, r.Min.y, r.GetWidth(), r.GetHeight());
        answer = text;
    }
    return answer.c_str();
}
