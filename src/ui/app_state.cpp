// app_state.cpp: see app_state.h.
#include "app_state.h"
#include "text_util.h"
#include "inputs.h"
#include "state_internal.h"
#include "train_view_state.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attnviz {

const char* to_string(View v) {
    switch (v) {
    case View::walk: return "walk";
    case View::qkv: return "qkv";
    case View::scores: return "scores";
    case View::causality: return "causality";
    case View::check: return "check";
    case View::train: return "train";
    case View::model: return "model";
    }
    return "?";
}

bool parse_view(const std::string& s, View& out, std::string& error) {
    for (View v : {View::walk, View::qkv, View::scores, View::causality, View::check, View::train, View::model})
        if (s == to_string(v)) {
            out = v;
            return true;
        }
    error = "--view " + quote(s) + " is not a view; use walk, qkv, scores, causality, check, train or model";
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
    error = "--theme " + quote(s) + " is not a theme; use dark, light or high-contrast";
    return false;
}

Config lesson_config() { return Config{}; }

void init_app_state(AppState& s, const Config& c, KernelChoice kernel) {
    s.edit = c;
    s.edit_kernel_choice = kernel;
    s.edit_trained.reset(); // `c` is the lesson's module (a session, the command line); a model is staged after
    s.config_dirty = true;
}

void request_config(AppState& s, const Config& c, KernelChoice kernel) {
    s.edit = c;
    s.edit_kernel_choice = kernel;
    s.config_dirty = true;
}

void request_trained_model(AppState& s, std::shared_ptr<const TrainedInput> in) {
    s.edit_trained = std::move(in);
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
    // The lesson's module, not a trained model.
    request_trained_model(s, nullptr);
    s.edit_layer = 0;
    s.replace_token = -1;
}

void request_perturbation(AppState& s, int p, float strength) {
    if (p == s.p && strength == s.strength) return;
    s.p = p;
    s.strength = strength;
    s.perturb_dirty = true;
}

int64_t window_bytes(const Config& c) {
    const int64_t T = c.seq_len, C = c.n_embd, H = c.n_head, f = int64_t(sizeof(float));
    const int64_t trace = trace_bytes(c);
    const bool whole_copy = trace <= keep_base_cap;
    const int copies = whole_copy ? 2 : 1;
    // x, q, k, v, concat, y and the four weight blocks, per kept trace; the per-head
    // scores and weights up to the renderer's budget, or what one frame draws when that is
    // more (the scores view shows two heads: four (T, T) textures, kept while drawn).
    const int64_t textures = copies * (6 * T * C + 4 * C * C) * f;
    const int64_t one_frame = std::min<int64_t>(H, 2) * 2 * T * T * f;
    const int64_t heads = std::min<int64_t>(std::max(head_texture_budget, one_frame), copies * 2 * H * T * T * f);
    return trace + (whole_copy ? trace : T * C * f) + textures + heads;
}

std::string validate_window(const Config& c, int64_t cap) {
    if (std::string why = validate(c, std::numeric_limits<int64_t>::max()); !why.empty()) return why;
    const int64_t need = window_bytes(c);
    if (need <= cap) return "";
    return "seq_len " + std::to_string(c.seq_len) + " with n_embd " + std::to_string(c.n_embd) + " and n_head " +
           std::to_string(c.n_head) + " needs about " + human_bytes(need) +
           " in the window (the trace, its unperturbed copy and their textures), over the cap of " +
           human_bytes(cap) + "; use a smaller seq_len, n_head or n_embd";
}

namespace {

// Largest finite |v| over columns [c0, c1) of rows [r0, r1) of m (NaN and inf are skipped:
// they have their own looks and must not flatten the colour map). The bits of |v| compare
// as integers the way the floats do, and every finite one is below inf's, so the loop is
// an integer max that GCC vectorizes (it does not vectorize a float max with a finiteness
// test, nor this one with `?:` for the mask: hence the mask arithmetic).
float max_abs(const Mat& m, int c0, int c1, Eigen::Index r0, Eigen::Index r1) {
    constexpr uint32_t inf_bits = 0x7f800000u;
    uint32_t best = 0;
    for (Eigen::Index r = r0; r < r1; ++r) {
        const float* row = m.data() + r * m.cols();
        for (int c = c0; c < c1; ++c) {
            uint32_t b;
            std::memcpy(&b, row + c, sizeof b);
            b &= 0x7fffffffu;
            b &= 0u - uint32_t(b < inf_bits); // 0 for NaN and inf
            best = best > b ? best : b;
        }
    }
    float out;
    std::memcpy(&out, &best, sizeof out);
    return out;
}
float max_abs(const Mat& m, int c0, int c1, Eigen::Index r0 = 0) { return max_abs(m, c0, c1, r0, m.rows()); }
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

} // namespace

namespace state_detail {

// At (512, 512, 8) a drag at p = 2 scans about 0.5 M values (concat and y from p on, one
// row and column of each head's scores) instead of the 3.7 M of every row from p on.
void grow_ranges(Ranges& rg, const Trace& tr, const Weights* weights, const Changed& ch) {
    const int H = tr.H, C = tr.C, hd = tr.head_dim, T = tr.T;
    const size_t nh = static_cast<size_t>(H);
    std::vector<float> q(nh), k(nh), v(nh), raw(nh), heads(nh);
    // Input rows [r0, r1) of x, qkv and the raw scores.
    auto scan_input_rows = [&](Eigen::Index r0, Eigen::Index r1) {
        grow(rg.x.all, max_abs(tr.x, 0, C, r0, r1));
        for (int h = 0; h < H; ++h) {
            const size_t i = size_t(h);
            q[i] = std::max(q[i], max_abs(tr.qkv, h * hd, (h + 1) * hd, r0, r1));
            k[i] = std::max(k[i], max_abs(tr.qkv, C + h * hd, C + (h + 1) * hd, r0, r1));
            v[i] = std::max(v[i], max_abs(tr.qkv, 2 * C + h * hd, 2 * C + (h + 1) * hd, r0, r1));
            raw[i] = std::max(raw[i], max_abs(tr.raw_scores[i], 0, T, r0, r1));
        }
    };
    if (ch.all) {
        scan_input_rows(0, T);
    } else {
        for (int r : ch.rows)
            if (r >= 0 && r < T) scan_input_rows(r, r + 1);
        for (int j : ch.columns)
            if (j >= 0 && j < T)
                for (int h = 0; h < H; ++h)
                    raw[size_t(h)] = std::max(raw[size_t(h)], max_abs_column(tr.raw_scores[size_t(h)], j));
    }
    const Eigen::Index row0 = ch.all ? 0 : std::clamp(ch.row0, 0, T);
    grow(rg.y.all, max_abs(tr.y, 0, C, row0));
    for (int h = 0; h < H; ++h) heads[size_t(h)] = max_abs(tr.concat, h * hd, (h + 1) * hd, row0);
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

// The sharpness table's rows from `row0` on (the rows before it kept their scores).
void update_sharpness(AppState& s, int row0) {
    const Trace& tr = s.trace;
    SharpnessTable& t = s.sharpness;
    const int heads = std::min(tr.H, sharpness_heads), rows = std::min(tr.T, sharpness_rows);
    if (t.heads != heads || t.rows != rows) {
        t = SharpnessTable{heads, rows, std::vector<std::array<RowSharpness, 2>>(size_t(heads * rows))};
        row0 = 0;
    }
    const double by_hd = 1.0 / std::sqrt(double(tr.head_dim)), by_c = 1.0 / std::sqrt(double(tr.C));
    for (int h = 0; h < heads; ++h)
        for (int i = std::max(row0, 0); i < rows; ++i)
            t.cells[size_t(h * rows + i)] = {row_sharpness(tr, h, i, by_hd), row_sharpness(tr, h, i, by_c)};
}

DySummary summarize(const std::vector<float>& dy, int p) {
    DySummary d;
    for (size_t t = 0; t < dy.size(); ++t) {
        const float v = dy[t];
        if (std::isfinite(v)) d.top = std::max(d.top, v);
        if (std::isnan(v)) d.nan = true;
        else if (int(t) < p) d.before = std::max(d.before, v);
        else d.after = std::max(d.after, v);
        if (int(t) < p) d.zeros_before += v == 0.f;
    }
    return d;
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

} // namespace state_detail

namespace {

using namespace state_detail;

// dy (T) = max_c |y - base_y| per position, for rows from `row0` on: the rows before it
// did not change since the last time, and neither did their dy.
void update_dy(AppState& s, int row0) {
    const Eigen::Index T = s.trace.y.rows();
    row0 = std::clamp(row0, 0, int(T));
    if (s.dy.size() != size_t(T) || row0 == 0) {
        s.dy = max_abs_diff_per_position(s.trace.y, s.base_y);
        return;
    }
    const std::vector<float> d =
        max_abs_diff_per_position(s.trace.y.bottomRows(T - row0), s.base_y.bottomRows(T - row0));
    std::copy(d.begin(), d.end(), s.dy.begin() + row0);
}

void summarize_dy(AppState& s) { s.dy_summary = summarize(s.dy, s.applied_p); }

// A new config: the recipe, the full forward pass, fresh ranges, every texture.
bool apply_config(AppState& s) {
    const Config c = s.edit;
    std::string why = check_inputs(s, c);
    if (why.empty()) why = validate_window(c, s.memory_cap);
    Experiment e;
    if (why.empty()) make_state_experiment(s, c, e, why);
    if (!why.empty()) {
        s.error = "Kept the previous settings: " + why + ".";
        s.edit = s.config;
        s.edit_kernel_choice = s.kernel_choice;
        s.edit_tokens = s.tokens;
        s.edit_weights = s.weights;
        s.edit_trained = s.trained;
        return false;
    }
    s.error.clear();
    leave_trained(s);
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
    update_sharpness(s, 0);
    summarize_dy(s);
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
    if (s.config.mask == MaskMode::causal) {
        update_dy(s, first_row);
        Changed ch;
        ch.all = false;
        ch.rows = columns; // the input rows that changed are the keys whose columns did
        ch.columns = columns;
        ch.row0 = first_row;
        grow_ranges(s.ranges, s.trace, nullptr, ch);
    } else {
        update_dy(s, 0);
        grow_ranges(s.ranges, s.trace, nullptr);
    }
    update_sharpness(s, s.config.mask == MaskMode::causal ? first_row : 0);
    summarize_dy(s);
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
    poll_model_load(s); // a model read off the frame thread, staged once it is in (model_loading.cpp)
    const bool config_changed = s.config_dirty, perturb_changed = s.perturb_dirty;
    if (s.config_dirty) {
        s.config_dirty = false;
        if (s.edit_trained) apply_trained(s);
        else apply_config(s);
    }
    // Heads ablated or restored (ablation_state.cpp): the shown model's run again, from the
    // first layer that changed, with the perturbation applied to it afterwards.
    bool ablation_changed = false;
    if (s.ablation_dirty) {
        s.ablation_dirty = false;
        ablation_changed = apply_ablation_edit(s);
    }
    if (s.perturb_dirty && s.ready) {
        s.perturb_dirty = false;
        if (s.trained) apply_trained_perturbation(s);
        else apply_perturbation(s);
    }
    update_model_view(s, config_changed, perturb_changed, ablation_changed); // the Model view's detector and predictions (model_view_state.cpp)
    // Question 4's demonstration, once its run is trained (check_ablation.cpp).
    if (s.train && s.train->ablation_demo.trained() && !s.train->ablation_demo.computed)
        compute_ablation_demo(s.train->ablation_demo);
}

float range_of(const AppState& s, const RangeSet& r, int head) {
    float v = r.all;
    if (!s.shared_ranges && head >= 0 && head < int(r.head.size())) v = r.head[size_t(head)];
    return v > 0 ? v : 1.f;
}

} // namespace attnviz
