// causality_view.cpp: the lesson's worked example as an experiment. Pick position p, drag
// the strength from the original row (0) to the lesson's replacement row (1), and watch
// which outputs move: a bar per position of max |Δy|, exact zeros said in words.
#include "format.h"
#include "inputs.h"
#include "text_fit.h"
#include "model_io.h"
#include "specs.h"
#include "views.h"
#include "widgets.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

// A trained model's strength slider and the letter it blends toward: 0 is the embedding of
// the letter at p, 1 the chosen letter's, wte[letter] + wpe[p] (default: the next letter,
// as attnviz trace --perturb replaces it).
void draw_toward(AppState& s, UiContext& ui, float rest, float& a, const ToyModel& toy) {
    const ModelConfig& c = toy.input->model->config;
    const int now = replacement_token(s, s.p);
    const std::string preview = token_name(c, now) + (s.shown.replace_token < 0 ? " (next)" : "");
    const float combo_w = text_size(ui.fonts->body, "m (next)").x + ImGui::GetFrameHeight() + ui.scaled(12);
    const float label_w = text_size(ui.fonts->body, "toward").x + 2 * ImGui::GetStyle().ItemSpacing.x;
    ImGui::SetNextItemWidth(std::max(ui.scaled(80), rest - combo_w - label_w - ui.scaled(8)));
    ImGui::SliderFloat("##strength", &a, 0.f, 1.f, "%.2f");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("0: the embedding of the letter at p. 1: the chosen letter's, wte[letter] + wpe[p]; between, "
                          "a blend of the two. Every block runs again on it.");
    ImGui::SameLine();
    ImGui::TextUnformatted("toward");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(combo_w);
    if (ImGui::BeginCombo("##toward", preview.c_str())) {
        if (ImGui::Selectable("the next letter", s.shown.replace_token < 0)) request_replacement(s, -1);
        for (int t = 0; t < c.vocab; ++t)
            if (ImGui::Selectable(token_name(c, t).c_str(), t == s.shown.replace_token)) request_replacement(s, t);
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The letter position p is blended toward.");
}

// The controls: p and strength, and a toy model's letter. Edits go through
// request_perturbation (recompute applies them).
void draw_perturb_controls(AppState& s, UiContext& ui, ImVec2 pos, float width, const ToyModel* toy) {
    const int T = s.config.applied.seq_len;
    int p = s.p;
    float a = s.strength;
    ImGui::SetCursorScreenPos(pos);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("position p");
    ImGui::SameLine();
    // With words, each choice says its word ("2 saw") while the choices take at most half the row.
    const std::vector<std::string>& words = position_words(s);
    bool worded = !words.empty();
    // A trained model's position 0 is BOS, which is never replaced.
    const int first = first_replaceable(s);
    if (worded && T <= 12) {
        float total = 0;
        for (int t = first; t < T; ++t)
            total += ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::GetStyle().ItemSpacing.x +
                     ImGui::CalcTextSize(position_label(words, t, 8).c_str()).x;
        worded = total <= width * 0.5f;
    }
    // A trained model's row also holds the letter combo: the radio buttons give way to a
    // slider when the row would overflow (large text).
    bool radios = T <= 12;
    if (radios && toy) {
        float total = 0;
        for (int t = first; t < T; ++t)
            total += ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::GetStyle().ItemSpacing.x +
                     ImGui::CalcTextSize(worded ? position_label(words, t, 8).c_str() : std::to_string(t).c_str()).x;
        const float rest = text_size(ui.fonts->body, "position p strength toward m (next)").x + ImGui::GetFrameHeight() +
                           ui.scaled(120 + 60);
        radios = total + rest <= width;
    }
    if (radios) {
        for (int t = first; t < T; ++t) {
            ImGui::PushID(t);
            if (ImGui::RadioButton(worded ? position_label(words, t, 8).c_str() : std::to_string(t).c_str(), p == t)) p = t;
            if (!words.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("position %d: “%s”", t, words[size_t(t)].c_str());
            ImGui::PopID();
            ImGui::SameLine();
        }
    } else {
        ImGui::SetNextItemWidth(ui.px(150));
        // The slider shows "2 saw" with words (a % in a word is doubled for the format).
        std::string format = "%d";
        if (!words.empty() && p >= 0 && p < T)
            for (char ch : " " + position_word(words, p, 10)) format += ch == '%' ? std::string("%%") : std::string(1, ch);
        ImGui::SliderInt("##p", &p, first, T - 1, format.c_str());
        ImGui::SameLine();
    }
    ImGui::SameLine(0, ui.px(18));
    ImGui::TextUnformatted("strength");
    ImGui::SameLine();
    const float rest = pos.x + width - ImGui::GetCursorScreenPos().x;
    if (toy) {
        draw_toward(s, ui, rest, a, *toy);
        request_perturbation(s, p, a);
        return;
    }
    // The lesson's button says its values when there is room beside a usable slider.
    const char* lesson_label = "The lesson: p = 2, strength 1";
    if (rest - text_size(ui.fonts->body, lesson_label).x - ui.scaled(32) < ui.scaled(120)) lesson_label = "Lesson";
    const float lesson_w = text_size(ui.fonts->body, lesson_label).x + ui.scaled(16);
    ImGui::SetNextItemWidth(std::max(ui.scaled(80), rest - lesson_w - ui.scaled(16)));
    ImGui::SliderFloat("##strength", &a, 0.f, 1.f, "%.2f");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("0: the original input row. 1: the lesson's replacement, x2[0, p] = torch.randn(C).");
    ImGui::SameLine();
    if (ImGui::Button(lesson_label)) {
        p = std::min(2, T - 1);
        a = 1.f;
    }
    request_perturbation(s, p, a);
}

// The bar chart of max |Δy| per position. Returns the x where the chart ends.
// `dy` and its summary `sum` (s.run.dy, or a trained model's last block's dy_out), laid out as
// bars named `name`.
float draw_bars(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, int t0, int n, const std::vector<float>& dy,
                const DySummary& sum, const std::string& title, const char* name) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* small = ui.fonts->small;
    ImFont* body = ui.fonts->body;
    const Palette& pal = ui.pal;
    const std::vector<std::string>& words = position_words(s);
    const int T = int(dy.size());
    if (T == 0) return p0.x;
    n = std::clamp(n, 1, T - t0);
    const float top_value = sum.top;

    const float title_h = body->FontSize + ui.px(4);
    dl->AddText(body, body->FontSize, p0, pal.text, fit_text(body, title, p1.x - p0.x).c_str());
    const float label_h = small->FontSize + 2;
    const float base_y = p1.y - label_h - ui.px(4); // baseline of the bars
    const float top_y = p0.y + title_h + label_h + ui.px(4);
    const float plot_h = std::max(base_y - top_y, 4.f);
    const float left = p0.x + ui.px(8);
    const std::string axis = "position t";
    // The axis name goes after the last bar, inside the chart's room.
    const float axis_w = text_size(small, axis).x + 12;
    const float slot = std::min(std::max(1.f, p1.x - left - axis_w) / float(n), ui.scaled(150));
    const float bar_w = std::max(1.f, std::floor(slot * 0.62f));
    dl->AddLine(ImVec2(left, base_y), ImVec2(left + slot * float(n), base_y), pal.frame, 1.f);
    // Labels for every bar or for none, so a missing label never hides a value.
    bool labels_fit = true;
    for (int i = 0; i < n && labels_fit; ++i) labels_fit = text_size(small, format_diff(dy[size_t(t0 + i)])).x <= slot - 2;
    for (int i = 0; i < n; ++i) {
        const int t = t0 + i;
        const float d = dy[size_t(t)];
        const float cx = left + slot * (float(i) + 0.5f);
        const float x0 = std::round(cx - bar_w * 0.5f), x1 = x0 + bar_w;
        float h = 0;
        if (std::isnan(d)) {
            h = plot_h;
            draw_swatch(ui, dl, ImVec2(x0, base_y - h), ImVec2(x1, base_y), 2);
        } else if (d != 0.f) {
            h = top_value > 0 ? std::max(2.f, std::round(plot_h * d / top_value)) : 2.f;
            dl->AddRectFilled(ImVec2(x0, base_y - h), ImVec2(x1, base_y), pal.bar);
        }
        // Label: the exact value above the bar when there is room.
        const std::string label = format_diff(d);
        const ImVec2 ls = text_size(small, label);
        const bool before_p = t < s.run.applied_p;
        if (labels_fit) {
            const ImU32 col = d == 0.f ? pal.exact_zero : std::isnan(d) ? pal.warning : pal.text;
            dl->AddText(small, small->FontSize, ImVec2(std::round(cx - ls.x * 0.5f), base_y - h - label_h), col, label.c_str());
        }
        if (d == 0.f && bar_w >= 6) // an exact zero: a flat marker on the baseline, no bar
            dl->AddLine(ImVec2(x0, base_y - 1), ImVec2(x1, base_y - 1), pal.exact_zero, 3.f);
        // The position's word when it fits the slot (cut with "…" if need be), else its number.
        std::string pos = std::to_string(t);
        if (!words.empty()) {
            const std::string word = fit_text(small, position_label(words, t), slot - 4);
            const std::string bare = fit_text(small, position_word(words, t), slot - 4);
            if (!word.empty() && word.size() > pos.size() + 2) pos = word;
            else if (!bare.empty()) pos = bare;
        }
        const ImVec2 ps = text_size(small, pos);
        if (slot >= ps.x + 4 || t % 10 == 0)
            dl->AddText(small, small->FontSize, ImVec2(std::round(cx - ps.x * 0.5f), base_y + 3),
                        t == s.run.applied_p ? pal.accent : before_p ? pal.exact_zero : pal.text_dim, pos.c_str());
        // Hover: the exact value.
        if (ImGui::IsMouseHoveringRect(ImVec2(cx - slot * 0.5f, top_y), ImVec2(cx + slot * 0.5f, base_y + label_h))) {
            ImGui::BeginTooltip();
            if (!words.empty())
                ImGui::Text("position %d “%s”: max |Δ| = %s", t, words[size_t(t)].c_str(), format_diff(d).c_str());
            else
                ImGui::Text("position %d: max |Δy| = %s", t, format_diff(d).c_str());
            if (d != 0.f && std::isfinite(d)) ImGui::TextDisabled("exact value %s", format_exact(d).c_str());
            ImGui::EndTooltip();
        }
        if (ui.layout)
            ui.layout->push_back(LayoutItem{"bar", name, -1, x0, base_y - h, bar_w, h, 0, 0, 0, 0, 0, 0, t, d});
    }
    dl->AddText(small, small->FontSize, ImVec2(left + slot * float(n) + 6, base_y + 3), pal.text_dim, axis.c_str());
    // Too many bars for their labels: say the exact zeros in one line instead.
    if (!labels_fit && s.run.applied_p > 0) {
        const int zeros = sum.zeros_before;
        std::string line = zeros == s.run.applied_p ? "positions 0–" + std::to_string(s.run.applied_p - 1) + ": 0.0 (exactly)"
                                                : std::to_string(s.run.applied_p - zeros) + " positions before p moved";
        line += "   ·   largest change " + format_diff(top_value);
        dl->AddText(small, small->FontSize, ImVec2(left, p0.y + title_h), zeros == s.run.applied_p ? pal.exact_zero : pal.warning,
                    fit_text(small, line, p1.x - left).c_str());
    }
    return left + slot * float(n) + text_size(small, axis).x + 12;
}

// One or two sentences on what the chart shows, in the lesson's words. Every claim is
// read off the numbers: "exactly 0.0" is said only when every earlier difference is 0.
std::string trained_verdict(const AppState& s, const ToyModel& toy) {
    const int p = s.run.applied_p;
    const ModelConfig& c = toy.input->model->config;
    if (p < 0)
        return "Drag the strength: 0 is the letter at p = " + std::to_string(s.p) + ", 1 is the embedding of “" +
               token_name(c, replacement_token(s, s.p)) + "” there; every block runs again on the blend.";
    const DySummary &a = s.run.dy_summary, &b = s.model_run.dy_out_summary;
    const std::string earlier = p == 1 ? "Position 0 (^) comes" : "Positions 0 to " + std::to_string(p - 1) + " come";
    const std::string block = "block " + std::to_string(s.shown.layer);
    if (a.before == 0.f && b.before == 0.f && !a.nan && !b.nan)
        return earlier + " before p = " + std::to_string(p) + ": every block's mask hides position " + std::to_string(p) +
               " from them, and the residual adds only their own rows, so " + block +
               "'s attention output and the model's output stay exactly 0.0 different. From p on they move (max " +
               format_value(a.after, 4) + " in " + block + ", " + format_value(b.after, 4) + " at the output).";
    return "Positions before p moved (max " + format_diff(std::max(a.before, b.before)) +
           "): something in the model lets an earlier position see a later one.";
}

std::string verdict(const AppState& s, const ToyModel* toy) {
    if (toy) return trained_verdict(s, *toy);
    const int p = s.run.applied_p;
    const Config& c = s.config.applied;
    if (p < 0) return "Drag the strength: 0 is the original input, 1 is the lesson's replacement row for position " +
                      std::to_string(s.p) + ".";
    const float before = s.run.dy_summary.before, after = s.run.dy_summary.after;
    const bool nan = s.run.dy_summary.nan;
    const std::string earlier = p == 1   ? "Position 0 comes"
                                : p == 2 ? "Positions 0 and 1 come"
                                         : "Positions 0 to " + std::to_string(p - 1) + " come";
    if (c.mask == MaskMode::off_by_one && nan)
        return "Off-by-one mask: row 0 sees no key at all, so its softmax is 0 / 0 and its output is NaN whatever the input. The same test catches it.";
    if (p == 0) return "Every position can see position 0, so every output may move (max " + format_diff(after) + ").";
    if (before != 0.f)
        return std::string(c.mask == MaskMode::none ? "No mask: " : "") + "positions before p move too (max " +
               format_diff(before) + ")." +
               (c.mask == MaskMode::none
                    ? " Each position could read the very token it must predict: training would silently cheat."
                    : "");
    return earlier + " before p = " + std::to_string(p) + ": the mask hides position " + std::to_string(p) +
           " from them, so their outputs stay exactly 0.0 different. Positions from p on can see it and move (max " +
           format_diff(after) + ").";
}

// The question, the perturbation's controls and the verdict under them, where the eye goes
// after moving them; returns the y under them.
float draw_causality_heading(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, const ToyModel* toy) {
    const float width = p1.x - p0.x, gap = ui.gap();
    float y = p0.y;
    ImFont* hf = ui.fonts->heading;
    std::string question = "Change position p = " + std::to_string(s.p);
    const std::vector<std::string>& words = position_words(s);
    if (s.p >= 0 && size_t(s.p) < words.size()) question += " (“" + position_word(words, s.p) + "”)";
    if (toy) question += " toward “" + model_token_label(s, replacement_token(s, s.p)) + "”";
    question += ". Which outputs move?";
    ImGui::GetWindowDrawList()->AddText(hf, hf->FontSize, ImVec2(p0.x, y), ui.pal.text, question.c_str());
    y += hf->FontSize + gap;
    draw_perturb_controls(s, ui, ImVec2(p0.x, y), width, toy);
    y += ImGui::GetFrameHeight() + gap;

    const std::string v = verdict(s, toy);
    const bool warn = s.config.applied.mask != MaskMode::causal && s.run.applied_p >= 0;
    ImGui::SetCursorScreenPos(ImVec2(p0.x, y));
    ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x); // wrap positions are window-local
    if (warn) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ui.pal.warning));
    ImGui::TextUnformatted(v.c_str());
    if (warn) ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
    return ImGui::GetCursorScreenPos().y + gap * 0.5f;
}

// Input -> weights -> output, with the changed cells outlined. The weights (heads head0 to
// head0 + nh - 1) show why: row p and column p change.
std::vector<Row> causality_rows(const AppState& s, UiContext& ui, const ViewWindow& win, bool with_weights, int nh) {
    Row r;
    RowItem x, y_out, arrow, arrow2;
    x.spec = spec_x(s, ui);
    x.spec.title = "input x";
    x.spec.highlight_row = s.p;
    x.spec.colorbar = true;
    arrow.op = "→";
    arrow.note = with_weights ? "attention" : "attention, proj";
    r.items.push_back(x);
    r.items.push_back(arrow);
    if (with_weights) {
        for (int h = win.head0; h < win.head0 + nh; ++h) {
            RowItem w;
            w.spec = spec_probs(s, ui, h);
            w.spec.title = "weights h" + std::to_string(h);
            w.spec.colorbar = true;
            r.items.push_back(w);
        }
        arrow2.op = "→";
        arrow2.note = "· v, proj";
        r.items.push_back(arrow2);
    }
    y_out.spec = spec_y(s, ui);
    y_out.spec.title = "output y";
    y_out.spec.minimap = true;
    y_out.spec.colorbar = true;
    r.items.push_back(y_out);
    return std::vector<Row>{r};
}

// The matrices between y and rows_bottom, with the weights when they leave the cells
// readable, or a line that says how to see them when even x and y do not fit. Returns the
// y under them; `with_matrices` says which.
float draw_causality_matrices(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, float y, float rows_bottom, bool& with_matrices) {
    ViewWindow& win = s.screen.windows[int(View::causality)];
    const float width = p1.x - p0.x;
    const float bar_h = window_bar_height(ui);
    const int H = s.run.trace.H;
    const int nh = std::min(H, 2);
    win.head0 = std::clamp(win.head0, 0, std::max(0, H - nh));
    std::vector<Row> rows = causality_rows(s, ui, win, true, nh);
    const bool with_weights = fit_cell(ui, rows, ImVec2(width, rows_bottom - y - bar_h), ui.scaled(56)) >= ui.scaled(26);
    if (!with_weights) rows = causality_rows(s, ui, win, false, nh);
    // With large text in a small window the matrices' labels alone would fill the room: the
    // chart, which answers the question, gets it all, and a line says how to see x and y.
    // Matrices too big for readable cells are drawn as a window of readable ones
    // (draw_rows); for them what must fit is the labels and a few such cells, say 8 x 8.
    const ImVec2 room(width, rows_bottom - y - bar_h);
    const float fit = fit_cell(ui, rows, room, ui.scaled(56));
    const std::vector<Row> window_rows = windowed_rows(rows, 8);
    const bool windowed = fit < ui.px(7);
    with_matrices = fit >= ui.scaled(12) || (windowed && fit_cell(ui, window_rows, room, ui.scaled(56)) >= ui.scaled(12));
    RowsResult rr;
    rr.bottom = y;
    if (with_matrices) {
        rr = draw_rows(ui, win, rows, ImVec2(p0.x, y + bar_h), ImVec2(p1.x, rows_bottom), ui.scaled(56));
        draw_window_bar(s, ui, win, ImVec2(p0.x, y), width * 0.62f, rr.windowed);
        if (with_weights && H > nh) draw_head_pager(s, ui, win, nh, ImVec2(p0.x + width * 0.64f, y));
    } else {
        ImFont* sf = ui.fonts->small;
        const char* note = "x and y are shown with smaller text (Ctrl+−) or a taller window.";
        ImGui::GetWindowDrawList()->AddText(sf, sf->FontSize, ImVec2(p0.x, y), ui.pal.text_dim, note, nullptr, width);
        rr.bottom = y + sf->FontSize + ui.gap();
    }
    // Clicking a row of x picks p.
    if (!rr.panels.empty() && !rr.panels[0].empty() && rr.panels[0][0].clicked)
        request_perturbation(s, rr.panels[0][0].row, s.strength > 0 ? s.strength : 1.f);
    return rr.bottom;
}

// The chart between bars_top and bars_bottom: every position when they fit, otherwise the
// rows y shows. Returns where the chart ends on the right.
float draw_causality_chart(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, float bars_top, float bars_bottom,
                           const ToyModel* toy) {
    const float width = p1.x - p0.x, gap = ui.gap();
    const int T = s.config.applied.seq_len;
    int t0 = 0, n = T;
    if (T > 64) {
        const LayoutItem* yl = nullptr;
        for (const LayoutItem& it : *ui.layout)
            if (it.kind == "heatmap" && it.name == "y") yl = &it;
        if (yl) t0 = yl->row0, n = yl->nrows;
    }
    if (!toy)
        return draw_bars(s, ui, ImVec2(p0.x, bars_top), ImVec2(p1.x, bars_bottom), t0, n, s.run.dy, s.run.dy_summary,
                         "max |Δy| per position: how far each output row moved from the unperturbed one", "dy");
    // A trained model: the block shown, and the model's output after its last block.
    const float half = std::floor((width - 2 * gap) / 2);
    const int L = toy->input->model->config.n_layer;
    draw_bars(s, ui, ImVec2(p0.x, bars_top), ImVec2(p0.x + half, bars_bottom), t0, n, s.run.dy, s.run.dy_summary,
              "block " + std::to_string(s.shown.layer) + "'s attn(h): max |Δy|", "dy");
    draw_bars(s, ui, ImVec2(p0.x + half + 2 * gap, bars_top), ImVec2(p1.x, bars_bottom), t0, n, s.model_run.dy_out, s.model_run.dy_out_summary,
              "output h after block " + std::to_string(L - 1) + ": max |Δh|", "dy_out");
    return p1.x;
}

// Beside the chart, when there is room: the lesson's question and what to try next.
void draw_causality_side_note(const AppState& s, UiContext& ui, float chart_end, float bars_top, ImVec2 p1) {
    if (p1.x - chart_end < ui.scaled(220)) return;
    const float x0 = chart_end + ui.scaled(8);
    const float ty = bars_top + ui.fonts->body->FontSize + ui.scaled(10);
    ImGui::SetCursorScreenPos(ImVec2(x0, ty));
    ImGui::BeginGroup(); // new lines start at x0
    ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
    ImGui::PushFont(ui.fonts->body);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "Check yourself");
    ImGui::TextUnformatted("Why does changing position p leave the outputs before p unchanged?");
    ImGui::Spacing();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "Try it");
    const char* hint = s.config.applied.mask == MaskMode::causal
                           ? "Set the mask to none in the side panel: the bars before p grow, the cheat a causal mask prevents. Off-by-one shows the NaN row the same test catches."
                       : s.config.applied.mask == MaskMode::none
                           ? "Set the mask back to causal: the bars before p drop to exactly 0.0."
                           : "Set the mask back to causal: row 0 attends to itself again and its NaN disappears.";
    ImGui::TextUnformatted(hint);
    ImGui::PopFont();
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
}

// The view for the lesson's module, and for a toy model (`toy`), whose letter at p is blended.
void draw_blend_causality(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, const ToyModel* toy) {
    ViewWindow& win = s.screen.windows[int(View::causality)];
    const float width = p1.x - p0.x;
    const float y = draw_causality_heading(s, ui, p0, p1, toy);
    const float legend_h = legend_height(ui);
    const float bars_h = std::round(std::clamp((p1.y - y) * 0.3f, ui.scaled(110), ui.scaled(190)));
    // When p changes, a window of positions scrolls to show a few rows before p and the rows from p on.
    if (win.centred_p != s.p) {
        win.row0 = std::max(0, s.p - 4);
        win.centred_p = s.p;
    }
    const float rows_bottom = p1.y - legend_h - bars_h;
    bool with_matrices = false;
    const float matrices_bottom = draw_causality_matrices(s, ui, p0, p1, y, rows_bottom, with_matrices);
    const float bars_top = with_matrices ? std::min(matrices_bottom, rows_bottom) : matrices_bottom;
    const float bars_bottom = std::min(p1.y - legend_h, bars_top + ui.scaled(300));
    const float chart_end = draw_causality_chart(s, ui, p0, p1, bars_top, bars_bottom, toy);
    draw_causality_side_note(s, ui, chart_end, bars_top, p1);
    draw_legend(s, ui, legend_origin(ui, p0, p1), width, false);
}

} // namespace

void draw_causality_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    // A GPT model's token replacement has its own view (gpt_causality_view.cpp); the lesson's
    // module and a toy model share this one, a toy model adding the letter p is blended toward.
    std::visit(Overload{[&](const GptModel&) { draw_gpt_causality_view(s, ui, p0, p1); },
                        [&](const ToyModel& toy) { draw_blend_causality(s, ui, p0, p1, &toy); },
                        [&](const auto&) { draw_blend_causality(s, ui, p0, p1, nullptr); }},
               s.shown.source);
}

} // namespace attnviz
