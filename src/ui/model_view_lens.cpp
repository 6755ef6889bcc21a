// model_view_lens.cpp: the Model view's logit lens table (lens_state.h). Layers down (the
// embedding, then each layer's output), positions across; each cell the top token of that
// residual read through the model's head, on a colour of its probability (viridis), the top 5
// and the next token's probability on hover. Only the positions that fit are shown, paged
// with the buttons; recompute() makes their cells (on a worker for a large model), so a cell
// not made yet shows "…".
#include "format.h"
#include "matrix_panel.h"
#include "model_view.h"
#include "text_fit.h"
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz {

namespace {

std::string row_name(int r) { return r == 0 ? "embed" : "after L" + std::to_string(r - 1); }

void cell_tooltip(const AppState& s, int r, int pos) {
    const LensTable& t = s.model_view.lens;
    const std::vector<TokenProb>* top = t.top(r, pos);
    if (!top) return;
    ImGui::BeginTooltip();
    ImGui::Text("%s, position %d (%s): its top 5", row_name(r).c_str(), pos,
                model_token_label(s, s.model_run.model_base.tokens[size_t(pos)]).c_str());
    for (const TokenProb& tp : *top) ImGui::Text("  %-16s %s", model_token_label(s, tp.token).c_str(), format_with(tp.prob, "%.3f").c_str());
    const float next = t.next_prob(r, pos);
    if (!std::isnan(next))
        ImGui::Text("the next token, %s: %s", model_token_label(s, s.model_run.model_base.tokens[size_t(pos) + 1]).c_str(), format_with(next, "%.3f").c_str());
    else
        ImGui::TextDisabled("the last position: no next token in the sequence");
    ImGui::EndTooltip();
}

// The pager: ◀ / ▶ by a page, and where the window is.
void draw_lens_pager(AppState& s, int first, int n, int T) {
    ImGui::BeginDisabled(first <= 0);
    if (ImGui::SmallButton("◀ earlier")) request_lens_first(s, first - n);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(first + n >= T);
    if (ImGui::SmallButton("later ▶")) request_lens_first(s, first + n);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled("positions %d–%d of %d%s", first, first + n - 1, T, lens_busy(s) ? "   (reading the residuals…)" : "");
}

} // namespace

void draw_lens_table(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const int T = int(s.model_run.model_base.tokens.size());
    if (!lens_available(s) || T == 0) {
        ImGui::SetCursorScreenPos(p0);
        ImGui::TextDisabled("The logit lens reads the residual stream through the model's next-token head: open a GPT model or "
                            "an induction model.");
        return;
    }
    const int rows = layer_count(s) + 1; // the embeddings, then each layer's output
    ImGui::SetCursorScreenPos(p0);
    ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
    ImGui::TextDisabled("Each row reads the residual stream after that layer as if it were the last (%s): the cell is its "
                        "top token, coloured by its probability. Hover for the top 5 and the next token's probability.",
                        unembedding_name(s));
    ImGui::PopTextWrapPos();
    // A cell holds a token and its probability; a hairline of background between cells.
    constexpr float label_pad = 10, cell_px = 84, cell_gap = 2;
    const float label_w = text_size(f, "layer 00").x + ui.px(label_pad);
    const float cell_w = ui.px(cell_px), gap = ui.px(cell_gap);
    const int n = std::clamp(int((p1.x - p0.x - label_w) / (cell_w + gap)), 1, T);
    s.model_view.lens.columns = n; // recompute() makes these positions' cells
    const auto [first, end] = lens_window(s);
    draw_lens_pager(s, first, end - first, T);
    const float legend_h = f->FontSize + ui.legend_pad();
    const float top = ImGui::GetCursorScreenPos().y + ui.small_gap();
    const float head_h = f->FontSize * 2 + ui.text_pad();
    const float cell_h = std::clamp((p1.y - legend_h - top - head_h) / float(rows) - gap, f->FontSize + 4, f->FontSize * 2.4f);
    // The positions' header: the index and the token.
    for (int pos = first; pos < end; ++pos) {
        const float x = p0.x + label_w + float(pos - first) * (cell_w + gap);
        const std::string word = fit_text(f, model_token_label(s, s.model_run.model_base.tokens[size_t(pos)]), cell_w);
        dl->AddText(f, f->FontSize, ImVec2(x, top), pal.text_dim, std::to_string(pos).c_str());
        dl->AddText(f, f->FontSize, ImVec2(x, top + f->FontSize + 2), pal.text, word.c_str());
    }
    const float y0 = top + head_h;
    const LensTable& t = s.model_view.lens;
    for (int r = 0; r < rows; ++r) {
        const float y = y0 + float(r) * (cell_h + gap);
        dl->AddText(f, f->FontSize, ImVec2(p0.x, y + (cell_h - f->FontSize) * 0.5f), pal.text, row_name(r).c_str());
        for (int pos = first; pos < end; ++pos) {
            const ImVec2 a(p0.x + label_w + float(pos - first) * (cell_w + gap), y), b(a.x + cell_w, y + cell_h);
            const std::vector<TokenProb>* top5 = t.top(r, pos);
            if (!top5 || top5->empty()) {
                dl->AddRect(a, b, pal.frame);
                dl->AddText(f, f->FontSize, ImVec2(a.x + 4, a.y + (cell_h - f->FontSize) * 0.5f), pal.text_dim, "…");
                continue;
            }
            const ImVec4 c = colormap_color(Colormap::viridis, (*top5)[0].prob, pal.colormaps);
            dl->AddRectFilled(a, b, ImGui::ColorConvertFloat4ToU32(c));
            const std::string word = fit_text(f, model_token_label(s, (*top5)[0].token), cell_w - 6);
            dl->AddText(f, f->FontSize, ImVec2(a.x + 3, a.y + (cell_h - f->FontSize) * 0.5f), text_over(c), word.c_str());
            if (ImGui::IsMouseHoveringRect(a, b)) {
                dl->AddRect(a, b, pal.hover, 0, 0, 2);
                cell_tooltip(s, r, pos);
            }
        }
    }
    if (ui.layout) {
        LayoutItem it{"heatmap", "logit_lens", -1, p0.x + label_w, y0, float(end - first) * (cell_w + gap) - gap,
                      float(rows) * (cell_h + gap) - gap, rows, T, 0, first, rows, end - first, -1, 0};
        ui.layout->push_back(it);
    }
    // The legend: the probability's colours.
    const float ly = p1.y - legend_h + ui.small_gap();
    constexpr float bar_w = 120; // the colour bar
    const float bw = ui.px(bar_w);
    for (int i = 0; i < 24; ++i) {
        const float x = p0.x + bw * float(i) / 24.f;
        dl->AddRectFilled(ImVec2(x, ly + 2), ImVec2(x + bw / 24.f + 1, ly + f->FontSize - 2),
                          ImGui::ColorConvertFloat4ToU32(colormap_color(Colormap::viridis, float(i) / 23.f, pal.colormaps)));
    }
    dl->AddText(f, f->FontSize, ImVec2(p0.x + bw + 8, ly), pal.text_dim,
                "the top token's probability 0 … 1; the last layer's row is the model's own prediction");
}

} // namespace attnviz
