// app_state.cpp: see app_state.h.
#include "app_state.h"
#include "inputs.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

const char* to_string(View v) {
    switch (v) {
    case View::walk: return "walk";
    case View::qkv: return "qkv";
    case View::scores: return "scores";
    case View::causality: return "causality";
    case View::check: return "check";
    }
    return "?";
}

bool parse_view(const std::string& s, View& out, std::string& error) {
    for (View v : {View::walk, View::qkv, View::scores, View::causality, View::check})
        if (s == to_string(v)) {
            out = v;
            return true;
        }
    error = "--view '" + s + "' is not a view; use walk, qkv, scores, causality or check";
    return false;
}

const char* to_string(Theme t) {
    switch (t) {
    case Theme::dark: return "dark";
    case Theme::light: return "light";
    case Theme::high_contrast: return "high-contrast";
    }
    return "?";
}

bool parse_theme(const std::string& s, Theme& out, std::string& error) {
    for (Theme t : {Theme::dark, Theme::light, Theme::high_contrast})
        if (s == to_string(t)) {
            out = t;
            return true;
        }
    error = "--theme '" + s + "' is not a theme; use dark, light or high-contrast";
    return false;
}

Config lesson_config() { return Config{}; }

void init_app_state(AppState& s, const Config& c, KernelChoice kernel) {
    s.edit = c;
    s.edit_kernel_choice = kernel;
    s.config_dirty = true;
}

void request_config(AppState& s, const Config& c, KernelChoice kernel) {
    s.edit = c;
    s.edit_kernel_choice = kernel;
    s.config_dirty = true;
}

void reset_to_lesson(AppState& s) {
    request_config(s, lesson_config(), KernelChoice::automatic);
    s.shared_ranges = true;
    s.strength = 0;
    s.perturb_dirty = true;
    s.p = 2;
    for (ViewWindow& w : s.windows) w = ViewWindow{};
    // The lesson's input: random x and the seeded weights.
    s.edit_tokens.clear();
    s.edit_weights.reset();
    s.text_field.clear();
}

void request_perturbation(AppState& s, int p, float strength) {
    if (p == s.p && strength == s.strength) return;
    s.p = p;
    s.strength = strength;
    s.perturb_dirty = true;
}

namespace {

// Largest finite |v| over a column block [c0, c1) of m (NaN and inf are skipped: they have
// their own looks and must not flatten the colour map).
float max_abs(const Mat& m, int c0, int c1, Eigen::Index r0 = 0) {
    float best = 0;
    for (Eigen::Index r = r0; r < m.rows(); ++r) {
        const float* row = m.data() + r * m.cols();
        for (int c = c0; c < c1; ++c)
            if (std::isfinite(row[c])) best = std::max(best, std::fabs(row[c]));
    }
    return best;
}
float max_abs(const Mat& m) { return max_abs(m, 0, int(m.cols())); }

// Grows `r` to cover `value` (ranges never shrink while the config stays the same, so a
// slider drag does not make the colours flicker).
void grow(float& r, float value) { r = std::max(r, value); }

void grow_set(RangeSet& r, int H, const std::vector<float>& per_head) {
    r.head.resize(size_t(H), 0.f);
    for (int h = 0; h < H; ++h) {
        grow(r.head[size_t(h)], per_head[size_t(h)]);
        grow(r.all, per_head[size_t(h)]);
    }
}

// Largest finite |v| of column j of m.
float max_abs_column(const Mat& m, int j) {
    float best = 0;
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        const float v = m(r, j);
        if (std::isfinite(v)) best = std::max(best, std::fabs(v));
    }
    return best;
}

// Grows the ranges over the trace's rows from `row0` on, the raw scores' `columns` too,
// and, when `weights` is given, the weights. A new config scans everything (row0 = 0); a
// slider move under the causal mask scans only what it can change: the rows from the
// first changed one, and the score columns of the changed keys (about half the work at
// p = T/2, and no weights).
void grow_ranges(Ranges& rg, const Trace& tr, const Weights* weights, int row0 = 0,
                 const std::vector<int>& columns = {}) {
    const int H = tr.H, C = tr.C, hd = tr.head_dim;
    grow(rg.x.all, max_abs(tr.x, 0, int(tr.x.cols()), row0));
    grow(rg.y.all, max_abs(tr.y, 0, int(tr.y.cols()), row0));
    const size_t nh = static_cast<size_t>(H);
    std::vector<float> q(nh), k(nh), v(nh), raw(nh), heads(nh);
    for (int h = 0; h < H; ++h) {
        q[size_t(h)] = max_abs(tr.qkv, h * hd, (h + 1) * hd, row0);
        k[size_t(h)] = max_abs(tr.qkv, C + h * hd, C + (h + 1) * hd, row0);
        v[size_t(h)] = max_abs(tr.qkv, 2 * C + h * hd, 2 * C + (h + 1) * hd, row0);
        const Mat& scores = tr.raw_scores[size_t(h)];
        raw[size_t(h)] = max_abs(scores, 0, int(scores.cols()), row0);
        for (int j : columns) raw[size_t(h)] = std::max(raw[size_t(h)], max_abs_column(scores, j));
        heads[size_t(h)] = max_abs(tr.concat, h * hd, (h + 1) * hd, row0);
    }
    grow_set(rg.q, H, q);
    grow_set(rg.k, H, k);
    grow_set(rg.v, H, v);
    grow_set(rg.raw, H, raw);
    grow_set(rg.heads, H, heads);
    if (weights) {
        grow(rg.w_qkv.all, max_abs(weights->w_qkv));
        grow(rg.w_proj.all, max_abs(weights->w_proj));
    }
}

// Keeps every view's window inside the new shapes.
void clamp_windows(AppState& s) {
    const Config& c = s.config;
    for (ViewWindow& w : s.windows) {
        w.row0 = std::clamp(w.row0, 0, c.seq_len - 1);
        w.key0 = std::clamp(w.key0, 0, c.seq_len - 1);
        w.chan0 = std::clamp(w.chan0, 0, 3 * c.n_embd - 1);
        w.head0 = std::clamp(w.head0, 0, c.n_head - 1);
    }
}

KernelKind resolve_kernel(const AppState& s, const Config& c, KernelChoice k) {
    switch (k) {
    case KernelChoice::reference: return KernelKind::reference;
    case KernelChoice::fast: return KernelKind::fast;
    case KernelChoice::automatic: break;
    }
    return s.auto_kernel ? s.auto_kernel(c) : KernelKind::reference;
}

// A new config: the recipe, the full forward pass, fresh ranges, every texture.
bool apply_config(AppState& s) {
    const Config c = s.edit;
    std::string why = check_inputs(s, c);
    if (why.empty()) why = validate(c, s.memory_cap);
    Experiment e;
    if (why.empty()) make_state_experiment(s, c, e, why);
    if (!why.empty()) {
        s.error = "Kept the previous settings: " + why + ".";
        s.edit = s.config;
        s.edit_kernel_choice = s.kernel_choice;
        s.edit_tokens = s.tokens;
        s.edit_weights = s.weights;
        return false;
    }
    s.error.clear();
    s.tokens = s.edit_tokens;
    s.weights = s.edit_weights;
    s.config = c;
    s.kernel_choice = s.edit_kernel_choice;
    s.kernel = resolve_kernel(s, c, s.kernel_choice);
    s.experiment = std::move(e);
    s.has_base = trace_bytes(c) <= keep_base_cap;
    Trace& first = s.has_base ? s.base : s.trace;
    forward(c, s.experiment.weights, s.experiment.x, s.kernel, first);
    if (s.has_base) s.trace = s.base;
    else s.base = Trace{};
    s.base_y = s.trace.y;
    s.dy.assign(size_t(c.seq_len), 0.f);
    s.applied_p = -1;
    s.applied_strength = 0;
    s.p = std::clamp(s.p, 0, c.seq_len - 1);
    s.perturb_dirty = s.strength != 0;
    s.ranges = Ranges{};
    grow_ranges(s.ranges, s.trace, &s.experiment.weights);
    clamp_windows(s);
    s.upload = UploadRequest{};
    s.upload.full = true;
    s.base_upload = true;
    s.ready = true;
    s.status = "Computed seed " + std::to_string(c.seed) + ", C = " + std::to_string(c.n_embd) +
               ", H = " + std::to_string(c.n_head) + ", T = " + std::to_string(c.seq_len) + " with the " +
               to_string(s.kernel) + " kernel" + inputs_status(s) + ".";
    return true;
}

// Input row `row` back to its original values.
void restore_row(AppState& s, int row) {
    const Mat& x = s.experiment.x;
    update_row(s.experiment.weights, row, x.data() + size_t(row) * size_t(x.cols()), s.trace);
}

// A new p or strength: at most one input row differs from the recipe's x.
void apply_perturbation(AppState& s) {
    const int T = s.config.seq_len;
    const int p = std::clamp(s.p, 0, T - 1);
    const int old = s.applied_p;
    s.p = p;
    int first_row = p; // the first row whose values may have changed
    std::vector<int> columns{p};
    if (old >= 0 && old != p) {
        // Undo the old row first, so that only row p is perturbed.
        if (s.has_base) s.trace = s.base;
        else restore_row(s, old);
        first_row = std::min(first_row, old);
        columns.push_back(old);
    }
    if (s.strength == 0.f) {
        // Exactly the recipe's input: the unperturbed trace, bit for bit.
        if (s.has_base) s.trace = s.base;
        else if (old == p) restore_row(s, p);
        s.applied_p = -1;
    } else {
        Vec row = perturbed_row(s.experiment, p, s.strength);
        update_row(s.experiment.weights, p, row.data(), s.trace);
        s.applied_p = p;
    }
    s.applied_strength = s.applied_p >= 0 ? s.strength : 0.f;
    s.dy = max_abs_diff_per_position(s.trace.y, s.base_y);
    if (s.config.mask == MaskMode::causal) grow_ranges(s.ranges, s.trace, nullptr, first_row, columns);
    else grow_ranges(s.ranges, s.trace, nullptr);
    // Causal: rows before the first changed row cannot move. Other masks let any row move.
    if (s.config.mask == MaskMode::causal) {
        s.upload.row0 = s.upload.row0 >= 0 ? std::min(s.upload.row0, first_row) : first_row;
        for (int j : columns) s.upload.columns.push_back(j);
        for (int j : columns) s.upload.rows.push_back(j); // the input rows that changed
    } else {
        s.upload.full = true;
    }
}

} // namespace

void recompute(AppState& s) {
    if (s.config_dirty) {
        s.config_dirty = false;
        apply_config(s);
    }
    if (s.perturb_dirty && s.ready) {
        s.perturb_dirty = false;
        apply_perturbation(s);
    }
}

std::vector<std::vector<RowSharpness>> row_sharpness(const Trace& tr, double scale) {
    std::vector<std::vector<RowSharpness>> out(size_t(tr.H), std::vector<RowSharpness>(size_t(tr.T)));
    std::vector<double> z(size_t(tr.T));
    for (int h = 0; h < tr.H; ++h)
        for (int i = 0; i < tr.T; ++i) {
            RowSharpness& r = out[size_t(h)][size_t(i)];
            double top = -INFINITY;
            for (int j = 0; j < tr.T; ++j)
                if (tr.visible(i, j)) top = std::max(top, double(tr.raw_scores[size_t(h)](i, j)) * scale);
            if (!std::isfinite(top)) {
                r.max_weight = r.entropy = NAN; // no visible key: softmax is 0 / 0
                continue;
            }
            double sum = 0;
            for (int j = 0; j < tr.T; ++j) {
                z[size_t(j)] = tr.visible(i, j) ? std::exp(double(tr.raw_scores[size_t(h)](i, j)) * scale - top) : 0.0;
                sum += z[size_t(j)];
            }
            r.max_weight = 0;
            r.entropy = 0;
            for (int j = 0; j < tr.T; ++j) {
                const double w = z[size_t(j)] / sum;
                r.max_weight = std::max(r.max_weight, w);
                if (w > 0) r.entropy -= w * std::log(w);
            }
        }
    return out;
}

float range_of(const AppState& s, const RangeSet& r, int head) {
    float v = r.all;
    if (!s.shared_ranges && head >= 0 && head < int(r.head.size())) v = r.head[size_t(head)];
    return v > 0 ? v : 1.f;
}

} // namespace attnviz
