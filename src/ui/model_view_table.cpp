// model_view_table.cpp: the Model view's right column - the head detector's table (per head
// its previous-token, duplicate and induction scores on the text, and the induction score on
// repeated random sequences, sortable by each column with ImGui's sort specs) and the
// next-token predictions at the cursor's position, as Transformer Explainer shows them.
#include "format.h"
#include "inputs.h"
#include "text_fit.h"
#include "model_io.h"
#include "model_view.h"
#include "views.h"
#include <algorithm>
#include <cfloat>
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
    case DetectorColumn::head:
    case DetectorColumn::dla:
    case DetectorColumn::dla_delta:
    case DetectorColumn::ablate: break; // the state's (head_value)
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

float head_value(const AppState& s, DetectorColumn col, int layer, int head) {
    const AblationNumbers& n = s.ablation.numbers;
    auto dla = [&](const RunSummary& r) {
        const auto& v = r.dla.heads;
        return r.has_dla && size_t(layer) < v.size() && size_t(head) < v[size_t(layer)].size() ? v[size_t(layer)][size_t(head)] : NAN;
    };
    const bool ablated = !s.ablation.applied.empty();
    switch (col) {
    case DetectorColumn::dla: return s.shown.input ? dla(ablated ? n.ablated : n.clean) : NAN;
    case DetectorColumn::dla_delta: return s.shown.input && ablated ? dla(n.ablated) - dla(n.clean) : NAN;
    case DetectorColumn::ablate: return s.shown.input ? (s.ablation.applied.has(layer, head) ? 1.f : 0.f) : NAN;
    case DetectorColumn::head:
    case DetectorColumn::prev:
    case DetectorColumn::dup:
    case DetectorColumn::ind_text:
    case DetectorColumn::ind_repeat: break;
    }
    return detector_score(s.model_view.detection, col, layer, head);
}

std::vector<std::pair<int, int>> sorted_heads(const AppState& s, DetectorColumn col, bool descending) {
    if (col == DetectorColumn::head || col <= DetectorColumn::ind_repeat) return sorted_heads(s.model_view.detection, col, descending);
    std::vector<std::pair<int, int>> rows = sorted_heads(s.model_view.detection, DetectorColumn::head, false);
    std::stable_sort(rows.begin(), rows.end(), [&](const std::pair<int, int>& a, const std::pair<int, int>& b) {
        const float x = head_value(s, col, a.first, a.second), y = head_value(s, col, b.first, b.second);
        if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
        return descending ? x > y : x < y;
    });
    return rows;
}

int shown_prediction_pos(const AppState& s) {
    if (s.model_view.predict_hover >= 0) return s.model_view.predict_hover;
    return s.model_view.predict_pos < 0 ? s.config.seq_len - 1 : s.model_view.predict_pos;
}

namespace {

bool has_lm(const AppState& s) {
    return mode(s) == Mode::gpt_model || (mode(s) == Mode::toy_model && s.shown.input->model->config.has_lm_head());
}

} // namespace

std::string prediction_line(const AppState& s) {
    if (!has_lm(s)) return "";
    const int pos = std::clamp(shown_prediction_pos(s), 0, s.config.seq_len - 1);
    const std::vector<std::string>& words = position_words(s);
    std::string out = "next token after " + std::to_string(pos) + (size_t(pos) < words.size() ? " “" + words[size_t(pos)] + "”" : "") +
                      " (hover a query row):";
    if (size_t(pos) >= s.model_view.predictions.size() || s.model_view.predictions[size_t(pos)].empty()) return out + " computing…";
    bool first = true;
    for (const TokenProb& tp : s.model_view.predictions[size_t(pos)]) {
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
    const HeadDetection& d = s.model_view.detection;
    std::string what = "prev, dup, ind: on the sequence shown (—: no query there has an earlier copy of its token); ";
    if (!d.repeat_induction.empty())
        what += "ind (rep.): on " + std::to_string(d.repeat_count) + " random sequences " +
                std::string(d.repeat_bos < 0 ? "r r filler"
                            : mode(s) == Mode::gpt_model ? "<|endoftext|> r r filler" : "^ r r filler") + ", r of " +
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
    if (!ImGui::BeginTable("detector", 8, flags, ImVec2(p1.x - p0.x, h))) return;
    const bool model = s.shown.input != nullptr, ablated = model && !s.ablation.applied.empty();
    const AblationNumbers& n = s.ablation.numbers;
    const ImGuiTableColumnFlags off = ImGuiTableColumnFlags_Disabled;
    // Too narrow for every score (text size 2 beside the grid): the text's dup and ind
    // columns give way to the ablation's (their scores are in the grid's tags).
    const ImGuiStyle& st = ImGui::GetStyle();
    const float cell_w = ImGui::CalcTextSize("−0.00").x + 2 * st.CellPadding.x;
    const bool narrow = model && p1.x - p0.x < ImGui::CalcTextSize("abl.L0 h0").x + 4 * st.CellPadding.x + float(ablated ? 6 : 5) * cell_w;
    const ImGuiTableColumnFlags text_only = narrow ? off : 0;
    ImGui::TableSetupScrollFreeze(0, 1);
    // The box and the head's name keep their width; the scores share the rest.
    const float box_w = std::max(ImGui::GetFontSize(), ImGui::CalcTextSize("abl.").x);
    ImGui::TableSetupColumn("abl.", ImGuiTableColumnFlags_NoSort | ImGuiTableColumnFlags_WidthFixed | (model ? 0 : off), box_w,
                            int(DetectorColumn::ablate));
    const float name_w = ImGui::CalcTextSize(s.shown.input && s.shown.input->model->config.n_layer > 10 ? "L11 h11" : "L1 h1").x;
    ImGui::TableSetupColumn("head", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_WidthFixed,
                            std::max(name_w, ImGui::CalcTextSize("head").x + ImGui::GetFontSize()) + std::round(2 * ui.scale),
                            int(DetectorColumn::head));
    ImGui::TableSetupColumn("prev", ImGuiTableColumnFlags_PreferSortDescending, 1.f, int(DetectorColumn::prev));
    ImGui::TableSetupColumn("dup", ImGuiTableColumnFlags_PreferSortDescending | text_only, 1.f, int(DetectorColumn::dup));
    ImGui::TableSetupColumn("ind", ImGuiTableColumnFlags_PreferSortDescending | text_only, 1.f, int(DetectorColumn::ind_text));
    ImGui::TableSetupColumn("ind (rep.)", ImGuiTableColumnFlags_PreferSortDescending, model ? 1.f : 1.6f, int(DetectorColumn::ind_repeat));
    ImGui::TableSetupColumn("DLA", ImGuiTableColumnFlags_PreferSortDescending | (model ? 0 : off), 1.f, int(DetectorColumn::dla));
    ImGui::TableSetupColumn("Δ DLA", ImGuiTableColumnFlags_PreferSortDescending | (ablated ? 0 : off), 1.2f,
                            int(DetectorColumn::dla_delta));
    // The header row by hand, so that the DLA's header says where and onto what it is taken.
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    for (int c = 0; c < 8; ++c) {
        if (!ImGui::TableSetColumnIndex(c)) continue;
        // A header too long for its column takes its short form ("rep." for "ind (rep.)").
        const char* shorts[8] = {"abl.", "head", "prev", "dup", "ind", "rep.", "DLA", "Δ"};
        const char* name = ImGui::TableGetColumnName(c);
        const float room = ImGui::GetContentRegionAvail().x - (c == 0 ? 0.f : ImGui::GetFontSize() + 2 * st.CellPadding.x); // the sort arrow's room
        ImGui::TableHeader(ImGui::CalcTextSize(name).x > room ? shorts[c] : name);
        if (ImGui::IsItemHovered()) {
            std::string tip;
            if (c == 0) tip = "Ablate: the head's output (hook_z) replaced by zero or its mean; the model runs again.";
            if (c == 6 || c == 7)
                tip = "Direct logit attribution at position " + std::to_string(n.pos) + " onto " +
                      (n.token >= 0 ? "“" + model_token_label(s, n.token) + "”" : std::string("?")) +
                      " (the clean run's top prediction there): what the head's output adds, alone, to that logit" +
                      (mode(s) == Mode::gpt_model ? " through ln_f with its scale frozen" : "") + " (Up / Down moves the position)." +
                      (c == 7 ? " Δ: after the ablation minus before." : "");
            if (!tip.empty()) {
                ImGui::PushTextWrapPos(std::round(420 * ui.scale));
                ImGui::SetTooltip("%s", tip.c_str());
                ImGui::PopTextWrapPos();
            }
        }
    }
    const float table_top = ImGui::GetCursorScreenPos().y - 1, table_bottom = top + h + 1; // below the frozen header
    DetectorColumn col = DetectorColumn::head;
    bool descending = false;
    if (const ImGuiTableSortSpecs* spec = ImGui::TableGetSortSpecs(); spec && spec->SpecsCount > 0) {
        col = DetectorColumn(spec->Specs[0].ColumnUserID);
        descending = spec->Specs[0].SortDirection == ImGuiSortDirection_Descending;
    }
    const std::vector<HeadRole>& roles = s.model_view.roles;
    const bool repeat = !d.repeat_induction.empty();
    const std::vector<std::pair<int, int>> rows = sorted_heads(s, col, descending);
    // Only the rows on screen are submitted (GPT-2 small has 144).
    ImGuiListClipper clipper;
    clipper.Begin(int(rows.size()));
    while (clipper.Step())
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            const auto [l, hd] = rows[size_t(r)];
            ImGui::TableNextRow();
            const bool off_head = model && s.ablation.applied.has(l, hd);
            // The ablate box: submitted before the row's selectable, so that it takes the click.
            if (ImGui::TableNextColumn()) {
                ImGui::PushID(l * 4096 + hd);
                ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(std::round(2 * ui.scale), 0));
                bool on = off_head;
                const ImVec2 c0 = ImGui::GetCursorScreenPos();
                if (ImGui::Checkbox("##ablate", &on)) toggle_ablation(s, l, hd);
                const ImVec2 c1 = ImGui::GetItemRectMax();
                if (ImGui::IsItemHovered()) {
                    s.model_view.hover_layer = l, s.model_view.hover_head = hd;
                    ImGui::SetTooltip("%s layer %d, head %d (A)", off_head ? "Restore" : "Ablate", l, hd);
                }
                ImGui::PopStyleVar();
                ImGui::PopID();
                const float mid = (c0.y + c1.y) / 2;
                if (ui.layout && mid >= table_top && mid <= table_bottom) {
                    LayoutItem it;
                    it.kind = "ablate_check";
                    it.name = off_head ? "ablated" : "";
                    it.head = hd, it.position = l, it.value = off_head ? 1.f : 0.f;
                    it.x = c0.x, it.y = c0.y, it.w = c1.x - c0.x, it.h = c1.y - c0.y;
                    ui.layout->push_back(it);
                }
            }
            ImGui::TableNextColumn();
            const HeadRole* role = nullptr;
            for (const HeadRole& x : roles)
                if (x.layer == l && x.head == hd) role = &x;
            const std::string name = "L" + std::to_string(l) + " h" + std::to_string(hd);
            const ImU32 name_colour = off_head ? ui.pal.warning : role ? role_color(ui.pal, role->kind) : 0;
            if (name_colour) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(name_colour));
            if (ImGui::Selectable(name.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) open_in_scores(s, l, hd);
            if (name_colour) ImGui::PopStyleColor();
            if (ImGui::IsItemHovered()) {
                s.model_view.hover_layer = l, s.model_view.hover_head = hd;
                ImGui::SetTooltip("layer %d, head %d%s%s; click to open it in the scores view, A to %s it", l, hd,
                                  role ? (std::string(": ") + role_words(role->kind) + " head").c_str() : "",
                                  off_head ? " (ablated)" : "", off_head ? "restore" : "ablate");
            }
            const ImVec2 r0 = ImGui::GetItemRectMin(), r1 = ImGui::GetItemRectMax();
            for (DetectorColumn c : {DetectorColumn::prev, DetectorColumn::dup, DetectorColumn::ind_text, DetectorColumn::ind_repeat}) {
                if (!ImGui::TableNextColumn()) continue; // a column given way (narrow)
                const int kind = c == DetectorColumn::prev ? 0 : c == DetectorColumn::dup ? 1 : 2;
                score_cell(ui, detector_score(d, c, l, hd), c != DetectorColumn::ind_repeat || repeat, kind);
                // With heads ablated the cell is the ablated model's; the clean score is one hover away.
                if (ablated && ImGui::IsItemHovered()) {
                    const float before = detector_score(s.ablation.numbers.clean.detection, c, l, hd), after = detector_score(d, c, l, hd);
                    const char* what = c == DetectorColumn::prev ? "previous-token" : c == DetectorColumn::dup ? "duplicate"
                                     : c == DetectorColumn::ind_text ? "induction on the text" : "induction on repeated sequences";
                    ImGui::SetTooltip("layer %d, head %d, %s: %s with the ablation, %s before", l, hd, what,
                                      std::isnan(after) ? "—" : format_value(after, 3).c_str(),
                                      std::isnan(before) ? "—" : format_value(before, 3).c_str());
                }
            }
            // The DLA (of the run shown) and its change by the ablation.
            for (DetectorColumn c : {DetectorColumn::dla, DetectorColumn::dla_delta}) {
                if (!ImGui::TableNextColumn()) continue;
                const float v = head_value(s, c, l, hd);
                if (std::isnan(v)) ImGui::TextDisabled("—");
                else if (c == DetectorColumn::dla_delta) ImGui::TextUnformatted((std::string(v > 0 ? "+" : "") + format_value(v, 2)).c_str());
                else ImGui::TextUnformatted(format_value(v, 2).c_str());
                if (ImGui::IsItemHovered() && !std::isnan(v)) {
                    const float before = head_value(s, DetectorColumn::dla, l, hd) - (ablated ? head_value(s, DetectorColumn::dla_delta, l, hd) : 0.f);
                    ImGui::SetTooltip("layer %d, head %d: DLA %s%s", l, hd, format_exact(before).c_str(),
                                      ablated ? (" before → " + format_exact(head_value(s, DetectorColumn::dla, l, hd)) + " after").c_str() : "");
                }
                if (ui.layout && c == DetectorColumn::dla) {
                    const float mid = (r0.y + r1.y) / 2;
                    if (mid >= table_top && mid <= table_bottom) {
                        LayoutItem it;
                        it.kind = "dla_cell";
                        it.head = hd, it.position = l, it.value = v;
                        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
                        it.x = a.x, it.y = a.y, it.w = b.x - a.x, it.h = b.y - a.y;
                        ui.layout->push_back(it);
                    }
                }
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

std::string format_delta(double d) {
    if (std::isnan(d)) return "NaN";
    if (d == 0) return "0.0 (exactly)";
    const std::string v = format_value(float(d), 4);
    return d > 0 ? "+" + v : v;
}

namespace {

// The rows of the before / after table: a name and the two values.
struct BoxRow {
    std::string name;
    double before = NAN, after = NAN;
};

std::vector<BoxRow> box_rows(const AppState& s) {
    const AblationNumbers& n = s.ablation.numbers;
    std::vector<BoxRow> rows;
    if (!s.shown.input) return rows;
    if (mode(s) == Mode::gpt_model) {
        rows.push_back({"next-token loss", n.clean.loss, n.ablated.loss});
        return rows;
    }
    rows.push_back({"task loss", n.clean.task.loss, n.ablated.task.loss});
    for (const auto& [key, v] : n.clean.task.accuracy) {
        double after = NAN;
        for (const auto& [k2, v2] : n.ablated.task.accuracy)
            if (k2 == key) after = v2;
        rows.push_back({"accuracy " + key, v, after});
    }
    return rows;
}

std::string token_prob(const AppState& s, const TokenProb& tp) { return model_token_label(s, tp.token) + " " + format_value(tp.prob, 3); }

} // namespace

namespace {
void draw_ablation_box_lines(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact);
} // namespace

float ablation_box_height(const AppState& s, const UiContext& ui, float width, bool compact) {
    const ImGuiStyle& st = ImGui::GetStyle();
    const float frame = ImGui::GetFrameHeightWithSpacing(), fs = ui.fonts->small->FontSize;
    const float line = fs + st.ItemSpacing.y;                      // a line of small text
    const float row = fs + 2 * st.CellPadding.y;                    // a table row of small text
    if (!s.shown.input) return 3 * line;
    if (s.ablation.applied.empty()) {
        if (compact) return frame + line;
        const char* hint = "Click a head's corner mark, its box in the table, or press A over it: its output is replaced "
                           "and the model runs again.";
        return frame + ui.fonts->small->CalcTextSizeA(fs, FLT_MAX, width, hint).y + st.ItemSpacing.y;
    }
    const float rows = float(box_rows(s).size());
    float h = frame + (compact ? rows * row : line + (rows + 1) * row) + st.ItemSpacing.y;
    if (mode(s) == Mode::gpt_model) h += compact ? 2 * line : 6 * row + st.ItemSpacing.y;
    return h;
}

void draw_ablation_box(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact) {
    ImGui::SetCursorScreenPos(p0);
    ImGui::BeginGroup(); // every line starts at p0.x, not at the window's left
    draw_ablation_box_lines(s, ui, p0, p1, compact);
    ImGui::EndGroup();
}

namespace {

void draw_ablation_box_lines(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact) {
    ImGui::PushID("ablation_box");
    ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
    const float width = p1.x - p0.x;
    if (!s.shown.input) {
        ImGui::TextDisabled("Ablating a head needs a model: train one in the Train view (Open in the views) or open "
                            "one with --model.");
        ImGui::PopTextWrapPos();
        ImGui::PopID();
        return;
    }
    const bool ablated = !s.ablation.applied.empty();
    // The mode, the heads and Restore all on one line.
    ImGui::AlignTextToFramePadding();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ablated ? ui.pal.warning : ui.pal.text), ablated ? "Ablated:" : "Ablation:");
    ImGui::SameLine();
    int how = int(s.ablation.edit.mode);
    const bool m0 = ImGui::RadioButton("zero", &how, int(AblationMode::zero));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The head's output (hook_z) is set to 0 at every position.");
    ImGui::SameLine();
    const bool m1 = ImGui::RadioButton("mean", &how, int(AblationMode::mean));
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", mode(s) == Mode::gpt_model ? "The head's output is set to its mean over the text's positions (the clean model's)."
                                                           : "The head's output is set to its mean over the accuracy probe (256 sequences, "
                                                             "every position; the clean model's).");
    if (m0 || m1) request_ablation(s, s.ablation.edit.heads, AblationMode(how));
    ImGui::SameLine();
    ImGui::BeginDisabled(!ablated);
    if (ImGui::SmallButton("Restore all")) restore_all_heads(s);
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Every head back (Shift+A): the clean model.");
    ImGui::EndDisabled();
    ImFont* f = ui.fonts->small;
    ImGui::PushFont(f);
    if (!ablated) {
        if (!compact)
            ImGui::TextDisabled("Click a head's corner mark, its box in the table, or press A over it: its output is replaced "
                                "and the model runs again.");
        else
            ImGui::TextDisabled("A or a head's corner mark ablates it.");
        ImGui::PopFont();
        ImGui::PopTextWrapPos();
        ImGui::PopID();
        return;
    }
    if (!compact) // the heads are crossed out in the grid and ticked in the table; said once more here
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.warning), "%s",
                           fit_text(f, ablated_heads_text(s.ablation.applied) + ": every view shows the ablated model", width).c_str());
    // before -> after -> Δ, in a table so that the numbers line up.
    const std::vector<BoxRow> rows = box_rows(s);
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_NoPadOuterX;
    if (ImGui::BeginTable("before_after", 4, flags, ImVec2(width, 0))) {
        ImGui::TableSetupColumn("", 0, 1.5f);
        ImGui::TableSetupColumn("before", 0, 1.f);
        ImGui::TableSetupColumn("after", 0, 1.f);
        ImGui::TableSetupColumn("Δ", 0, 1.2f);
        if (!compact) ImGui::TableHeadersRow(); // compact: the after column is the coloured one
        for (const BoxRow& r : rows) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.name.c_str());
            for (int k = 0; k < 3; ++k) {
                ImGui::TableNextColumn();
                const double v = k == 0 ? r.before : k == 1 ? r.after : r.after - r.before;
                std::string t = k == 2 ? format_delta(v) : format_value(float(v), 4);
                if (compact && k > 0) t = (k == 1 ? "→ " : "Δ ") + t; // no header row: the arrow says which is which
                const ImVec2 at = ImGui::GetCursorScreenPos();
                if (k == 1) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.warning), "%s", t.c_str());
                else ImGui::TextUnformatted(t.c_str());
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s: %.9g before, %.9g after", r.name.c_str(), r.before, r.after);
                if (ui.layout) {
                    LayoutItem it;
                    it.kind = "ablation_number";
                    it.name = r.name + (k == 0 ? " before" : k == 1 ? " after" : " delta");
                    it.value = float(v);
                    const ImVec2 b = ImGui::GetItemRectMax();
                    it.x = at.x, it.y = at.y, it.w = b.x - at.x, it.h = b.y - at.y;
                    ui.layout->push_back(it);
                }
            }
        }
        ImGui::EndTable();
    }
    // GPT: the top 5 at the predictions' position, before and after.
    const AblationNumbers& n = s.ablation.numbers;
    if (mode(s) == Mode::gpt_model) {
        const std::vector<std::string>& words = position_words(s);
        const std::string at = "top 5 after " + std::to_string(n.pos) +
                               (size_t(n.pos) < words.size() ? " “" + words[size_t(n.pos)] + "”" : "");
        if (compact) {
            // Two lines, as many as fit: before and after.
            for (int k = 0; k < 2; ++k) {
                const std::vector<TokenProb>& top = k == 0 ? n.clean.top : n.ablated.top;
                std::string line = k == 0 ? "before: " : "after: ";
                for (size_t i = 0; i < top.size(); ++i) {
                    const std::string more = (i ? " · " : "") + token_prob(s, top[i]);
                    if (text_size(f, line + more).x > width) break;
                    line += more;
                }
                ImGui::TextUnformatted(line.c_str());
            }
        } else if (ImGui::BeginTable("top5", 3, flags, ImVec2(width, 0))) {
            ImGui::TableSetupColumn(fit_text(f, at, width * 0.3f).c_str(), 0, 0.6f);
            ImGui::TableSetupColumn("before", 0, 1.f);
            ImGui::TableSetupColumn("after", 0, 1.f);
            ImGui::TableHeadersRow();
            for (size_t i = 0; i < 5; ++i) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextDisabled("%zu", i + 1);
                for (int k = 0; k < 2; ++k) {
                    ImGui::TableNextColumn();
                    const std::vector<TokenProb>& top = k == 0 ? n.clean.top : n.ablated.top;
                    if (i >= top.size()) continue;
                    ImGui::TextUnformatted(token_prob(s, top[i]).c_str());
                    if (ui.layout) {
                        LayoutItem it;
                        it.kind = "ablation_top";
                        it.name = model_token_label(s, top[i].token) + (k == 0 ? " before" : " after");
                        it.position = int(i);
                        it.value = top[i].prob;
                        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
                        it.x = a.x, it.y = a.y, it.w = b.x - a.x, it.h = b.y - a.y;
                        ui.layout->push_back(it);
                    }
                }
            }
            ImGui::EndTable();
        }
    }
    ImGui::PopFont();
    ImGui::PopTextWrapPos();
    ImGui::PopID();
}

} // namespace

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
    int picked = s.model_view.predict_pos < 0 ? N - 1 : s.model_view.predict_pos;
    ImGui::SetNextItemWidth(std::min(width * 0.4f, 160 * ui.scale));
    if (ImGui::SliderInt("##pos", &picked, 0, N - 1, "position %d")) s.model_view.predict_pos = picked;
    ImGui::SameLine();
    const std::string at = size_t(pos) < words.size() ? "“" + words[size_t(pos)] + "”" : "";
    ImGui::TextUnformatted(at.c_str());
    ImGui::PopID();
    float y = ImGui::GetCursorScreenPos().y;
    const std::vector<TokenProb>* top = size_t(pos) < s.model_view.predictions.size() ? &s.model_view.predictions[size_t(pos)] : nullptr;
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
    const std::string sep = mode(s) == Mode::gpt_model ? "" : " ";
    for (int t = std::max(0, pos - 11); t <= pos && size_t(t) < words.size(); ++t) context += (context.empty() ? "" : sep) + words[size_t(t)];
    if (pos > 11) context = "… " + context;
    dl->AddText(f, f->FontSize, ImVec2(p0.x, y), pal.text_dim, fit_text(f, context + "  →  ?", width).c_str());
    y += ImGui::GetTextLineHeightWithSpacing();
    const float name_w = text_size(f, mode(s) == Mode::gpt_model ? "·WWWWWW" : "WWWW").x, num_w = text_size(f, "0.000").x + std::round(8 * ui.scale);
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
