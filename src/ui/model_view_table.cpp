// model_view_table.cpp: the Model view's right column besides the head detector's table
// (model_view_detector.cpp): the ablation's box and the next-token predictions at the
// cursor's position, as Transformer Explainer shows them.
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

int shown_prediction_pos(const AppState& s) {
    if (s.model_view.predict_hover >= 0) return s.model_view.predict_hover;
    return s.model_view.predict_pos < 0 ? s.config.applied.seq_len - 1 : s.model_view.predict_pos;
}

namespace {

bool has_lm(const AppState& s) {
    return has_next_token_head(s);
}

} // namespace

std::string prediction_line(const AppState& s) {
    if (!has_lm(s)) return "";
    const int pos = std::clamp(shown_prediction_pos(s), 0, s.config.applied.seq_len - 1);
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

// The numbers recompute keeps for the model (recompute_ablation.cpp): the task's loss and
// accuracies on the probe when it has a task, else the next-token loss on its text.
std::vector<BoxRow> box_rows(const AppState& s) {
    const AblationNumbers& n = s.ablation.numbers;
    std::vector<BoxRow> rows;
    if (n.clean.task.accuracy.empty()) {
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
    if (!heads_ablatable(s)) return 3 * line;
    if (s.ablation.applied.empty()) {
        if (compact) return frame + line;
        const char* hint = "Click a head's corner mark, its box in the table, or press A over it: its output is replaced "
                           "and the model runs again.";
        return frame + ui.fonts->small->CalcTextSizeA(fs, FLT_MAX, width, hint).y + st.ItemSpacing.y;
    }
    const float rows = float(box_rows(s).size());
    float h = frame + (compact ? rows * row : line + (rows + 1) * row) + st.ItemSpacing.y;
    if (source_kind(s).ablation_top5) h += compact ? 2 * line : 6 * row + st.ItemSpacing.y;
    return h;
}

void draw_ablation_box(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact) {
    ImGui::SetCursorScreenPos(p0);
    ImGui::BeginGroup(); // every line starts at p0.x, not at the window's left
    draw_ablation_box_lines(s, ui, p0, p1, compact);
    ImGui::EndGroup();
}

namespace {

// The mode, the heads and Restore all on one line; returns whether any head is ablated.
bool ablation_mode_line(AppState& s, UiContext& ui) {
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
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", source_kind(s).mean_ablation_tip);
    if (m0 || m1) request_ablation(s, s.ablation.edit.heads, AblationMode(how));
    ImGui::SameLine();
    ImGui::BeginDisabled(!ablated);
    if (ImGui::SmallButton("Restore all")) restore_all_heads(s);
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Every head back (Shift+A): the clean model.");
    ImGui::EndDisabled();
    return ablated;
}

// before -> after -> Δ, in a table so that the numbers line up.
void ablation_numbers_table(AppState& s, UiContext& ui, float width, bool compact) {
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_NoPadOuterX;
    const std::vector<BoxRow> rows = box_rows(s);
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
}

// The top 5 at the predictions' position, before and after, where the numbers have them (GPT).
void ablation_top5(AppState& s, UiContext& ui, float width, bool compact) {
    ImFont* f = ui.fonts->small;
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_NoPadOuterX;
    const AblationNumbers& n = s.ablation.numbers;
    if (!source_kind(s).ablation_top5) return;
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

void draw_ablation_box_lines(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact) {
    ImGui::PushID("ablation_box");
    ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
    const float width = p1.x - p0.x;
    if (!heads_ablatable(s)) {
        ImGui::TextDisabled("Ablating a head needs a model: train one in the Train view (Open in the views) or open "
                            "one with --model.");
        ImGui::PopTextWrapPos();
        ImGui::PopID();
        return;
    }
    const bool ablated = ablation_mode_line(s, ui);
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
    ablation_numbers_table(s, ui, width, compact);
    ablation_top5(s, ui, width, compact);
    ImGui::PopFont();
    ImGui::PopTextWrapPos();
    ImGui::PopID();
}

} // namespace

float predictions_height(const AppState& s, const UiContext& ui, bool compact) {
    if (!has_lm(s)) return 0;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    if (compact) return ImGui::GetFrameHeightWithSpacing() + line;
    return ImGui::GetFrameHeightWithSpacing() + line + 5 * (ui.fonts->small->FontSize + ui.text_pad());
}

float draw_predictions(AppState& s, UiContext& ui, ImVec2 p0, float width, bool compact) {
    if (!has_lm(s)) return 0;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const int N = s.config.applied.seq_len;
    const int pos = std::clamp(shown_prediction_pos(s), 0, N - 1);
    const std::vector<std::string>& words = position_words(s);
    ImGui::SetCursorScreenPos(p0);
    ImGui::PushID("predictions");
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Next token after");
    ImGui::SameLine();
    // The picker: the keyboard's way to a position (Up / Down in this view), -1 the last.
    int picked = s.model_view.predict_pos < 0 ? N - 1 : s.model_view.predict_pos;
    constexpr float picker_w = 160; // the slider at most: its "position 63" and a little room
    ImGui::SetNextItemWidth(std::min(width * 0.4f, ui.scaled(picker_w)));
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
    const std::string sep = source_kind(s).label_separator;
    for (int t = std::max(0, pos - 11); t <= pos && size_t(t) < words.size(); ++t) context += (context.empty() ? "" : sep) + words[size_t(t)];
    if (pos > 11) context = "… " + context;
    dl->AddText(f, f->FontSize, ImVec2(p0.x, y), pal.text_dim, fit_text(f, context + "  →  ?", width).c_str());
    y += ImGui::GetTextLineHeightWithSpacing();
    const float name_w = text_size(f, source_kind(s).label_width_sample).x, num_w = text_size(f, "0.000").x + ui.label_gap();
    const float row_h = f->FontSize + ui.text_pad();
    if (!top || top->empty()) {
        dl->AddText(f, f->FontSize, ImVec2(p0.x, y), pal.text_dim, "computing…");
        return 5 * row_h;
    }
    for (const TokenProb& tp : *top) {
        const std::string name = fit_text(f, model_token_label(s, tp.token), name_w - ui.small_gap());
        dl->AddText(f, f->FontSize, ImVec2(p0.x, y), pal.text, name.c_str());
        const float x0 = p0.x + name_w, x1 = p0.x + width - num_w;
        const float v = std::isnan(tp.prob) ? 0.f : std::clamp(tp.prob, 0.f, 1.f);
        dl->AddRectFilled(ImVec2(x0, y + 2), ImVec2(x1, y + row_h - 4), pal.panel);
        dl->AddRectFilled(ImVec2(x0, y + 2), ImVec2(x0 + (x1 - x0) * v, y + row_h - 4), pal.accent);
        dl->AddText(f, f->FontSize, ImVec2(x1 + ui.text_pad(), y), pal.text, format_value(tp.prob, 3).c_str());
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
