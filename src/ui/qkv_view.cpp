// qkv_view.cpp: one projection, three views. The (T, 3C) output of the single qkv matmul
// is drawn as one matrix under W_qkvᵀ (the textbook layout of a product: x on the left,
// W_qkvᵀ on top, qkv where their rows and columns meet), cut into Q | K | V and each of
// those into H heads of head_dim columns; underneath, each head's own q, k and v with
// ribbons from the columns they are taken from.
#include "format.h"
#include "specs.h"
#include "views.h"
#include "widgets.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

// A translucent ribbon from a column span of one matrix down to the top of another.
void ribbon(ImDrawList* dl, ImVec2 a0, ImVec2 a1, ImVec2 b0, ImVec2 b1, ImU32 color) {
    const ImU32 fill = (color & 0x00FFFFFF) | (IM_COL32_A_MASK & IM_COL32(0, 0, 0, 45));
    dl->AddQuadFilled(a0, a1, b1, b0, fill);
    dl->AddLine(a0, b0, color, 1.5f);
    dl->AddLine(a1, b1, color, 1.5f);
}

// Head h's q, k or v as a small block, on qkv's colour range (one bar serves them all).
MatrixSpec small_head_block(const AppState& s, const UiContext& ui, Part which, int h, bool bar) {
    MatrixSpec m = spec_head_part(s, ui, which, h);
    const MatrixSpec whole = spec_qkv(s, ui);
    m.lo = whole.lo;
    m.hi = whole.hi;
    m.title = std::string(part_name(which)) + " h" + std::to_string(h);
    m.row_caption.clear();
    m.col_caption.clear();
    m.colorbar = bar;
    return m;
}

// The matrices of the view: x, W_qkvᵀ and qkv, and the first heads' q, k and v blocks.
struct QkvParts {
    MatrixSpec sx, sw, sq;
    Chrome cx, cw, cq, cb;
    std::vector<MatrixSpec> blocks; // nh heads' q, k, v
    int nh = 0;                     // heads shown under qkv
};

QkvParts qkv_parts(const AppState& s, UiContext& ui, const ViewWindow& win) {
    const int H = s.config.applied.n_head;
    QkvParts q;
    q.sx = spec_x(s, ui), q.sw = spec_w_qkv_t(s, ui), q.sq = spec_qkv(s, ui);
    q.sx.colorbar = true;
    q.sq.colorbar = true;
    q.sq.col_caption.clear(); // the bands say which columns are Q, K and V; the ribbons start below
    q.sw.title = "W_qkvᵀ   (C, 3C): qkv.weight, transposed";
    q.cx = matrix_chrome(ui, q.sx), q.cw = matrix_chrome(ui, q.sw), q.cq = matrix_chrome(ui, q.sq);
    q.nh = std::min(H, 4);
    for (int h = 0; h < q.nh; ++h)
        for (int p = 0; p < 3; ++p) q.blocks.push_back(small_head_block(s, ui, Part(p), std::min(h + win.head0, H - 1), false));
    q.cb = q.blocks.empty() ? Chrome{} : matrix_chrome(ui, q.blocks.front());
    return q;
}

const float block_gap_px = 4, group_gap_px = 18, connector_px = 64;

// One cell size for the product layout: widths x + qkv, and the head blocks; heights W
// over qkv over the blocks.
float product_cell(const Config& c, const UiContext& ui, const QkvParts& q, float width, float height) {
    const int T = c.seq_len, C = c.n_embd, hd = c.head_dim();
    const float gap = ui.gap(), block_gap = ui.px(block_gap_px), group_gap = ui.px(group_gap_px);
    const float fixed_w_top = q.cx.left + q.cx.right + q.cq.left + q.cq.right + 3 * gap;
    const float fixed_w_blocks = float(3 * q.nh) * (q.cb.left + q.cb.right + block_gap) + float(q.nh - 1) * group_gap;
    const float fixed_h = q.cw.top + q.cw.bottom + q.cq.top + q.cq.bottom + ui.px(connector_px) + q.cb.top + q.cb.bottom + gap;
    float cell = ui.scaled(64);
    cell = std::min(cell, (width - fixed_w_top) / float(4 * C));
    cell = std::min(cell, (width - fixed_w_blocks) / float(3 * q.nh * hd));
    cell = std::min(cell, (height - fixed_h) / float(C + 2 * T));
    return cell;
}

// The empty corner above x explains the layout.
void draw_product_note(const UiContext& ui, ImVec2 w_pos, float w_top, float w_h, float left) {
    ImFont* bf = ui.fonts->body;
    const char* lines[] = {"Row t of x times column j of W_qkvᵀ", "gives cell (t, j) of qkv.", "Hover a cell of qkv to see both."};
    const float right = w_pos.x - 2 * ui.gap(); // left of W's row caption and ticks
    float ly = w_pos.y + w_top + std::max(0.f, (w_h - 3 * (bf->FontSize + 4)) * 0.5f);
    for (const char* l : lines) {
        const float lw = text_size(bf, l).x;
        if (right - lw >= left) ImGui::GetWindowDrawList()->AddText(bf, bf->FontSize, ImVec2(right - lw, ly), ui.pal.text_dim, l);
        ly += bf->FontSize + 4;
    }
}

// The head blocks, grouped by head, with ribbons from their qkv columns (whose cells start
// at qkv_cells_x and end at qkv_bottom); returns the y under their labels.
float draw_head_blocks(const AppState& s, UiContext& ui, ViewWindow& win, QkvParts& q, float left, float width,
                       float qkv_cells_x, float qkv_bottom, float cell) {
    const int T = s.config.applied.seq_len, C = s.config.applied.n_embd, H = s.config.applied.n_head, hd = s.config.applied.head_dim();
    const float block_gap = ui.px(block_gap_px), group_gap = ui.px(group_gap_px);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float blocks_top = qkv_bottom + ui.px(connector_px);
    float total = float(q.nh - 1) * group_gap;
    for (const MatrixSpec& b : q.blocks) total += matrix_chrome(ui, b).left + b.cols * cell + matrix_chrome(ui, b).right + block_gap;
    float bx = left + std::max(0.f, std::floor((width - total) * 0.5f));
    for (int g = 0; g < q.nh; ++g) {
        const int h = std::min(g + win.head0, H - 1);
        const float group_x = bx;
        for (int p = 0; p < 3; ++p) {
            MatrixSpec& b = q.blocks[size_t(g * 3 + p)];
            b.colorbar = false;
            const Chrome bc = matrix_chrome(ui, b);
            MatrixResult rb = draw_matrix(ui, b, win, ImVec2(bx, blocks_top), cell, T, hd);
            const float c0 = qkv_cells_x + float(p * C + h * hd) * cell;
            ribbon(dl, ImVec2(c0, qkv_bottom), ImVec2(c0 + hd * cell, qkv_bottom), ImVec2(bx + bc.left, blocks_top + 2),
                   ImVec2(bx + bc.left + hd * cell, blocks_top + 2), part_color(ui, Part(p)));
            bx += rb.size.x + block_gap;
        }
        // "head h" under its three blocks.
        const std::string label = "head " + std::to_string(h) + ": q, k, v";
        ImFont* sf = ui.fonts->small;
        const ImVec2 ls = text_size(sf, label);
        const float lx = std::round((group_x + bx - block_gap - ls.x) * 0.5f);
        dl->AddText(sf, sf->FontSize, ImVec2(lx, blocks_top + q.cb.top + T * cell + 4), ui.pal.text, label.c_str());
        bx += group_gap;
    }
    return blocks_top + q.cb.top + T * cell + q.cb.bottom + ui.fonts->small->FontSize + ui.gap();
}

// The product layout: x on the left, W_qkvᵀ on top, qkv where they meet, the heads' blocks
// under it. Returns the y under it.
float draw_qkv_product(AppState& s, UiContext& ui, ViewWindow& win, QkvParts& q, ImVec2 p0, ImVec2 p1, float y, float cell) {
    const int T = s.config.applied.seq_len, C = s.config.applied.n_embd, H = s.config.applied.n_head;
    const float width = p1.x - p0.x, gap = ui.gap();
    const Chrome &cx = q.cx, &cw = q.cw, &cq = q.cq;
    // qkv's cells start where W_qkvᵀ's do, so each column of W lines up with its column of qkv.
    const float qkv_cells_x = p0.x + std::floor((width - (cx.left + C * cell + cx.right + 3 * gap + cq.left + 3 * C * cell + cq.right)) * 0.5f) +
                              cx.left + C * cell + cx.right + 3 * gap + cq.left;
    const ImVec2 w_pos(qkv_cells_x - cw.left, y);
    MatrixResult rw = draw_matrix(ui, q.sw, win, w_pos, cell, C, 3 * C);
    const float qkv_top = y + rw.size.y + gap;
    const float qkv_cells_y = qkv_top + cq.top;
    const ImVec2 q_pos(qkv_cells_x - cq.left, qkv_top);
    MatrixResult rq = draw_matrix(ui, q.sq, win, q_pos, cell, T, 3 * C);
    const ImVec2 x_pos(qkv_cells_x - cq.left - 3 * gap - cx.right - C * cell - cx.left, qkv_cells_y - cx.top);
    draw_matrix(ui, q.sx, win, x_pos, cell, T, C);
    draw_product_note(ui, w_pos, cw.top, C * cell, p0.x);
    // Hovering a cell of qkv outlines the row of x and the column of W it comes from.
    if (rq.hovered) {
        ImDrawList* dl = ImGui::GetWindowDrawList();
        const float xr = x_pos.x + cx.left, yr = qkv_cells_y + float(rq.row) * cell;
        dl->AddRect(ImVec2(xr - 2, yr - 1), ImVec2(xr + C * cell + 2, yr + cell + 1), ui.pal.hover, 0, 0, 2.f);
        const float wx = qkv_cells_x + float(rq.col) * cell, wy = w_pos.y + cw.top;
        dl->AddRect(ImVec2(wx - 1, wy - 2), ImVec2(wx + cell + 1, wy + C * cell + 2), ui.pal.hover, 0, 0, 2.f);
    }
    const float qkv_bottom = qkv_top + rq.size.y; // under qkv's colour bar
    y = draw_head_blocks(s, ui, win, q, p0.x, width, qkv_cells_x, qkv_bottom, cell);
    draw_window_bar(s, ui, win, ImVec2(p1.x - ui.scaled(190), p0.y), ui.scaled(190), false);
    if (H > q.nh) draw_head_pager(s, ui, win, q.nh, ImVec2(p1.x - ui.scaled(190), p0.y + ImGui::GetFrameHeight() + 4));
    return y;
}

// Too big for the product layout: x → qkv, then a window of heads' blocks, as rows.
// Returns the y under them.
float draw_qkv_rows(AppState& s, UiContext& ui, ViewWindow& win, const QkvParts& q, ImVec2 p0, ImVec2 p1, float y, float bottom) {
    const int H = s.config.applied.n_head;
    const float width = p1.x - p0.x;
    const float bar_h = window_bar_height(ui);
    std::vector<Row> rows;
    Row top;
    RowItem ix, iop, iq;
    ix.spec = q.sx;
    ix.spec.minimap = true;
    iop.op = "→";
    iop.note = "· W_qkvᵀ";
    iq.spec = q.sq;
    top.items = {ix, iop, iq};
    rows.push_back(top);
    const int shown = std::min(H, 2);
    win.head0 = std::clamp(win.head0, 0, std::max(0, H - shown));
    Row heads;
    heads.caption = "each head takes its own head_dim columns of Q, K and V:";
    for (int h = win.head0; h < win.head0 + shown; ++h)
        for (int p = 0; p < 3; ++p) {
            RowItem b;
            b.spec = small_head_block(s, ui, Part(p), h, p == 2 && h == win.head0 + shown - 1);
            heads.items.push_back(b);
        }
    rows.push_back(heads);
    // Short of room (large text in a small window), x → qkv alone: the walk's steps 2 to 4
    // show the heads' blocks.
    const ImVec2 area(width, bottom - y);
    if (fit_cell(ui, rows, area, ui.scaled(48)) < ui.scaled(12)) {
        rows.pop_back();
        rows.back().items.back().spec.colorbar = true;
    }
    const bool heads_shown = rows.size() == 2;
    // The zoom bar costs a row: shown when there is room or it is needed.
    const float fit_no_bar = fit_cell(ui, rows, area, ui.scaled(48));
    const bool show_bar = (heads_shown && H > shown) || win.zoom != 1 || fit_no_bar < ui.px(7) || fit_no_bar >= ui.scaled(30);
    RowsResult rr = draw_rows(ui, win, rows, ImVec2(p0.x, show_bar ? y + bar_h : y), ImVec2(p1.x, bottom), ui.scaled(48));
    if (show_bar) {
        draw_window_bar(s, ui, win, ImVec2(p0.x, y), width * 0.62f, rr.windowed);
        if (heads_shown && H > shown) draw_head_pager(s, ui, win, shown, ImVec2(p0.x + width * 0.64f, y));
    }
    return rr.bottom;
}

} // namespace

void draw_qkv_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    ViewWindow& win = s.screen.windows[int(View::qkv)];
    const Config& c = s.config.applied;
    const int T = c.seq_len, C = c.n_embd, H = c.n_head, hd = c.head_dim();
    const float width = p1.x - p0.x;
    const float gap = ui.gap();
    float y = p0.y;

    y = view_heading(ui, ImVec2(p0.x, y), "One projection, three views:  qkv = x · W_qkvᵀ");
    const std::string shapes = "(T, C) · (C, 3C) → (T, 3C) = (" + std::to_string(T) + ", " + std::to_string(C) + ") · (" +
                               std::to_string(C) + ", " + std::to_string(3 * C) + ") → (" + std::to_string(T) + ", " +
                               std::to_string(3 * C) + "):  one matmul instead of three.";
    y = shape_label(ui, ImVec2(p0.x, y), p1.x, shapes) + gap - ImGui::GetStyle().ItemSpacing.y;
    // What to take away, in the lesson's words (drawn last, under the matrices).
    const std::string takeaway =
        "Multi-head splits channels, not compute: head h takes columns h·head_dim … (h+1)·head_dim − 1 of each of Q, K "
        "and V (head_dim = C / H = " + std::to_string(hd) + "). The " + std::to_string(H) + " heads together use each of the 3C = " +
        std::to_string(3 * C) + " columns exactly once: the same matmul, whatever H is.";
    const float note_h = ImGui::CalcTextSize(takeaway.c_str(), nullptr, false, width).y + gap;
    const float bottom = p1.y - legend_height(ui) - note_h;

    QkvParts q = qkv_parts(s, ui, win);
    const float cell = product_cell(c, ui, q, width, bottom - y);
    if (cell >= readable_cell(ui) && win.zoom == 1.f) y = draw_qkv_product(s, ui, win, q, p0, p1, y, std::floor(cell));
    else y = draw_qkv_rows(s, ui, win, q, p0, p1, y, bottom);

    ImGui::SetCursorScreenPos(ImVec2(p0.x, std::min(y, bottom) + 2));
    ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x); // wrap positions are window-local
    ImGui::TextUnformatted(takeaway.c_str());
    ImGui::PopTextWrapPos();
    draw_legend(s, ui, legend_origin(ui, p0, p1), width, false);
}

} // namespace attnviz
