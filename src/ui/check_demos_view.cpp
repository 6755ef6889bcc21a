// check_demos_view.cpp: the check view's questions 4 (ablation) and 5 (the KV cache), each
// with the demonstration its "Show me" runs (check_view.cpp draws the others around them).
#include "check_questions.h"
#include "check_view.h"
#include "format.h"
#include "matrix_panel.h"
#include "train_view.h"
#include "train_view_state.h"
#include "views.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

// Question 4: the induction model before, with layer 0's previous-token heads ablated, and
// restored: per state its next-token accuracy and layer 1's induction heads (pattern and
// score on repeated sequences), then the sentence built from them.
void ablation_demo(AppState& s, UiContext& ui) {
    if (!s.train || !s.train->ablation_demo.asked()) return;
    const AblationDemo& d = s.train->ablation_demo;
    if (!d.computed) {
        if (d.session)
            ImGui::TextDisabled("training the induction model, step %lld of %lld", (long long)d.status.step, (long long)d.steps);
        else
            ImGui::TextDisabled("trained; ablating layer 0's previous-token heads…");
        return;
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const float gap = ui.box_gap(), line = f->FontSize + 2;
    const float avail = ImGui::GetContentRegionAvail().x;
    const int N = int(d.picture.probe.size());
    const int n = int(d.induction_heads.size());
    // One row per state: its name and accuracy, then each induction head's pattern with its
    // score beside it. Patterns small enough that the three rows and the sentence fit the
    // view once it has scrolled here.
    const float title_w = std::max(text_size(f, "restored").x, text_size(f, "accuracy 0.00").x) + gap;
    const float label_w = text_size(f, "L1 h0").x + gap;
    const float text_h = 6 * ImGui::GetFrameHeightWithSpacing() + ImGui::CalcTextSize(d.sentence.c_str(), nullptr, false, avail).y +
                         6 * ImGui::GetStyle().ItemSpacing.y;
    const float view_h = ImGui::GetWindowHeight() - ImGui::GetFrameHeightWithSpacing();
    const float row_room = std::floor((view_h - text_h) / 3 - gap);
    const float cell = std::max(2.f, std::min({std::floor((avail - title_w - float(n) * (label_w + 2 * gap)) / float(n * N)),
                                               std::floor(row_room / float(N)), ui.small_cell()}));
    const float side = cell * float(N), row_h = std::max(side, 2 * line);
    std::string heads;
    for (size_t i = 0; i < d.prev_heads.size(); ++i) heads += (i ? ", h" : "h") + std::to_string(d.prev_heads[i]);
    ImGui::TextWrapped("The induction model (V = %d, step %lld), layer 1's induction heads on the probe; ablated: layer 0's %s %s (zero).",
                       d.picture.model->config.vocab, (long long)d.picture.step,
                       d.prev_heads.size() > 1 ? "previous-token heads" : "previous-token head", heads.empty() ? "none" : heads.c_str());
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    for (int k = 0; k < 3; ++k) {
        const AblationDemoState& st = d.states[k];
        const float y0 = p0.y + float(k) * (row_h + gap);
        double acc = 0;
        for (const auto& [key, v] : st.metrics.accuracy)
            if (key == "next") acc = v;
        const ImU32 colour = k == 1 ? ui.pal.warning : ui.pal.text;
        const std::string acc_text = "accuracy " + format_with(acc, "%.2f");
        dl->AddText(f, f->FontSize, ImVec2(p0.x, y0), colour, st.name.c_str());
        dl->AddText(f, f->FontSize, ImVec2(p0.x, y0 + line), colour, acc_text.c_str());
        if (ui.layout) {
            LayoutItem it;
            it.kind = "check_ablation_accuracy", it.name = st.name, it.position = k, it.value = float(acc);
            const ImVec2 ts = text_size(f, acc_text);
            it.x = p0.x, it.y = y0 + line, it.w = ts.x, it.h = ts.y;
            ui.layout->push_back(it);
        }
        for (int i = 0; i < n; ++i) {
            const HeadView& hv = st.heads[size_t(i)];
            const ImVec2 at(p0.x + title_w + float(i) * (side + label_w + 2 * gap), y0);
            draw_head_pattern(ui, dl, hv, d.picture, at, cell, false);
            if (k == 1) // still computed, but fed no previous-token output: its stripe is what is lost
                dl->AddRect(ImVec2(at.x - 2, at.y - 2), ImVec2(at.x + side + 2, at.y + side + 2), ui.pal.warning, 0, 0, 2);
            const std::string name = "L1 h" + std::to_string(hv.head), score = "ind " + format_with(hv.induction, "%.2f");
            dl->AddText(f, f->FontSize, ImVec2(at.x + side + gap, at.y), colour, name.c_str());
            dl->AddText(f, f->FontSize, ImVec2(at.x + side + gap, at.y + line), colour, score.c_str());
            if (ui.layout && ImGui::IsRectVisible(at, ImVec2(at.x + side, at.y + side))) {
                LayoutItem it;
                it.kind = "check_ablation_head", it.name = st.name, it.head = hv.head, it.position = k, it.value = hv.induction;
                it.x = at.x, it.y = at.y, it.w = it.h = side;
                ui.layout->push_back(it);
            }
        }
    }
    const float bottom = p0.y + 3 * row_h + 2 * gap;
    ImGui::Dummy(ImVec2(avail, bottom - p0.y + 4));
    recorded_text(ui, d.sentence, "check_ablation_sentence", d.sentence, -1, 0, ui.pal.text);
    if (ImGui::SmallButton("See it in the Model view")) open_ablation_demo(s);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The model on its probe, layer 0's previous-token heads ablated; restore them there.");
}

// Question 5: a few tokens with the cache and by full recomputes (generate_state.h).
void generate_demo(AppState& s, UiContext& ui) {
    const GenerateDemo& d = s.generate.demo;
    if (!d.asked) return;
    if (!d.computed) {
        ImGui::TextDisabled("generating…");
        return;
    }
    if (!d.why_not.empty()) {
        recorded_text(ui, d.why_not, "check_generate_sentence", d.why_not, -1, 0, ui.pal.warning);
        return;
    }
    if (!d.lesson) {
        std::string cached, full;
        for (int t : d.cached_tokens) cached += (cached.empty() ? "" : " ") + model_token_label(s, t);
        for (int t : d.full_tokens) full += (full.empty() ? "" : " ") + model_token_label(s, t);
        ImGui::Text("with the cache:    %s", cached.c_str());
        ImGui::Text("full recompute:    %s", full.c_str());
    }
    recorded_text(ui, "max |Δ| of the logits: " + format_diff(float(d.max_abs_logits)), "check_generate_diff", "logits", d.steps,
                  float(d.max_abs_logits), d.max_abs_logits == 0 ? ui.pal.exact_zero : ui.pal.text);
    recorded_text(ui, d.sentence, "check_generate_sentence", d.sentence, -1, 0, ui.pal.text);
    if (ImGui::SmallButton("Step it yourself in the Generate view")) s.screen.view = View::generate;
}

} // namespace

// Question 4: what a head is for; trains the induction model and ablates its heads.
void ablation_question(AppState& s, UiContext& ui) {
    // The demonstration brings its question into sight (at the start, and when its numbers are
    // in); a short view (text size 2 at 720 pixels) starts under the question, so that the
    // sentence fits too.
    auto scroll_to_demo = [&] {
        if (!s.train || !s.train->ablation_demo.scroll || !s.train->ablation_demo.asked()) return;
        scroll_here_into_sight();
        s.train->ablation_demo.scroll = false;
    };
    constexpr float short_view_h = 450; // shorter: the demo is not scrolled into sight (it would hide the question)
    const bool short_view = ImGui::GetWindowHeight() < ui.scaled(short_view_h);
    if (!short_view) scroll_to_demo();
    heading(ui, check_questions()[3].text);
    choices(s, ui, 3);
    if (short_view) scroll_to_demo();
    if (show_me_button("Show me##4", "Alt+5: train the 2-layer induction model, then ablate layer 0's previous-token heads",
                       "train the induction model, ablate its previous-token heads, restore them (Alt+5)"))
        show_me(s, 4);
    ablation_demo(s, ui);
    answer(s, 3,
           "Ablate it: replace the head's output by zero (or its mean) and run the model again. A pattern says where a "
           "head looks; the change in the loss, the accuracy and the other heads' scores says what it is for. An "
           "induction head copies the token after an earlier copy of the current one, and finds that copy only through "
           "a previous-token head in the layer before: ablate the previous-token head and the induction head's stripe and "
           "the accuracy go, restore it and they come back.");
}

// Question 5: why a model can keep the keys and values of earlier tokens.
void generate_question(AppState& s, UiContext& ui) {
    if (s.generate.demo.scroll && s.generate.demo.computed) { // its demonstration's numbers are in: into sight
        scroll_here_into_sight();
        s.generate.demo.scroll = false;
    }
    heading(ui, check_questions()[4].text);
    choices(s, ui, 4);
    if (show_me_button("Show me##5", "Alt+6: generate a few tokens with the KV cache and by full recomputes",
                       "generate with and without the KV cache and compare (Alt+6)"))
        show_me(s, 5);
    generate_demo(s, ui);
    answer(s, 4,
           "Under the causal mask no position looks ahead, so a new token changes nothing about the positions before it: "
           "in every layer their keys and values are what they were. A model that writes on keeps them (the KV cache) and "
           "computes only the new position's q, k and v and its one row of scores. The result is the full forward's, bit "
           "for bit on the reference kernel, and a step costs one row of every product instead of T rows.");
}

} // namespace attnviz
