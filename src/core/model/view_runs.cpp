// view_runs.cpp: see view_runs.h.
#include "view_runs.h"
#include "gpt_model.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace attnviz {

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

// What a change can have moved, for the range scan. A new config: everything (the
// default). A slider move under the causal mask: the input rows that changed (`rows`: of
// x, qkv and the raw scores), the raw score columns of those keys (`columns`), and the
// rows from `row0` on of what mixes positions (concat, y); the weights never.
struct Changed {
    bool all = true;
    std::vector<int> rows, columns;
    int row0 = 0;
};

// At (512, 512, 8) a drag at p = 2 scans about 0.5 M values (concat and y from p on, one
// row and column of each head's scores) instead of the 3.7 M of every row from p on.
void grow_ranges(Ranges& rg, const Trace& tr, const Weights* weights, const Changed& ch = Changed{}) {
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
        grow(rg.w_qkv.all, max_abs(weights->c_attn.weight));
        grow(rg.w_proj.all, max_abs(weights->c_proj.weight));
    }
}

// The sharpness table's rows from `row0` on (the rows before it kept their scores).
void update_sharpness(const Trace& tr, SharpnessTable& t, int row0) {
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

// dy (T) = max_c |y - base_y| per position, for rows from `row0` on: the rows before it
// did not change since the last time, and neither did their dy.
void update_dy(LayerRun& r, int row0) {
    const Eigen::Index T = r.trace.y.rows();
    row0 = std::clamp(row0, 0, int(T));
    if (r.dy.size() != size_t(T) || row0 == 0) {
        r.dy = max_abs_diff_per_position(r.trace.y, r.base_y);
        return;
    }
    const std::vector<float> d =
        max_abs_diff_per_position(r.trace.y.bottomRows(T - row0), r.base_y.bottomRows(T - row0));
    std::copy(d.begin(), d.end(), r.dy.begin() + row0);
}

// Input row `row` back to its original values.
void restore_row(LayerRun& r, int row) {
    const Mat& x = r.experiment.x;
    update_row(r.experiment.weights, row, x.data() + size_t(row) * size_t(x.cols()), r.trace);
}

} // namespace

DySummary summarize_dy(const std::vector<float>& dy, int p) {
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

void run_lesson(Experiment e, KernelKind kernel, bool keep_base, LayerRun& r) {
    const Config& c = e.config;
    r.experiment = std::move(e);
    r.has_base = keep_base;
    Trace& first = r.has_base ? r.base : r.trace;
    forward(c, r.experiment.weights, r.experiment.x, kernel, first);
    if (r.has_base) r.trace = r.base;
    else r.base = Trace{};
    r.base_y = r.trace.y;
    r.dy.assign(size_t(c.seq_len), 0.f);
    r.applied_p = -1;
    r.applied_strength = 0;
    r.ranges = Ranges{};
    grow_ranges(r.ranges, r.trace, &r.experiment.weights);
    update_sharpness(r.trace, r.sharpness, 0);
    r.dy_summary = summarize_dy(r.dy, r.applied_p);
}

RowChange perturb_lesson(LayerRun& r, int p, float strength) {
    const MaskMode mask = r.experiment.config.mask;
    const int old = r.applied_p;
    int first_row = p; // the first row whose values may have changed
    std::vector<int> columns{p};
    if (old >= 0 && old != p) {
        // Undo the old row first, so that only row p is perturbed.
        if (r.has_base) r.trace = r.base;
        else restore_row(r, old);
        first_row = std::min(first_row, old);
        columns.push_back(old);
    }
    if (strength == 0.f) {
        // Exactly the recipe's input: the unperturbed trace, bit for bit.
        if (r.has_base) r.trace = r.base;
        else if (old == p) restore_row(r, p);
        r.applied_p = -1;
    } else {
        Vec row = perturbed_row(r.experiment, p, strength);
        update_row(r.experiment.weights, p, row.data(), r.trace);
        r.applied_p = p;
    }
    r.applied_strength = r.applied_p >= 0 ? strength : 0.f;
    RowChange out;
    if (mask == MaskMode::causal) {
        update_dy(r, first_row);
        Changed ch;
        ch.all = false;
        ch.rows = columns; // the input rows that changed are the keys whose columns did
        ch.columns = columns;
        ch.row0 = first_row;
        grow_ranges(r.ranges, r.trace, nullptr, ch);
        // Causal: rows before the first changed row cannot move.
        out.all = false;
        out.row0 = first_row;
        out.rows = columns;
    } else {
        // Other masks let any row move.
        update_dy(r, 0);
        grow_ranges(r.ranges, r.trace, nullptr);
    }
    update_sharpness(r.trace, r.sharpness, mask == MaskMode::causal ? first_row : 0);
    r.dy_summary = summarize_dy(r.dy, r.applied_p);
    return out;
}

namespace {

// The summaries of a model's perturbation, and the ranges grown over the shown layer.
void summarize_model(ModelRun& mr, LayerRun& r) {
    grow_ranges(r.ranges, r.trace, nullptr);
    update_sharpness(r.trace, r.sharpness, 0);
    r.dy_summary = summarize_dy(r.dy, r.applied_p);
    mr.dy_out_summary = summarize_dy(mr.dy_out, r.applied_p);
}

} // namespace

void run_model_layer(const Model& m, int layer, const Config& c, KernelKind kernel, const Ablation* ablation,
                     bool fresh, ModelRun& mr, LayerRun& r, bool keep_perturbed) {
    if (m.config.arch == Arch::gpt) gpt_layer_trace(m, mr.model_base, layer, kernel, r.base, ablation);
    else r.base = mr.model_base.layers[size_t(layer)];
    r.trace = r.base;
    r.has_base = true;
    r.experiment = Experiment{};
    r.experiment.config = c;
    r.experiment.weights = m.h[size_t(layer)].attn;
    r.experiment.x = r.base.x;
    r.base_y = r.base.y;
    const size_t N = size_t(c.seq_len);
    r.dy.assign(N, 0.f);
    mr.dy_out.assign(N, 0.f);
    r.applied_p = -1;
    r.applied_strength = 0;
    mr.applied_replace_token = -1;
    mr.resid_summary = DySummary{};
    if (!keep_perturbed) {
        mr.model_perturbed = ModelTrace{};
        mr.causality = GptCausality{};
        mr.perturbed_p = mr.perturbed_token = -1;
    }
    if (!fresh) return;
    r.ranges = Ranges{};
    grow_ranges(r.ranges, r.trace, &r.experiment.weights);
    update_sharpness(r.trace, r.sharpness, 0);
    r.dy_summary = summarize_dy(r.dy, -1);
    mr.dy_out_summary = summarize_dy(mr.dy_out, -1);
}

void perturb_model(const Model& m, int layer, int p, float strength, int token, KernelKind kernel,
                   const Ablation* ablation, ModelRun& mr, LayerRun& r) {
    const Config c = r.experiment.config;
    if (strength == 0.f) {
        run_model_layer(m, layer, c, kernel, ablation, false, mr, r);
    } else if (m.config.arch == Arch::gpt) {
        const int T = c.seq_len;
        const bool kept = mr.perturbed_p == p && mr.perturbed_token == token && mr.model_perturbed.tokens.size() == size_t(T);
        if (!kept) { // (a layer switch keeps the changed run: only its layer is recomputed)
            if (mr.model_base.compact) {
                gpt_update_compact(m, mr.model_base, p, token, mr.model_perturbed, ablation); // no second copy of the logits
            } else {
                mr.model_perturbed = mr.model_base;
                gpt_update(m, p, token, kernel, mr.model_perturbed, ablation); // the ablated model's causality
            }
            mr.causality = gpt_causality(mr.model_base, mr.model_perturbed, p, token);
            mr.perturbed_p = p;
            mr.perturbed_token = token;
        }
        gpt_layer_trace(m, mr.model_perturbed, layer, kernel, r.trace, ablation);
        r.dy = max_abs_diff_per_position(r.trace.y, r.base_y);
        mr.dy_out = mr.causality.logits_max_abs;
        std::vector<float> any(size_t(T), 0.f); // per position, the largest change over the layers
        for (const std::vector<float>& row : mr.causality.resid_max_abs)
            for (int t = 0; t < T; ++t)
                any[size_t(t)] = std::isnan(row[size_t(t)]) ? row[size_t(t)] : std::max(any[size_t(t)], row[size_t(t)]);
        mr.resid_summary = summarize_dy(any, p);
        mr.resid_summary.top = 0; // the largest finite change of any layer, also where another layer's is NaN
        for (const std::vector<float>& row : mr.causality.resid_max_abs)
            for (float v : row) mr.resid_summary.top = std::isfinite(v) ? std::max(mr.resid_summary.top, v) : mr.resid_summary.top;
        r.applied_p = p;
        r.applied_strength = strength;
        mr.applied_replace_token = token;
    } else {
        // The lesson's blend (experiment.h), from row p of h0 toward the letter's embedding.
        Experiment blend;
        blend.x = mr.model_base.h0;
        blend.replacement = m.wte.row(token) + m.wpe.row(p);
        Mat h0 = mr.model_base.h0;
        h0.row(p) = perturbed_row(blend, p, strength);
        model_blocks(m, h0, kernel, mr.model_perturbed, ablation); // the ablated model's causality
        r.trace = mr.model_perturbed.layers[size_t(layer)];
        r.dy = max_abs_diff_per_position(r.trace.y, r.base_y);
        mr.dy_out = max_abs_diff_per_position(mr.model_perturbed.h_out, mr.model_base.h_out);
        r.applied_p = p;
        r.applied_strength = strength;
        mr.applied_replace_token = token;
    }
    summarize_model(mr, r);
}

} // namespace attnviz
