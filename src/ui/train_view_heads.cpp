// train_view_heads.cpp: every head of every layer on the probe sequence. Each head shows its
// attention pattern as the scores view shows softmax weights (the weights colour map from 0
// to 1, masked cells apart), with the probe's letters along both axes; its three scores as
// labelled bars with their thresholds marked; and what it has become once a score passes
// its threshold. The cells are ImDrawList rectangles: a (T+1, T+1) pattern per head is a
// few hundred cells, and the view's model changes every step, so there is no texture to keep.
#include "format.h"
#include "matrix_panel.h"
#include "model_io.h"
#include "theme.h"
#include "train_view.h"
#include <algorithm>
#include <cfloat>
#include <cmath>

namespace attnviz {

namespace {

void draw_probe_row(TrainViewState& t, UiContext& ui, ImVec2 p0, float width) {
    ImGui::SetCursorScreenPos(p0);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("probe  ^");
    ImGui::SameLine();
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s", t.probe_field.c_str());
    const float shuffle_w = ImGui::CalcTextSize("Shuffle").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SetNextItemWidth(std::max(80.f, p0.x + width - ImGui::GetCursorScreenPos().x - shuffle_w - ImGui::GetStyle().ItemSpacing.x));
    if (ImGui::InputText("##probe", buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue)) {
        t.probe_field = buf;
        std::string error;
        if (set_probe_text(t, buf, error)) t.probe_error.clear();
        else t.probe_error = "Kept the probe: " + error + ".";
    } else if (ImGui::IsItemEdited()) {
        t.probe_field = buf;
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The letters every head is shown on (Enter applies): %s", vocabulary_text(t.settings.model).c_str());
    ImGui::SameLine();
    if (ImGui::Button("Shuffle")) shuffle_probe(t);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("New random letters: a segment, its repeat, then filler");
}

// One score: "prev 0.98" and a bar from 0 to 1 with the threshold marked.
void score_bar(UiContext& ui, ImDrawList* dl, ImVec2 p, float w, const char* name, float v, float threshold, bool compact) {
    ImFont* f = ui.fonts->small;
    const float name_w = text_size(f, compact ? "prev 0.00" : "induction 0.00").x + ui.px(6);
    char text[32];
    std::snprintf(text, sizeof text, "%s %.2f", name, double(v));
    const bool on = v >= threshold;
    dl->AddText(f, f->FontSize, p, on ? ui.pal.text : ui.pal.text_dim, text);
    const float x0 = p.x + name_w, x1 = std::max(x0 + 10, p.x + w);
    const float y0 = p.y + 2, y1 = p.y + f->FontSize - 2;
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), ui.pal.panel);
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + (x1 - x0) * std::clamp(v, 0.f, 1.f), y1), on ? ui.pal.accent : ui.pal.bar);
    dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), ui.pal.frame);
    const float tx = std::round(x0 + (x1 - x0) * threshold);
    dl->AddLine(ImVec2(tx, y0 - 2), ImVec2(tx, y1 + 2), ui.pal.text, 1.5f);
}

} // namespace

void draw_head_pattern(UiContext& ui, ImDrawList* dl, const HeadView& hv, const TrainPicture& pic, ImVec2 at, float cell,
                       bool letters) {
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const ModelConfig& c = pic.model->config;
    const int N = int(pic.probe.size());
    const float gx = at.x, gy = at.y, side = cell * float(N);
    // Letters of the keys along the top, of the queries down the left.
    for (int k = 0; k < N && letters; ++k) {
        const std::string l = token_name(c, pic.probe[size_t(k)]);
        const float w = text_size(f, l).x;
        dl->AddText(f, f->FontSize, ImVec2(gx + cell * (float(k) + 0.5f) - w / 2, gy - f->FontSize - 2), pal.text_dim, l.c_str());
        dl->AddText(f, f->FontSize, ImVec2(gx - w - 4, gy + cell * (float(k) + 0.5f) - f->FontSize / 2), pal.text_dim, l.c_str());
    }
    // The pattern: row i is query i's weights over keys j <= i; masked keys are grey.
    for (int r = 0; r < N; ++r)
        for (int k = 0; k < N; ++k) {
            const ImVec2 a(gx + cell * float(k), gy + cell * float(r)), b(a.x + cell, a.y + cell);
            if (k > r) {
                dl->AddRectFilled(a, b, pal.panel);
                continue;
            }
            const float w = hv.probs[size_t(r) * size_t(N) + size_t(k)];
            dl->AddRectFilled(a, b, ImGui::ColorConvertFloat4ToU32(colormap_color(Colormap::viridis, w, pal.colormaps)));
        }
    dl->AddRect(ImVec2(gx - 1, gy - 1), ImVec2(gx + side + 1, gy + side + 1), pal.frame);
}

namespace {

struct Grid {
    int cols = 1, rows = 1;
    float cell = 1; // pixels per pattern cell
};

// The label of what a head has become; narrow boxes shorten it: "prev-token (0.98)" for
// "previous-token head (0.98)", then "prev-token 0.98".
std::string head_label(std::string l, bool compact, ImFont* f, float box_w) {
    if (!compact) return l;
    if (l.rfind("previous-token head", 0) == 0) l = "prev-token" + l.substr(19);
    else if (l.rfind("duplicate-token head", 0) == 0) l = "duplicate" + l.substr(20);
    else if (l.rfind("induction head", 0) == 0) l = "induction" + l.substr(14);
    if (text_size(f, l).x > box_w && l.size() > 2 && l.back() == ')') {
        const size_t open = l.rfind(" (");
        l = l.substr(0, open) + " " + l.substr(open + 2, l.size() - open - 3);
    }
    return l;
}

// Where one head's box goes and how big its parts are.
struct HeadBox {
    float x = 0, y = 0, w = 0;  // the box's top-left corner and width
    float cell = 1, side = 1;   // a pattern cell, and the whole pattern's side
    float tick_w = 0;           // the query ticks left of the pattern
    bool letters = false;       // key letters over the pattern
};

// Head i's box: its caption, what it has become, its pattern on the probe (a tooltip over a
// cell) and its three scores as bars.
void draw_head_box(const TrainViewState& t, UiContext& ui, int i, const HeadBox& b, bool compact) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* body = ui.fonts->body;
    ImFont* f = ui.fonts->small;
    const TrainPicture& pic = t.picture;
    const ModelConfig& c = pic.model->config;
    const HeadView& hv = pic.heads[size_t(i)];
    const int N = int(pic.probe.size());
    const Palette& pal = ui.pal;
    std::string cap = (c.n_layer > 1 ? "layer " + std::to_string(hv.layer) + " · " : std::string()) + "head " + std::to_string(hv.head);
    if (c.n_layer > 1 && text_size(body, cap).x > b.w) // narrow boxes: "L1 · h0"
        cap = "L" + std::to_string(hv.layer) + " · h" + std::to_string(hv.head);
    const ImVec4 cap_clip(b.x, b.y, b.x + b.w, b.y + body->FontSize + 2);
    dl->AddText(body, body->FontSize, ImVec2(b.x, b.y), pal.text, cap.c_str(), nullptr, 0.f, &cap_clip);
    const float ly = b.y + body->FontSize + 2;
    const ImVec4 clip(b.x, ly, b.x + b.w, ly + f->FontSize + 2);
    if (!hv.label.empty())
        dl->AddText(f, f->FontSize, ImVec2(b.x, ly), pal.accent, head_label(hv.label, compact, f, b.w).c_str(), nullptr, 0.f, &clip);
    else
        dl->AddText(f, f->FontSize, ImVec2(b.x, ly), pal.text_dim, pic.scored || pic.scores_step >= 0 ? "no role yet" : "", nullptr,
                    0.f, &clip);
    const float gx = b.x + b.tick_w, gy = ly + f->FontSize * (b.letters ? 2 : 1) + ui.px(6);
    const float cell = b.cell, side = b.side;
    draw_head_pattern(ui, dl, hv, pic, ImVec2(gx, gy), cell, b.letters);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (mouse.x >= gx && mouse.x < gx + side && mouse.y >= gy && mouse.y < gy + side && ImGui::IsWindowHovered()) {
        const int r = int((mouse.y - gy) / cell), k = int((mouse.x - gx) / cell);
        const std::string q = token_name(c, pic.probe[size_t(r)]), kk = token_name(c, pic.probe[size_t(k)]);
        if (k > r)
            ImGui::SetTooltip("query %d (%s) → key %d (%s): masked, a later key (weight exactly 0)", r, q.c_str(), k, kk.c_str());
        else
            ImGui::SetTooltip("query %d (%s) → key %d (%s): weight %s", r, q.c_str(), k, kk.c_str(),
                              format_value(hv.probs[size_t(r) * size_t(N) + size_t(k)], 3).c_str());
    }
    if (ui.layout) {
        LayoutItem it;
        it.kind = "train_head";
        it.name = hv.label;
        it.head = i;
        it.x = gx, it.y = gy, it.w = side, it.h = side;
        it.rows = it.cols = N;
        it.nrows = it.ncols = N;
        ui.layout->push_back(it);
    }
    // The three scores.
    float sy = gy + side + ui.px(6);
    const float bar_w = std::max(side + b.tick_w, std::min(b.w, side + b.tick_w + ui.scaled(40)));
    score_bar(ui, dl, ImVec2(b.x, sy), bar_w, "prev", hv.prev_token, prev_token_threshold, compact);
    sy += f->FontSize + 2;
    score_bar(ui, dl, ImVec2(b.x, sy), bar_w, "dup", hv.duplicate, duplicate_threshold, compact);
    sy += f->FontSize + 2;
    score_bar(ui, dl, ImVec2(b.x, sy), bar_w, compact ? "ind" : "induction", hv.induction, induction_threshold, compact);
}

} // namespace

void draw_train_heads(TrainViewState& t, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* body = ui.fonts->body;
    ImFont* f = ui.fonts->small;
    const TrainPicture& pic = t.picture;
    const float width = p1.x - p0.x;
    draw_probe_row(t, ui, p0, width);
    float y = ImGui::GetCursorScreenPos().y;
    if (!t.probe_error.empty()) {
        ImGui::SetCursorScreenPos(ImVec2(p0.x, y));
        ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.warning), "%s", t.probe_error.c_str());
        ImGui::PopTextWrapPos();
        y = ImGui::GetCursorScreenPos().y;
    }
    // The legend at the bottom.
    std::string legend = "rows: query i, columns: key j ≤ i (grey: masked); colour: weight 0 … 1 (" +
                         std::string(to_string(ui.pal.colormaps) == std::string("cb") ? "cividis" : "viridis") + ")";
    if (pic.scores_step >= 0)
        legend += "; scores of step " + std::to_string(pic.scores_step) + ", the bar's tick is the threshold";
    const float legend_h =
        f->CalcTextSizeA(f->FontSize, FLT_MAX, p1.x - p0.x, legend.c_str()).y + ui.px(6);
    const float gap = ui.px(14);
    const int n = int(pic.heads.size()), N = int(pic.probe.size());
    if (n == 0 || N == 0) return;
    const float tick_w = text_size(f, "^ ").x + ui.px(4);
    // Caption, label, 3 bars; and a line of key letters when the cells are big enough for them.
    float chrome_h = body->FontSize + f->FontSize * 4 + ui.px(22);
    const float area_w = width, area_h = p1.y - y - legend_h;
    Grid best;
    best.cell = 0;
    for (int cols = 1; cols <= n; ++cols) {
        const int rows = (n + cols - 1) / cols;
        const float bw = (area_w - gap * float(cols - 1)) / float(cols) - tick_w;
        const float bh = (area_h - gap * float(rows - 1)) / float(rows) - chrome_h;
        const float cell = std::floor(std::min(bw, bh) / float(N));
        if (cell > best.cell) best = Grid{cols, rows, cell};
    }
    HeadBox b;
    b.cell = std::max(2.f, std::min(best.cell, ui.px(22)));
    b.side = b.cell * float(N);
    b.tick_w = tick_w;
    b.w = std::max(b.side + tick_w, (area_w - gap * float(best.cols - 1)) / float(best.cols));
    b.letters = b.cell >= f->FontSize * 0.62f && b.cell * float(N) + f->FontSize + chrome_h <= area_h;
    if (b.letters) chrome_h += f->FontSize;
    for (int i = 0; i < n; ++i) {
        const int gc = i % best.cols, gr = i / best.cols;
        b.x = p0.x + float(gc) * (b.w + gap);
        b.y = y + ui.px(4) + float(gr) * (b.side + chrome_h + gap);
        draw_head_box(t, ui, i, b, compact);
    }
    // Legend, wrapped to the view's width (at text size 2 it takes two lines).
    dl->AddText(f, f->FontSize, ImVec2(p0.x, p1.y - legend_h + 2), ui.pal.text_dim, legend.c_str(), nullptr, p1.x - p0.x);
}

} // namespace attnviz
