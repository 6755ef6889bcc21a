// model_view.cpp: the Model view (key 7), BertViz's model view. Every layer x head of the
// shown model as a small attention pattern on the sequence - the softmax weights in the
// weights colour map, masked cells apart, as the scores view draws them - with layers down
// and heads across. The head detector's roles frame the heads that pass the Train view's
// threshold (0.6) and tag them ("prev 0.98"); a click opens the head in the scores view.
// Beside the grid (model_view_grid.cpp): the detector's table and the next-token predictions.
#include "format.h"
#include "inputs.h"
#include "model_view.h"
#include "text_util.h"
#include "views.h"
#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>

namespace attnviz {

float min_thumb(float scale) { return std::round(30 * scale); }

GridFit fit_grid(int L, int H, ImVec2 size, float label_w, float header_h, float tag_h, float gap, float scale) {
    auto thumb_for = [&](int ls, int hs) {
        const float w = (size.x - label_w - gap * float(hs - 1)) / float(hs);
        const float h = (size.y - header_h - float(ls) * tag_h - gap * float(ls - 1)) / float(ls);
        return std::floor(std::min(w, h));
    };
    const float mt = min_thumb(scale);
    GridFit f;
    f.heads = std::max(1, H);
    while (f.heads > 1 && thumb_for(1, f.heads) < mt) --f.heads;
    f.layers = std::max(1, L);
    while (f.layers > 1 && thumb_for(f.layers, f.heads) < mt) --f.layers;
    f.thumb = std::min(thumb_for(f.layers, f.heads), std::round(170 * scale));
    return f;
}

ImU32 role_color(const Palette& pal, int kind) {
    switch (kind) {
    case 0: return pal.q_text; // Okabe-Ito blue, orange and bluish green, readable on the background
    case 1: return pal.k_text;
    case 2: return pal.v_text;
    }
    return pal.frame;
}

const char* role_words(int kind) {
    switch (kind) {
    case 0: return "previous-token";
    case 1: return "duplicate-token";
    case 2: return "induction";
    }
    return "";
}

void open_in_scores(AppState& s, int layer, int head) {
    request_layer(s, layer); // the lesson's module has one
    s.screen.windows[int(View::scores)].head0 = std::clamp(head, 0, std::max(0, s.config.applied.n_head - 1));
    s.screen.view = View::scores;
}


namespace {

// The title, and beside it, right aligned, the choice of the main area (heads, logit lens,
// Patching), so that it takes none of the grid's height. Returns the y under them.
float model_view_title(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* hf = ui.fonts->heading;
    const Palette& pal = ui.pal;
    const float width = p1.x - p0.x;
    const int L = layer_count(s), H = s.config.applied.n_head;
    float y = p0.y;
    const bool choices = lens_available(s); // a model with a next-token head
    const char* labels[3] = {"Heads", "Logit lens", "Patching"};
    float choices_w = 0;
    if (choices) {
        const ImGuiStyle& st = ImGui::GetStyle();
        for (const char* l : labels) choices_w += ImGui::GetFrameHeight() + st.ItemInnerSpacing.x + ImGui::CalcTextSize(l).x + st.ItemSpacing.x;
    }
    std::string title = "Model: " + std::to_string(L) + (L == 1 ? " layer × " : " layers × ") + std::to_string(H) + " heads";
    if (text_size(hf, title + ", each head's weights on the sequence").x <= width - choices_w) title += ", each head's weights on the sequence";
    dl->AddText(hf, hf->FontSize, ImVec2(p0.x, y), pal.text, title.c_str());
    if (choices) {
        int panel = int(s.model_view.panel);
        ImGui::SetCursorScreenPos(ImVec2(p1.x - choices_w, y));
        for (int i = 0; i < 3; ++i) {
            if (i) ImGui::SameLine();
            ImGui::RadioButton(labels[i], &panel, i);
        }
        s.model_view.panel = ModelPanel(panel);
    }
    y += std::max(hf->FontSize, choices ? ImGui::GetFrameHeight() : 0.f) + ui.heading_gap();
    return y;
}

// The sentence under the title (none in a short window), or the lesson's note and its button.
void model_view_sentence(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, float y, bool compact) {
    const int H = s.config.applied.n_head;
    ImGui::SetCursorScreenPos(ImVec2(p0.x, y));
    ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
    if (!source_kind(s).runs_every_layer) {
        ImGui::TextDisabled("The lesson's module is one layer: its %d heads on the input. A trained model shows every "
                            "layer and what its heads have learnt.", H);
        if (ImGui::SmallButton("Open the Train view")) s.screen.view = View::train;
    } else if (!compact) {
        ImGui::TextDisabled("Rows: layers, columns: heads; in each pattern query i down, key j across. A framed head "
                            "passes a detector score of %.1f. Click a head to open it in the scores view.",
                            double(detector_threshold));
    }
    ImGui::PopTextWrapPos();
}

// The heads' grid with the detector table, the ablation box and the predictions, in one of
// two arrangements, from y down to `bottom`.
void model_view_heads(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, float y, float bottom, bool compact) {
    const float width = p1.x - p0.x;
    const int L = layer_count(s), H = s.config.applied.n_head;
    const float gap = ui.column_gap();
    // Two arrangements, whichever draws the patterns bigger: the table, the ablation box and
    // the predictions in a column on the right, or under the grid (a model of few layers):
    // the table on the left, the box over the predictions on the right.
    // A model's table has the ablate and DLA columns too: a little more room.
    constexpr float min_side_w = 300, max_side_w = 560; // the table's columns need 300; wider only spreads them
    const float side_w = std::round(std::clamp(width * (heads_ablatable(s) ? 0.42f : 0.38f), std::min(width * 0.5f, ui.scaled(min_side_w)),
                                               ui.scaled(max_side_w)));
    const float pred_h = predictions_height(s, ui, compact);
    const float table_h = ImGui::GetTextLineHeightWithSpacing() * (compact ? 1.f : 3.f) +
                          ImGui::GetFrameHeight() * float(std::min(L * H, 12) + 1);
    const float under_right_w = std::round((width - gap) * 0.45f);
    const float box_under = ablation_box_height(s, ui, under_right_w, compact);
    const float right_h = box_under + (pred_h > 0 ? gap + pred_h * (compact ? 1.f : 1.2f) : 0);
    const float strip_h = std::min(std::max(table_h, right_h), (bottom - y) * 0.55f);
    // Short windows: the predictions' two lines go under the grid, so that the table keeps
    // its rows above the ablation box.
    const float pred_left = compact && pred_h > 0 ? pred_h + gap : 0;
    const float thumb_side = grid_thumb(s, ui, ImVec2(width - side_w - gap, bottom - y - pred_left));
    const float thumb_under = grid_thumb(s, ui, ImVec2(width, bottom - y - strip_h - gap));
    if (thumb_under > thumb_side * 1.15f) {
        const float sy = bottom - strip_h;
        draw_model_grid(s, ui, ImVec2(p0.x, y), ImVec2(p1.x, sy - gap));
        const float table_w = width - under_right_w - gap;
        draw_detector_table(s, ui, ImVec2(p0.x, sy), ImVec2(p0.x + table_w, bottom), compact);
        const float rx = p0.x + table_w + gap;
        draw_ablation_box(s, ui, ImVec2(rx, sy), ImVec2(p1.x, sy + box_under), compact);
        if (pred_h > 0) draw_predictions(s, ui, ImVec2(rx, bottom - pred_h), under_right_w, compact);
    } else {
        const ImVec2 grid1(p1.x - side_w - gap, bottom - pred_left);
        draw_model_grid(s, ui, ImVec2(p0.x, y), grid1);
        const float sx = p1.x - side_w;
        if (compact) {
            if (pred_h > 0) draw_predictions(s, ui, ImVec2(p0.x, bottom - pred_h), grid1.x - p0.x, compact);
            const float box_h = ablation_box_height(s, ui, side_w, compact);
            draw_detector_table(s, ui, ImVec2(sx, y), ImVec2(p1.x, bottom - box_h - gap), compact);
            draw_ablation_box(s, ui, ImVec2(sx, bottom - box_h), ImVec2(p1.x, bottom), compact);
        } else {
            const float box_h = ablation_box_height(s, ui, side_w, compact);
            const float box_y = bottom - (pred_h > 0 ? pred_h + gap : 0) - box_h;
            draw_detector_table(s, ui, ImVec2(sx, y), ImVec2(p1.x, box_y - gap), compact);
            draw_ablation_box(s, ui, ImVec2(sx, box_y), ImVec2(p1.x, box_y + box_h), compact);
            if (pred_h > 0) draw_predictions(s, ui, ImVec2(sx, bottom - pred_h), side_w, compact);
        }
    }

}

// The legend: the colour map and the three roles' frames, shortened to fit.
void model_view_legend(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, float legend_h) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const float width = p1.x - p0.x;
    const float ly = p1.y - legend_h + ui.text_pad();
    constexpr float sample_gap = 5; // between a frame's sample and its words
    const float sw = f->FontSize * 1.4f, pad = ui.px(sample_gap), space = ui.legend_gap();
    const std::string map = "weights 0 … 1 (" + std::string(ui.pal.colormaps == PaletteKind::cb ? "cividis" : "viridis") + "), masked grey";
    auto role_text = [&](int k, bool words) { return std::string(role_tag(k)) + (words ? std::string(": ") + role_words(k) : ""); };
    const std::string ablated_words = "ablated (A)";
    auto total = [&](bool with_map, bool words) {
        float w = with_map ? text_size(f, map).x + space : 0;
        for (int k = 0; k < 3; ++k) w += sw + pad + text_size(f, role_text(k, words)).x + space;
        if (heads_ablatable(s)) w += sw + pad + text_size(f, ablated_words).x + space;
        return w;
    };
    const bool words = total(false, true) <= width;
    const bool with_map = total(true, words) <= width;
    float x = p0.x;
    auto text = [&](const std::string& t, ImU32 c) {
        dl->AddText(f, f->FontSize, ImVec2(x, ly), c, t.c_str());
        x += text_size(f, t).x + space;
    };
    if (with_map) text(map, pal.text_dim);
    for (int k = 0; k < 3; ++k) {
        dl->AddRect(ImVec2(x, ly + 1), ImVec2(x + sw, ly + f->FontSize - 1), role_color(pal, k), 0, 0, ui.rule());
        x += sw + pad;
        text(role_text(k, words), role_color(pal, k));
    }
    if (heads_ablatable(s)) {
        // An ablated head: crossed out in the warning colour.
        const ImVec2 a(x, ly + 1), b(x + sw, ly + f->FontSize - 1);
        // Thinner than a role's sample, so that the cross reads in the small box.
        constexpr float frame_w = 1.5f, cross_w = 2;
        dl->AddRect(a, b, pal.warning, 0, 0, std::max(1.f, ui.px(frame_w)));
        dl->AddLine(a, b, pal.warning, std::max(1.5f, ui.scaled(cross_w)));
        dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), pal.warning, std::max(1.5f, ui.scaled(cross_w)));
        x += sw + pad;
        text(ablated_words, pal.warning);
    }
}

} // namespace

void draw_model_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    // Short windows (text size 2 at 720 pixels): no sentence under the title, the
    // predictions on two lines.
    constexpr float compact_h = 420;
    const bool compact = p1.y - p0.y < ui.scaled(compact_h);
    s.model_view.predict_hover = -1; // set again below while the cursor is over a pattern
    s.model_view.hover_layer = s.model_view.hover_head = -1; // and the head under it, for the key A
    const float y = model_view_title(s, ui, p0, p1);
    model_view_sentence(s, ui, p0, p1, y, compact);
    if (lens_available(s)) {
        // The main area: the heads, the logit lens or the Patching panel.
        const ImVec2 a(p0.x, ImGui::GetCursorScreenPos().y + ui.small_gap());
        if (s.model_view.panel == ModelPanel::lens) return draw_lens_table(s, ui, a, p1);
        if (s.model_view.panel == ModelPanel::patching) return draw_patch_panel(s, ui, a, p1);
    }
    const float legend_h = ui.fonts->small->FontSize + ui.legend_pad();
    model_view_heads(s, ui, p0, p1, ImGui::GetCursorScreenPos().y + ui.text_pad(), p1.y - legend_h, compact);
    model_view_legend(s, ui, p0, p1, legend_h);
}

} // namespace attnviz
