// walk_view.cpp: the shape walk, the spine of the lesson. Every step puts the same things
// in the same places: the step counter and buttons, the lesson's code with this step's
// part highlighted, the shapes before and after, one sentence of why, then the tensors.
#include "format.h"
#include "specs.h"
#include "views.h"
#include "walk_steps.h"
#include "widgets.h"
#include <algorithm>
#include <cfloat>
#include <cmath>

namespace attnviz {

namespace {

// The largest mono font in which the lesson's longest line fits `width`.
ImFont* code_font(const UiContext& ui, const std::vector<std::string>& lines, float width) {
    size_t longest = 0;
    for (const std::string& l : lines) longest = std::max(longest, l.size());
    const float pad = ui.px(8);
    for (ImFont* f : ui.fonts->mono)
        if (text_size(f, std::string(longest, 'm')).x + 2 * pad <= width) return f;
    return ui.fonts->mono[2];
}

// How much of the code the box shows: all of it, the highlighted lines with one line
// around them, or the highlighted lines only (when the tensors need the room).
enum class CodeExtent { all, context, lit };

// The lines [first, last] the box shows at `extent`.
std::pair<int, int> code_range(const WalkStep& st, int n_lines, CodeExtent extent) {
    if (extent == CodeExtent::all) return {0, n_lines - 1};
    int lo = n_lines - 1, hi = 0;
    for (const Span& sp : st.spans) lo = std::min(lo, sp.line), hi = std::max(hi, sp.line);
    if (extent == CodeExtent::lit) return {lo, hi};
    return {std::max(0, lo - 1), std::min(n_lines - 1, hi + 1)};
}

// The mono font's size: its own, or smaller (down to 0.7 of the smallest) so that the
// longest shown line fits; a cut line of code would teach the wrong code.
float code_size(const UiContext& ui, ImFont* font, const std::vector<std::string>& lines, int first, int last, float width) {
    size_t longest = 0;
    for (int i = first; i <= last; ++i) longest = std::max(longest, lines[size_t(i)].size());
    const float pad = ui.px(8);
    const float w = text_size(font, std::string(longest, 'm')).x;
    if (w + 2 * pad <= width) return font->FontSize;
    return std::max(font->FontSize * 0.7f, std::floor(font->FontSize * (width - 2 * pad) / w));
}

float code_height(const UiContext& ui, const WalkStep& st, const std::vector<std::string>& lines, float width,
                  CodeExtent extent) {
    ImFont* font = code_font(ui, lines, width);
    auto [first, last] = code_range(st, int(lines.size()), extent);
    const float size = code_size(ui, font, lines, first, last, width);
    return float(last - first + 1) * (size + ui.px(3)) + 2 * ui.px(8);
}

// The code box: the lesson's code in the largest mono font that fits, this step's spans
// highlighted, as much of it as `extent` says. Returns its height.
float draw_code(AppState& s, UiContext& ui, const WalkStep& st, ImVec2 p0, float width, CodeExtent extent) {
    std::vector<std::string> lines = code_lines(s);
    const float pad = ui.px(8);
    ImFont* font = code_font(ui, lines, width);
    auto [first, last] = code_range(st, int(lines.size()), extent);
    const float size = code_size(ui, font, lines, first, last, width);
    const float lh = size + ui.px(3);
    const float h = float(last - first + 1) * lh + 2 * pad;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(p0, ImVec2(p0.x + width, p0.y + h), ui.pal.panel, 4.f);
    const float char_w = font->CalcTextSizeA(size, FLT_MAX, 0.f, "m").x;
    const ImVec4 clip(p0.x, p0.y, p0.x + width, p0.y + h);
    for (size_t i = size_t(first); i <= size_t(last); ++i) {
        const std::string& line = lines[i];
        const ImVec2 at(p0.x + pad, p0.y + pad + float(int(i) - first) * lh);
        bool lit = false;
        for (const Span& sp : st.spans) {
            if (sp.line != int(i)) continue;
            size_t start, len;
            if (sp.text.empty()) {
                start = line.find_first_not_of(' ');
                len = line.size() - start;
            } else {
                start = line.find(sp.text);
                if (start == std::string::npos) continue;
                len = sp.text.size();
            }
            lit = true;
            const ImVec2 a(at.x + float(start) * char_w - 2, at.y - 1), b(at.x + float(start + len) * char_w + 2, at.y + lh - 2);
            dl->AddRectFilled(a, b, ui.pal.code_highlight, 3.f);
            dl->AddLine(ImVec2(a.x, b.y), b, ui.pal.accent, 2.f);
        }
        if (lit) dl->AddRectFilled(ImVec2(p0.x + 2, at.y), ImVec2(p0.x + 5, at.y + lh - 3), ui.pal.accent);
        dl->AddText(font, size, at, lit ? ui.pal.text : ui.pal.text_dim, line.c_str(), nullptr, 0.f, &clip);
    }
    return h;
}

MatrixSpec with_bar(MatrixSpec m) {
    m.colorbar = true;
    return m;
}

MatrixSpec bar_if(MatrixSpec m, bool b) {
    m.colorbar = b;
    return m;
}

RowItem op(const std::string& text, const std::string& note = "") {
    RowItem it;
    it.op = text;
    it.note = note;
    return it;
}

RowItem mat(MatrixSpec m) {
    RowItem it;
    it.spec = std::move(m);
    return it;
}

// Head h's row of a per-head step (4 to 9), its colour bars when `bars`.
Row head_row(AppState& s, UiContext& ui, int step, int h, bool bars) {
    Row r;
    switch (step) {
    case 4:
        r.caption = "head " + std::to_string(h) + ": its own (T, head_dim) q, k and v";
        r.items = {mat(bar_if(spec_head_part(s, ui, Part::q, h), bars)), mat(bar_if(spec_head_part(s, ui, Part::k, h), bars)),
                   mat(bar_if(spec_head_part(s, ui, Part::v, h), bars))};
        break;
    case 5:
        r.items = {mat(bar_if(spec_head_part(s, ui, Part::q, h), bars)), op("@"), mat(bar_if(spec_head_k_transposed(s, ui, h), bars)),
                   op("="), mat(bar_if(spec_scores(s, ui, h, ScoreStage::raw), bars))};
        break;
    case 6:
        r.items = {mat(bar_if(spec_scores(s, ui, h, ScoreStage::raw), bars)),
                   op("→", s.config.applied.scale == ScaleMode::none ? "not scaled" : "× " + format_value(s.run.trace.scale, 4)),
                   mat(bar_if(spec_scores(s, ui, h, ScoreStage::scaled), bars))};
        break;
    case 7:
        r.items = {mat(bar_if(spec_scores(s, ui, h, ScoreStage::scaled), bars)), op("→", "mask"),
                   mat(bar_if(spec_scores(s, ui, h, ScoreStage::masked), bars))};
        break;
    case 8:
        r.items = {mat(bar_if(spec_scores(s, ui, h, ScoreStage::masked), bars)), op("→", "softmax"),
                   mat(bar_if(spec_probs(s, ui, h), bars))};
        break;
    default:
        r.items = {mat(bar_if(spec_probs(s, ui, h), bars)), op("@"), mat(bar_if(spec_head_part(s, ui, Part::v, h), bars)), op("="),
                   mat(bar_if(spec_head_out(s, ui, h), bars))};
        break;
    }
    return r;
}

// The tensors of each step, before and after.
std::vector<Row> walk_rows(AppState& s, UiContext& ui, int step, int h0, int nh) {
    std::vector<Row> rows;
    const int H = s.run.trace.H;
    switch (step) {
    case 0: rows.push_back(Row{"", 0, {mat(with_bar(spec_x(s, ui)))}}); break;
    case 1:
        rows.push_back(Row{"", 0, {mat(with_bar(spec_x(s, ui)))}});
        rows.push_back(Row{"↓  qkv = x · W_qkvᵀ: one Linear(C, 3C)", 0, {mat(with_bar(spec_qkv(s, ui)))}});
        break;
    case 2:
        rows.push_back(Row{"", 0, {mat(spec_qkv(s, ui))}});
        rows.push_back(Row{"↓  split(C, dim=2): three views of the same numbers", 0,
                           {mat(with_bar(spec_part(s, ui, Part::q))), mat(with_bar(spec_part(s, ui, Part::k))),
                            mat(with_bar(spec_part(s, ui, Part::v)))}});
        break;
    case 3:
        rows.push_back(Row{"view(B, T, H, head_dim): each block of head_dim channels belongs to one head", 0,
                           {mat(with_bar(spec_part(s, ui, Part::q))), mat(with_bar(spec_part(s, ui, Part::k))),
                            mat(with_bar(spec_part(s, ui, Part::v)))}});
        break;
    case 4:
    case 5:
    case 6:
    case 7:
    case 8:
    case 9:
        // Per-head rows: colour bars under the last row when ranges are shared across heads.
        for (int h = h0; h < std::min(H, h0 + nh); ++h)
            rows.push_back(head_row(s, ui, step, h, !s.screen.shared_ranges || h == std::min(H, h0 + nh) - 1));
        break;
    case 10: {
        Row r;
        for (int h = h0; h < std::min(H, h0 + nh); ++h) r.items.push_back(mat(with_bar(spec_head_out(s, ui, h))));
        r.items.push_back(op("→", "side by side"));
        r.items.push_back(mat(with_bar(spec_concat(s, ui))));
        rows.push_back(std::move(r));
        break;
    }
    default:
        rows.push_back(Row{"", 0,
                           {mat(with_bar(spec_concat(s, ui))), op("@"), mat(with_bar(spec_w_proj_t(s, ui))), op("="),
                            mat(with_bar(spec_y(s, ui)))}});
        break;
    }
    return rows;
}

bool step_is_per_head(int step) { return step >= 4 && step <= 10; }

// "Step 4 of 11:  transpose" at p; returns where the title ends on the right.
float draw_walk_title(const UiContext& ui, int step, const WalkStep& st, ImVec2 p) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* hf = ui.fonts->heading;
    const std::string counter = "Step " + std::to_string(step) + " of " + std::to_string(walk_last_step) + ":  ";
    dl->AddText(hf, hf->FontSize, p, ui.pal.text_dim, counter.c_str());
    dl->AddText(hf, hf->FontSize, ImVec2(p.x + text_size(hf, counter).x, p.y), ui.pal.text, st.title.c_str());
    return p.x + text_size(hf, counter).x + text_size(hf, st.title).x;
}

// The step's code at y: as much as leaves the tensors cells of 28 px (times the text size),
// with `text_h` kept for the shapes and the why; at least the highlighted lines. Returns
// the y under it.
float draw_walk_code(AppState& s, UiContext& ui, int step, const WalkStep& st, ImVec2 p0, ImVec2 p1, float y, float text_h) {
    const float width = p1.x - p0.x, gap = ui.gap();
    const ViewWindow& win = s.screen.windows[int(View::walk)];
    const std::vector<std::string> lines = code_lines(s);
    const std::vector<Row> one_head = walk_rows(s, ui, step, std::clamp(win.head0, 0, s.run.trace.H - 1), 1);
    CodeExtent extent = CodeExtent::lit;
    for (CodeExtent e : {CodeExtent::all, CodeExtent::context}) {
        const float rest = p1.y - y - code_height(ui, st, lines, width, e) - gap - text_h - legend_height(ui);
        if (fit_cell(ui, one_head, ImVec2(width, rest), ui.scaled(64)) >= ui.scaled(28)) {
            extent = e;
            break;
        }
    }
    return y + (draw_code(s, ui, st, ImVec2(p0.x, y), width, extent) + gap);
}

// How many heads a per-head step shows: as many as fit (up to 4) with readable cells in
// `area`; sets the walk's head window to fit them.
int walk_heads_shown(AppState& s, UiContext& ui, int step, ImVec2 area) {
    if (!step_is_per_head(step)) return 1;
    ViewWindow& win = s.screen.windows[int(View::walk)];
    const int H = s.run.trace.H;
    int nh = std::min(H, 4);
    while (nh > 1) {
        std::vector<Row> trial = walk_rows(s, ui, step, 0, nh);
        // Values need about 36 px cells to print with their decimals; laying the heads side
        // by side (step 10) is the point of the step, so there colours will do.
        const float want = ui.scaled(step == 10 ? 16 : 36);
        if (fit_cell(ui, trial, area, ui.scaled(64)) >= want) break;
        --nh;
    }
    win.head0 = std::clamp(win.head0, 0, std::max(0, H - nh));
    return nh;
}

// Before over after, or side by side with an arrow: whichever gives bigger cells in `area`.
// The step's result (the last matrix) gets the overview when it shows only a window.
void arrange_walk_rows(std::vector<Row>& rows, const UiContext& ui, int step, ImVec2 area) {
    if (rows.size() == 2 && !step_is_per_head(step)) {
        Row side;
        side.items = rows[0].items;
        RowItem arrow;
        arrow.op = "→";
        arrow.note = step == 1 ? "x · W_qkvᵀ" : "split";
        side.items.push_back(arrow);
        for (const RowItem& it : rows[1].items) side.items.push_back(it);
        const std::vector<Row> one{side};
        if (fit_cell(ui, one, area, ui.scaled(64)) > fit_cell(ui, rows, area, ui.scaled(64))) rows = one;
    }
    for (auto it = rows.back().items.rbegin(); it != rows.back().items.rend(); ++it)
        if (it->op.empty()) {
            it->spec.minimap = true;
            break;
        }
}

// Header buttons, right-aligned on the title's line at header_y: the head pager (when
// `pager`), then Previous / Next ("←" / "→" when the words do not fit beside the title).
// The pager goes at the end of the shapes line (at shapes_y, ending at shapes_end) when the
// header has no room for it and that line has. Returns whether the pager was placed.
bool draw_walk_buttons(AppState& s, UiContext& ui, int step, int nh, bool pager, ImVec2 p1, float header_y, float title_end,
                       float shapes_y, float shapes_end) {
    ViewWindow& win = s.screen.windows[int(View::walk)];
    const float gap = ui.gap();
    const ImGuiStyle& sty = ImGui::GetStyle();
    const std::string heads_text = "head 00 of " + std::to_string(s.run.trace.H) + "0";
    const float pager_w = 2 * ImGui::GetFrameHeight() + 2 * sty.ItemSpacing.x + ImGui::CalcTextSize(heads_text.c_str()).x;
    float bw = ui.px(92);
    auto buttons_w = [&](float b) { return 2 * b + gap; };
    const float free = p1.x - title_end - 2 * gap;
    const bool words = buttons_w(bw) + (pager ? pager_w + gap : 0) <= free;
    if (!words) bw = ImGui::GetFrameHeight() * 1.4f;
    bool pager_placed = pager && buttons_w(bw) + pager_w + gap <= free;
    const float bx = p1.x - buttons_w(bw);
    ImGui::SetCursorScreenPos(ImVec2(bx, header_y - 2));
    ImGui::BeginDisabled(step == 0);
    if (ImGui::Button(words ? "← Previous" : "←", ImVec2(bw, 0))) s.screen.step = step - 1;
    if (!words && ImGui::IsItemHovered()) ImGui::SetTooltip("Previous step (Left)");
    ImGui::EndDisabled();
    ImGui::SameLine(0, gap);
    ImGui::BeginDisabled(step == walk_last_step);
    if (ImGui::Button(words ? "Next →" : "→", ImVec2(bw, 0))) s.screen.step = step + 1;
    if (!words && ImGui::IsItemHovered()) ImGui::SetTooltip("Next step (Right)");
    ImGui::EndDisabled();
    if (pager_placed) draw_head_pager(s, ui, win, nh, ImVec2(bx - gap - pager_w, header_y - 2));
    if (pager && !pager_placed && shapes_end + 2 * gap + pager_w <= p1.x) {
        draw_head_pager(s, ui, win, nh, ImVec2(p1.x - pager_w, shapes_y - std::round(ImGui::GetStyle().FramePadding.y)));
        pager_placed = true;
    }
    return pager_placed;
}

// The tensors from y down, above the legend. The zoom bar costs a row: shown when there is
// room for it or it is needed (a window of cells to move, a zoom to undo, the head pager
// not placed elsewhere); the keys = - 0 zoom either way. The colour legend gives its row to
// the matrices when they would not fit whole without it (each matrix keeps its own colour bar).
void draw_walk_tensors(AppState& s, UiContext& ui, int step, const std::vector<Row>& rows, int nh, bool pager_here, ImVec2 p0,
                       ImVec2 p1, float y) {
    ViewWindow& win = s.screen.windows[int(View::walk)];
    const float width = p1.x - p0.x;
    const float legend_h = legend_height(ui);
    const float readable_fit = ui.px(7);
    const bool legend = fit_cell(ui, rows, ImVec2(width, p1.y - y - legend_h), ui.scaled(64)) >= readable_fit ||
                        fit_cell(ui, rows, ImVec2(width, p1.y - y), ui.scaled(64)) < readable_fit;
    const float legend_room = legend ? legend_h : 0.f;
    const ImVec2 area_no_bar(width, p1.y - y - legend_room);
    const float fit_no_bar = fit_cell(ui, rows, area_no_bar, ui.scaled(64));
    const bool show_bar = pager_here || win.zoom != 1 || fit_no_bar < readable_fit || fit_no_bar >= ui.scaled(36);
    const float top = show_bar ? y + window_bar_height(ui) : y;
    RowsResult rr = draw_rows(ui, win, rows, ImVec2(p0.x, top), ImVec2(p1.x, p1.y - legend_room), ui.scaled(64));
    if (show_bar) {
        draw_window_bar(s, ui, win, ImVec2(p0.x, y), width * (pager_here ? 0.6f : 1.f), rr.windowed);
        if (pager_here) draw_head_pager(s, ui, win, nh, ImVec2(p0.x + width * 0.62f, y));
    }
    if (legend) draw_legend(s, ui, legend_origin(ui, p0, p1), width, step >= 5 && step <= 8);
}

} // namespace

void draw_walk_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    const int step = std::clamp(s.screen.step, 0, walk_last_step);
    const WalkStep st = walk_step(s, step);
    const ViewWindow& win = s.screen.windows[int(View::walk)];
    const float width = p1.x - p0.x;
    const float gap = ui.gap();
    const float header_y = p0.y;
    // The header's buttons are placed once the heads shown are known.
    const float title_end = draw_walk_title(ui, step, st, ImVec2(p0.x, header_y));
    float y = header_y + (ui.fonts->heading->FontSize + gap);
    // The code, the shapes, the why.
    const std::string shapes = st.before == st.after ? st.after + "   (shape unchanged)" : st.before + "  →  " + st.after;
    const std::string why = "Why: " + st.why;
    const float text_h = ImGui::CalcTextSize(shapes.c_str(), nullptr, false, width).y +
                         ImGui::CalcTextSize(why.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y + gap;
    y = draw_walk_code(s, ui, step, st, p0, p1, y, text_h);
    const float shapes_y = y;
    const float shapes_end = p0.x + ImGui::CalcTextSize(shapes.c_str()).x;
    y = shape_label(ui, ImVec2(p0.x, y), p1.x, shapes, why.c_str()) + gap;

    // The tensors, above the legend.
    const ImVec2 area(width, p1.y - y - legend_height(ui) - window_bar_height(ui));
    const int nh = walk_heads_shown(s, ui, step, area);
    const int h0 = step_is_per_head(step) ? win.head0 : 0;
    std::vector<Row> rows = walk_rows(s, ui, step, h0, nh);
    arrange_walk_rows(rows, ui, step, area);
    const bool pager = step_is_per_head(step) && s.run.trace.H > nh;
    const bool pager_placed = draw_walk_buttons(s, ui, step, nh, pager, p1, header_y, title_end, shapes_y, shapes_end);
    draw_walk_tensors(s, ui, step, rows, nh, pager && !pager_placed, p0, p1, y);
}

} // namespace attnviz
