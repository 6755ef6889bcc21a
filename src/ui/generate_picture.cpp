// generate_picture.cpp: the Generate view's right side (generate_view.h): the attention picture,
// readable at any length (a window of the last rows and columns, labelled, and the new row over
// every position beneath it), the KV cache's strips and the step's measurements.
#include "follow_generate.h"
#include "format.h"
#include "generate_view.h"
#include "theme.h"
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz::generate_ui {

void record(UiContext& ui, const char* kind, const std::string& name, int position, float value, ImVec2 a, ImVec2 b, int rows,
            int cols) {
    if (!ui.layout) return;
    const ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 c0 = dl->GetClipRectMin(), c1 = dl->GetClipRectMax();
    if (a.x < c0.x - 0.5f || a.y < c0.y - 0.5f || b.x > c1.x + 0.5f || b.y > c1.y + 0.5f) return;
    LayoutItem it;
    it.kind = kind, it.name = name, it.position = position, it.value = value;
    it.x = a.x, it.y = a.y, it.w = b.x - a.x, it.h = b.y - a.y;
    it.rows = rows, it.cols = cols;
    ui.layout->push_back(it);
}

namespace {

constexpr float new_row_strip_h = 18; // the new row's strip over every key, under the picture

// On the line of the last item when `text` fits before the wrap position, else on the next.
void same_line_if_fits(const std::string& text, float spacing = -1) {
    const float gap = spacing >= 0 ? spacing : ImGui::GetStyle().ItemSpacing.x;
    const float edge = ImGui::GetWindowPos().x + ImGui::GetContentRegionMax().x;
    if (ImGui::GetItemRectMax().x + gap + ImGui::CalcTextSize(text.c_str()).x <= edge) ImGui::SameLine(0, gap);
}

// What the picture holds at this size: the window's first position t0 and n rows and columns
// of `cell` pixels, the labels' room, and the new row's strip when the window is not all.
struct PictureLayout {
    int T = 0, t0 = 0, n = 0;
    float cell = 0, label_w = 0, top_h = 0, strip_h = 0;
    bool strip = false;
    float height() const { return top_h + cell * float(n) + (strip ? strip_h : 0); }
};

PictureLayout picture_layout(const AppState& s, const UiContext& ui, float width, float height) {
    const GenerateState& g = s.generate;
    PictureLayout l;
    l.T = int(g.rows.size());
    if (l.T == 0) return l;
    ImFont* f = ui.fonts->small;
    l.top_h = f->FontSize + ui.small_gap();
    l.label_w = std::min(std::round(width * 0.3f), text_size(f, !generates_tokens(s) ? "0000" : "0000 abcdefgh").x + 6);
    // A readable cell at least; never more rows than the page is sent (generate_follow_rows).
    constexpr float min_cell = 13, max_cell = 40; // a readable cell; a short generation's cells no bigger
    const float cell_min = ui.px(min_cell), cell_max = ui.px(max_cell);
    const float strip_h = ui.text_pad() + f->FontSize + 2 + ui.px(new_row_strip_h);
    const float side = std::max(cell_min, std::min(width - l.label_w, height - l.top_h - strip_h));
    l.n = std::min({l.T - g.rows_from, generate_follow_rows, std::max(1, int(side / cell_min))});
    l.t0 = l.T - l.n;
    l.cell = std::min(cell_max, std::floor(side / float(l.n)));
    l.strip = l.t0 > 0;
    l.strip_h = strip_h;
    return l;
}

std::string row_label(const AppState& s, int t) {
    const GenerateState& g = s.generate;
    std::string label = std::to_string(t);
    if (generates_tokens(s) && t < int(g.tokens.size())) label += " " + generate_token_label(s, g.tokens[size_t(t)]);
    return label;
}

// Column numbers over the window, as many as fit without touching.
void column_labels(const PictureLayout& l, UiContext& ui, ImVec2 a) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const float w = text_size(f, std::to_string(l.T - 1)).x + ui.text_pad();
    const int every = std::max(1, int(std::ceil(w / l.cell)));
    for (int k = 0; k < l.n; ++k) {
        const int pos = l.t0 + k;
        if ((l.n - 1 - k) % every != 0) continue; // the newest column always
        const std::string t = std::to_string(pos);
        const float x = a.x + l.cell * (float(k) + 0.5f) - text_size(f, t).x / 2;
        dl->AddText(f, f->FontSize, ImVec2(x, a.y), ui.pal.text_dim, t.c_str());
    }
}

// Position labels (and tokens) beside the window's rows, as many as fit.
void row_labels(const AppState& s, const PictureLayout& l, UiContext& ui, ImVec2 a) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const int every = std::max(1, int(std::ceil((f->FontSize + 1) / l.cell)));
    for (int r = 0; r < l.n; ++r) {
        if ((l.n - 1 - r) % every != 0) continue;
        const float y = a.y + l.cell * (float(r) + 0.5f) - f->FontSize / 2;
        const ImVec4 clip(a.x, y, a.x + l.label_w - 4, y + f->FontSize + 2);
        const ImU32 c = r == l.n - 1 && !s.generate.steps.empty() ? ui.pal.accent : ui.pal.text;
        dl->AddText(f, f->FontSize, ImVec2(a.x, y), c, row_label(s, l.t0 + r).c_str(), nullptr, 0, &clip);
    }
}

ImU32 weight_color(const UiContext& ui, float v) {
    return ImGui::ColorConvertFloat4ToU32(colormap_color(Colormap::viridis, v, ui.pal.colormaps));
}

// The new row over every key, each pixel column the largest weight of the keys it covers,
// with the window's columns outlined.
void new_row_strip(AppState& s, const PictureLayout& l, UiContext& ui, ImVec2 a, float w, int h) {
    const GenerateState& g = s.generate;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Mat& row = g.rows.back();
    a.y += ui.text_pad();
    const std::string caption = "row " + std::to_string(l.T - 1) + " over every key, 0 to " + std::to_string(l.T - 1) +
                                " (the window outlined)";
    const ImVec4 clip(a.x, a.y, a.x + w, a.y + f->FontSize + 2);
    dl->AddText(f, f->FontSize, a, ui.pal.text_dim, caption.c_str(), nullptr, 0, &clip);
    a.y += f->FontSize + 2;
    const float sh = ui.px(new_row_strip_h);
    const int px = std::max(1, int(w));
    for (int b = 0; b < px; ++b) {
        const int k0 = int(int64_t(b) * l.T / px), k1 = std::max(k0 + 1, int(int64_t(b + 1) * l.T / px));
        float v = 0;
        for (int k = k0; k < k1 && k < l.T; ++k) v = std::max(v, row(h, k));
        dl->AddRectFilled(ImVec2(a.x + float(b), a.y), ImVec2(a.x + float(b + 1), a.y + sh), weight_color(ui, v));
    }
    const float x0 = a.x + w * float(l.t0) / float(l.T);
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(a.x + w + 1, a.y + sh + 1), ui.pal.frame);
    dl->AddRect(ImVec2(x0 - 1, a.y - 2), ImVec2(a.x + w + 1, a.y + sh + 2), IM_COL32(240, 228, 66, 255), 0, 0, 2.f);
    record(ui, "generate_new_row", "att", h, float(l.T), a, ImVec2(a.x + w, a.y + sh), 1, l.T);
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (m.x >= a.x && m.y >= a.y && m.x < a.x + w && m.y < a.y + sh && ImGui::IsWindowHovered()) {
        const int b = int(m.x - a.x), k0 = int(int64_t(b) * l.T / px), k1 = std::max(k0 + 1, int(int64_t(b + 1) * l.T / px));
        float v = 0;
        for (int k = k0; k < k1 && k < l.T; ++k) v = std::max(v, row(h, k));
        ImGui::SetTooltip("query %d → keys %d–%d: largest weight %s", l.T - 1, k0, k1 - 1, format_value(v, 4).c_str());
    }
}

} // namespace

float attention_picture_height(const AppState& s, const UiContext& ui, float width, float height) {
    return picture_layout(s, ui, width, height).height();
}

void attention_picture(AppState& s, UiContext& ui, ImVec2 p0, float width, float height, int h) {
    const GenerateState& g = s.generate;
    const PictureLayout l = picture_layout(s, ui, width, height);
    if (l.T == 0) return;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    column_labels(l, ui, ImVec2(p0.x + l.label_w, p0.y));
    const ImVec2 a(p0.x + l.label_w, p0.y + l.top_h);
    row_labels(s, l, ui, ImVec2(p0.x, a.y));
    const float w = l.cell * float(l.n);
    for (int r = 0; r < l.n; ++r) {
        const Mat& row = g.rows[size_t(l.t0 + r)];
        for (int k = 0; k < l.n; ++k) {
            const ImVec2 c(a.x + l.cell * float(k), a.y + l.cell * float(r)), d(c.x + l.cell, c.y + l.cell);
            dl->AddRectFilled(c, d, k > r ? ui.pal.panel : weight_color(ui, row(h, l.t0 + k)));
        }
    }
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(a.x + w + 1, a.y + w + 1), ui.pal.frame);
    if (!g.steps.empty()) { // the newest row, outlined as the views outline what changed
        const float y = a.y + l.cell * float(l.n - 1);
        dl->AddRect(ImVec2(a.x - 1, y - 1), ImVec2(a.x + w + 1, y + l.cell + 1), IM_COL32(0, 0, 0, 255), 0, 0, 3.f);
        dl->AddRect(ImVec2(a.x, y), ImVec2(a.x + w, y + l.cell), IM_COL32(240, 228, 66, 255), 0, 0, 2.f);
    }
    record(ui, "generate_attention", "att", h, float(l.T), a, ImVec2(a.x + w, a.y + w), l.n, l.n);
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (m.x >= a.x && m.y >= a.y && m.x < a.x + w && m.y < a.y + w && ImGui::IsWindowHovered()) {
        const int r = l.t0 + int((m.y - a.y) / l.cell), k = l.t0 + int((m.x - a.x) / l.cell);
        if (k > r) ImGui::SetTooltip("query %d → key %d: masked, a later key (weight exactly 0)", r, k);
        else ImGui::SetTooltip("query %d → key %d: weight %s", r, k, format_value(g.rows[size_t(r)](h, k), 4).c_str());
    }
    if (l.strip) new_row_strip(s, l, ui, ImVec2(a.x, a.y + w), std::max(w, width - l.label_w), h);
    ImGui::Dummy(ImVec2(width, l.height()));
    if (l.t0 > 0) ImGui::TextDisabled("rows: query position i, columns: key position j; positions %d–%d of %d", l.t0, l.T - 1, l.T);
    else ImGui::TextDisabled("rows: query position i, columns: key position j; the new row outlined");
}

namespace {

// One strip of a cache: a column per position, its rows every stride-th channel of the head
// matrices side by side, the newest column lit. `m` null: the sizes alone (a page following a
// teacher's GPT model, whose keys and values stay on the teacher's computer).
void cache_strip(UiContext& ui, const PerHead* m, int T, int C, ImVec2 a, float w, float hgt, float range, bool lit) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    if (T == 0 || C == 0) return;
    const int rows = std::max(1, std::min(C, int(hgt / 2)));
    const int cols = std::min(T, std::max(1, int(w / 3)));
    const int t0 = T - cols;
    const float cw = std::floor(w / float(std::max(cols, 16))), rh = hgt / float(rows);
    if (!m || m->empty()) {
        dl->AddRectFilled(a, ImVec2(a.x + cw * float(cols), a.y + hgt), ui.pal.panel);
    } else {
        const int hd = int((*m)[0].cols());
        for (int c = 0; c < cols; ++c)
            for (int r = 0; r < rows; ++r) {
                const int ch = r * C / rows, head = ch / hd;
                const float v = (*m)[size_t(head)](t0 + c, ch % hd);
                const ImVec2 p(a.x + cw * float(c), a.y + rh * float(r));
                dl->AddRectFilled(p, ImVec2(p.x + cw, p.y + rh),
                                  ImGui::ColorConvertFloat4ToU32(
                                      colormap_color(Colormap::diverging, 0.5f + 0.5f * v / range, ui.pal.colormaps)));
            }
    }
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(a.x + cw * float(cols) + 1, a.y + hgt + 1), ui.pal.frame);
    if (lit) {
        const float x = a.x + cw * float(cols - 1);
        dl->AddRect(ImVec2(x - 1, a.y - 2), ImVec2(x + cw + 1, a.y + hgt + 2), IM_COL32(240, 228, 66, 255), 0, 0, 2.f);
    }
}

} // namespace

float kv_strip_height(const UiContext& ui, int layers) {
    // A deep model's twelve strips leave the attention picture its room.
    constexpr float deep_strip_h = 10, strip_h = 20;
    return layers > 2 ? std::round(std::clamp(ui.scaled(deep_strip_h), 8.f, 20.f)) : std::round(std::clamp(ui.scaled(strip_h), 10.f, 40.f));
}

void kv_strips(AppState& s, UiContext& ui, float width) {
    const GenerateState& g = s.generate;
    const bool lesson = !generates_tokens(s);
    const CacheSizes z = generate_cache_sizes(s);
    const int L = z.layers, T = z.T, C = z.C;
    const int64_t bytes = 2 * int64_t(L) * T * C * 4;
    ImGui::Text("KV cache: K and V of %d positions × C = %d in %d layer%s", T, C, L, L == 1 ? "" : "s");
    ImGui::TextDisabled("2 · L · T · C · 4 = 2 · %d · %d · %d · 4 = %s bytes", L, T, C, format_count(bytes).c_str());
    if (g.received) ImGui::TextDisabled("(the keys and values themselves stay on the teacher's computer)");
    const float label_w = text_size(ui.fonts->small, "L00 K").x + 6;
    const int shown = std::min(L, kv_layers_shown);
    const float strip_h = kv_strip_height(ui, L);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p = ImGui::GetCursorScreenPos();
    for (int l = 0; l < shown; ++l) {
        const LayerKv* kv = g.received ? nullptr : lesson ? &g.lesson_kv : &g.cache.layers[size_t(l)];
        for (int which = 0; which < 2; ++which) {
            const std::string name = "L" + std::to_string(l) + (which == 0 ? " K" : " V");
            dl->AddText(ui.fonts->small, ui.fonts->small->FontSize, ImVec2(p.x, p.y), which == 0 ? ui.pal.k_text : ui.pal.v_text,
                        name.c_str());
            const PerHead* m = kv ? (which == 0 ? &kv->k : &kv->v) : nullptr;
            cache_strip(ui, m, T, C, ImVec2(p.x + label_w, p.y), width - label_w, strip_h, g.cache_range, !g.steps.empty());
            record(ui, "generate_cache", name, l, float(T), ImVec2(p.x + label_w, p.y), ImVec2(p.x + width, p.y + strip_h), T, C);
            p.y += strip_h + 4;
        }
    }
    ImGui::Dummy(ImVec2(width, p.y - ImGui::GetCursorScreenPos().y));
    if (shown < L) ImGui::TextDisabled("layers 0–%d of %d shown", shown - 1, L);
}

// The last step's numbers: the two times and the check.
void measurements(AppState& s, UiContext& ui) {
    const GenerateState& g = s.generate;
    if (g.steps.empty()) {
        ImGui::TextDisabled("Step to see a cached step's time against a full recompute's, and the check of the earlier rows.");
        return;
    }
    const GenerateStep& st = g.steps.back();
    // A browser's clock is coarse (0.1 ms): a step under it reads 0, which is not its time.
    auto ms = [](double v) { return v > 0 ? format_with(v, "%.3f") + " ms" : std::string("under the clock's resolution"); };
    ImGui::PushFont(ui.fonts->heading);
    if (st.checking)
        ImGui::Text("cached step %s  ·  full recompute: working…", ms(st.cached_ms).c_str());
    else if (st.full_ms >= 0)
        ImGui::Text("cached step %s  ·  full recompute %s", ms(st.cached_ms).c_str(), ms(st.full_ms).c_str());
    else
        ImGui::Text("cached step %s  ·  full recompute: Step to time it", ms(st.cached_ms).c_str());
    ImGui::PopFont();
    const std::string where = "(this step, position " + std::to_string(int(g.rows.size()) - 1) + ", " + to_string(g.kernel) + " kernel)";
    same_line_if_fits(where);
    ImGui::TextDisabled("%s", where.c_str());
    const ImVec2 a = ImGui::GetCursorScreenPos();
    std::string line = "max |Δ| of earlier rows vs a full recompute: ";
    line += st.checking ? "working…" : st.rows_max_abs < 0 ? "not measured at this size" : format_diff(float(st.rows_max_abs));
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(st.rows_max_abs == 0 ? ui.pal.exact_zero : ui.pal.text));
    ImGui::TextUnformatted(line.c_str());
    ImGui::PopStyleColor();
    record(ui, "generate_rows_diff", line, int(g.rows.size()) - 1, float(st.rows_max_abs), a,
           ImVec2(a.x + ImGui::GetItemRectSize().x, a.y + ImGui::GetItemRectSize().y));
    const char* what = !generates_tokens(s) ? "the new output row y vs the recompute's: "
                                                 : "the new logits vs the recompute's: ";
    const std::string logits_line =
        what + (st.checking               ? std::string("working…")
                : st.logits_max_abs < 0 ? std::string("not compared while playing at this size")
                                      : format_diff(float(st.logits_max_abs)));
    constexpr float results_gap = 24; // between the rows' result and the logits' on one line
    same_line_if_fits(logits_line, ui.px(results_gap));
    ImGui::TextUnformatted(logits_line.c_str());
    if (g.kernel == KernelKind::fast && (st.rows_max_abs > 0 || st.logits_max_abs > 0))
        ImGui::TextDisabled("The fast kernel's products sum in another order than a step's: equal within 1e-5, not bit "
                            "for bit (K: reference kernel).");
    if (st.rows_max_abs_short >= 0) {
        int short_rows = g.received_short_rows;
        if (!g.received)
            for (int t : g.row_made_at) short_rows += t < generate_lane_sum_keys ? 1 : 0;
        const std::string d = st.rows_max_abs_short == 0 ? "0.0 (exactly)" : format_with(st.rows_max_abs_short, "%.3g");
        ImGui::TextDisabled("Rows 0–%d, kept from when the sequence was shorter than %d: %s. Torch sums a softmax row "
                            "of fewer than %d values in order and a longer one in %d lanes, so the recompute's last bit "
                            "differs; the kept rows never change.",
                            short_rows - 1, generate_lane_sum_keys, d.c_str(), generate_lane_sum_keys, generate_lane_sum_keys);
    }
}

} // namespace attnviz::generate_ui
