// specs.cpp: see specs.h.
#include "specs.h"
#include "format.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

std::string shape_text(const char* symbols, const Config& c) { return format_shape(symbols, c); }

const Texture* base_or_null(const AppState& s, const UiContext& ui, const Texture& t) {
    if (!perturbed(s) || !ui.base_tex) return nullptr;
    return t.id != 0 ? &t : nullptr;
}

std::string head_label(int h) { return "head " + std::to_string(h); }

// Bands for the heads over `C` columns starting at `c0`.
void add_head_bands(std::vector<Band>& bands, const UiContext& ui, int c0, int H, int hd, int level, bool short_labels) {
    for (int h = 0; h < H; ++h)
        bands.push_back(Band{c0 + h * hd, c0 + (h + 1) * hd, short_labels ? "h" + std::to_string(h) : head_label(h),
                             ui.pal.head_band[h % 2], level});
}

void add_head_separators(std::vector<int>& seps, int c0, int H, int hd) {
    for (int h = 1; h < H; ++h) seps.push_back(c0 + h * hd);
}

std::string val(float v) { return format_value(v, 3); }

// q, k and v are three views of one qkv matrix: with shared ranges they share one colour
// scale, so a block looks the same in qkv and on its own. Per-head ranges are per part.
float part_range(const AppState& s, Part which, int h) {
    const RangeSet* ranges[3] = {&s.ranges.q, &s.ranges.k, &s.ranges.v};
    if (s.shared_ranges)
        return std::max({range_of(s, s.ranges.q, -1), range_of(s, s.ranges.k, -1), range_of(s, s.ranges.v, -1)});
    return range_of(s, *ranges[int(which)], h);
}

} // namespace

bool perturbed(const AppState& s) { return s.applied_p >= 0; }

ImU32 part_color(const UiContext& ui, Part which) {
    return which == Part::q ? ui.pal.q : which == Part::k ? ui.pal.k : ui.pal.v;
}
ImU32 part_text_color(const UiContext& ui, Part which) {
    return which == Part::q ? ui.pal.q_text : which == Part::k ? ui.pal.k_text : ui.pal.v_text;
}
const char* part_name(Part which) { return which == Part::q ? "q" : which == Part::k ? "k" : "v"; }

MatrixSpec spec_x(const AppState& s, const UiContext& ui) {
    const Trace& tr = s.trace;
    MatrixSpec m;
    m.name = "x";
    m.title = "x   " + shape_text("(T, C)", s.config);
    m.parts = {MatrixPart{&ui.tex->x, base_or_null(s, ui, ui.base_tex->x), tr.C}};
    m.rows = tr.T;
    m.cols = tr.C;
    m.row_axis = Axis::position;
    m.col_axis = Axis::channel;
    m.row_caption = "position t";
    m.col_caption = "channel c";
    const float r = range_of(s, s.ranges.x, -1);
    m.lo = -r, m.hi = r;
    m.value = [&tr](int t, int c) { return tr.x(t, c); };
    if (s.has_base && perturbed(s)) m.base_value = [&s](int t, int c) { return s.base.x(t, c); };
    m.describe = [](int t, int c, float v) {
        return "input x, position " + std::to_string(t) + ", channel " + std::to_string(c) + ": " + val(v);
    };
    return m;
}

MatrixSpec spec_qkv(const AppState& s, const UiContext& ui) {
    const Trace& tr = s.trace;
    const int C = tr.C, H = tr.H, hd = tr.head_dim;
    MatrixSpec m;
    m.name = "qkv";
    m.title = "qkv = x · W_qkvᵀ   " + shape_text("(T, 3C)", s.config);
    m.parts = {MatrixPart{&ui.tex->q, base_or_null(s, ui, ui.base_tex->q), C},
               MatrixPart{&ui.tex->k, base_or_null(s, ui, ui.base_tex->k), C},
               MatrixPart{&ui.tex->v, base_or_null(s, ui, ui.base_tex->v), C}};
    m.rows = tr.T;
    m.cols = 3 * C;
    m.row_axis = Axis::position;
    m.col_axis = Axis::channel;
    m.row_caption = "position t";
    m.col_caption = "column of qkv: Q is 0…C−1, K is C…2C−1, V is 2C…3C−1";
    const float r = std::max({range_of(s, s.ranges.q, -1), range_of(s, s.ranges.k, -1), range_of(s, s.ranges.v, -1)});
    m.lo = -r, m.hi = r; // the whole matrix: one scale for all three blocks
    m.value = [&tr](int t, int c) { return tr.qkv(t, c); };
    if (s.has_base && perturbed(s)) m.base_value = [&s](int t, int c) { return s.base.qkv(t, c); };
    m.describe = [C, hd](int t, int c, float v) {
        const char* names[3] = {"query", "key", "value"};
        const int part = c / C, within = c % C;
        return std::string(names[part]) + " channel " + std::to_string(within) + " of position " + std::to_string(t) +
               " (head " + std::to_string(within / hd) + ", its channel " + std::to_string(within % hd) + "): " + val(v);
    };
    m.band_levels = 2;
    for (int p = 0; p < 3; ++p) {
        const Part which = Part(p);
        m.bands.push_back(Band{p * C, (p + 1) * C, p == 0 ? "Q = x · W_qᵀ" : p == 1 ? "K = x · W_kᵀ" : "V = x · W_vᵀ",
                               part_color(ui, which), 0});
        add_head_bands(m.bands, ui, p * C, H, hd, 1, true);
        add_head_separators(m.separators, p * C, H, hd);
        if (p > 0) m.separators.push_back(p * C);
    }
    return m;
}

MatrixSpec spec_part(const AppState& s, const UiContext& ui, Part which) {
    const Trace& tr = s.trace;
    const int C = tr.C, H = tr.H, hd = tr.head_dim, p = int(which);
    const Texture* tex[3] = {&ui.tex->q, &ui.tex->k, &ui.tex->v};
    const Texture* btex[3] = {&ui.base_tex->q, &ui.base_tex->k, &ui.base_tex->v};
    MatrixSpec m;
    m.name = part_name(which);
    m.title = std::string(part_name(which)) + "   " + shape_text("(T, C)", s.config);
    m.title_color = part_text_color(ui, which);
    m.frame_color = part_color(ui, which);
    m.parts = {MatrixPart{tex[p], base_or_null(s, ui, *btex[p]), C}};
    m.rows = tr.T;
    m.cols = C;
    m.row_axis = Axis::position;
    m.col_axis = Axis::channel;
    m.row_caption = "position t";
    m.col_caption = "channel c";
    const float r = part_range(s, which, -1);
    m.lo = -r, m.hi = r;
    m.value = [&tr, p, C](int t, int c) { return tr.qkv(t, p * C + c); };
    if (s.has_base && perturbed(s)) m.base_value = [&s, p, C](int t, int c) { return s.base.qkv(t, p * C + c); };
    m.describe = [which, hd](int t, int c, float v) {
        return std::string(part_name(which)) + ", position " + std::to_string(t) + ", channel " + std::to_string(c) +
               " (head " + std::to_string(c / hd) + "): " + val(v);
    };
    if (H > 1) {
        m.band_levels = 1;
        add_head_bands(m.bands, ui, 0, H, hd, 0, hd * 8 < 60);
        add_head_separators(m.separators, 0, H, hd);
        m.separator_color = part_color(ui, which);
    }
    return m;
}

MatrixSpec spec_head_part(const AppState& s, const UiContext& ui, Part which, int h) {
    const Trace& tr = s.trace;
    const int hd = tr.head_dim, p = int(which), C = tr.C;
    const Texture* tex[3] = {&ui.tex->q, &ui.tex->k, &ui.tex->v};
    const Texture* btex[3] = {&ui.base_tex->q, &ui.base_tex->k, &ui.base_tex->v};
    MatrixSpec m;
    m.name = std::string(part_name(which)) + "_head";
    m.head = h;
    m.title = std::string(part_name(which)) + ", head " + std::to_string(h);
    m.title_color = part_text_color(ui, which);
    m.frame_color = part_color(ui, which);
    MatrixPart part{tex[p], base_or_null(s, ui, *btex[p]), hd};
    part.offset_col = h * hd;
    m.parts = {part};
    m.rows = tr.T;
    m.cols = hd;
    m.row_axis = Axis::position;
    m.col_axis = Axis::channel;
    m.row_caption = "position t";
    m.col_caption = "channel of the head";
    const float r = part_range(s, which, h);
    m.lo = -r, m.hi = r;
    const PerHead* per[3] = {&tr.q, &tr.k, &tr.v};
    const PerHead* mats = per[p];
    m.value = [mats, h](int t, int c) { return (*mats)[size_t(h)](t, c); };
    if (s.has_base && perturbed(s)) m.base_value = [&s, p, C, h, hd](int t, int c) { return s.base.qkv(t, p * C + h * hd + c); };
    m.describe = [which, h](int t, int c, float v) {
        return std::string(part_name(which)) + " of head " + std::to_string(h) + ", position " + std::to_string(t) +
               ", channel " + std::to_string(c) + ": " + val(v);
    };
    return m;
}

MatrixSpec spec_head_k_transposed(const AppState& s, const UiContext& ui, int h) {
    const Trace& tr = s.trace;
    const int hd = tr.head_dim, C = tr.C;
    MatrixSpec m;
    m.name = "k_t_head";
    m.head = h;
    m.title = "kᵀ, head " + std::to_string(h);
    m.title_color = ui.pal.k_text;
    m.frame_color = ui.pal.k;
    MatrixPart part{&ui.tex->k, base_or_null(s, ui, ui.base_tex->k), tr.T};
    part.transpose = true;
    part.offset_col = h * hd; // shown (channel, position) is texture (position, h*hd + channel)
    m.parts = {part};
    m.rows = hd;
    m.cols = tr.T;
    m.row_axis = Axis::channel;
    m.col_axis = Axis::key;
    m.row_caption = "channel";
    m.col_caption = "key position j";
    const float r = part_range(s, Part::k, h);
    m.lo = -r, m.hi = r;
    m.value = [&tr, h](int c, int j) { return tr.k[size_t(h)](j, c); };
    if (s.has_base && perturbed(s)) m.base_value = [&s, C, h, hd](int c, int j) { return s.base.qkv(j, C + h * hd + c); };
    m.describe = [h](int c, int j, float v) {
        return "k of head " + std::to_string(h) + ", key position " + std::to_string(j) + ", channel " + std::to_string(c) +
               ": " + val(v);
    };
    return m;
}

MatrixSpec spec_scores(const AppState& s, const UiContext& ui, int h, ScoreStage stage) {
    const Trace& tr = s.trace;
    MatrixSpec m;
    const char* names[3] = {"scores_raw", "scores_scaled", "scores_masked"};
    m.name = names[int(stage)];
    m.head = h;
    m.title = stage == ScoreStage::raw      ? "q · kᵀ, head " + std::to_string(h)
              : stage == ScoreStage::scaled ? "scaled, head " + std::to_string(h)
                                            : "masked, head " + std::to_string(h);
    m.parts = {MatrixPart{&ui.tex->raw_scores[size_t(h)],
                          perturbed(s) && ui.base_tex && size_t(h) < ui.base_tex->raw_scores.size()
                              ? &ui.base_tex->raw_scores[size_t(h)]
                              : nullptr,
                          tr.T}};
    m.rows = tr.T;
    m.cols = tr.T;
    m.row_axis = Axis::position;
    m.col_axis = Axis::key;
    m.row_caption = "query position i";
    m.col_caption = "key position j";
    const float r = range_of(s, s.ranges.raw, h) * (stage == ScoreStage::raw ? 1.f : tr.scale);
    m.lo = -r, m.hi = r;
    m.scale = stage == ScoreStage::raw ? 1.f : tr.scale;
    if (stage == ScoreStage::masked)
        m.mask = tr.config.mask == MaskMode::causal       ? MaskShade::causal
                 : tr.config.mask == MaskMode::off_by_one ? MaskShade::off_by_one
                                                          : MaskShade::none;
    if (stage == ScoreStage::raw) m.value = [&tr, h](int i, int j) { return tr.raw_scores[size_t(h)](i, j); };
    else if (stage == ScoreStage::scaled) m.value = [&tr, h](int i, int j) { return tr.scaled_at(h, i, j); };
    else m.value = [&tr, h](int i, int j) { return tr.masked_at(h, i, j); };
    if (s.has_base && perturbed(s)) {
        if (stage == ScoreStage::raw) m.base_value = [&s, h](int i, int j) { return s.base.raw_scores[size_t(h)](i, j); };
        else if (stage == ScoreStage::scaled) m.base_value = [&s, h](int i, int j) { return s.base.scaled_at(h, i, j); };
        else m.base_value = [&s, h](int i, int j) { return s.base.masked_at(h, i, j); };
    }
    m.describe = [stage](int i, int j, float v) {
        const std::string qk = "query " + std::to_string(i) + " → key " + std::to_string(j);
        if (std::isinf(v) && v < 0)
            return qk + ": masked to −∞ (key " + std::to_string(j) + " is not visible from query " + std::to_string(i) + ")";
        if (stage == ScoreStage::raw) return qk + ": q·k = " + val(v);
        return qk + ": score " + val(v);
    };
    return m;
}

MatrixSpec spec_probs(const AppState& s, const UiContext& ui, int h) {
    const Trace& tr = s.trace;
    MatrixSpec m;
    m.name = "probs";
    m.head = h;
    m.title = "softmax weights, head " + std::to_string(h);
    m.parts = {MatrixPart{&ui.tex->probs[size_t(h)],
                          perturbed(s) && ui.base_tex && size_t(h) < ui.base_tex->probs.size()
                              ? &ui.base_tex->probs[size_t(h)]
                              : nullptr,
                          tr.T}};
    m.rows = tr.T;
    m.cols = tr.T;
    m.row_axis = Axis::position;
    m.col_axis = Axis::key;
    m.row_caption = "query position i";
    m.col_caption = "key position j";
    m.colormap = Colormap::viridis;
    m.lo = 0, m.hi = 1;
    m.value = [&tr, h](int i, int j) { return tr.probs[size_t(h)](i, j); };
    if (s.has_base && perturbed(s)) m.base_value = [&s, h](int i, int j) { return s.base.probs[size_t(h)](i, j); };
    m.describe = [&tr, h](int i, int j, float v) {
        const std::string qk = "query " + std::to_string(i) + " → key " + std::to_string(j);
        if (std::isnan(v))
            return "query " + std::to_string(i) + ": no key is visible, so softmax divides 0 by 0: NaN";
        if (v == 0.f && !tr.visible(i, j)) return qk + ": weight 0 exactly (masked: e^−∞ = 0)";
        return qk + ": weight " + val(v);
    };
    return m;
}

MatrixSpec spec_head_out(const AppState& s, const UiContext& ui, int h) {
    const Trace& tr = s.trace;
    const int hd = tr.head_dim;
    MatrixSpec m;
    m.name = "head_out";
    m.head = h;
    m.title = "att · v, head " + std::to_string(h);
    MatrixPart part{&ui.tex->concat, base_or_null(s, ui, ui.base_tex->concat), hd};
    part.offset_col = h * hd;
    m.parts = {part};
    m.rows = tr.T;
    m.cols = hd;
    m.row_axis = Axis::position;
    m.col_axis = Axis::channel;
    m.row_caption = "query position i";
    m.col_caption = "channel of the head";
    const float r = range_of(s, s.ranges.heads, h);
    m.lo = -r, m.hi = r;
    m.value = [&tr, h](int t, int c) { return tr.heads[size_t(h)](t, c); };
    if (s.has_base && perturbed(s)) m.base_value = [&s, h](int t, int c) { return s.base.heads[size_t(h)](t, c); };
    m.describe = [h](int t, int c, float v) {
        return "head " + std::to_string(h) + "'s output at position " + std::to_string(t) + ", channel " +
               std::to_string(c) + ": " + val(v) + " (weighted average of the values it may see)";
    };
    return m;
}

MatrixSpec spec_concat(const AppState& s, const UiContext& ui) {
    const Trace& tr = s.trace;
    const int H = tr.H, hd = tr.head_dim;
    MatrixSpec m;
    m.name = "concat";
    m.title = "heads side by side   " + shape_text("(T, C)", s.config);
    m.parts = {MatrixPart{&ui.tex->concat, base_or_null(s, ui, ui.base_tex->concat), tr.C}};
    m.rows = tr.T;
    m.cols = tr.C;
    m.row_axis = Axis::position;
    m.col_axis = Axis::channel;
    m.row_caption = "position t";
    m.col_caption = "channel c";
    const float r = range_of(s, s.ranges.heads, -1);
    m.lo = -r, m.hi = r;
    m.value = [&tr](int t, int c) { return tr.concat(t, c); };
    if (s.has_base && perturbed(s)) m.base_value = [&s](int t, int c) { return s.base.concat(t, c); };
    m.describe = [hd](int t, int c, float v) {
        return "position " + std::to_string(t) + ", channel " + std::to_string(c) + " (head " + std::to_string(c / hd) +
               "'s channel " + std::to_string(c % hd) + "): " + val(v);
    };
    if (H > 1) {
        m.band_levels = 1;
        add_head_bands(m.bands, ui, 0, H, hd, 0, hd * 8 < 60);
        add_head_separators(m.separators, 0, H, hd);
    }
    return m;
}

MatrixSpec spec_y(const AppState& s, const UiContext& ui) {
    const Trace& tr = s.trace;
    MatrixSpec m;
    m.name = "y";
    m.title = "y = proj(…)   " + shape_text("(T, C)", s.config);
    m.parts = {MatrixPart{&ui.tex->y, perturbed(s) && ui.base_tex && ui.base_tex->y.id ? &ui.base_tex->y : nullptr, tr.C}};
    m.rows = tr.T;
    m.cols = tr.C;
    m.row_axis = Axis::position;
    m.col_axis = Axis::channel;
    m.row_caption = "position t";
    m.col_caption = "channel c";
    const float r = range_of(s, s.ranges.y, -1);
    m.lo = -r, m.hi = r;
    m.value = [&tr](int t, int c) { return tr.y(t, c); };
    if (perturbed(s)) m.base_value = [&s](int t, int c) { return s.base_y(t, c); };
    m.describe = [](int t, int c, float v) {
        return "output y, position " + std::to_string(t) + ", channel " + std::to_string(c) + ": " + val(v);
    };
    return m;
}

MatrixSpec spec_w_qkv_t(const AppState& s, const UiContext& ui) {
    const Weights& w = s.experiment.weights;
    const int C = s.trace.C;
    MatrixSpec m;
    m.name = "w_qkv_t";
    m.title = "W_qkvᵀ   (C, 3C) = (" + std::to_string(C) + ", " + std::to_string(3 * C) + ")";
    MatrixPart parts[3] = {{&ui.tex->w_q, nullptr, C}, {&ui.tex->w_k, nullptr, C}, {&ui.tex->w_v, nullptr, C}};
    for (MatrixPart& p : parts) p.transpose = true;
    m.parts = {parts[0], parts[1], parts[2]};
    m.rows = C;
    m.cols = 3 * C;
    m.row_axis = Axis::fixed;
    m.col_axis = Axis::channel;
    m.row_caption = "input channel";
    const float r = range_of(s, s.ranges.w_qkv, -1);
    m.lo = -r, m.hi = r;
    m.value = [&w](int in, int out) { return w.w_qkv(out, in); };
    m.describe = [C](int in, int out, float v) {
        const char* names[3] = {"query", "key", "value"};
        return std::string("weight from input channel ") + std::to_string(in) + " to " + names[out / C] + " channel " +
               std::to_string(out % C) + ": " + val(v);
    };
    m.print_values = false;
    m.band_levels = 1;
    for (int p = 0; p < 3; ++p) {
        m.bands.push_back(Band{p * C, (p + 1) * C, p == 0 ? "W_qᵀ" : p == 1 ? "W_kᵀ" : "W_vᵀ", part_color(ui, Part(p)), 0});
        if (p > 0) m.separators.push_back(p * C);
    }
    return m;
}

MatrixSpec spec_w_proj_t(const AppState& s, const UiContext& ui) {
    const Weights& w = s.experiment.weights;
    const int C = s.trace.C;
    MatrixSpec m;
    m.name = "w_proj_t";
    m.title = "W_projᵀ   (C, C)";
    MatrixPart part{&ui.tex->w_proj, nullptr, C};
    part.transpose = true;
    m.parts = {part};
    m.rows = C;
    m.cols = C;
    m.row_axis = Axis::fixed;
    m.col_axis = Axis::channel;
    m.row_caption = "input channel";
    m.col_caption = "output channel";
    const float r = range_of(s, s.ranges.w_proj, -1);
    m.lo = -r, m.hi = r;
    m.value = [&w](int in, int out) { return w.w_proj(out, in); };
    m.describe = [](int in, int out, float v) {
        return "weight from concatenated channel " + std::to_string(in) + " to output channel " + std::to_string(out) +
               ": " + val(v);
    };
    m.print_values = false;
    return m;
}

} // namespace attnviz
