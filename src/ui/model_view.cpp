// model_view.cpp: the Model view (key 7), BertViz's model view. Every layer x head of the
// shown model as a small attention pattern on the sequence - the softmax weights in the
// weights colour map, masked cells apart, as the scores view draws them - with layers down
// and heads across. The head detector's roles frame the heads that pass the Train view's
// threshold (0.6) and tag them ("prev 0.98"); a click opens the head in the scores view.
// Beside the grid: the detector's table and the next-token predictions.
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

float min_thumb(float scale) { return std::round(30 * scale); }

GridFit fit_grid(int L, int H, ImVec2 size, float label_w, float header_h, float tag_h, float gap, float scale) {
    auto thumb_for = [&](int ls, int hs) {
        const float w = (size.x - label_w - gap * float(hs - 1)) / float(hs);
        const float h = (size.y - header_h - float(ls) * tag_h - gap * float(ls - 1)) / float(ls);
        return std::floor(std::min(w, h));
    };
    const float mt = min_thumb(scale);
    GridFit f;
    f.heads = std::max(1, H);
    while (f.heads > 1 && thumb_for(1, f.heads) < mt) --f.heads;
    f.layers = std::max(1, L);
    while (f.layers > 1 && thumb_for(f.layers, f.heads) < mt) --f.layers;
    f.thumb = std::min(thumb_for(f.layers, f.heads), std::round(170 * scale));
    return f;
}

ImU32 role_color(const Palette& pal, int kind) {
    switch (kind) {
    case 0: return pal.q_text; // Okabe-Ito blue, orange and bluish green, readable on the background
    case 1: return pal.k_text;
    case 2: return pal.v_text;
    }
    return pal.frame;
}

const char* role_words(int kind) {
    switch (kind) {
    case 0: return "previous-token";
    case 1: return "duplicate-token";
    case 2: return "induction";
    }
    return "";
}

void open_in_scores(AppState& s, int layer, int head) {
    if (s.shown.input) request_layer(s, layer);
    s.screen.windows[int(View::scores)].head0 = std::clamp(head, 0, std::max(0, s.config.n_head - 1));
    s.screen.view = View::scores;
}

namespace {

int layer_count(const AppState& s) { return s.shown.input ? s.shown.input->model->config.n_layer : 1; }

// The pattern texture of (layer, head): a trained model's from the grid's set, the lesson's
// module's from the trace the other views draw.
const Texture* pattern_texture(const AppState& s, const UiContext& ui, int layer, int head) {
    const int H = s.config.n_head;
    if (s.shown.input) {
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

// One head's pattern at `a`, `side` pixels square, with its frame, tag, ticks and tooltip.
void draw_head(AppState& s, UiContext& ui, int layer, int head, ImVec2 a, float side, bool ticks, const HeadRole* role) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const int N = s.config.seq_len;
    const Texture* tex = pattern_texture(s, ui, layer, head);
    const ImVec2 b(a.x + side, a.y + side);
    if (tex) {
        HeatmapDraw d;
        d.data = tex;
        // A compact trace's picture: one pixel per att_pool x att_pool cells.
        const int cells = s.shown.input && s.model_base.compact ? (N + s.model_base.att_pool - 1) / s.model_base.att_pool : N;
        d.rows = d.cols = cells;
        d.nrows = d.ncols = float(cells);
        d.colormap = Colormap::viridis;
        d.lo = 0, d.hi = 1;
        d.mask = mask_shade(s.config);
        d.grid_min_px = 12 * ui.scale;
        std::copy(std::begin(pal.grid_rgb), std::end(pal.grid_rgb), d.grid_rgb);
        d.x0 = a.x, d.y0 = a.y, d.x1 = b.x, d.y1 = b.y;
        add_heatmap(dl, *ui.renderer, d);
    }
    const float cell = side / float(N);
    if (ticks) {
        const std::vector<std::string>& words = position_words(s);
        for (int k = 0; k < N; ++k) {
            const std::string l = tick(words, k);
            const float w = text_size(f, l).x;
            dl->AddText(f, f->FontSize, ImVec2(a.x + cell * (float(k) + 0.5f) - w / 2, a.y - f->FontSize - 1), pal.text_dim, l.c_str());
            dl->AddText(f, f->FontSize, ImVec2(a.x - w - 3, a.y + cell * (float(k) + 0.5f) - f->FontSize / 2), pal.text_dim, l.c_str());
        }
    }
    const float thick = std::max(2.f, std::round(3 * ui.scale));
    const bool ablated = s.shown.input && head_ablated(s, layer, head);
    if (ablated) {
        // Ablated: its pattern is still what it computes, but nothing reads its output, so it
        // is dimmed and crossed out, and its tag says so.
        dl->AddRectFilled(a, b, (pal.background & 0x00FFFFFFu) | 0xB4000000u);
        const float t = std::max(2.f, std::round(2.5f * ui.scale));
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
    // The ablate mark in the top-right corner (the causal mask's corner, which holds no
    // weight): a small box with a cross, filled while the head is ablated. It is submitted
    // before the pattern's button, so that it takes the click.
    bool mark_clicked = false, mark_hovered = false;
    const float ms = std::round(std::min(std::max(f->FontSize, 12.f), side * 0.4f));
    const ImVec2 m0(b.x - ms, a.y), m1(b.x, a.y + ms);
    if (s.shown.input) {
        ImGui::SetCursorScreenPos(m0);
        ImGui::PushID(layer * 4096 + head);
        mark_clicked = ImGui::InvisibleButton("##ablate", ImVec2(ms, ms));
        mark_hovered = ImGui::IsItemHovered();
        ImGui::PopID();
        const ImU32 fill = ablated ? pal.warning : mark_hovered ? pal.hover : pal.panel;
        dl->AddRectFilled(m0, m1, fill);
        dl->AddRect(m0, m1, ablated ? pal.warning : pal.text_dim);
        const float in = std::round(ms * 0.25f);
        const ImU32 cross = ablated ? pal.background : pal.text;
        dl->AddLine(ImVec2(m0.x + in, m0.y + in), ImVec2(m1.x - in, m1.y - in), cross, std::max(1.5f, ui.scale * 1.5f));
        dl->AddLine(ImVec2(m0.x + in, m1.y - in), ImVec2(m1.x - in, m0.y + in), cross, std::max(1.5f, ui.scale * 1.5f));
        if (mark_hovered) {
            s.model_view.hover_layer = layer, s.model_view.hover_head = head;
            ImGui::SetTooltip("%s layer %d, head %d (A)%s", ablated ? "Restore" : "Ablate", layer, head,
                              ablated ? "" : ": its output becomes zero (or its mean), and the model runs again");
        }
    }
    // The click target and the tooltip; the query row under the cursor asks for its predictions.
    ImGui::SetCursorScreenPos(a);
    ImGui::PushID(layer * 4096 + head);
    const bool clicked = ImGui::InvisibleButton("##head", ImVec2(std::max(side, 1.f), std::max(side, 1.f)));
    ImGui::PopID();
    if (ImGui::IsItemHovered()) {
        const ImVec2 m = ImGui::GetIO().MousePos;
        const int r = std::clamp(int((m.y - a.y) / cell), 0, N - 1), k = std::clamp(int((m.x - a.x) / cell), 0, N - 1);
        s.model_view.predict_hover = r;
        s.model_view.hover_layer = layer, s.model_view.hover_head = head;
        const Mat* v = pattern_values(s, layer, head);
        const std::vector<std::string>& words = position_words(s);
        auto named = [&](int t) { return size_t(t) < words.size() ? std::to_string(t) + " (" + words[size_t(t)] + ")" : std::to_string(t); };
        std::string tip = "layer " + std::to_string(layer) + ", head " + std::to_string(head) + ": query " + named(r) + " → key " +
                          named(k) + ": weight " + (v ? format_value((*v)(r, k), 3) : std::string("…"));
        if (s.shown.input && s.model_base.compact) {
            const std::string pool = std::to_string(s.model_base.att_pool);
            tip += "\nThe picture: each pixel the largest weight of its " + pool + " × " + pool + " cells (T = " +
                   std::to_string(N) + ")";
        }
        if (role) tip += "\n" + std::string(role_words(role->kind)) + " head (" + format_value(role->score, 2) + ")";
        if (ablated) tip += "\nAblated: its output is replaced by " + std::string(s.ablation.applied.mode == AblationMode::zero ? "zero" : "its mean") +
                            ", so later layers no longer read it (the pattern is what it still computes).";
        tip += "\nClick to open it in the scores view";
        tip += s.shown.input ? "; A or the corner mark ablates / restores it." : ".";
        ImGui::SetTooltip("%s", tip.c_str());
    }
    if (clicked) open_in_scores(s, layer, head);
    if (mark_clicked) toggle_ablation(s, layer, head);
    if (ui.layout && s.shown.input) {
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
    const int L = layer_count(s), H = s.config.n_head, N = s.config.seq_len;
    GridPlan g;
    g.gap = std::round(14 * ui.scale);
    g.tag_h = f->FontSize + std::round(6 * ui.scale);
    g.label_w = text_size(f, "layer " + std::to_string(L - 1)).x + std::round(8 * ui.scale);
    g.header_h = f->FontSize + std::round(6 * ui.scale);
    g.pager_h = ImGui::GetFrameHeight() + std::round(6 * ui.scale);
    g.tick_w = text_size(f, "^^^").x + std::round(4 * ui.scale);
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
    const int L = layer_count(s), H = s.config.n_head;
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
        const float buttons = 4 * ImGui::GetFrameHeight() + 4 * st.ItemSpacing.x + std::round(18 * ui.scale);
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
        ImGui::SameLine(0, std::round(18 * ui.scale));
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
        const bool shown = s.shown.input && l == s.shown.layer;
        const std::string t = "layer " + std::to_string(l);
        dl->AddText(f, f->FontSize, ImVec2(p0.x, by + fit.thumb / 2 - f->FontSize / 2), shown ? pal.accent : pal.text_dim, t.c_str());
        for (int h = h0; h < h1; ++h) {
            const float bx = gx + float(h - h0) * (box_w + gap) + (ticks ? tick_w : 0);
            draw_head(s, ui, l, h, ImVec2(bx, by), fit.thumb, ticks, role_of(l, h));
        }
    }
}

void draw_model_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* hf = ui.fonts->heading;
    ImFont* f = ui.fonts->small;
    const Palette& pal = ui.pal;
    const float width = p1.x - p0.x;
    const int L = layer_count(s), H = s.config.n_head;
    // Short windows (text size 2 at 720 pixels): no sentence under the title, the
    // predictions on two lines.
    const bool compact = p1.y - p0.y < 420 * ui.scale;
    s.model_view.predict_hover = -1; // set again below while the cursor is over a pattern
    s.model_view.hover_layer = s.model_view.hover_head = -1; // and the head under it, for the key A
    float y = p0.y;
    // The choice of the main area (heads, logit lens, Patching) sits on the title's line, right
    // aligned, so it takes none of the grid's height.
    const bool choices = s.shown.input && lens_available(s);
    const char* labels[3] = {"Heads", "Logit lens", "Patching"};
    float choices_w = 0;
    if (choices) {
        const ImGuiStyle& st = ImGui::GetStyle();
        for (const char* l : labels) choices_w += ImGui::GetFrameHeight() + st.ItemInnerSpacing.x + ImGui::CalcTextSize(l).x + st.ItemSpacing.x;
    }
    std::string title = "Model: " + std::to_string(L) + (L == 1 ? " layer × " : " layers × ") + std::to_string(H) + " heads";
    if (text_size(hf, title + ", each head's weights on the sequence").x <= width - choices_w) title += ", each head's weights on the sequence";
    dl->AddText(hf, hf->FontSize, ImVec2(p0.x, y), pal.text, title.c_str());
    if (choices) {
        int panel = int(s.model_view.panel);
        ImGui::SetCursorScreenPos(ImVec2(p1.x - choices_w, y));
        for (int i = 0; i < 3; ++i) {
            if (i) ImGui::SameLine();
            ImGui::RadioButton(labels[i], &panel, i);
        }
        s.model_view.panel = ModelPanel(panel);
    }
    y += std::max(hf->FontSize, choices ? ImGui::GetFrameHeight() : 0.f) + std::round(4 * ui.scale);
    ImGui::SetCursorScreenPos(ImVec2(p0.x, y));
    ImGui::PushTextWrapPos(p1.x - ImGui::GetWindowPos().x);
    if (!s.shown.input) {
        ImGui::TextDisabled("The lesson's module is one layer: its %d heads on the input. A trained model shows every "
                            "layer and what its heads have learnt.", H);
        if (ImGui::SmallButton("Open the Train view")) s.screen.view = View::train;
    } else if (!compact) {
        ImGui::TextDisabled("Rows: layers, columns: heads; in each pattern query i down, key j across. A framed head "
                            "passes a detector score of %.1f. Click a head to open it in the scores view.",
                            double(detector_threshold));
    }
    ImGui::PopTextWrapPos();
    if (s.shown.input && lens_available(s)) {
        // The main area: the heads, the logit lens or the Patching panel.
        const ImVec2 a(p0.x, ImGui::GetCursorScreenPos().y + std::round(4 * ui.scale));
        if (s.model_view.panel == ModelPanel::lens) return draw_lens_table(s, ui, a, p1);
        if (s.model_view.panel == ModelPanel::patching) return draw_patch_panel(s, ui, a, p1);
    }
    y = ImGui::GetCursorScreenPos().y + std::round(6 * ui.scale);

    const float legend_h = f->FontSize + std::round(10 * ui.scale);
    const float gap = std::round(16 * ui.scale);
    const float bottom = p1.y - legend_h;
    // Two arrangements, whichever draws the patterns bigger: the table, the ablation box and
    // the predictions in a column on the right, or under the grid (a model of few layers):
    // the table on the left, the box over the predictions on the right.
    // A model's table has the ablate and DLA columns too: a little more room.
    const float side_w = std::round(std::clamp(width * (s.shown.input ? 0.42f : 0.38f), std::min(width * 0.5f, 300 * ui.scale), 560 * ui.scale));
    const float pred_h = predictions_height(s, ui, compact);
    const float table_h = ImGui::GetTextLineHeightWithSpacing() * (compact ? 1.f : 3.f) +
                          ImGui::GetFrameHeight() * float(std::min(L * H, 12) + 1);
    const float under_right_w = std::round((width - gap) * 0.45f);
    const float box_under = ablation_box_height(s, ui, under_right_w, compact);
    const float right_h = box_under + (pred_h > 0 ? gap + pred_h * (compact ? 1.f : 1.2f) : 0);
    const float strip_h = std::min(std::max(table_h, right_h), (bottom - y) * 0.55f);
    // Short windows: the predictions' two lines go under the grid, so that the table keeps
    // its rows above the ablation box.
    const float pred_left = compact && pred_h > 0 ? pred_h + gap : 0;
    const float thumb_side = grid_thumb(s, ui, ImVec2(width - side_w - gap, bottom - y - pred_left));
    const float thumb_under = grid_thumb(s, ui, ImVec2(width, bottom - y - strip_h - gap));
    if (thumb_under > thumb_side * 1.15f) {
        const float sy = bottom - strip_h;
        draw_model_grid(s, ui, ImVec2(p0.x, y), ImVec2(p1.x, sy - gap));
        const float table_w = width - under_right_w - gap;
        draw_detector_table(s, ui, ImVec2(p0.x, sy), ImVec2(p0.x + table_w, bottom), compact);
        const float rx = p0.x + table_w + gap;
        draw_ablation_box(s, ui, ImVec2(rx, sy), ImVec2(p1.x, sy + box_under), compact);
        if (pred_h > 0) draw_predictions(s, ui, ImVec2(rx, bottom - pred_h), under_right_w, compact);
    } else {
        const ImVec2 grid1(p1.x - side_w - gap, bottom - pred_left);
        draw_model_grid(s, ui, ImVec2(p0.x, y), grid1);
        const float sx = p1.x - side_w;
        if (compact) {
            if (pred_h > 0) draw_predictions(s, ui, ImVec2(p0.x, bottom - pred_h), grid1.x - p0.x, compact);
            const float box_h = ablation_box_height(s, ui, side_w, compact);
            draw_detector_table(s, ui, ImVec2(sx, y), ImVec2(p1.x, bottom - box_h - gap), compact);
            draw_ablation_box(s, ui, ImVec2(sx, bottom - box_h), ImVec2(p1.x, bottom), compact);
        } else {
            const float box_h = ablation_box_height(s, ui, side_w, compact);
            const float box_y = bottom - (pred_h > 0 ? pred_h + gap : 0) - box_h;
            draw_detector_table(s, ui, ImVec2(sx, y), ImVec2(p1.x, box_y - gap), compact);
            draw_ablation_box(s, ui, ImVec2(sx, box_y), ImVec2(p1.x, box_y + box_h), compact);
            if (pred_h > 0) draw_predictions(s, ui, ImVec2(sx, bottom - pred_h), side_w, compact);
        }
    }

    // The legend: the colour map and the three roles' frames, shortened to fit.
    const float ly = p1.y - legend_h + std::round(6 * ui.scale);
    const float sw = f->FontSize * 1.4f, pad = std::round(5 * ui.scale), space = std::round(14 * ui.scale);
    const std::string map = "weights 0 … 1 (" + std::string(ui.pal.colormaps == PaletteKind::cb ? "cividis" : "viridis") + "), masked grey";
    auto role_text = [&](int k, bool words) { return std::string(role_tag(k)) + (words ? std::string(": ") + role_words(k) : ""); };
    const std::string ablated_words = "ablated (A)";
    auto total = [&](bool with_map, bool words) {
        float w = with_map ? text_size(f, map).x + space : 0;
        for (int k = 0; k < 3; ++k) w += sw + pad + text_size(f, role_text(k, words)).x + space;
        if (s.shown.input) w += sw + pad + text_size(f, ablated_words).x + space;
        return w;
    };
    const bool words = total(false, true) <= width;
    const bool with_map = total(true, words) <= width;
    float x = p0.x;
    auto text = [&](const std::string& t, ImU32 c) {
        dl->AddText(f, f->FontSize, ImVec2(x, ly), c, t.c_str());
        x += text_size(f, t).x + space;
    };
    if (with_map) text(map, pal.text_dim);
    for (int k = 0; k < 3; ++k) {
        dl->AddRect(ImVec2(x, ly + 1), ImVec2(x + sw, ly + f->FontSize - 1), role_color(pal, k), 0, 0, std::max(2.f, std::round(2 * ui.scale)));
        x += sw + pad;
        text(role_text(k, words), role_color(pal, k));
    }
    if (s.shown.input) {
        // An ablated head: crossed out in the warning colour.
        const ImVec2 a(x, ly + 1), b(x + sw, ly + f->FontSize - 1);
        dl->AddRect(a, b, pal.warning, 0, 0, std::max(1.f, std::round(1.5f * ui.scale)));
        dl->AddLine(a, b, pal.warning, std::max(1.5f, 2 * ui.scale));
        dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), pal.warning, std::max(1.5f, 2 * ui.scale));
        x += sw + pad;
        text(ablated_words, pal.warning);
    }
}

} // namespace attnviz
