// gpt_update.cpp: a GPT trace's update from position p on (a token changed, or a layer's
// activation edited), and one layer's shape walk on demand; see gpt_model.h. Eigen's
// AVX-512 false positive (GCC 12's -Wmaybe-uninitialized) is silenced as in model.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "ablation.h"
#include "gpt_internal.h"
#include "kernels.h"
#include <algorithm>
#include <stdexcept>

namespace attnviz {

using namespace detail;
using namespace gpt_internal;

namespace {

// Layers l0 .. L-1 recomputed from row p on (rows before p cannot change: causality), then
// h_out's rows from p: gpt_update's loop, which gpt_rerun_rows shares. `edit` runs on each
// layer's attention trace after its attention (and ablation) and before the residual add.
void update_layers(const Model& m, int l0, int p, KernelKind kernel, const Ablation* ablation, const LayerEdit* edit,
                   ModelTrace& tr) {
    const ModelConfig& c = m.config;
    const int T = int(tr.tokens.size()), C = c.n_embd;
    for (size_t l = size_t(l0); l < m.h.size(); ++l) {
        const Block& b = m.h[l];
        const Mat& in = gpt_resid_pre(tr, int(l));
        Trace& a = tr.layers[l];
        BlockTrace& bt = tr.blocks[l];
        ensure_buffers(a, !tr.lean || kernel == KernelKind::reference);
        layernorm_forward(a.x.data(), in.data(), b.ln_1, p, T, C);
        if (kernel == KernelKind::reference)
            reference_update_from(b.attn, p, !tr.lean, a);
        else
            fast_attention_from(b.attn, p, !tr.lean, a);
        if (ablation) apply_ablation(*ablation, int(l), b.attn, p, kernel, a);
        if (edit) (*edit)(int(l), a);
        if (bt.resid_mid.rows() != T) bt.resid_mid.resize(T, C); // rows before p are not read
        residual_forward_rows(bt.resid_mid.data(), in.data(), a.y.data(), p, T, C);
        mlp_rows(b, c.gelu, p, kernel, bt);
        if (tr.lean) drop_lean(a, bt);
    }
    if (tr.h_out.rows() != T) tr.h_out.resize(T, C);
    tr.h_out.bottomRows(T - p) = tr.blocks.back().resid_post.bottomRows(T - p);
}

} // namespace

void gpt_update(const Model& m, int p, int new_token, KernelKind kernel, ModelTrace& tr, const Ablation* ablation) {
    const ModelConfig& c = m.config;
    const int T = int(tr.tokens.size());
    if (p < 0 || p >= T)
        throw std::invalid_argument("position " + std::to_string(p) + " is outside the " + std::to_string(T) +
                                    " tokens; give 0 to " + std::to_string(T - 1) + ".");
    check_token(c, new_token);
    if (tr.layers.size() != m.h.size() || tr.h0.rows() != T)
        throw std::invalid_argument("the trace was not made by this model's forward; run gpt_forward first.");
    if (tr.compact)
        throw std::invalid_argument("a compact trace keeps no logits to update; use gpt_update_compact.");
    tr.tokens[size_t(p)] = new_token;
    tr.h0.row(p) = m.wte.row(new_token) + m.wpe.row(p);
    update_layers(m, 0, p, kernel, ablation, nullptr, tr);
    head_rows(m, p, kernel, tr);
}

void gpt_rerun_rows(const Model& m, int l0, int r0, KernelKind kernel, ModelTrace& tr, const LayerEdit& edit) {
    const int T = int(tr.tokens.size());
    if (tr.layers.size() != m.h.size() || tr.blocks.size() != m.h.size() || tr.h0.rows() != T || T < 1 || tr.compact)
        throw std::invalid_argument("the trace was not made by this model's gpt_forward; run gpt_forward first.");
    if (l0 < 0 || l0 >= int(m.h.size()) || r0 < 0 || r0 >= T)
        throw std::invalid_argument("layer " + std::to_string(l0) + " from row " + std::to_string(r0) +
                                    " is not in the trace's " + std::to_string(m.h.size()) + " layers of " +
                                    std::to_string(T) + " rows.");
    update_layers(m, l0, r0, kernel, nullptr, edit ? &edit : nullptr, tr);
}

void gpt_update_compact(const Model& m, const ModelTrace& base, int p, int new_token, ModelTrace& out,
                        const Ablation* ablation) {
    const ModelConfig& c = m.config;
    const int T = int(base.tokens.size()), C = c.n_embd;
    if (!base.compact || base.layers.size() != m.h.size() || base.h0.rows() != T || base.ln_f.rows() != T)
        throw std::invalid_argument("the base trace was not made by this model's gpt_forward_compact; run it first.");
    if (p < 0 || p >= T)
        throw std::invalid_argument("position " + std::to_string(p) + " is outside the " + std::to_string(T) +
                                    " tokens; give 0 to " + std::to_string(T - 1) + ".");
    check_token(c, new_token);
    // What a compact trace keeps, copied (the pooled grid and the scores are of base's tokens).
    out.tokens = base.tokens;
    out.h0 = base.h0;
    out.layers = base.layers;
    out.blocks = base.blocks;
    out.h_out = base.h_out;
    out.ln_f = base.ln_f;
    out.logits.resize(0, 0);
    out.lean = out.compact = true;
    out.att_pool = base.att_pool;
    out.att_pooled.clear();
    out.att_scores = HeadScores{};
    out.next_nll.clear();
    out.tokens[size_t(p)] = new_token;
    out.h0.row(p) = m.wte.row(new_token) + m.wpe.row(p);
    for (size_t l = 0; l < m.h.size(); ++l) {
        const Block& b = m.h[l];
        const Mat& in = gpt_resid_pre(out, int(l));
        Trace& a = out.layers[l];
        BlockTrace& bt = out.blocks[l];
        ensure_buffers(a, false);
        for (Mat& w : a.att) w.resize(T, T); // rows before p are not read
        layernorm_forward(a.x.data(), in.data(), b.ln_1, p, T, C);
        fast_attention_from(b.attn, p, false, a);
        if (ablation) apply_ablation(*ablation, int(l), b.attn, p, KernelKind::fast, a);
        if (bt.resid_mid.rows() != T) bt.resid_mid.resize(T, C); // rows before p are not read
        residual_forward_rows(bt.resid_mid.data(), in.data(), a.y.data(), p, T, C);
        mlp_rows(b, c.gelu, p, KernelKind::fast, bt);
        drop_lean(a, bt, true);
    }
    out.h_out.bottomRows(T - p) = out.blocks.back().resid_post.bottomRows(T - p);
    layernorm_forward(out.ln_f.data(), out.h_out.data(), m.ln_f, p, T, C);
    // Each row's logits against base's, in blocks of rows, neither kept.
    out.logits_delta.assign(size_t(T), 0.f);
    Mat mine, theirs;
    for (int r0 = p; r0 < T; r0 += logits_chunk) {
        const int r1 = std::min(T, r0 + logits_chunk);
        logits_rows_at_once(m, out, r0, r1, mine);
        logits_rows_at_once(m, base, r0, r1, theirs);
        const std::vector<float> d = max_abs_diff_per_position(theirs, mine);
        std::copy(d.begin(), d.end(), out.logits_delta.begin() + r0);
    }
}

Mat gpt_resid_mid(const ModelTrace& tr, const Trace& layer, int l) {
    const BlockTrace& b = tr.blocks[size_t(l)];
    if (b.resid_mid.size() > 0) return b.resid_mid;
    const Mat& in = gpt_resid_pre(tr, l);
    Mat out(in.rows(), in.cols());
    residual_forward_rows(out.data(), in.data(), layer.y.data(), 0, int(in.rows()), int(in.cols()));
    return out;
}

void gpt_layer_trace(const Model& m, const ModelTrace& tr, int l, KernelKind kernel, Trace& out,
                     const Ablation* ablation) {
    if (l < 0 || l >= int(m.h.size()))
        throw std::invalid_argument("layer " + std::to_string(l) + " is not in the model; give 0 to " +
                                    std::to_string(m.h.size() - 1) + ".");
    const Mat& in = gpt_resid_pre(tr, l);
    const int T = int(in.rows()), C = int(in.cols());
    Mat ln1(T, C);
    layernorm_forward(ln1.data(), in.data(), m.h[size_t(l)].ln_1, 0, T, C);
    if (tr.compact) {
        compact_layer_trace(m.h[size_t(l)].attn, tr.layers[size_t(l)], attention_config(m.config, T), ln1, out);
    } else {
        forward(attention_config(m.config, T), m.h[size_t(l)].attn, ln1, kernel, out);
    }
    if (ablation) apply_ablation(*ablation, l, m.h[size_t(l)].attn, 0, tr.compact ? KernelKind::fast : kernel, out);
}

} // namespace attnviz
