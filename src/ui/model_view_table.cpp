// model_view_table.cpp: the Model view's right column - the head detector's table (per head
// its previous-token, duplicate and induction scores on the text, and the induction score on
// repeated random sequences, sortable by each column with ImGui's sort specs) and the
// next-token predictions at the cursor's position, as Transformer Explainer shows them.
#include "format.h"
#include "inputs.h"
#include "model_io.h"
#include "model_view.h"
#include "views.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

float detector_score(const HeadDetection& d, DetectorColumn col, int layer, int head) {
    auto at = [&](const std::vector<std::vector<float>>& v) {
        return size_t(layer) < v.size() && size_t(head) < v[size_t(layer)].size() ? v[size_t(layer)][size_t(head)] : NAN;
    };
    switch (col) {
    case DetectorColumn::prev: return at(d.text.prev_token);
    case DetectorColumn::dup: return at(d.text.duplicate);
    case DetectorColumn::ind_text: return at(d.text.induction);
    case DetectorColumn::ind_repeat: return at(d.repeat_induction);
    case DetectorColumn::head: break;
    }
    return NAN;
}

std::vector<std::pair<int, int>> sorted_heads(const HeadDetection& d, DetectorColumn col, bool descending) {
    std::vector<std::pair<int, int>> rows;
    for (size_t l = 0; l < d.text.prev_token.size(); ++l)
        for (size_t h = 0; h < d.text.prev_token[l].size(); ++h) rows.emplace_back(int(l), int(h));
    if (col == DetectorColumn::head) {
        if (descending) std::reverse(rows.begin(), rows.end());
        return rows;
    }
    std::stable_sort(rows.begin(), rows.end(), [&](const std::pair<int, int>& a, const std::pair<int, int>& b) {
        const float x = detector_score(d, col, a.first, a.second), y = detector_score(d, col, b.first, b.second);
        if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
        return descending ? x > y : x < y;
    });
    return rows;
}

int shown_prediction_pos(const AppState& s) {
    if (s.predict_hover >= 0) return s.predict_hover;
    return s.predict_pos < 0 ? s.config.seq_len - 1 : s.predict_pos;
}

namespace {

bool has_lm(const AppState& s) { return s.trained && (s.trained->gpt() || s.trained->model->config.has_lm_head()); }

} // namespace

std::string prediction_line(const AppState& s) {
    if (!has_lm(s)) return "";
    const int pos = std::clamp(shown_prediction_pos(s), 0, s.config.seq_len - 1);
    const std::vector<std::string>& words = position_words(s);
    std::string out = "next token after " + std::to_string(pos) + (size_t(pos) < words.size() ? " “" + words[size_t(pos)] + "”" : "") +
                      " (hover a query row):";
    if (size_t(pos) >= s.predictions.size() || s.predictions[size_t(pos)].empty()) return out + " computing…";
    bool first = true;
    for (const TokenProb& tp : s.predictions[size_t(pos)]) {
        out += (first ? "  " : "  ·  ") + model_token_label(s, tp.token) + " " + format_value(tp.prob, 3);
        first = false;
    }
    return out;
}

namespace {

// A score that passes the threshold is written in its role's colour (the grid's frames).
void score_cell(const UiContext& ui, float v, bool repeat_measured, int kind) {
    if (std::isnan(v)) {
        ImGui::TextDisabled(repeat_measured ? "—" : "n/a");
        return;
    }
    if (v >= detector_threshold) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(role_color(ui.pal, kind)), "%.2f", double(v));
    else ImGui::Text("%.2f", double(v));
}

} // namespace

void draw_detector_table(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact) {
    const HeadDetection& d = s.detection;
    std::string what = "prev, dup, ind: on the sequence shown (—: no query there has an earlier copy of its token); ";
    if (!d.repeat_induction.empty())
        what += "ind (rep.): on " + std::to_string(d.repeat_count) + " random sequences " +
                std::string(d.repeat_bos < 0 ? "r r filler"
                            : s.trained && s.trained->gpt() ? "<|endoftext|> r r filler" : "^ r r filler") + ", r of " +
                std::to_string(d.repeat_len) + " tokens (seed " + std::to_string(d.repeat_seed) + ").";
    else
        what += "ind (rep.) needs a model with a vocabulary (n/a).";
    what += " Click a column to sort, a row to open the head.";
    ImGui::SetCursorScreenPos(p0);
    ImGui::TextUnformatted(compact ? "Head detector (?)" : "Head detector");
    if (compact && ImGui::IsItemHovered()) {
        ImGui::PushTextWrapPos(std::round(480 * ui.scale));
        ImGui::SetTooltip("%s", what.c_str());
        ImGui::PopTextWrapPos();
    }
    if (!compact) {
        ImGui::SetCursorScreenPos(ImVec2(p0.x, ImGui::GetCursorScreenPos().y));
        ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
        ImGui::PushFont(ui.fonts->small);
        ImGui::TextDisabled("%s", what.c_str());
        ImGui::PopFont();
        ImGui::PopTextWrapPos();
    }
    const float top = ImGui::GetCursorScreenPos().y + std::round(2 * ui.scale);
    const float h = std::max(p1.y - top, ImGui::GetFrameHeight() * 3);
    ImGui::SetCursorScreenPos(ImVec2(p0.x, top));
    const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("detector", 5, flags, ImVec2(p1.x - p0.x, h))) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("head", ImGuiTableColumnFlags_DefaultSort, 1.1f, int(DetectorColumn::head));
    ImGui::TableSetupColumn("prev", ImGuiTableColumnFlags_PreferSortDescending, 0.9f, int(DetectorColumn::prev));
    ImGui::TableSetupColumn("dup", ImGuiTableColumnFlags_PreferSortDescending, 0.9f, int(DetectorColumn::dup));
    ImGui::TableSetupColumn("ind", ImGuiTableColumnFlags_PreferSortDescending, 0.9f, int(DetectorColumn::ind_text));
    ImGui::TableSetupColumn("ind (rep.)", ImGuiTableColumnFlags_PreferSortDescending, 1.6f, int(DetectorColumn::ind_repeat));
    ImGui::TableHeadersRow();
    const float table_top = ImGui::GetCursorScreenPos().y - 1, table_bottom = top + h + 1; // below the frozen header
    DetectorColumn col = DetectorColumn::head;
    bool descending = false;
    if (const ImGuiTableSortSpecs* spec = ImGui::TableGetSortSpecs(); spec && spec->SpecsCount > 0) {
        col = DetectorColumn(spec->Specs[0].ColumnUserID);
        descending = spec->Specs[0].SortDirection == ImGuiSortDirection_Descending;
    }
    const std::vector<HeadRole> roles = head_roles(d);
    const bool repeat = !d.repeat_induction.empty();
    const std::vector<std::pair<int, int>> rows = sorted_heads(d, col, descending);
    // Only the rows on screen are submitted (GPT-2 small has 144).
    ImGuiListClipper clipper;
    clipper.Begin(int(rows.size()));
    while (clipper.Step())
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            const auto [l, hd] = rows[size_t(r)];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            const HeadRole* role = nullptr;
            for (const HeadRole& x : roles)
                if (x.layer == l && x.head == hd) role = &x;
            const std::string name = "L" + std::to_string(l) + " h" + std::to_string(hd);
            if (role) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(role_color(ui.pal, role->kind)));
            if (ImGui::Selectable(name.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) open_in_scores(s, l, hd);
            if (role) ImGui::PopStyleColor();
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("layer %d, head %d%s; click to open it in the scores view", l, hd,
                                  role ? (std::string(": ") + role_words(role->kind) + " head").c_str() : "");
            const ImVec2 r0 = ImGui::GetItemRectMin(), r1 = ImGui::GetItemRectMax();
            for (DetectorColumn c : {DetectorColumn::prev, DetectorColumn::dup, DetectorColumn::ind_text, DetectorColumn::ind_repeat}) {
                ImGui::TableNextColumn();
                const int kind = c == DetectorColumn::prev ? 0 : c == DetectorColumn::dup ? 1 : 2;
                score_cell(ui, detector_score(d, c, l, hd), c != DetectorColumn::ind_repeat || repeat, kind);
            }
            // Recorded when inside the table's visible part (the clipper submits a row either
            // side of it); a selectable reaches half a spacing into its neighbours.
            const float mid = (r0.y + r1.y) / 2;
            if (ui.layout && mid >= table_top && mid <= table_bottom) {
                LayoutItem it;
                it.kind = "detector_row";
                it.name = role ? role_tag(role->kind) : "";
                it.head = hd;
                it.position = l;
                it.x = p0.x, it.y = r0.y, it.w = p1.x - p0.x, it.h = r1.y - r0.y;
                ui.layout->push_back(it);
            }
        }
    ImGui::EndTable();
}

float predictions_height(const AppState& s, const UiContext& ui, bool compact) {
    if (!has_lm(s)) return 0;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    if (compact) return ImGui::GetFrameHeightWithSpacing() + line;
    return ImGui::GetFrameHeightWithSpacing() + line + 5 * (ui.fonts->small->FontSize + std::round(6 * ui.scale));
}

float draw_predictions(AppState& s, UiContext& ui, ImVec2 p0, float width, bool compact) {
    if (!has_lm(s)) return 0;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const int N = s.config.seq_len;
    const int pos = std::clamp(shown_prediction_pos(s), 0, N - 1);
    const std::vector<std::string>& words = position_words(s);
    ImGui::SetCursorScreenPos(p0);
    ImGui::PushID("predictions");
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Next token after");
    ImGui::SameLine();
    // The picker: the keyboard's way to a position (Up / Down in this view), -1 the last.
    int picked = s.predict_pos < 0 ? N - 1 : s.predict_pos;
    ImGui::SetNextItemWidth(std::min(width * 0.4f, 160 * ui.scale));
    if (ImGui::SliderInt("##pos", &picked, 0, N - 1, "position %d")) s.predict_pos = picked;
    ImGui::SameLine();
    const std::string at = size_t(pos) < words.size() ? "“" + words[size_t(pos)] + "”" : "";
    ImGui::TextUnformatted(at.c_str());
    ImGui::PopID();
    float y = ImGui::GetCursorScreenPos().y;
    const std::vector<TokenProb>* top = size_t(pos) < s.predictions.size() ? &s.predictions[size_t(pos)] : nullptr;
    if (compact) {
        // One line: "a 0.999 · k 1e-4 · ...", as many as fit.
        std::string line;
        if (top)
            for (const TokenProb& tp : *top) {
                const std::string more = (line.empty() ? "" : "  ·  ") + model_token_label(s, tp.token) + " " + format_value(tp.prob, 3);
                if (text_size(f, line + more).x > width) break;
                line += more;
            }
        dl->AddText(f, f->FontSize, ImVec2(p0.x, y), pal.text, line.empty() ? "computing…" : line.c_str());
        return ImGui::GetTextLineHeightWithSpacing() + (y - p0.y);
    }
    std::string context;
    // A GPT model's labels carry their own spaces (·); a toy model's letters are spaced.
    const std::string sep = s.trained->gpt() ? "" : " ";
    for (int t = std::max(0, pos - 11); t <= pos && size_t(t) < words.size(); ++t) context += (context.empty() ? "" : sep) + words[size_t(t)];
    if (pos > 11) context = "… " + context;
    dl->AddText(f, f->FontSize, ImVec2(p0.x, y), pal.text_dim, fit_text(f, context + "  →  ?", width).c_str());
    y += ImGui::GetTextLineHeightWithSpacing();
    const float name_w = text_size(f, s.trained->gpt() ? "·WWWWWW" : "WWWW").x, num_w = text_size(f, "0.000").x + std::round(8 * ui.scale);
    const float row_h = f->FontSize + std::round(6 * ui.scale);
    if (!top || top->empty()) {
        dl->AddText(f, f->FontSize, ImVec2(p0.x, y), pal.text_dim, "computing…");
        return 5 * row_h;
    }
    for (const TokenProb& tp : *top) {
        const std::string name = fit_text(f, model_token_label(s, tp.token), name_w - std::round(4 * ui.scale));
        dl->AddText(f, f->FontSize, ImVec2(p0.x, y), pal.text, name.c_str());
        const float x0 = p0.x + name_w, x1 = p0.x + width - num_w;
        const float v = std::isnan(tp.prob) ? 0.f : std::clamp(tp.prob, 0.f, 1.f);
        dl->AddRectFilled(ImVec2(x0, y + 2), ImVec2(x1, y + row_h - 4), pal.panel);
        dl->AddRectFilled(ImVec2(x0, y + 2), ImVec2(x0 + (x1 - x0) * v, y + row_h - 4), pal.accent);
        dl->AddText(f, f->FontSize, ImVec2(x1 + std::round(6 * ui.scale), y), pal.text, format_value(tp.prob, 3).c_str());
        if (ui.layout) {
            LayoutItem it;
            it.kind = "prediction";
            it.name = name;
            it.position = pos;
            it.value = tp.prob;
            it.x = x0, it.y = y, it.w = (x1 - x0) * v, it.h = row_h - 6;
            ui.layout->push_back(it);
        }
        y += row_h;
    }
    return y - p0.y;
}

} // namespace attnviz
