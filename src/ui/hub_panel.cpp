// hub_panel.cpp: the side panel's Get GPT-2 section (hub_get_state.h does the work): the
// GPT-2 family with each model's size and whether the cache holds it, one download at a time
// with its bar and Cancel, and its outcome. The page in a browser says why it cannot download.
#include "hub_get_state.h"
#include "text_fit.h"
#include "views.h"
#include "widgets.h"
#include <cstdio>

namespace attnviz {

namespace {

std::string size_text(int64_t bytes) {
    char buf[32];
    if (bytes >= 1'000'000'000) std::snprintf(buf, sizeof buf, "%.1f GB", double(bytes) / 1e9);
    else std::snprintf(buf, sizeof buf, "%.0f MB", double(bytes) / 1e6);
    return buf;
}

// One row: the button (download, or open when cached) and what the cache holds.
void draw_choice(AppState& s, int i) {
    const HubChoice& c = hub_choices()[size_t(i)];
    const bool cached = i < int(s.hub.cached.size()) && s.hub.cached[size_t(i)];
    const std::string button = std::string(cached ? "Open " : "Get ") + c.id + "##hub" + std::to_string(i);
    ImGui::BeginDisabled(hub_getting(s) || model_loading(s));
    if (ImGui::Button(button.c_str(), ImVec2(-1, 0))) {
        std::string error;
        request_hub_get(s, i, error);
    }
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s from the Hugging Face Hub into its shared cache (the folder Python's transformers "
                          "uses too), then opened in every view; attnviz get %s does the same from a terminal.",
                          c.label, c.id);
    wrapped_text(std::string(c.label) + ", " + size_text(c.bytes) + (cached ? ": in the cache" : ": to download"), true);
}

} // namespace

void draw_get_gpt2_section(AppState& s, UiContext& ui) {
    ImGui::Spacing();
    ImGui::PushFont(ui.fonts->body);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "%s", "Get GPT-2");
    ImGui::PopFont();
    ImGui::Separator();
    if (!s.hub.get) {
        wrapped_text("Getting GPT-2 needs the attnviz app on a computer: a page in the browser cannot download a model.", true);
        return;
    }
    if (!s.hub.looked) refresh_hub_cached(s);
    // The download under way, or its outcome, first: the list below it may scroll out of sight.
    if (hub_getting(s)) {
        const HubProgress& p = s.hub.progress;
        const float done = p.all_total > 0 ? float(double(p.all_done) / double(p.all_total)) : 0.f;
        char overlay[32];
        std::snprintf(overlay, sizeof overlay, "%.0f %%", 100.0 * done);
        ImGui::ProgressBar(done, ImVec2(-1, 0), overlay);
        wrapped_text(std::string("Getting ") + hub_choices()[size_t(s.hub.choice)].id + ": " + hub_progress_text(p), false);
        if (ImGui::Button("Cancel##hub", ImVec2(-1, 0))) cancel_hub_get(s);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Stops the download; what has arrived stays in the cache and the next Get goes on from it.");
    } else if (!s.hub.message.empty()) {
        if (s.hub.failed) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ui.pal.warning));
            wrapped_text(s.hub.message, false);
            ImGui::PopStyleColor();
        } else {
            wrapped_text(s.hub.message, true);
        }
    }
    for (int i = 0; i < int(hub_choices().size()); ++i) draw_choice(s, i);
}

} // namespace attnviz
