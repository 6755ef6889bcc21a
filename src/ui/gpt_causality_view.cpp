// gpt_causality_view.cpp: the causality view (key 4) for a whole GPT model. Replace the
// token at position p with another, and read, per layer and per position, how far the
// residual stream moved (max |Δ resid_post|), and per position how far the logits moved
// (max |Δ logits|): a layer x position table of the numbers recompute() measured
// (gpt_causality.h), every cell before p reading exactly 0.0 through all L layers.
#include "format.h"
#include "inputs.h"
#include "text_fit.h"
#include "matrix_panel.h"
#include "views.h"
#include "widgets.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <imgui_stdlib.h>

namespace attnviz {

namespace {

// A cell's text: "0.0" for an exact zero, 3 significant digits otherwise (every digit on hover).
std::string cell_text(float v) {
    if (v == 0.f) return "0.0";
    if (std::isnan(v)) return "NaN";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", double(v));
    return buf;
}

ImU32 mix(ImU32 a, ImU32 b, float t) {
    const ImVec4 x = ImGui::ColorConvertU32ToFloat4(a), y = ImGui::ColorConvertU32ToFloat4(b);
    return ImGui::ColorConvertFloat4ToU32(ImVec4(x.x + (y.x - x.x) * t, x.y + (y.y - x.y) * t, x.z + (y.z - x.z) * t, 1.f));
}

// p, the replacement (a word through the tokenizer or an id) and whether it is applied.
void draw_controls_row(AppState& s, UiContext& ui, ImVec2 pos, float width) {
    const int T = s.config.applied.seq_len;
    const std::vector<std::string>& words = position_words(s);
    ImGui::SetCursorScreenPos(pos);
    ImGui::PushID("gpt_causality");
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("position p");
    ImGui::SameLine();
    int p = s.p;
    std::string format = "%d";
    for (char ch : " " + position_word(words, p, 10)) format += ch == '%' ? std::string("%%") : std::string(1, ch);
    ImGui::SetNextItemWidth(std::round(std::min(ui.scaled(200), width * 0.22f)));
    if (ImGui::SliderInt("##p", &p, 0, std::max(T - 1, 0), format.c_str()) && p != s.p) request_perturbation(s, p, 1.f);
    ImGui::SameLine(0, ui.px(12));
    bool on = s.strength > 0;
    if (ImGui::Checkbox("replaced", &on)) request_perturbation(s, s.p, on ? 1.f : 0.f);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Off: the text as typed. On: token p replaced, every layer run again from p.");
    ImGui::SameLine(0, ui.px(12));
    ImGui::TextUnformatted("by");
    ImGui::SameLine();
    // The field takes what the row has left, beside its button.
    const float apply_w = ImGui::CalcTextSize("Apply").x + 2 * ImGui::GetStyle().FramePadding.x;
    const float rest = pos.x + width - ImGui::GetCursorScreenPos().x - apply_w - ImGui::GetStyle().ItemSpacing.x;
    ImGui::SetNextItemWidth(std::round(std::clamp(rest, ui.scaled(60), ui.scaled(200))));
    const bool tok = shown_model(s)->tokenizer != nullptr;
    const bool enter = ImGui::InputTextWithHint("##replace", tok ? "a word or an id" : "an id", &s.fields.replace_field,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(tok ? "A word that is one token through the tokenizer (type its leading space, \" dog\"), or "
                                "a token id. Empty: the next id. Enter applies."
                              : "A token id. Empty: the next id. Enter applies.");
    ImGui::SameLine();
    if (ImGui::Button("Apply") || enter) {
        std::string error;
        set_replacement_text(s, s.fields.replace_field, error);
    }
    ImGui::PopID();
}

// The sentence under the controls, read off the numbers recompute() kept.
std::string gpt_verdict(const AppState& s) {
    const GptCausality& c = s.model_run.causality;
    const int L = int(c.resid_max_abs.size());
    const std::string now = "“" + model_token_label(s, shown_model(s)->tokens[size_t(std::clamp(s.p, 0, s.config.applied.seq_len - 1))]) +
                            "” → “" + model_token_label(s, replacement_token(s, s.p)) + "”";
    if (s.run.applied_p < 0 || L == 0)
        return "Tick “replaced” (or pick p) to replace " + now + " at p = " + std::to_string(s.p) +
               " and run every layer again from p.";
    const DySummary& r = s.model_run.resid_summary;
    const DySummary& g = s.model_run.dy_out_summary;
    const int p = s.run.applied_p;
    if (p > 0 && r.before == 0.f && g.before == 0.f && !r.nan && !g.nan && r.zeros_before == p)
        return "Positions 0 to " + std::to_string(p - 1) + " come before p = " + std::to_string(p) + ": in " +
               (L == 2 ? std::string("both") : "all " + std::to_string(L)) + " layers the causal mask hides position " + std::to_string(p) +
               " from them, so their residual stream and logits stay exactly 0.0 different. From p on they move (max |Δ resid_post| " +
               format_value(r.after, 3) + ", max |Δ logits| " + format_value(g.after, 3) + ").";
    if (p == 0) return "Every position comes after p = 0, so every one may move (max |Δ logits| " + format_value(g.after, 3) + ").";
    return "Positions before p moved (max " + format_diff(std::max(r.before, g.before)) +
           "): something in the model lets an earlier position see a later one.";
}

// The table: one row per layer's resid_post from `l0` on and one for the logits, one column
// per position from `t0` on, as many of each as fit. Returns the bottom.
float draw_table(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, int& t0, int& l0) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const GptCausality& c = s.model_run.causality;
    const int L = int(c.resid_max_abs.size()), T = int(c.logits_max_abs.size());
    const std::vector<std::string>& words = position_words(s);
    const float pad = ui.px(4);
    const float label_w = text_size(f, "resid_post 11").x + 2 * pad;
    const float cell_w = std::max(text_size(f, "0.000123").x, text_size(f, "·WWWW").x) + 2 * pad;
    const float head_h = 2 * (f->FontSize + 2) + pad;
    const float min_row = f->FontSize + 2 * pad;
    const int nl = std::clamp(int((p1.y - p0.y - head_h) / min_row) - 1, 1, L); // layers shown, the logits' row besides
    l0 = std::clamp(l0, 0, L - nl);
    const float row_h = std::clamp((p1.y - p0.y - head_h) / float(nl + 1), min_row, f->FontSize * 3.f);
    const int fit = std::max(1, int((p1.x - p0.x - label_w) / cell_w));
    t0 = std::clamp(t0, 0, std::max(0, T - fit));
    const int n = std::min(fit, T - t0);
    // The colour scales: the largest finite change of any layer, and of the logits (recompute()'s summaries).
    const float top_value = s.model_run.resid_summary.top, top_logits = s.model_run.dy_out_summary.top;
    const float x0 = p0.x + label_w;
    // Column heads: the position and its token.
    for (int i = 0; i < n; ++i) {
        const int t = t0 + i;
        const float cx = x0 + cell_w * float(i);
        const ImU32 col = t == s.run.applied_p ? pal.accent : t < s.run.applied_p ? pal.exact_zero : pal.text_dim;
        const std::string num = std::to_string(t), word = fit_text(f, position_word(words, t, 10), cell_w - 2 * pad);
        dl->AddText(f, f->FontSize, ImVec2(cx + pad, p0.y), col, num.c_str());
        dl->AddText(f, f->FontSize, ImVec2(cx + pad, p0.y + f->FontSize + 2), col, word.c_str());
        if (ImGui::IsMouseHoveringRect(ImVec2(cx, p0.y), ImVec2(cx + cell_w, p0.y + head_h))) {
            ImGui::SetTooltip("position %d “%s”: click to replace this token", t, position_word(words, t, 40).c_str());
            if (ImGui::IsMouseClicked(0)) request_perturbation(s, t, 1.f);
        }
    }
    float y = p0.y + head_h;
    for (int k = 0; k <= nl; ++k) {
        const bool logits = k == nl;
        const int r = logits ? L : l0 + k;
        const std::vector<float>& row = logits ? c.logits_max_abs : c.resid_max_abs[size_t(r)];
        const float top = logits ? top_logits : top_value;
        const std::string label = logits ? "logits" : "resid_post " + std::to_string(r);
        const ImU32 lc = !logits && r == s.shown.layer ? pal.accent : pal.text;
        dl->AddText(f, f->FontSize, ImVec2(p0.x, y + (row_h - f->FontSize) * 0.5f), lc, label.c_str());
        if (!logits && ImGui::IsMouseHoveringRect(ImVec2(p0.x, y), ImVec2(x0, y + row_h))) {
            ImGui::SetTooltip("layer %d's residual stream after its MLP: click to show this layer in every view", r);
            if (ImGui::IsMouseClicked(0)) request_layer(s, r);
        }
        for (int i = 0; i < n; ++i) {
            const int t = t0 + i;
            const float v = row[size_t(t)];
            const ImVec2 a(x0 + cell_w * float(i), y), b(a.x + cell_w - 1, y + row_h - 1);
            const float k = std::isfinite(v) && top > 0 ? std::sqrt(v / top) : std::isnan(v) ? 1.f : 0.f;
            dl->AddRectFilled(a, b, v == 0.f ? pal.panel : mix(pal.panel, std::isnan(v) ? pal.warning : pal.bar, 0.25f + 0.75f * k));
            const std::string text = cell_text(v);
            const ImU32 tc = v == 0.f ? pal.exact_zero : pal.text;
            const ImVec2 ts = text_size(f, text);
            dl->AddText(f, f->FontSize, ImVec2(std::round(b.x - pad - ts.x), std::round(a.y + (row_h - ts.y) * 0.5f)), tc,
                        text.c_str());
            if (ImGui::IsMouseHoveringRect(a, b)) {
                ImGui::BeginTooltip();
                ImGui::Text("%s, position %d: max |Δ| = %s", label.c_str(), t, format_diff(v).c_str());
                ImGui::EndTooltip();
            }
        }
        if (logits) dl->AddLine(ImVec2(p0.x, y), ImVec2(x0 + cell_w * float(n), y), pal.frame, 1.f);
        y += row_h;
    }
    // Position p's column outlined, the cells before it marked as the ones that cannot move.
    if (s.run.applied_p >= t0 && s.run.applied_p < t0 + n) {
        const float ax = x0 + cell_w * float(s.run.applied_p - t0);
        dl->AddRect(ImVec2(ax - 1, p0.y + head_h - 1), ImVec2(ax + cell_w, y), pal.accent, 0.f, 0, 2.f);
    }
    if (ui.layout) {
        LayoutItem it;
        it.kind = "table";
        it.name = "causality";
        it.x = p0.x, it.y = p0.y, it.w = label_w + cell_w * float(n), it.h = y - p0.y;
        it.rows = L + 1, it.cols = T, it.row0 = l0, it.col0 = t0, it.nrows = nl + 1, it.ncols = n;
        ui.layout->push_back(it);
    }
    return y;
}

} // namespace

void draw_gpt_causality_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    ViewWindow& win = s.screen.windows[int(View::causality)];
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float width = p1.x - p0.x;
    const float gap = ui.gap();
    float y = p0.y;
    ImFont* hf = ui.fonts->heading;
    const std::vector<std::string>& words = position_words(s);
    const std::string question = "Replace the token at p = " + std::to_string(s.p) + " (“" + position_word(words, s.p, 16) +
                                 "”) with “" + model_token_label(s, replacement_token(s, s.p)) +
                                 "”. Which positions move, in which layer?";
    dl->AddText(hf, hf->FontSize, ImVec2(p0.x, y), ui.pal.text, fit_text(hf, question, width).c_str());
    y += hf->FontSize + gap;
    draw_controls_row(s, ui, ImVec2(p0.x, y), width);
    y += ImGui::GetFrameHeight() + gap;
    ImGui::SetCursorScreenPos(ImVec2(p0.x, y));
    ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
    ImGui::TextUnformatted(gpt_verdict(s).c_str());
    ImGui::PopTextWrapPos();
    y = ImGui::GetCursorScreenPos().y + gap;
    const float legend_h = legend_height(ui);
    if (s.model_run.causality.resid_max_abs.empty()) {
        ImFont* sf = ui.fonts->small;
        dl->AddText(sf, sf->FontSize, ImVec2(p0.x, y), ui.pal.text_dim,
                    "The table of max |Δ resid_post| per layer and position, and max |Δ logits|, shows once a token is replaced.");
    } else {
        const std::string title = "max |Δ| per position: each layer's residual stream (resid_post), then the logits";
        dl->AddText(ui.fonts->body, ui.fonts->body->FontSize, ImVec2(p0.x, y), ui.pal.text,
                    fit_text(ui.fonts->body, title, width).c_str());
        y += ui.fonts->body->FontSize + gap;
        if (win.centred_p != s.p) {
            win.key0 = std::max(0, s.p - 4);
            win.centred_p = s.p;
        }
        const float pager_h = ImGui::GetFrameHeight() + gap;
        const float bottom =
            draw_table(s, ui, ImVec2(p0.x, y), ImVec2(p1.x, p1.y - legend_h - gap - pager_h), win.key0, win.row0);
        ImGui::SetCursorScreenPos(ImVec2(p0.x, bottom + gap * 0.5f));
        const int T = s.config.applied.seq_len;
        ImGui::PushID("gpt_causality_pages");
        ImGui::BeginDisabled(win.key0 <= 0);
        if (ImGui::ArrowButton("##left", ImGuiDir_Left)) win.key0 = std::max(0, win.key0 - 8);
        ImGui::EndDisabled();
        ImGui::SameLine();
        if (ImGui::ArrowButton("##right", ImGuiDir_Right)) win.key0 = std::min(T - 1, win.key0 + 8);
        ImGui::SameLine();
        // Layers up and down, when they do not all fit.
        const int L = int(s.model_run.causality.resid_max_abs.size());
        ImGui::BeginDisabled(win.row0 <= 0);
        if (ImGui::ArrowButton("##up", ImGuiDir_Up)) win.row0 = std::max(0, win.row0 - 1);
        ImGui::EndDisabled();
        ImGui::SameLine();
        if (ImGui::ArrowButton("##down", ImGuiDir_Down)) win.row0 = std::min(L - 1, win.row0 + 1);
        ImGui::SameLine();
        ImGui::AlignTextToFramePadding();
        const std::string where = "positions from " + std::to_string(win.key0) + " of " + std::to_string(T) +
                                  ", layers from " + std::to_string(win.row0) + " of " + std::to_string(L) +
                                  " · 0.0: exactly zero · hover a cell for every digit";
        ImGui::TextDisabled("%s", fit_text(ui.fonts->body, where, p1.x - ImGui::GetCursorScreenPos().x).c_str());
        ImGui::PopID();
        // The lesson's question, under the table when there is room.
        const float qy = ImGui::GetCursorScreenPos().y + gap;
        if (p1.y - legend_h - qy >= 3 * ImGui::GetTextLineHeightWithSpacing()) {
            ImGui::SetCursorScreenPos(ImVec2(p0.x, qy));
            ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "Check yourself");
            ImGui::TextUnformatted("Every layer mixes positions only through attention. Why can nothing that token p "
                                   "changes reach a position before p, in any layer, even through the MLPs and LayerNorms?");
            ImGui::PopTextWrapPos();
        }
    }
    draw_legend(s, ui, legend_origin(ui, p0, p1), width, false);
}

} // namespace attnviz
