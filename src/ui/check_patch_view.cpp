// check_patch_view.cpp: the check view's question 6, "Which head carries the copied token?":
// its choices, Show me (question 4's induction model, patched head by head, check_patch.h),
// the heads' table as a heat map with the sequences and the sentence, and the answer.
#include "check_questions.h"
#include "check_view.h"
#include "model_view.h"
#include "train_view_state.h"
#include "views.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

void patch_demo(AppState& s, UiContext& ui) {
    if (!s.train || !s.train->patch_demo.asked) return;
    const PatchDemo& d = s.train->patch_demo;
    if (!d.computed) {
        const AblationDemo& a = s.train->ablation_demo;
        if (a.session)
            ImGui::TextDisabled("training the induction model, step %lld of %lld", (long long)a.status.step, (long long)a.steps);
        else
            ImGui::TextDisabled("trained; patching each head…");
        return;
    }
    const ModelConfig& c = d.model->config;
    ImGui::TextWrapped("Clean:      %s   → %s", sequence_text(c, d.clean).c_str(), sequence_text(c, {c.bos(), d.answer}).c_str());
    ImGui::TextWrapped("Corrupted:  %s   (its first copy ends in %s)", sequence_text(c, d.corrupt).c_str(),
                       sequence_text(c, {c.bos(), d.wrong}).c_str());
    if (!d.heads.empty()) {
        std::vector<std::string> cols;
        for (int h = 0; h < c.n_head; ++h) cols.push_back("h" + std::to_string(h));
        // The demo's heat map: cells to click, room for the layers' labels left of them and for
        // the title and the heads' ticks around them, and at least as wide as its sentence's start.
        constexpr float cell_px = 56, labels_w = 40, title_ticks_h = 16, min_w = 330;
        const float cell = ui.px(cell_px);
        const ImVec2 p0 = ImGui::GetCursorScreenPos();
        const float w = cell * float(c.n_head) + ui.px(labels_w);
        const float h = cell * float(c.n_layer) + ui.fonts->heading->FontSize + ui.fonts->small->FontSize + ui.px(title_ticks_h);
        float range = 1;
        for (const auto& row : d.heads)
            for (float v : row) range = std::max(range, std::abs(v));
        // As wide as its title at least: the heat map cuts a title to its own width.
        const char* title = "each head's output patched in (hook_z)";
        const ImFont* font = ui.fonts->heading;
        const float title_w = font->CalcTextSizeA(font->FontSize, FLT_MAX, 0, title).x + ui.label_gap();
        const int clicked = draw_patch_heatmap(s, ui, d.heads, cols, title, "check_patch_heads", p0,
                                               ImVec2(p0.x + std::max({w, title_w, ui.px(min_w)}), p0.y + h), range);
        if (clicked >= 0) open_in_scores(s, clicked / c.n_head, clicked % c.n_head);
        ImGui::Dummy(ImVec2(w, h + 4));
    }
    ImGui::TextWrapped("%s", d.sentence.c_str());
    if (ui.layout) {
        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        LayoutItem it;
        it.kind = "check_patch_sentence", it.name = d.sentence, it.x = a.x, it.y = a.y, it.w = b.x - a.x, it.h = b.y - a.y;
        it.position = d.best_layer, it.head = d.best_head;
        it.value = d.heads.empty() ? 0.f : d.heads[size_t(d.best_layer)][size_t(d.best_head)];
        ui.layout->push_back(it);
    }
    if (ImGui::SmallButton("Open in the Patching panel")) open_patch_demo(s);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The model on the clean sequence in the Model view, patched there with every table.");
}

} // namespace

void patch_question(AppState& s, UiContext& ui) {
    ImGui::Spacing();
    ImGui::Spacing();
    if (s.train && s.train->patch_demo.scroll && s.train->patch_demo.computed) { // its numbers are in: into sight
        scroll_here_into_sight();
        s.train->patch_demo.scroll = false;
    }
    heading(ui, check_questions()[5].text);
    choices(s, ui, 5);
    if (show_me_button("Show me##6", nullptr,
                       "patch each head of the trained induction model from a clean repeat into a corrupted one (Alt+7)"))
        show_me(s, 6);
    patch_demo(s, ui);
    answer(s, 5,
           "An induction head in layer 1. Patch one head's output from the clean run (the segment repeated) into the "
           "corrupted run (the first copy's last letter changed) and measure how much of the logit difference comes back: "
           "the induction heads bring back most of it, since they read the letter after the earlier copy and write it "
           "toward the answer. Layer 0's previous-token heads only tell them where to look.");
}

} // namespace attnviz
