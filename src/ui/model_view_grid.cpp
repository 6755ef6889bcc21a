// model_view_grid.cpp: the Model view's grid, every layer x head as a small attention
// pattern with its frame, tag, ablate mark and tooltip (model_view.h).
//
// The grid fits GPT-2 small's 12 x 12 at 1280 x 720: a pattern is never drawn smaller than
// min_thumb, and what does not fit is paged (layers first, then heads) with ◀ ▶ buttons,
// the arrow keys (layers) and [ ] (heads).
#include "format.h"
#include "inputs.h"
#include "model_view.h"
#include "text_util.h"
#include "views.h"
#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>

namespace attnviz {

namespace {

// The pattern texture of (layer, head): a trained model's from the grid's set, the lesson's
// module's from the trace the other views draw.
const Texture* pattern_texture(const AppState& s, const UiContext& ui, int layer, int head) {
    const int H = s.config.applied.n_head;
    if (source_kind(s).runs_every_layer) {
        const size_t i = size_t(layer) * size_t(H) + size_t(head);
        return ui.grid_probs && i < ui.grid_probs->size() ? &(*ui.grid_probs)[i] : nullptr;
    }
    return ui.tex && size_t(head) < ui.tex->probs.size() ? &ui.tex->probs[size_t(head)] : nullptr;
}

const Mat* pattern_values(const AppState& s, int layer, int head) { return grid_head_weights(s, layer, head); }

MaskShade mask_shade(const Config& c) {
    switch (c.mask) {
    case MaskMode::causal: return MaskShade::causal;
    case MaskMode::off_by_one: return MaskShade::off_by_one;
    case MaskMode::none: break;
    }
    return MaskShade::none;
}

// "^", "a", "cat" cut to 3 characters, or the position number without words.
std::string tick(const std::vector<std::string>& words, int t) {
    if (size_t(t) >= words.size()) return std::to_string(t);
    const std::string& w = words[size_t(t)];
    size_t at = 0; // three characters, never half of one ("·ca" of GPT-2's "·cat")
    for (int k = 0; k < 3 && at < w.size(); ++k) at += std::max<size_t>(1, utf8_sequence_length(w, at));
    return w.substr(0, std::min(at, w.size()));
}

// One head's pattern (the trace's, or a compact trace's pooled picture) and, with `ticks`,
// the position letters along its top and left.
void head_picture(AppState& s, UiContext& ui, int layer, int head, ImVec2 a, float side, bool ticks) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const int N = s.config.applied.seq_len;
    const ImVec2 b(a.x + side, a.y + side);
    if (const Texture* tex = pattern_texture(s, ui, layer, head)) {
        HeatmapDraw d;
        d.data = tex;
        // A compact trace's picture: one pixel per att_pool x att_pool cells.
        const int cells = s.model_run.model_base.compact ? (N + s.model_run.model_base.att_pool - 1) / s.model_run.model_base.att_pool : N;
        d.rows = d.cols = cells;
        d.nrows = d.ncols = float(cells);
        d.colormap = Colormap::viridis;
        d.lo = 0, d.hi = 1;
        d.mask = mask_shade(s.config.applied);
        constexpr float grid_min = 12; // cells at least this wide get grid lines
        d.grid_min_px = ui.scaled(grid_min);
        std::copy(std::begin(pal.grid_rgb), std::end(pal.grid_rgb), d.grid_rgb);
        d.x0 = a.x, d.y0 = a.y, d.x1 = b.x, d.y1 = b.y;
        add_heatmap(dl, *ui.renderer, d);
    }
    if (!ticks) return;
    const float cell = side / float(N);
    const std::vector<std::string>& words = position_words(s);
    for (int k = 0; k < N; ++k) {
        const std::string l = tick(words, k);
        const float w = text_size(f, l).x;
        dl->AddText(f, f->FontSize, ImVec2(a.x + cell * (float(k) + 0.5f) - w / 2, a.y - f->FontSize - 1), pal.text_dim, l.c_str());
        dl->AddText(f, f->FontSize, ImVec2(a.x - w - 3, a.y + cell * (float(k) + 0.5f) - f->FontSize / 2), pal.text_dim, l.c_str());
    }
}

// The head's frame: its role's colour and tag, or, ablated, dimmed and crossed out.
void head_frame(UiContext& ui, ImVec2 a, float side, bool ablated, const HeadRole* role) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const ImVec2 b(a.x + side, a.y + side);
    const float thick = ui.thick_rule();
    if (ablated) {
        // Ablated: its pattern is still what it computes, but nothing reads its output, so it
        // is dimmed and crossed out, and its tag says so.
        dl->AddRectFilled(a, b, (pal.background & 0x00FFFFFFu) | 0xB4000000u);
        constexpr float cross_w = 2.5f; // thinner than the frame, so that the frame's colour still shows
        const float t = std::max(2.f, ui.px(cross_w));
        dl->AddLine(a, b, pal.warning, t);
        dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), pal.warning, t);
    }
    if (role) dl->AddRect(ImVec2(a.x - thick, a.y - thick), ImVec2(b.x + thick, b.y + thick), role_color(pal, role->kind), 0, 0, thick);
    else dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), ablated ? pal.warning : pal.frame);
    if (role || ablated) {
        char tag[48];
        if (ablated) std::snprintf(tag, sizeof tag, "ablated");
        else std::snprintf(tag, sizeof tag, "%s %.2f", role_tag(role->kind), double(role->score));
        const ImVec4 clip(a.x - thick, b.y, a.x + std::max(side, text_size(f, "ind 0.00").x) + thick, b.y + f->FontSize + 4);
        dl->AddText(f, f->FontSize, ImVec2(a.x, b.y + thick), ablated ? pal.warning : role_color(pal, role->kind), tag, nullptr, 0.f, &clip);
    }
}

// The ablate mark in the top-right corner (the causal mask's corner, which holds no weight):
// a small box with a cross, filled while the head is ablated, at m0 with side ms. Submitted
// before the pattern's button, so that it takes the click; returns whether it was clicked.
bool ablate_mark(AppState& s, UiContext& ui, int layer, int head, bool ablated, ImVec2 m0, float ms) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const Palette& pal = ui.pal;
    const ImVec2 m1(m0.x + ms, m0.y + ms);
    ImGui::SetCursorScreenPos(m0);
    ImGui::PushID(layer * 4096 + head);
    const bool clicked = ImGui::InvisibleButton("##ablate", ImVec2(ms, ms));
    const bool hovered = ImGui::IsItemHovered();
    ImGui::PopID();
    const ImU32 fill = ablated ? pal.warning : hovered ? pal.hover : pal.panel;
    dl->AddRectFilled(m0, m1, fill);
    dl->AddRect(m0, m1, ablated ? pal.warning : pal.text_dim);
    const float in = std::round(ms * 0.25f);
    const ImU32 cross = ablated ? pal.background : pal.text;
    dl->AddLine(ImVec2(m0.x + in, m0.y + in), ImVec2(m1.x - in, m1.y - in), cross, std::max(1.5f, ui.scale * 1.5f));
    dl->AddLine(ImVec2(m0.x + in, m1.y - in), ImVec2(m1.x - in, m0.y + in), cross, std::max(1.5f, ui.scale * 1.5f));
    if (hovered) {
        s.model_view.hover_layer = layer, s.model_view.hover_head = head;
        ImGui::SetTooltip("%s layer %d, head %d (A)%s", ablated ? "Restore" : "Ablate", layer, head,
                          ablated ? "" : ": its output becomes zero (or its mean), and the model runs again");
    }
    return clicked;
}

// The tooltip over a head's pattern: the weight under the cursor, the picture's pooling, the
// head's role and ablation; the query row under the cursor asks for its predictions.
void head_tooltip(AppState& s, int layer, int head, ImVec2 a, float side, bool ablated, const HeadRole* role) {
    const int N = s.config.applied.seq_len;
    const float cell = side / float(N);
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int r = std::clamp(int((m.y - a.y) / cell), 0, N - 1), k = std::clamp(int((m.x - a.x) / cell), 0, N - 1);
    s.model_view.predict_hover = r;
    s.model_view.hover_layer = layer, s.model_view.hover_head = head;
    const Mat* v = pattern_values(s, layer, head);
    const std::vector<std::string>& words = position_words(s);
    auto named = [&](int t) { return size_t(t) < words.size() ? std::to_string(t) + " (" + words[size_t(t)] + ")" : std::to_string(t); };
    std::string tip = "layer " + std::to_string(layer) + ", head " + std::to_string(head) + ": query " + named(r) + " → key " +
                      named(k) + ": weight " + (v ? format_value((*v)(r, k), 3) : std::string("…"));
    if (s.model_run.model_base.compact) {
        const std::string pool = std::to_string(s.model_run.model_base.att_pool);
        tip += "\nThe picture: each pixel the largest weight of its " + pool + " × " + pool + " cells (T = " +
               std::to_string(N) + ")";
    }
    if (role) tip += "\n" + std::string(role_words(role->kind)) + " head (" + format_value(role->score, 2) + ")";
    if (ablated) tip += "\nAblated: its output is replaced by " + std::string(s.ablation.applied.mode == AblationMode::zero ? "zero" : "its mean") +
                        ", so later layers no longer read it (the pattern is what it still computes).";
    tip += "\nClick to open it in the scores view";
    tip += heads_ablatable(s) ? "; A or the corner mark ablates / restores it." : ".";
    ImGui::SetTooltip("%s", tip.c_str());
}

// One head's pattern at `a`, `side` pixels square, with its frame, tag, ticks and tooltip.
void draw_head(AppState& s, UiContext& ui, int layer, int head, ImVec2 a, float side, bool ticks, const HeadRole* role) {
    const int N = s.config.applied.seq_len;
    head_picture(s, ui, layer, head, a, side, ticks);
    const bool ablated = heads_ablatable(s) && head_ablated(s, layer, head);
    head_frame(ui, a, side, ablated, role);
    const float ms = std::round(std::min(std::max(ui.fonts->small->FontSize, 12.f), side * 0.4f));
    const ImVec2 m0(a.x + side - ms, a.y);
    const bool mark_clicked = heads_ablatable(s) && ablate_mark(s, ui, layer, head, ablated, m0, ms);
    // The click target and the tooltip.
    ImGui::SetCursorScreenPos(a);
    ImGui::PushID(layer * 4096 + head);
    const bool clicked = ImGui::InvisibleButton("##head", ImVec2(std::max(side, 1.f), std::max(side, 1.f)));
    ImGui::PopID();
    if (ImGui::IsItemHovered()) head_tooltip(s, layer, head, a, side, ablated, role);
    if (clicked) open_in_scores(s, layer, head);
    if (mark_clicked) toggle_ablation(s, layer, head);
    if (ui.layout && heads_ablatable(s)) {
        LayoutItem it;
        it.kind = "ablate_mark";
        it.name = ablated ? "ablated" : "";
        it.head = head;
        it.position = layer;
        it.value = ablated ? 1.f : 0.f;
        it.x = m0.x, it.y = m0.y, it.w = it.h = ms;
        ui.layout->push_back(it);
    }
    if (ui.layout) {
        LayoutItem it;
        it.kind = "grid_head";
        it.name = role ? role_tag(role->kind) : "";
        it.head = head;
        it.position = layer;
        it.value = role ? role->score : 0.f;
        it.x = a.x, it.y = a.y, it.w = side, it.h = side;
        it.rows = it.cols = it.nrows = it.ncols = N;
        ui.layout->push_back(it);
    }
}

// The grid's layout in a `size` area: the patterns' pages and size, whether there is a
// pager line, and whether the letters fit on the axes.
struct GridPlan {
    GridFit fit;
    bool paged = false, ticks = false;
    float gap = 0, tag_h = 0, label_w = 0, header_h = 0, pager_h = 0, tick_w = 0;
};

GridPlan plan_grid(const AppState& s, const UiContext& ui, ImVec2 size) {
    ImFont* f = ui.fonts->small;
    const int L = layer_count(s), H = s.config.applied.n_head, N = s.config.applied.seq_len;
    GridPlan g;
    constexpr float pattern_gap = 14; // between the patterns: room for a head's frame
    g.gap = ui.px(pattern_gap);
    g.tag_h = f->FontSize + ui.text_pad();
    g.label_w = text_size(f, "layer " + std::to_string(L - 1)).x + ui.label_gap();
    g.header_h = f->FontSize + ui.text_pad();
    g.pager_h = ImGui::GetFrameHeight() + ui.text_pad();
    g.tick_w = text_size(f, "^^^").x + ui.small_gap();
    g.fit = fit_grid(L, H, size, g.label_w, g.header_h, g.tag_h, g.gap, ui.scale);
    g.paged = g.fit.layers < L || g.fit.heads < H;
    if (g.paged) g.fit = fit_grid(L, H, ImVec2(size.x, size.y - g.pager_h), g.label_w, g.header_h, g.tag_h, g.gap, ui.scale);
    // Letters on both axes of every pattern when its cells are big enough for them.
    const float need = f->FontSize * 0.75f;
    if (g.fit.thumb / float(N) >= need) {
        const ImVec2 less(size.x - g.tick_w * float(g.fit.heads),
                          size.y - (g.paged ? g.pager_h : 0) - f->FontSize * float(g.fit.layers));
        const GridFit t = fit_grid(L, H, less, g.label_w, g.header_h, g.tag_h, g.gap, ui.scale);
        g.ticks = t.layers == g.fit.layers && t.heads == g.fit.heads && t.thumb / float(N) >= need;
        if (g.ticks) g.fit = t;
    }
    return g;
}

} // namespace

float grid_thumb(const AppState& s, const UiContext& ui, ImVec2 size) { return plan_grid(s, ui, size).fit.thumb; }

void draw_model_grid(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const int L = layer_count(s), H = s.config.applied.n_head;
    ViewWindow& win = s.screen.windows[int(View::model)];
    const GridPlan g = plan_grid(s, ui, ImVec2(p1.x - p0.x, p1.y - p0.y));
    const GridFit& fit = g.fit;
    const bool paged = g.paged, ticks = g.ticks;
    const float gap = g.gap, tag_h = g.tag_h, label_w = g.label_w, header_h = g.header_h, pager_h = g.pager_h,
                tick_w = g.tick_w;
    s.model_view.model_layer0 = std::clamp(s.model_view.model_layer0, 0, std::max(0, L - fit.layers));
    win.head0 = std::clamp(win.head0, 0, std::max(0, H - fit.heads));
    const int l0 = s.model_view.model_layer0, h0 = win.head0;
    const int l1 = std::min(L, l0 + fit.layers), h1 = std::min(H, h0 + fit.heads);
    float y = p0.y;
    if (paged) {
        // "layers 0–3 of 12", or "L 0–3 / 12" when the line would not fit the grid's width.
        const auto range = [](const char* what, int a, int b, int n, bool brief) {
            return brief ? std::string(1, char(std::toupper(static_cast<unsigned char>(what[0])))) + " " + std::to_string(a) + "–" + std::to_string(b) + " / " + std::to_string(n)
                         : std::string(what) + " " + std::to_string(a) + "–" + std::to_string(b) + " of " + std::to_string(n);
        };
        const ImGuiStyle& st = ImGui::GetStyle();
        constexpr float halves_gap = 18; // between the layers' half of the pager and the heads'
        const float buttons = 4 * ImGui::GetFrameHeight() + 4 * st.ItemSpacing.x + ui.px(halves_gap);
        const bool brief = buttons + ImGui::CalcTextSize((range("layers", l0, l1 - 1, L, false) + range("heads", h0, h1 - 1, H, false)).c_str()).x >
                           p1.x - p0.x;
        ImGui::SetCursorScreenPos(ImVec2(p0.x, y));
        ImGui::PushID("grid_pager");
        ImGui::BeginDisabled(l0 <= 0);
        if (ImGui::ArrowButton("##lprev", ImGuiDir_Up)) s.model_view.model_layer0 = std::max(0, l0 - fit.layers);
        ImGui::EndDisabled();
        ImGui::SameLine();
        ImGui::BeginDisabled(l1 >= L);
        if (ImGui::ArrowButton("##lnext", ImGuiDir_Down)) s.model_view.model_layer0 = l0 + fit.layers;
        ImGui::EndDisabled();
        ImGui::SameLine();
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted(range("layers", l0, l1 - 1, L, brief).c_str());
        ImGui::SameLine(0, ui.px(halves_gap));
        ImGui::BeginDisabled(h0 <= 0);
        if (ImGui::ArrowButton("##hprev", ImGuiDir_Left)) win.head0 = std::max(0, h0 - fit.heads);
        ImGui::EndDisabled();
        ImGui::SameLine();
        ImGui::BeginDisabled(h1 >= H);
        if (ImGui::ArrowButton("##hnext", ImGuiDir_Right)) win.head0 = h0 + fit.heads;
        ImGui::EndDisabled();
        ImGui::SameLine();
        ImGui::TextUnformatted(range("heads", h0, h1 - 1, H, brief).c_str());
        ImGui::PopID();
        y += pager_h;
    }
    const std::vector<HeadRole>& roles = s.model_view.roles;
    auto role_of = [&](int l, int h) -> const HeadRole* {
        for (const HeadRole& r : roles)
            if (r.layer == l && r.head == h) return &r;
        return nullptr;
    };
    const float box_w = fit.thumb + (ticks ? tick_w : 0), box_h = fit.thumb + tag_h + (ticks ? f->FontSize : 0);
    const float gx = p0.x + label_w;
    // Column labels: "head 3", or "h3" when narrow.
    for (int h = h0; h < h1; ++h) {
        std::string t = "head " + std::to_string(h);
        if (text_size(f, t).x > fit.thumb) t = "h" + std::to_string(h);
        const float x = gx + float(h - h0) * (box_w + gap) + (ticks ? tick_w : 0);
        dl->AddText(f, f->FontSize, ImVec2(x, y), pal.text_dim, t.c_str());
    }
    y += header_h;
    for (int l = l0; l < l1; ++l) {
        const float by = y + float(l - l0) * (box_h + gap) + (ticks ? f->FontSize : 0);
        // The block the other views show is marked: it is the one a click keeps.
        const bool shown = source_kind(s).names_layer && l == s.shown.layer;
        const std::string t = "layer " + std::to_string(l);
        dl->AddText(f, f->FontSize, ImVec2(p0.x, by + fit.thumb / 2 - f->FontSize / 2), shown ? pal.accent : pal.text_dim, t.c_str());
        for (int h = h0; h < h1; ++h) {
            const float bx = gx + float(h - h0) * (box_w + gap) + (ticks ? tick_w : 0);
            draw_head(s, ui, l, h, ImVec2(bx, by), fit.thumb, ticks, role_of(l, h));
        }
    }
}

} // namespace attnviz
