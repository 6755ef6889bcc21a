// scores_view.cpp: per head, one row of three panels - the scaled scores before the mask,
// after the mask (−∞ above the diagonal), and the softmax weights - with the lesson's axis
// words: rows are "query position i", columns "key position j".
#include "format.h"
#include "inputs.h"
#include "text_fit.h"
#include "model_view.h"
#include "specs.h"
#include "views.h"
#include "widgets.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

// `before`: with the panel of the scores before the mask (left out when a long sequence's
// window of cells would not fit three panels across).
std::vector<Row> score_rows(AppState& s, UiContext& ui, int h0, int nh, bool before_mask = true) {
    std::vector<Row> rows;
    const int H = s.run.trace.H;
    const int last = std::min(H, h0 + nh) - 1;
    const char* mask_note = s.config.applied.mask == MaskMode::causal       ? "mask (tril)"
                            : s.config.applied.mask == MaskMode::off_by_one ? "mask (off by one)"
                                                                     : "no mask";
    for (int h = h0; h <= last; ++h) {
        const bool bars = !s.screen.shared_ranges || h == last;
        Row r;
        r.caption = "head " + std::to_string(h);
        RowItem before, after, probs, op1, op2;
        before.spec = spec_scores(s, ui, h, ScoreStage::scaled);
        before.spec.title = "before the mask";
        after.spec = spec_scores(s, ui, h, ScoreStage::masked);
        after.spec.title = "after the mask";
        after.spec.minimap = true; // the overview shows the masked triangle
        probs.spec = spec_probs(s, ui, h);
        probs.spec.title = "softmax weights";

        for (RowItem* it : {&before, &after, &probs}) it->spec.colorbar = bars;
        op1.op = "→";
        op1.note = mask_note;
        op2.op = "→";
        op2.note = "softmax";
        r.items = {before, op1, after, op2, probs};
        if (!before_mask) r.items = {after, op2, probs};
        rows.push_back(std::move(r));
    }
    return rows;
}

} // namespace

void draw_scores_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    ViewWindow& win = s.screen.windows[int(View::scores)];
    const float width = p1.x - p0.x;
    float y = p0.y;
    const Config& c = s.config.applied;

    {
        const std::string scale = c.scale == ScaleMode::head_dim ? "q·kᵀ × head_dim^−½ = q·kᵀ × " + format_value(s.run.trace.scale, 4)
                                  : c.scale == ScaleMode::n_embd ? "q·kᵀ × C^−½ = q·kᵀ × " + format_value(s.run.trace.scale, 4)
                                                                 : "q·kᵀ, not scaled";
        y = view_heading(ui, ImVec2(p0.x, y), "Scores: " + scale);
        ImGui::SetCursorScreenPos(ImVec2(p0.x, y));
        ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x); // wrap positions are window-local
        const char* what = c.mask == MaskMode::causal
                               ? "Query i may look at keys j ≤ i. The mask sets every later key to −∞ (hatched), and softmax turns −∞ into a weight of exactly 0."
                           : c.mask == MaskMode::none
                               ? "No mask: every query sees every key, the future included. Each row's weights spread over later positions too."
                               : "Off-by-one mask, tril(diagonal=−1): the diagonal is hidden too, so row 0 has no visible key and its softmax is 0 / 0 = NaN.";
        ImGui::TextUnformatted(what);
        ImGui::PopTextWrapPos();
        y = ImGui::GetCursorScreenPos().y + ui.px(2);
    }

    float legend_h = legend_height(ui);
    // A model with an LM head: its next-token predictions at the hovered query row, one line.
    const float predict_h = prediction_line(s).empty() ? 0 : ui.fonts->small->FontSize + ui.px(6);
    legend_h += predict_h;
    const float bar_h = window_bar_height(ui);
    const int H = s.run.trace.H;
    const ImVec2 area(width, p1.y - y - bar_h - legend_h);
    int nh = std::min(H, 4);
    while (nh > 1 && fit_cell(ui, score_rows(s, ui, 0, nh), area, ui.scaled(72)) < ui.scaled(30)) --nh;
    // A long sequence is drawn as a window of readable cells: two heads, when a window of 8 x 8
    // cells of both fits (large text in a short window leaves room for one).
    if (c.seq_len > 16) {
        nh = std::min(H, 2);
        if (nh > 1 && fit_cell(ui, windowed_rows(score_rows(s, ui, 0, nh), 8), area, ui.scaled(72)) < ui.scaled(12)) nh = 1;
    }
    // One head of a long sequence in large text: its three panels, each a window of 8 readable
    // cells with its labels and title, may not fit across; then the scores after the mask
    // and the weights are shown, and the line under the title still says what the mask does.
    bool before_mask = true;
    if (c.seq_len > 16 && nh == 1) {
        float need = 0;
        const std::vector<Row> one = score_rows(s, ui, 0, 1); // kept: the loop reads its items
        for (const RowItem& it : one[0].items)
            need += it.op.empty() ? std::max(matrix_min_width(ui, it.spec), 8 * readable_cell(ui)) + ui.row_label_w +
                                        3 * ui.fonts->small->FontSize
                                  : text_size(ui.fonts->small, it.note).x + ui.px(16);
        before_mask = need <= width;
    }
    win.head0 = std::clamp(win.head0, 0, std::max(0, H - nh));
    // Keys follow queries unless the user moved them apart: the diagonal stays in view.
    std::vector<Row> rows = score_rows(s, ui, win.head0, nh, before_mask);
    RowsResult rr = draw_rows(ui, win, rows, ImVec2(p0.x, y + bar_h), ImVec2(p1.x, p1.y - legend_h), ui.scaled(72));
    draw_window_bar(s, ui, win, ImVec2(p0.x, y), width * 0.62f, rr.windowed);
    if (H > nh) draw_head_pager(s, ui, win, nh, ImVec2(p0.x + width * 0.64f, y));
    if (predict_h > 0) {
        s.model_view.predict_hover = -1;
        for (const std::vector<MatrixResult>& row : rr.panels)
            for (const MatrixResult& m : row)
                if (m.hovered && m.row >= 0) s.model_view.predict_hover = m.row;
        ImFont* f = ui.fonts->small;
        const std::string line = fit_text(f, prediction_line(s), width);
        ImGui::GetWindowDrawList()->AddText(f, f->FontSize, ImVec2(p0.x, p1.y - legend_h + ui.px(4)), ui.pal.text_dim,
                                            line.c_str());
    }
    draw_legend(s, ui, ImVec2(p0.x, p1.y - legend_h + predict_h + ui.px(6)), width, true);
}

} // namespace attnviz
