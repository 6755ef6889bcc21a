// specs.cpp: see specs.h.
#include "specs.h"
#include "format.h"
#include "tensor_table.h"
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
    const RangeSet* ranges[3] = {&s.run.ranges.q, &s.run.ranges.k, &s.run.ranges.v};
    if (s.screen.shared_ranges)
        return std::max({range_of(s, s.run.ranges.q, -1), range_of(s, s.run.ranges.k, -1), range_of(s, s.run.ranges.v, -1)});
    return range_of(s, *ranges[int(which)], h);
}

// The frame most panels share: rows are the positions, a symmetric colour range.
// Columns are channels unless `keys` (the score and weight matrices over key positions).
MatrixSpec panel(const std::string& name, int head, std::string title, int rows, int cols, float range,
                 bool keys = false) {
    MatrixSpec m;
    m.name = name;
    m.head = head;
    m.title = std::move(title);
    m.rows = rows;
    m.cols = cols;
    m.row_axis = Axis::position;
    m.col_axis = keys ? Axis::key : Axis::channel;
    m.row_caption = keys ? "query position i" : "position t";
    m.col_caption = keys ? "key position j" : "channel c";
    m.lo = -range, m.hi = range;
    return m;
}

// Cell values from a matrix of the trace, and from the unperturbed trace when one is kept.
void values_from(MatrixSpec& m, const AppState& s, Mat Trace::*mat) {
    const Trace& tr = s.run.trace;
    m.value = [&tr, mat](int r, int c) { return (tr.*mat)(r, c); };
    if (s.run.has_base && perturbed(s)) m.base_value = [&s, mat](int r, int c) { return (s.run.base.*mat)(r, c); };
}
// The same from head h of a per-head tensor.
void values_from(MatrixSpec& m, const AppState& s, PerHead Trace::*per, int h) {
    const Trace& tr = s.run.trace;
    m.value = [&tr, per, h](int r, int c) { return (tr.*per)[size_t(h)](r, c); };
    if (s.run.has_base && perturbed(s)) m.base_value = [&s, per, h](int r, int c) { return (s.run.base.*per)[size_t(h)](r, c); };
}

// Head h's (T, T) texture of the unperturbed trace, when it is kept.
const Texture* base_head_or_null(const AppState& s, const UiContext& ui, std::vector<Texture> TraceTextures::*tex, int h) {
    if (!perturbed(s) || !ui.base_tex || size_t(h) >= (ui.base_tex->*tex).size()) return nullptr;
    return &(ui.base_tex->*tex)[size_t(h)];
}

const char* name_of(TensorName n) { return tensor_info(n).name; }
const char* shape_of(TensorName n) { return tensor_info(n).shape; }

} // namespace

bool perturbed(const AppState& s) { return s.run.applied_p >= 0; }

ImU32 part_color(const UiContext& ui, Part which) {
    return which == Part::q ? ui.pal.q : which == Part::k ? ui.pal.k : ui.pal.v;
}
ImU32 part_text_color(const UiContext& ui, Part which) {
    return which == Part::q ? ui.pal.q_text : which == Part::k ? ui.pal.k_text : ui.pal.v_text;
}
const char* part_name(Part which) { return which == Part::q ? "q" : which == Part::k ? "k" : "v"; }

MatrixSpec spec_x(const AppState& s, const UiContext& ui) {
    const Trace& tr = s.run.trace;
    MatrixSpec m = panel(name_of(TensorName::x), -1, "x   " + shape_text(shape_of(TensorName::x), s.config.applied), tr.T, tr.C,
                         range_of(s, s.run.ranges.x, -1));
    m.parts = {MatrixPart{&ui.tex->x, base_or_null(s, ui, ui.base_tex->x), tr.C}};
    values_from(m, s, &Trace::x);
    // x is the lesson's input, a toy block's h or a GPT layer's ln_1(h): the hover says which.
    const std::string input = std::string("input ") + attention_input_name(s);
    m.describe = [input](int t, int c, float v) {
        return input + ", position " + std::to_string(t) + ", channel " + std::to_string(c) + ": " + val(v);
    };
    return m;
}

MatrixSpec spec_qkv(const AppState& s, const UiContext& ui) {
    const Trace& tr = s.run.trace;
    const int C = tr.C, H = tr.H, hd = tr.head_dim;
    // The whole matrix: one scale for all three blocks.
    const float r = std::max({range_of(s, s.run.ranges.q, -1), range_of(s, s.run.ranges.k, -1), range_of(s, s.run.ranges.v, -1)});
    MatrixSpec m = panel(name_of(TensorName::qkv), -1,
                         "qkv = x · W_qkvᵀ   " + shape_text(shape_of(TensorName::qkv), s.config.applied), tr.T, 3 * C, r);
    m.parts = {MatrixPart{&ui.tex->q, base_or_null(s, ui, ui.base_tex->q), C},
               MatrixPart{&ui.tex->k, base_or_null(s, ui, ui.base_tex->k), C},
               MatrixPart{&ui.tex->v, base_or_null(s, ui, ui.base_tex->v), C}};
    m.col_caption = "column of qkv: Q is 0…C−1, K is C…2C−1, V is 2C…3C−1";
    values_from(m, s, &Trace::qkv);
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

// The hue and frame of q, k or v, and its texture (the part's block of qkv).
MatrixSpec part_panel(const AppState& s, const UiContext& ui, Part which, int h, std::string title, int cols,
                      float range) {
    const Texture* tex[3] = {&ui.tex->q, &ui.tex->k, &ui.tex->v};
    const Texture* btex[3] = {&ui.base_tex->q, &ui.base_tex->k, &ui.base_tex->v};
    MatrixSpec m = panel(part_name(which), h, std::move(title), s.run.trace.T, cols, range);
    m.title_color = part_text_color(ui, which);
    m.frame_color = part_color(ui, which);
    m.parts = {MatrixPart{tex[int(which)], base_or_null(s, ui, *btex[int(which)]), cols}};
    return m;
}

MatrixSpec spec_part(const AppState& s, const UiContext& ui, Part which) {
    const Trace& tr = s.run.trace;
    const int C = tr.C, H = tr.H, hd = tr.head_dim, p = int(which);
    MatrixSpec m = part_panel(s, ui, which, -1, std::string(part_name(which)) + "   " + shape_text("(T, C)", s.config.applied), C,
                              part_range(s, which, -1));
    m.value = [&tr, p, C](int t, int c) { return tr.qkv(t, p * C + c); };
    if (s.run.has_base && perturbed(s)) m.base_value = [&s, p, C](int t, int c) { return s.run.base.qkv(t, p * C + c); };
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
    const Trace& tr = s.run.trace;
    const int hd = tr.head_dim, p = int(which), C = tr.C;
    MatrixSpec m = part_panel(s, ui, which, h, std::string(part_name(which)) + ", head " + std::to_string(h), hd,
                              part_range(s, which, h));
    m.parts[0].offset_col = h * hd;
    m.col_caption = "channel of the head";
    PerHead Trace::*per[3] = {&Trace::q, &Trace::k, &Trace::v};
    values_from(m, s, per[p], h);
    // The unperturbed trace may keep only qkv; head h's part is a block of its columns.
    if (s.run.has_base && perturbed(s)) m.base_value = [&s, p, C, h, hd](int t, int c) { return s.run.base.qkv(t, p * C + h * hd + c); };
    m.describe = [which, h](int t, int c, float v) {
        return std::string(part_name(which)) + " of head " + std::to_string(h) + ", position " + std::to_string(t) +
               ", channel " + std::to_string(c) + ": " + val(v);
    };
    return m;
}

MatrixSpec spec_head_k_transposed(const AppState& s, const UiContext& ui, int h) {
    const Trace& tr = s.run.trace;
    const int hd = tr.head_dim, C = tr.C;
    MatrixSpec m = panel("k_t", h, "kᵀ, head " + std::to_string(h), hd, tr.T, part_range(s, Part::k, h), true);
    m.title_color = ui.pal.k_text;
    m.frame_color = ui.pal.k;
    MatrixPart part{&ui.tex->k, base_or_null(s, ui, ui.base_tex->k), tr.T};
    part.transpose = true;
    part.offset_col = h * hd; // shown (channel, position) is texture (position, h*hd + channel)
    m.parts = {part};
    m.row_axis = Axis::channel;
    m.row_caption = "channel";
    m.value = [&tr, h](int c, int j) { return tr.k[size_t(h)](j, c); };
    if (s.run.has_base && perturbed(s)) m.base_value = [&s, C, h, hd](int c, int j) { return s.run.base.qkv(j, C + h * hd + c); };
    m.describe = [h](int c, int j, float v) {
        return "k of head " + std::to_string(h) + ", key position " + std::to_string(j) + ", channel " + std::to_string(c) +
               ": " + val(v);
    };
    return m;
}

MatrixSpec spec_scores(const AppState& s, const UiContext& ui, int h, ScoreStage stage) {
    const Trace& tr = s.run.trace;
    const TensorName names[3] = {TensorName::scores, TensorName::scaled, TensorName::masked};
    const char* titles[3] = {"q · kᵀ, head ", "scaled, head ", "masked, head "};
    const float scale = stage == ScoreStage::raw ? 1.f : tr.scale;
    MatrixSpec m = panel(name_of(names[int(stage)]), h, titles[int(stage)] + std::to_string(h), tr.T, tr.T,
                         range_of(s, s.run.ranges.raw, h) * scale, true);
    m.parts = {MatrixPart{&ui.tex->raw_scores[size_t(h)], base_head_or_null(s, ui, &TraceTextures::raw_scores, h), tr.T}};
    m.scale = scale;
    if (stage == ScoreStage::masked)
        m.mask = tr.config.mask == MaskMode::causal       ? MaskShade::causal
                 : tr.config.mask == MaskMode::off_by_one ? MaskShade::off_by_one
                                                          : MaskShade::none;
    if (stage == ScoreStage::raw) values_from(m, s, &Trace::raw_scores, h);
    else if (stage == ScoreStage::scaled) m.value = [&tr, h](int i, int j) { return tr.scaled_at(h, i, j); };
    else m.value = [&tr, h](int i, int j) { return tr.masked_at(h, i, j); };
    if (s.run.has_base && perturbed(s)) {
        if (stage == ScoreStage::scaled) m.base_value = [&s, h](int i, int j) { return s.run.base.scaled_at(h, i, j); };
        else if (stage == ScoreStage::masked) m.base_value = [&s, h](int i, int j) { return s.run.base.masked_at(h, i, j); };
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
    const Trace& tr = s.run.trace;
    MatrixSpec m = panel(name_of(TensorName::probs), h, "softmax weights, head " + std::to_string(h), tr.T, tr.T, 1, true);
    m.parts = {MatrixPart{&ui.tex->probs[size_t(h)], base_head_or_null(s, ui, &TraceTextures::probs, h), tr.T}};
    m.colormap = Colormap::viridis;
    m.lo = 0, m.hi = 1;
    values_from(m, s, &Trace::att, h);
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
    const Trace& tr = s.run.trace;
    const int hd = tr.head_dim;
    MatrixSpec m = panel(name_of(TensorName::heads), h, "att · v, head " + std::to_string(h), tr.T, hd,
                         range_of(s, s.run.ranges.heads, h));
    MatrixPart part{&ui.tex->concat, base_or_null(s, ui, ui.base_tex->concat), hd};
    part.offset_col = h * hd;
    m.parts = {part};
    m.row_caption = "query position i";
    m.col_caption = "channel of the head";
    values_from(m, s, &Trace::heads, h);
    m.describe = [h](int t, int c, float v) {
        return "head " + std::to_string(h) + "'s output at position " + std::to_string(t) + ", channel " +
               std::to_string(c) + ": " + val(v) + " (weighted average of the values it may see)";
    };
    return m;
}

MatrixSpec spec_concat(const AppState& s, const UiContext& ui) {
    const Trace& tr = s.run.trace;
    const int H = tr.H, hd = tr.head_dim;
    MatrixSpec m = panel(name_of(TensorName::concat), -1,
                         "heads side by side   " + shape_text(shape_of(TensorName::concat), s.config.applied), tr.T, tr.C,
                         range_of(s, s.run.ranges.heads, -1));
    m.parts = {MatrixPart{&ui.tex->concat, base_or_null(s, ui, ui.base_tex->concat), tr.C}};
    values_from(m, s, &Trace::concat);
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
    const Trace& tr = s.run.trace;
    MatrixSpec m = panel(name_of(TensorName::y), -1, "y = proj(…)   " + shape_text(shape_of(TensorName::y), s.config.applied),
                         tr.T, tr.C, range_of(s, s.run.ranges.y, -1));
    m.parts = {MatrixPart{&ui.tex->y, perturbed(s) && ui.base_tex && ui.base_tex->y.id ? &ui.base_tex->y : nullptr, tr.C}};
    m.value = [&tr](int t, int c) { return tr.y(t, c); };
    // The unperturbed output is always kept, even when the rest of that trace is not.
    if (perturbed(s)) m.base_value = [&s](int t, int c) { return s.run.base_y(t, c); };
    m.describe = [](int t, int c, float v) {
        return "output y, position " + std::to_string(t) + ", channel " + std::to_string(c) + ": " + val(v);
    };
    return m;
}

// A weight matrix, transposed as x · Wᵀ uses it: rows are input channels.
MatrixSpec weight_panel(const char* name, std::string title, int C, int cols, float range) {
    MatrixSpec m = panel(name, -1, std::move(title), C, cols, range);
    m.row_axis = Axis::fixed;
    m.row_caption = "input channel";
    m.print_values = false;
    return m;
}

MatrixSpec spec_w_qkv_t(const AppState& s, const UiContext& ui) {
    const Weights& w = s.run.experiment.weights;
    const int C = s.run.trace.C;
    MatrixSpec m = weight_panel("w_qkv_t", "W_qkvᵀ   (C, 3C) = (" + std::to_string(C) + ", " + std::to_string(3 * C) + ")",
                                C, 3 * C, range_of(s, s.run.ranges.w_qkv, -1));
    MatrixPart parts[3] = {{&ui.tex->w_q, nullptr, C}, {&ui.tex->w_k, nullptr, C}, {&ui.tex->w_v, nullptr, C}};
    for (MatrixPart& p : parts) p.transpose = true;
    m.parts = {parts[0], parts[1], parts[2]};
    m.col_caption.clear();
    m.value = [&w](int in, int out) { return w.c_attn.weight(out, in); };
    m.describe = [C](int in, int out, float v) {
        const char* names[3] = {"query", "key", "value"};
        return std::string("weight from input channel ") + std::to_string(in) + " to " + names[out / C] + " channel " +
               std::to_string(out % C) + ": " + val(v);
    };
    m.band_levels = 1;
    for (int p = 0; p < 3; ++p) {
        m.bands.push_back(Band{p * C, (p + 1) * C, p == 0 ? "W_qᵀ" : p == 1 ? "W_kᵀ" : "W_vᵀ", part_color(ui, Part(p)), 0});
        if (p > 0) m.separators.push_back(p * C);
    }
    return m;
}

MatrixSpec spec_w_proj_t(const AppState& s, const UiContext& ui) {
    const Weights& w = s.run.experiment.weights;
    const int C = s.run.trace.C;
    MatrixSpec m = weight_panel("w_proj_t", "W_projᵀ   (C, C)", C, C, range_of(s, s.run.ranges.w_proj, -1));
    MatrixPart part{&ui.tex->w_proj, nullptr, C};
    part.transpose = true;
    m.parts = {part};
    m.col_caption = "output channel";
    m.value = [&w](int in, int out) { return w.c_proj.weight(out, in); };
    m.describe = [](int in, int out, float v) {
        return "weight from concatenated channel " + std::to_string(in) + " to output channel " + std::to_string(out) +
               ": " + val(v);
    };
    return m;
}

} // namespace attnviz
