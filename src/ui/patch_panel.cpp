// patch_panel.cpp: the Model view's Patching panel (patch_state.h): the corrupted prompt, the
// two answers and Run; a progress bar while the worker patches; then two heat maps of the
// normalised logit difference, resid_pre (layer x position) and hook_z (layer x head), in the
// diverging palette around 0 with a colour bar. A click on a head opens it in the scores view.
#include "format.h"
#include "matrix_panel.h"
#include "model_view.h"
#include <imgui_stdlib.h>
#include "text_fit.h"
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz {

namespace {

float table_range(const std::vector<std::vector<float>>& t) {
    float m = 1;
    for (const auto& row : t)
        for (float v : row) m = std::max(m, std::abs(v));
    return m;
}

ImU32 value_colour(const UiContext& ui, float v, float range, ImVec4* out = nullptr) {
    const ImVec4 c = colormap_color(Colormap::diverging, std::clamp(0.5f + 0.5f * v / range, 0.f, 1.f), ui.pal.colormaps);
    if (out) *out = c;
    return ImGui::ColorConvertFloat4ToU32(c);
}

// The colour bar: -range .. 0 .. +range.
void draw_patch_colorbar(UiContext& ui, ImVec2 a, float width, float range) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    constexpr float max_bar_w = 200; // the bar at most: the words after it take the rest
    const float bw = std::min(width * 0.4f, ui.px(max_bar_w)), h = f->FontSize;
    const std::string lo = "−" + format_with(range, "%.2f"), hi = "+" + format_with(range, "%.2f");
    float x = a.x;
    dl->AddText(f, h, ImVec2(x, a.y), ui.pal.text_dim, lo.c_str());
    x += text_size(f, lo).x + 6;
    for (int i = 0; i < 32; ++i)
        dl->AddRectFilled(ImVec2(x + bw * float(i) / 32.f, a.y + 2), ImVec2(x + bw * float(i + 1) / 32.f + 1, a.y + h - 2),
                          value_colour(ui, (float(i) + 0.5f) / 16.f - 1.f, 1.f));
    dl->AddRect(ImVec2(x - 1, a.y + 1), ImVec2(x + bw + 1, a.y + h - 1), ui.pal.frame);
    x += bw + 6;
    dl->AddText(f, h, ImVec2(x, a.y), ui.pal.text_dim, hi.c_str());
    x += text_size(f, hi).x + ui.legend_gap();
    const char* words = "restored: (patched − corrupted) / (clean − corrupted) of the logit difference; 1 all of it, 0 none";
    dl->AddText(f, h, ImVec2(x, a.y), ui.pal.text, fit_text(f, words, a.x + width - x).c_str());
    if (ui.layout) ui.layout->push_back(LayoutItem{"colorbar", "patch", -1, a.x, a.y, width, h, 0, 0, 0, 0, 0, 0, -1, range});
}

} // namespace

int draw_patch_heatmap(AppState& s, UiContext& ui, const std::vector<std::vector<float>>& t, const std::vector<std::string>& cols,
                       const std::string& title, const std::string& name, ImVec2 p0, ImVec2 p1, float range) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    ImFont* hf = ui.fonts->heading ? ui.fonts->heading : f;
    const Palette& pal = ui.pal;
    dl->AddText(hf, hf->FontSize, p0, pal.text, fit_text(hf, title, p1.x - p0.x).c_str());
    if (t.empty() || t[0].empty()) return -1;
    const int L = int(t.size()), N = int(t[0].size());
    const float label_w = text_size(f, "L00").x + 8, tick_h = f->FontSize + 4;
    const float top = p0.y + hf->FontSize + ui.text_pad();
    constexpr float max_cell = 72; // a cell at most: a short prompt's table stays small
    const float side = std::floor(std::min({(p1.x - p0.x - label_w) / float(N), (p1.y - top - tick_h) / float(L), ui.scaled(max_cell)}));
    if (side < 4) return -1;
    const float gx = p0.x + label_w, gy = top;
    int clicked = -1;
    for (int l = 0; l < L; ++l) {
        dl->AddText(f, f->FontSize, ImVec2(p0.x, gy + float(l) * side + (side - f->FontSize) * 0.5f), pal.text_dim,
                    ("L" + std::to_string(l)).c_str());
        for (int c = 0; c < N; ++c) {
            const float v = t[size_t(l)][size_t(c)];
            const ImVec2 a(gx + float(c) * side, gy + float(l) * side), b(a.x + side, a.y + side);
            ImVec4 col;
            dl->AddRectFilled(a, b, value_colour(ui, v, range, &col));
            if (side >= text_size(f, "-0.00").x + 4) {
                const std::string txt = format_with(v, "%.2f");
                dl->AddText(f, f->FontSize, ImVec2(a.x + (side - text_size(f, txt).x) * 0.5f, a.y + (side - f->FontSize) * 0.5f),
                            text_over(col), txt.c_str());
            }
            if (ImGui::IsMouseHoveringRect(a, b)) {
                dl->AddRect(a, b, pal.hover, 0, 0, 2);
                ImGui::SetTooltip("layer %d, %s: %s restored%s", l, c < int(cols.size()) ? cols[size_t(c)].c_str() : "", format_with(v, "%.2f").c_str(),
                                  name == "patch_heads" ? "\nclick: open this head in the scores view" : "");
                if (ImGui::IsMouseClicked(0)) clicked = l * N + c;
            }
        }
    }
    dl->AddRect(ImVec2(gx - 1, gy - 1), ImVec2(gx + side * float(N) + 1, gy + side * float(L) + 1), pal.frame);
    // The column ticks, as many as fit.
    float last_end = -1e9f;
    for (int c = 0; c < N && c < int(cols.size()); ++c) {
        const std::string w = fit_text(f, cols[size_t(c)], std::max(side * 3, text_size(f, "00").x + 2));
        const float x = gx + float(c) * side + side * 0.5f - text_size(f, w).x * 0.5f;
        if (x < last_end + 4) continue;
        dl->AddText(f, f->FontSize, ImVec2(x, gy + side * float(L) + 2), pal.text_dim, w.c_str());
        last_end = x + text_size(f, w).x;
    }
    if (ui.layout)
        ui.layout->push_back(LayoutItem{"heatmap", name, -1, gx, gy, side * float(N), side * float(L), L, N, 0, 0, L, N, -1, range});
    return clicked;
}

namespace {

void draw_patch_fields(AppState& s, UiContext& ui, float width) {
    PatchPanelState& p = s.patch;
    const int T = int(shown_model(s)->tokens.size());
    const bool gpt = shown_model(s)->gpt();
    ImGui::TextDisabled("Clean: the sequence shown (%d tokens). Corrupted: the same length with a word changed.", T);
    auto label = [](const char* t) {
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted(t);
        ImGui::SameLine();
    };
    label("Corrupted");
    constexpr float label_room = 16; // the label's spacing before the field and a little to spare
    ImGui::SetNextItemWidth(width - ImGui::CalcTextSize("Corrupted").x - ui.scaled(label_room));
    ImGui::InputText("##patch_corrupt", &p.corrupt_field);
    constexpr float token_field_w = 150; // the answer's and the wrong token's fields: a word or an id
    const float field_w = ui.px(token_field_w);
    label("Answer");
    ImGui::SetNextItemWidth(field_w);
    ImGui::InputText("##patch_answer", &p.answer_field);
    ImGui::SameLine();
    label("Wrong");
    ImGui::SetNextItemWidth(field_w);
    ImGui::InputText("##patch_wrong", &p.wrong_field);
    ImGui::SameLine();
    ImGui::BeginDisabled(patch_running(s));
    if (ImGui::Button("Run")) request_patch_run(s);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s", gpt ? "Answer and wrong: one token each, as text (\" Mary\") or an id"
                                    : "Answer and wrong: one letter each, or an id");
    if (patch_running(s)) {
        ImGui::ProgressBar(patch_progress(s), ImVec2(width, 0), s.patch.status.c_str());
    } else if (!p.error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ui.pal.warning);
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
        ImGui::TextUnformatted(p.error.c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
    } else {
        ImGui::TextDisabled("%s", p.status.empty() ? "Run patches each layer's input at each position, and each head's output, "
                                                     "from the clean run into the corrupted one."
                                                   : p.status.c_str());
    }
}

} // namespace

void draw_patch_panel(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    ImGui::SetCursorScreenPos(p0);
    const bool received = received_gpt(s); // a teacher's tables (follow_gpt_probes.h)
    if (!patch_available(s) && !received) {
        ImGui::TextDisabled("Activation patching measures the next-token logits: open a GPT model or an induction model.");
        return;
    }
    const float width = p1.x - p0.x;
    if (received) ImGui::TextDisabled("The teacher's tables: the model runs on the teacher's computer.");
    else draw_patch_fields(s, ui, width);
    const PatchResult& r = s.patch.result;
    if (r.empty() || r.model != shown_model(s)->model) return;
    constexpr float tables_gap = 20; // between the two tables side by side
    const float gap = ui.px(tables_gap), bar_h = ui.fonts->small->FontSize * 2 + 8;
    const float y = ImGui::GetCursorScreenPos().y + ui.gap();
    const int T = int(r.clean.size()), H = r.tables.heads.empty() ? 0 : int(r.tables.heads[0].size());
    std::vector<std::string> pos_cols, head_cols;
    for (int t = 0; t < T; ++t)
        pos_cols.push_back(r.clean[size_t(t)] == r.corrupt[size_t(t)] ? model_token_label(s, r.clean[size_t(t)])
                                                                      : model_token_label(s, r.clean[size_t(t)]) + "*");
    for (int h = 0; h < H; ++h) head_cols.push_back("h" + std::to_string(h));
    const float range = std::max(table_range(r.tables.resid), table_range(r.tables.heads));
    // The residual map takes the room its columns need, the heads' the rest.
    const float share = std::clamp(float(T) / float(T + H), 0.4f, 0.7f);
    const float split = p0.x + std::round((width - gap) * share);
    draw_patch_heatmap(s, ui, r.tables.resid, pos_cols, "resid_pre: layer × position (* corrupted)", "patch_resid",
                       ImVec2(p0.x, y), ImVec2(split, p1.y - bar_h), range);
    const int clicked = draw_patch_heatmap(s, ui, r.tables.heads, head_cols, "hook_z: layer × head",
                                           "patch_heads", ImVec2(split + gap, y), ImVec2(p1.x, p1.y - bar_h), range);
    if (clicked >= 0 && H > 0) open_in_scores(s, clicked / H, clicked % H);
    const std::string metric = "logit difference " + r.answer_text + " − " + r.wrong_text;
    draw_patch_colorbar(ui, ImVec2(p0.x, p1.y - bar_h + 4), width, range);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddText(ui.fonts->small, ui.fonts->small->FontSize, ImVec2(p0.x, p1.y - ui.fonts->small->FontSize), ui.pal.text_dim,
                fit_text(ui.fonts->small, metric + " at the last position: clean " + format_with(r.clean_ld, "%.2f") + ", corrupted " + format_with(r.corrupt_ld, "%.2f"),
                         width)
                    .c_str());
}

} // namespace attnviz
