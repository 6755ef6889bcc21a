// view_layout.cpp: see view_layout.h.
#include "view_layout.h"
#include "inputs.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

float op_width(const UiContext& ui, const RowItem& it) {
    const float gap = ui.px(10);
    float w = text_size(ui.fonts->heading, it.op).x;
    if (!it.note.empty()) w = std::max(w, text_size(ui.fonts->small, it.note).x);
    return w + 2 * gap;
}

float row_gap(const UiContext& ui) { return ui.px(10); }
float item_gap(const UiContext& ui) { return ui.px(6); }

// Fixed pixels and cell counts of one row: width = fixed_w + cells_w * cell; the height is
// the largest of the panels' chrome + rows * cell.
struct RowNeeds {
    float fixed_w = 0, cells_w = 0;
    std::vector<std::pair<float, float>> heights; // (fixed, cells) per panel
    std::vector<std::pair<float, float>> widths;  // (cells, narrowest cell column) per panel
    // The row's width at `cell` pixels per cell: captions and colour-bar numbers wider
    // than a panel's cells widen it (matrix_min_width).
    float width(float cell) const {
        float w = fixed_w;
        for (auto& [cells, min_w] : widths) w += std::max(cells * cell, min_w);
        return w;
    }
};

float caption_h(const UiContext& ui, const Row& row) {
    return row.caption.empty() ? 0.f : ui.fonts->body->FontSize + ui.px(4);
}

RowNeeds needs(const UiContext& ui, const Row& row) {
    RowNeeds n;
    const float cap = caption_h(ui, row);
    for (const RowItem& it : row.items) {
        if (!it.op.empty()) {
            n.fixed_w += op_width(ui, it);
            continue;
        }
        const Chrome c = matrix_chrome(ui, it.spec);
        n.fixed_w += c.left + c.right + item_gap(ui);
        n.cells_w += float(it.spec.cols);
        n.heights.push_back({cap + c.top + c.bottom, float(it.spec.rows)});
        n.widths.push_back({float(it.spec.cols), matrix_min_width(ui, it.spec)});
    }
    return n;
}

// Height of `rows` stacked at `c` pixels per cell: the tallest panel of each row decides,
// with a gap between rows.
float stack_height(const UiContext& ui, const std::vector<Row>& rows, float c) {
    float h = 0;
    for (const Row& r : rows) {
        RowNeeds n = needs(ui, r);
        float tallest = 0;
        for (auto& [fixed, cells] : n.heights) tallest = std::max(tallest, fixed + cells * c);
        h += tallest + row_gap(ui);
    }
    return rows.empty() ? 0.f : h - row_gap(ui);
}

} // namespace

float readable_cell(const UiContext& ui) { return ui.px(12); }

float fit_cell(const UiContext& ui, const std::vector<Row>& rows, ImVec2 size, float max_cell) {
    float cell = max_cell;
    // Width: each row on its own (widths are monotone in the cell; narrow panels have a floor).
    for (const Row& r : rows) {
        RowNeeds n = needs(ui, r);
        if (n.cells_w <= 0 || n.width(cell) <= size.x) continue;
        float lo = 0, hi = cell;
        for (int i = 0; i < 30; ++i) {
            float mid = 0.5f * (lo + hi);
            (n.width(mid) > size.x ? hi : lo) = mid;
        }
        cell = lo;
    }
    // Height: the rows stacked; try the cell size found so far and shrink it until the
    // stack fits (heights are monotone in the cell).
    auto stack_h = [&](float c) { return stack_height(ui, rows, c); };
    if (stack_h(cell) > size.y) {
        float lo = 0, hi = cell;
        for (int i = 0; i < 30; ++i) {
            float mid = 0.5f * (lo + hi);
            (stack_h(mid) > size.y ? hi : lo) = mid;
        }
        cell = lo;
    }
    return std::max(cell, 0.5f);
}

namespace {

// Words on the position axes take width; where they would leave the cells too small to
// read whole, the rows show numbers (the tooltips still name the words): first the words
// alone on the rows (a trained model's letters keep their axes so), then numbers. A matrix
// that shows a window of readable cells either way keeps its words. True, with the labels
// in `out`, when ui's own do not do.
bool readable_labels(const UiContext& ui, const std::vector<Row>& rows, ImVec2 size, float max_cell, UiContext& out) {
    UiContext numbers = ui;
    numbers.word_ticks = false;
    if (!(ui.tokens && !ui.tokens->empty() && ui.word_ticks && fit_cell(ui, rows, size, max_cell) < ui.px(7) &&
          fit_cell(numbers, rows, size, max_cell) >= ui.px(7)))
        return false;
    if (!ui.short_row_labels) {
        UiContext words = ui;
        words.short_row_labels = true;
        words.row_label_w = 0;
        for (size_t t = 0; t < ui.tokens->size(); ++t)
            words.row_label_w = std::max(words.row_label_w, text_size(ui.fonts->small, position_word(*ui.tokens, int(t))).x);
        words.row_label_w = std::min(words.row_label_w, std::round(4.5f * ui.fonts->small->FontSize));
        if (fit_cell(words, rows, size, max_cell) >= ui.px(7)) {
            out = words;
            return true;
        }
    }
    out = numbers;
    return true;
}

// Heights: when the stack does not fit at this cell size, each row gets a share of the
// height in proportion to its cells, and its matrices show that many rows.
struct StackShares {
    std::vector<float> row_cells_h;
    float total_cells = 0;
    float free_h = 0; // the height left for cells
    bool tall = false; // the stack does not fit whole
};

StackShares stack_shares(const UiContext& ui, const std::vector<Row>& rows, float height, float cell) {
    StackShares st;
    float total_fixed = 0;
    for (const Row& r : rows) {
        RowNeeds n = needs(ui, r);
        float fixed = 0, cells = 0;
        for (auto& [f, c] : n.heights) {
            fixed = std::max(fixed, f);
            cells = std::max(cells, c);
        }
        st.row_cells_h.push_back(cells);
        total_fixed += fixed + row_gap(ui);
        st.total_cells += cells;
    }
    st.free_h = std::max(height - total_fixed, cell);
    // Measured as fit_cell measures, panel by panel, so that a cell size it found fits.
    st.tall = stack_height(ui, rows, cell) > height + 0.5f;
    return st;
}

// An operator ("→", "@") at x, with its note under it, centred on the cells of the row's
// panels (whose cells start cells_top below y).
void draw_operator(const UiContext& ui, const Row& row, const RowItem& it, float x, float y, float cells_top, float cell,
                   int max_rows_here, float free_h) {
    const float w = op_width(ui, it);
    int rows_shown = 1;
    for (const RowItem& o : row.items)
        if (o.op.empty()) rows_shown = std::max(rows_shown, std::min(o.spec.rows, max_rows_here));
    const float cy = y + cells_top + std::min(float(rows_shown) * cell, free_h) * 0.5f;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* hf = ui.fonts->heading;
    const ImVec2 ts = text_size(hf, it.op);
    dl->AddText(hf, hf->FontSize, ImVec2(std::round(x + (w - ts.x) * 0.5f), std::round(cy - ts.y * 0.5f)), ui.pal.text, it.op.c_str());
    if (!it.note.empty()) {
        ImFont* sf = ui.fonts->small;
        const ImVec2 ns = text_size(sf, it.note);
        dl->AddText(sf, sf->FontSize, ImVec2(std::round(x + (w - ns.x) * 0.5f), std::round(cy + ts.y * 0.5f + 2)), ui.pal.text_dim,
                    it.note.c_str());
    }
}

// Row ri of the stack at y (moved under it), centred in the width, its panels and origins
// into `out`.
void draw_one_row(UiContext& ui, ViewWindow& win, const Row& row, size_t ri, ImVec2 p0, ImVec2 size, float cell,
                  const StackShares& st, float& y, RowsResult& out) {
    RowNeeds n = needs(ui, row);
    const float free_w = std::max(size.x - n.fixed_w, cell);
    const bool wide = n.cells_w * cell > free_w + 0.5f;
    const int max_rows_here =
        st.tall ? std::max(1, int(std::floor(st.free_h * st.row_cells_h[ri] / std::max(st.total_cells, 1.f) / cell))) : 1 << 30;
    // Centre the row when it is narrower than the area.
    float used_w = n.fixed_w;
    for (const RowItem& it : row.items)
        if (it.op.empty()) {
            int mc = wide ? std::max(1, int(std::floor(free_w * float(it.spec.cols) / n.cells_w / cell))) : it.spec.cols;
            used_w += std::max(float(std::min(mc, it.spec.cols)) * cell, matrix_min_width(ui, it.spec));
        }
    float x = p0.x + std::max(0.f, std::floor((size.x - used_w) * 0.5f));
    if (!row.caption.empty()) {
        ImGui::GetWindowDrawList()->AddText(ui.fonts->body, ui.fonts->body->FontSize, ImVec2(x, y),
                                            row.caption_color ? row.caption_color : ui.pal.text_dim, row.caption.c_str());
        y += caption_h(ui, row);
    }
    float row_h = 0;
    float cells_top = 0; // y offset of the first panel's cells, to centre operators on
    for (const RowItem& it : row.items)
        if (it.op.empty()) {
            cells_top = matrix_chrome(ui, it.spec).top;
            break;
        }
    for (const RowItem& it : row.items) {
        out.origins[ri].push_back(ImVec2(x, y));
        if (!it.op.empty()) {
            draw_operator(ui, row, it, x, y, cells_top, cell, max_rows_here, st.free_h);
            out.panels[ri].push_back(MatrixResult{});
            x += op_width(ui, it);
            continue;
        }
        const int max_cols = wide ? std::max(1, int(std::floor(free_w * float(it.spec.cols) / n.cells_w / cell))) : it.spec.cols;
        MatrixResult r = draw_matrix(ui, it.spec, win, ImVec2(x, y), cell, max_rows_here, max_cols);
        out.windowed = out.windowed || wide || (st.tall && max_rows_here < it.spec.rows) || max_cols < it.spec.cols;
        out.panels[ri].push_back(r);
        x += r.size.x + item_gap(ui);
        row_h = std::max(row_h, r.size.y);
    }
    y += row_h + row_gap(ui);
}

} // namespace

RowsResult draw_rows(UiContext& ui, ViewWindow& win, const std::vector<Row>& rows, ImVec2 p0, ImVec2 p1,
                     float max_cell) {
    RowsResult out;
    const ImVec2 size(p1.x - p0.x, p1.y - p0.y);
    UiContext relabelled;
    if (readable_labels(ui, rows, size, max_cell, relabelled)) return draw_rows(relabelled, win, rows, p0, p1, max_cell);
    const float fit = fit_cell(ui, rows, size, max_cell);
    float cell = fit * win.zoom;
    // Cells smaller than this are switched to a window of readable ones (a few pixels are
    // still fine for a whole small matrix; a window of a 4 x 8 matrix would only confuse).
    const float readable = readable_cell(ui);
    if (fit < ui.px(7)) cell = readable * win.zoom;
    if (cell >= 4) cell = std::floor(cell);
    out.cell = cell;
    const StackShares st = stack_shares(ui, rows, size.y, cell);
    float y = p0.y;
    out.panels.resize(rows.size());
    out.origins.resize(rows.size());
    for (size_t ri = 0; ri < rows.size(); ++ri) draw_one_row(ui, win, rows[ri], ri, p0, size, cell, st, y, out);
    out.bottom = y;
    return out;
}

std::vector<Row> windowed_rows(std::vector<Row> rows, int n) {
    for (Row& r : rows)
        for (RowItem& it : r.items) {
            it.spec.rows = std::min(it.spec.rows, n);
            it.spec.cols = std::min(it.spec.cols, n);
        }
    return rows;
}

} // namespace attnviz
