// model_view_detector.cpp: the Model view's head detector table: per head its previous-token,
// duplicate and induction scores on the text, the induction score on repeated random
// sequences, its direct logit attribution and the ablation's box, sortable by each column
// with ImGui's sort specs (the rest of the right column is model_view_table.cpp).
#include "format.h"
#include "inputs.h"
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
    case DetectorColumn::dla: return heads_ablatable(s) ? dla(ablated ? n.ablated : n.clean) : NAN;
    case DetectorColumn::dla_delta: return heads_ablatable(s) && ablated ? dla(n.ablated) - dla(n.clean) : NAN;
    case DetectorColumn::ablate: return heads_ablatable(s) ? (s.ablation.applied.has(layer, head) ? 1.f : 0.f) : NAN;
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

// The table's explanation: what each score is measured on, and how the table is used.
std::string detector_explanation(const AppState& s) {
    const HeadDetection& d = s.model_view.detection;
    std::string what = "prev, dup, ind: on the sequence shown (—: no query there has an earlier copy of its token); ";
    if (!d.repeat_induction.empty())
        what += "ind (rep.): on " + std::to_string(d.repeat_count) + " random sequences " +
                (d.repeat_bos < 0 ? std::string() : source_kind(s).bos_text + std::string(" ")) + "r r filler, r of " +
                std::to_string(d.repeat_len) + " tokens (seed " + std::to_string(d.repeat_seed) + ").";
    else
        what += "ind (rep.) needs a model with a vocabulary (n/a).";
    what += " Click a column to sort, a row to open the head.";
    return what;
}

// "Head detector" and its explanation (a tooltip when compact); returns the table's top.
float draw_detector_title(const AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact) {
    const std::string what = detector_explanation(s);
    ImGui::SetCursorScreenPos(p0);
    ImGui::TextUnformatted(compact ? "Head detector (?)" : "Head detector");
    if (compact && ImGui::IsItemHovered()) {
        ImGui::PushTextWrapPos(ui.px(480));
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
    return ImGui::GetCursorScreenPos().y + ui.px(2);
}

// What every row of the table draws with.
struct DetectorRows {
    bool model = false;   // a model in the views: the ablate box and the DLA
    bool ablated = false; // heads ablated: the Δ DLA column, and the clean scores on hover
    bool repeat = false;  // the repeated sequences were measured
    float table_top = 0, table_bottom = 0; // the visible part, below the frozen header
    ImVec2 p0, p1;
};

// The eight columns: the ablate box and the head's name keep their width, the scores share
// the rest.
void setup_detector_columns(const AppState& s, UiContext& ui, const DetectorRows& t) {
    const ImGuiTableColumnFlags off = ImGuiTableColumnFlags_Disabled;
    // Too narrow for every score (text size 2 beside the grid): the text's dup and ind
    // columns give way to the ablation's (their scores are in the grid's tags).
    const ImGuiStyle& st = ImGui::GetStyle();
    const float cell_w = ImGui::CalcTextSize("−0.00").x + 2 * st.CellPadding.x;
    const bool narrow =
        t.model && t.p1.x - t.p0.x < ImGui::CalcTextSize("abl.L0 h0").x + 4 * st.CellPadding.x + float(t.ablated ? 6 : 5) * cell_w;
    const ImGuiTableColumnFlags text_only = narrow ? off : 0;
    ImGui::TableSetupScrollFreeze(0, 1);
    const float box_w = std::max(ImGui::GetFontSize(), ImGui::CalcTextSize("abl.").x);
    ImGui::TableSetupColumn("abl.", ImGuiTableColumnFlags_NoSort | ImGuiTableColumnFlags_WidthFixed | (t.model ? 0 : off), box_w,
                            int(DetectorColumn::ablate));
    const float name_w = ImGui::CalcTextSize(layer_count(s) > 10 ? "L11 h11" : "L1 h1").x;
    ImGui::TableSetupColumn("head", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_WidthFixed,
                            std::max(name_w, ImGui::CalcTextSize("head").x + ImGui::GetFontSize()) + ui.px(2),
                            int(DetectorColumn::head));
    ImGui::TableSetupColumn("prev", ImGuiTableColumnFlags_PreferSortDescending, 1.f, int(DetectorColumn::prev));
    ImGui::TableSetupColumn("dup", ImGuiTableColumnFlags_PreferSortDescending | text_only, 1.f, int(DetectorColumn::dup));
    ImGui::TableSetupColumn("ind", ImGuiTableColumnFlags_PreferSortDescending | text_only, 1.f, int(DetectorColumn::ind_text));
    ImGui::TableSetupColumn("ind (rep.)", ImGuiTableColumnFlags_PreferSortDescending, t.model ? 1.f : 1.6f, int(DetectorColumn::ind_repeat));
    ImGui::TableSetupColumn("DLA", ImGuiTableColumnFlags_PreferSortDescending | (t.model ? 0 : off), 1.f, int(DetectorColumn::dla));
    ImGui::TableSetupColumn("Δ DLA", ImGuiTableColumnFlags_PreferSortDescending | (t.ablated ? 0 : off), 1.2f,
                            int(DetectorColumn::dla_delta));
}

// The header row by hand, so that the DLA's header says where and onto what it is taken.
void draw_detector_header(const AppState& s, UiContext& ui) {
    const AblationNumbers& n = s.ablation.numbers;
    const ImGuiStyle& st = ImGui::GetStyle();
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
                      source_kind(s).dla_path + " (Up / Down moves the position)." +
                      (c == 7 ? " Δ: after the ablation minus before." : "");
            if (!tip.empty()) {
                ImGui::PushTextWrapPos(ui.px(420));
                ImGui::SetTooltip("%s", tip.c_str());
                ImGui::PopTextWrapPos();
            }
        }
    }
}

// Recorded for --layout-out as the rectangle a-b when `mid`, the middle of the item's row, is
// inside the table's visible part (the clipper submits a row either side of it; a selectable
// reaches half a spacing into its neighbours).
void record_cell(UiContext& ui, const DetectorRows& t, LayoutItem it, ImVec2 a, ImVec2 b, float mid) {
    if (!ui.layout || mid < t.table_top || mid > t.table_bottom) return;
    it.x = a.x, it.y = a.y, it.w = b.x - a.x, it.h = b.y - a.y;
    ui.layout->push_back(it);
}

// The ablate box: submitted before the row's selectable, so that it takes the click.
void draw_ablate_cell(AppState& s, UiContext& ui, const DetectorRows& t, int l, int hd, bool off_head) {
    if (!ImGui::TableNextColumn()) return;
    ImGui::PushID(l * 4096 + hd);
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(ui.px(2), 0));
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
    LayoutItem it;
    it.kind = "ablate_check";
    it.name = off_head ? "ablated" : "";
    it.head = hd, it.position = l, it.value = off_head ? 1.f : 0.f;
    record_cell(ui, t, it, c0, c1, (c0.y + c1.y) / 2);
}

// The head's name, in its role's colour (the warning's when ablated): a selectable across the
// row that opens the head in the scores view. Returns the head's role (nullptr: none).
const HeadRole* draw_head_name_cell(AppState& s, UiContext& ui, int l, int hd, bool off_head) {
    ImGui::TableNextColumn();
    const HeadRole* role = nullptr;
    for (const HeadRole& x : s.model_view.roles)
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
    return role;
}

// The detector's four scores of the run shown.
void draw_score_cells(const AppState& s, UiContext& ui, const DetectorRows& t, int l, int hd) {
    const HeadDetection& d = s.model_view.detection;
    for (DetectorColumn c : {DetectorColumn::prev, DetectorColumn::dup, DetectorColumn::ind_text, DetectorColumn::ind_repeat}) {
        if (!ImGui::TableNextColumn()) continue; // a column given way (narrow)
        const int kind = c == DetectorColumn::prev ? 0 : c == DetectorColumn::dup ? 1 : 2;
        score_cell(ui, detector_score(d, c, l, hd), c != DetectorColumn::ind_repeat || t.repeat, kind);
        // With heads ablated the cell is the ablated model's; the clean score is one hover away.
        if (t.ablated && ImGui::IsItemHovered()) {
            const float before = detector_score(s.ablation.numbers.clean.detection, c, l, hd), after = detector_score(d, c, l, hd);
            const char* what = c == DetectorColumn::prev ? "previous-token" : c == DetectorColumn::dup ? "duplicate"
                             : c == DetectorColumn::ind_text ? "induction on the text" : "induction on repeated sequences";
            ImGui::SetTooltip("layer %d, head %d, %s: %s with the ablation, %s before", l, hd, what,
                              std::isnan(after) ? "—" : format_value(after, 3).c_str(),
                              std::isnan(before) ? "—" : format_value(before, 3).c_str());
        }
    }
}

// The DLA (of the run shown) and its change by the ablation. `r0`, `r1`: the row's rectangle.
void draw_dla_cells(const AppState& s, UiContext& ui, const DetectorRows& t, int l, int hd, ImVec2 r0, ImVec2 r1) {
    for (DetectorColumn c : {DetectorColumn::dla, DetectorColumn::dla_delta}) {
        if (!ImGui::TableNextColumn()) continue;
        const float v = head_value(s, c, l, hd);
        if (std::isnan(v)) ImGui::TextDisabled("—");
        else if (c == DetectorColumn::dla_delta) ImGui::TextUnformatted((std::string(v > 0 ? "+" : "") + format_value(v, 2)).c_str());
        else ImGui::TextUnformatted(format_value(v, 2).c_str());
        if (ImGui::IsItemHovered() && !std::isnan(v)) {
            const float before = head_value(s, DetectorColumn::dla, l, hd) - (t.ablated ? head_value(s, DetectorColumn::dla_delta, l, hd) : 0.f);
            ImGui::SetTooltip("layer %d, head %d: DLA %s%s", l, hd, format_exact(before).c_str(),
                              t.ablated ? (" before → " + format_exact(head_value(s, DetectorColumn::dla, l, hd)) + " after").c_str() : "");
        }
        if (c == DetectorColumn::dla) {
            LayoutItem it;
            it.kind = "dla_cell";
            it.head = hd, it.position = l, it.value = v;
            record_cell(ui, t, it, ImGui::GetItemRectMin(), ImGui::GetItemRectMax(), (r0.y + r1.y) / 2);
        }
    }
}

// One head's row: the ablate box, its name, its scores and its DLA.
void draw_detector_row(AppState& s, UiContext& ui, const DetectorRows& t, int l, int hd) {
    ImGui::TableNextRow();
    const bool off_head = t.model && s.ablation.applied.has(l, hd);
    draw_ablate_cell(s, ui, t, l, hd, off_head);
    const HeadRole* role = draw_head_name_cell(s, ui, l, hd, off_head);
    const ImVec2 r0 = ImGui::GetItemRectMin(), r1 = ImGui::GetItemRectMax();
    draw_score_cells(s, ui, t, l, hd);
    draw_dla_cells(s, ui, t, l, hd, r0, r1);
    LayoutItem it;
    it.kind = "detector_row";
    it.name = role ? role_tag(role->kind) : "";
    it.head = hd;
    it.position = l;
    record_cell(ui, t, it, ImVec2(t.p0.x, r0.y), ImVec2(t.p1.x, r1.y), (r0.y + r1.y) / 2);
}

} // namespace

void draw_detector_table(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact) {
    const float top = draw_detector_title(s, ui, p0, p1, compact);
    const float h = std::max(p1.y - top, ImGui::GetFrameHeight() * 3);
    ImGui::SetCursorScreenPos(ImVec2(p0.x, top));
    const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("detector", 8, flags, ImVec2(p1.x - p0.x, h))) return;
    DetectorRows t;
    t.model = heads_ablatable(s), t.ablated = t.model && !s.ablation.applied.empty();
    t.repeat = !s.model_view.detection.repeat_induction.empty();
    t.p0 = p0, t.p1 = p1;
    setup_detector_columns(s, ui, t);
    draw_detector_header(s, ui);
    t.table_top = ImGui::GetCursorScreenPos().y - 1, t.table_bottom = top + h + 1; // below the frozen header
    DetectorColumn col = DetectorColumn::head;
    bool descending = false;
    if (const ImGuiTableSortSpecs* spec = ImGui::TableGetSortSpecs(); spec && spec->SpecsCount > 0) {
        col = DetectorColumn(spec->Specs[0].ColumnUserID);
        descending = spec->Specs[0].SortDirection == ImGuiSortDirection_Descending;
    }
    const std::vector<std::pair<int, int>> rows = sorted_heads(s, col, descending);
    // Only the rows on screen are submitted (GPT-2 small has 144).
    ImGuiListClipper clipper;
    clipper.Begin(int(rows.size()));
    while (clipper.Step())
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) draw_detector_row(s, ui, t, rows[size_t(r)].first, rows[size_t(r)].second);
    ImGui::EndTable();
}

} // namespace attnviz
