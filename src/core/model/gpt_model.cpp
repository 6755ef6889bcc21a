// gpt_model.cpp: the whole GPT forward and its compact and lean traces; see gpt_model.h
// (its update from position p on and one layer's shape walk: gpt_update.cpp). GCC 12's -Wmaybe-uninitialized inside Eigen's
// AVX-512 products is silenced as in model.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "gpt_model.h"
#include "gpt_internal.h"
#include "ablation.h"
#include "blas.h"
#include "head_detector.h"
#include "kernels.h"
#include "layers.h"
#include "work_team.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnviz {

using namespace detail;
using namespace gpt_internal;

std::string validate_gpt(const ModelConfig& c) {
    if (c.n_layer < 1) return "n_layer " + std::to_string(c.n_layer) + " is not a number of layers; use 1 or more.";
    if (c.n_embd < 1) return "n_embd " + std::to_string(c.n_embd) + " is not a width; use 1 or more.";
    if (c.n_head < 1) return "n_head " + std::to_string(c.n_head) + " is not a number of heads; use 1 or more.";
    if (c.n_embd % c.n_head != 0)
        return "n_head " + std::to_string(c.n_head) + " does not divide n_embd " + std::to_string(c.n_embd) +
               "; give --n-head as one of the divisors of " + std::to_string(c.n_embd) + " (GPT-2 small has 12).";
    if (c.vocab < 1) return "vocab " + std::to_string(c.vocab) + " is not a vocabulary size; use 1 or more.";
    if (c.seq_len < 1) return "block size " + std::to_string(c.seq_len) + " is not a length; use 1 or more.";
    return "";
}

Model random_gpt(const ModelConfig& c, uint64_t seed) {
    const std::string error = validate_gpt(c);
    if (!error.empty()) throw std::invalid_argument(error);
    const int C = c.n_embd, V = c.vocab;
    TorchGenerator g(seed);
    auto normal = [&](Mat& m, int rows, int cols) {
        m.resize(rows, cols);
        g.randn(m.data(), m.size());
        m *= 0.02f;
    };
    auto ln = [&](LayerNormWeights& w) {
        w.weight = Vec::Ones(C);
        w.bias = c.bias ? Vec(Vec::Zero(C)) : Vec();
    };
    auto zeros = [&](Vec& v, int n) { v = c.bias ? Vec(Vec::Zero(n)) : Vec(); };
    Model m;
    m.config = c;
    m.config.arch = Arch::gpt;
    normal(m.wte, V, C);
    normal(m.wpe, c.seq_len, C);
    m.h.resize(size_t(c.n_layer));
    for (Block& b : m.h) {
        ln(b.ln_1);
        ln(b.ln_2);
        normal(b.attn.c_attn.weight, 3 * C, C);
        normal(b.attn.c_proj.weight, C, C);
        zeros(b.attn.c_attn.bias, 3 * C);
        zeros(b.attn.c_proj.bias, C);
        normal(b.mlp.c_fc.weight, 4 * C, C);
        zeros(b.mlp.c_fc.bias, 4 * C);
        normal(b.mlp.c_proj.weight, C, 4 * C);
        zeros(b.mlp.c_proj.bias, C);
        b.attn.source = "random";
    }
    ln(m.ln_f);
    m.source = "random weights, seed " + std::to_string(seed);
    return m;
}

const Mat& gpt_resid_pre(const ModelTrace& tr, int l) {
    return l == 0 ? tr.h0 : tr.blocks[size_t(l - 1)].resid_post;
}

namespace gpt_internal {

Config attention_config(const ModelConfig& c, int T) { return block_config(c, T); }

void check_token(const ModelConfig& c, int t) {
    if (t < 0 || t >= c.vocab)
        throw std::invalid_argument("token " + std::to_string(t) + " is outside the model's vocabulary 0.." +
                                    std::to_string(c.vocab - 1) + "; give ids below " + std::to_string(c.vocab) +
                                    ".");
}

// What a lean trace drops once a layer is done (gpt_model.h); a compact one keeps q and the
// heads' outputs but drops the softmax weights.
void drop_lean(Trace& a, BlockTrace& b, bool compact) {
    a.x.resize(0, 0);
    a.qkv.resize(0, 0);
    for (Mat& m : a.raw_scores) m.resize(0, 0);
    if (compact) {
        for (Mat& m : a.att) m.resize(0, 0);
    } else {
        for (Mat& m : a.q) m.resize(0, 0);
        for (Mat& m : a.heads) m.resize(0, 0);
    }
    a.concat.resize(0, 0);
    a.y.resize(0, 0);
    b.ln_2.resize(0, 0);
    b.mlp.resize(0, 0);
    b.resid_mid.resize(0, 0); // input + y: gpt_resid_mid gives it back with the layer's trace
}

// The MLP and the second residual for rows r0..T-1 of a block whose resid_mid is set:
// ln_2 (T, C) -> c_fc (T, 4C) -> gelu -> c_proj (T, C); resid_post = resid_mid + mlp.
void mlp_rows(const Block& b, Gelu gelu, int r0, KernelKind kernel, BlockTrace& bt) {
    const int T = int(bt.resid_mid.rows()), C = int(bt.resid_mid.cols());
    bt.ln_2.resize(T, C);
    bt.mlp.resize(T, C);
    bt.resid_post.resize(T, C);
    layernorm_forward(bt.ln_2.data(), bt.resid_mid.data(), b.ln_2, r0, T, C);
    Mat fc(T, 4 * C); // (T, 4C), only rows r0.. are written and read
    linear_forward_rows(fc.data(), bt.ln_2.data(), b.mlp.c_fc.weight, b.mlp.c_fc.bias, r0, T, kernel);
    float* f = fc.data() + int64_t(r0) * 4 * C;
    gelu_forward(f, f, int64_t(T - r0) * 4 * C, gelu, kernel);
    linear_forward_rows(bt.mlp.data(), fc.data(), b.mlp.c_proj.weight, b.mlp.c_proj.bias, r0, T, kernel);
    residual_forward_rows(bt.resid_post.data(), bt.resid_mid.data(), bt.mlp.data(), r0, T, C);
}

// ln_f and the tied head for rows r0..T-1: logits (T, V) = ln_f(h_out) wte^T.
void head_rows(const Model& m, int r0, KernelKind kernel, ModelTrace& tr) {
    const int T = int(tr.h_out.rows()), C = m.config.n_embd;
    tr.ln_f.resize(T, C);
    tr.logits.resize(T, m.config.vocab);
    layernorm_forward(tr.ln_f.data(), tr.h_out.data(), m.ln_f, r0, T, C);
    linear_forward_rows(tr.logits.data(), tr.ln_f.data(), m.wte, Vec(), r0, T, kernel);
}

// Rows r0 .. r1-1 of one head's softmax weights from their scores s (row i - r0 holds row i's
// scores against keys 0 ..; only keys 0..i are read): causal, Eigen's vectorised exp. The one
// softmax of the fast lean forward, its update and a compact trace's layer recomputed.
void softmax_causal_rows(const Mat& s, int r0, int r1, float scale, Mat& att) {
    const int T = int(att.cols());
    for (int i = r0; i < r1; ++i) {
        const int n = i + 1;
        att.row(i).head(n) = s.row(i - r0).head(n) * scale;
        const float mx = att.row(i).head(n).maxCoeff();
        att.row(i).head(n) = (att.row(i).head(n).array() - mx).exp().matrix();
        att.row(i).head(n) *= 1.f / att.row(i).head(n).sum();
        att.row(i).tail(T - n).setZero();
    }
}

// Attention rows p..T-1 of a fast trace whose x rows from p on changed: qkv, q, k, v rows
// from p, then per head and block of rows the scores against the keys the block sees, the
// softmax and att v. Rows before p keep their k, v and att.
void fast_attention_from(const Weights& w, int p, bool keep_raw, Trace& a) {
    const int T = a.T, C = a.C, H = a.H, hd = a.head_dim;
    linear_forward_rows(a.qkv.data(), a.x.data(), w.c_attn.weight, w.c_attn.bias, p, T, KernelKind::fast);
    for (int t = p; t < T; ++t)
        for (int h = 0; h < H; ++h) {
            a.q[h].row(t) = a.qkv.block(t, h * hd, 1, hd);
            a.k[h].row(t) = a.qkv.block(t, C + h * hd, 1, hd);
            a.v[h].row(t) = a.qkv.block(t, 2 * C + h * hd, 1, hd);
        }
    constexpr int rows = 64;
    const int blocks = (T - p + rows - 1) / rows;
    const int threads = int64_t(T - p) * T * C >= (int64_t(1) << 20) ? work_team_threads() : 1;
    run_pieces(H * blocks, threads, [&](int task) {
        const int h = task % H, r0 = p + (task / H) * rows, r1 = std::min(T, r0 + rows);
        const int keys = keep_raw ? T : r1; // keys beyond r1 are masked for every row here
        Mat s(r1 - r0, keys);
        blas_product(a.q[h].middleRows(r0, r1 - r0), a.k[h].topRows(keys), true, s);
        if (keep_raw) a.raw_scores[h].middleRows(r0, r1 - r0) = s;
        Mat& att = a.att[h];
        softmax_causal_rows(s, r0, r1, a.scale, att);
        Mat out(r1 - r0, hd);
        blas_product(att.block(r0, 0, r1 - r0, r1), a.v[h].topRows(r1), false, out);
        a.heads[h].middleRows(r0, r1 - r0) = out;
    });
    if (keep_raw)
        for (int h = 0; h < H; ++h)
            if (p > 0) {
                Mat s(p, T - p);
                blas_product(a.q[h].topRows(p), a.k[h].bottomRows(T - p), true, s);
                a.raw_scores[h].block(0, p, p, T - p) = s;
            }
    for (int t = p; t < T; ++t)
        for (int h = 0; h < H; ++h) a.concat.block(t, h * hd, 1, hd) = a.heads[h].row(t);
    linear_forward_rows(a.y.data(), a.concat.data(), w.c_proj.weight, w.c_proj.bias, p, T, KernelKind::fast);
    a.update_cache.p = -1;
}

// Buffers a lean trace dropped, back at full size for an update (rows before p are not
// read by it). The fast update of a lean trace keeps no raw scores, so it needs none.
void ensure_buffers(Trace& a, bool with_raw) {
    const int T = a.T, C = a.C, hd = a.head_dim;
    if (a.x.rows() != T) a.x.resize(T, C);
    if (a.qkv.rows() != T) a.qkv.resize(T, 3 * C);
    for (Mat& m : a.q) if (m.rows() != T) m.resize(T, hd);
    if (with_raw)
        for (Mat& m : a.raw_scores) if (m.rows() != T) m.resize(T, T);
    for (Mat& m : a.heads) if (m.rows() != T) m.resize(T, hd);
    if (a.concat.rows() != T) a.concat.resize(T, C);
    if (a.y.rows() != T) a.y.resize(T, C);
}

// What the window shows of a compact trace's layer l before its softmax weights go
// (gpt_model.h): the grid's pooled picture and the detector's scores on the tokens.
void read_compact(ModelTrace& out, int l, const Trace& a) {
    const int T = a.T, H = a.H, pool = out.att_pool, S = (T + pool - 1) / pool;
    PerHead& pooled = out.att_pooled[size_t(l)];
    pooled.resize(size_t(H));
    run_pieces(H, work_team_threads(), [&](int h) {
        const Mat& w = a.att[size_t(h)];
        Mat& p = pooled[size_t(h)];
        p.setZero(S, S);
        for (int i = 0; i < T; ++i)
            for (int j = 0; j <= i; ++j) {
                float& v = p(i / pool, j / pool);
                const float x = w(i, j);
                if (std::isnan(x) || x > v) v = x; // the largest; a NaN once seen stays
            }
    });
    SequenceAttention seq;
    seq.tokens = &out.tokens;
    seq.layers.push_back(&a.att);
    HeadScores one = detect_on_text({seq});
    HeadScores& all = out.att_scores;
    const size_t L = out.layers.size();
    for (auto* v : {&all.prev_token, &all.duplicate, &all.induction}) v->resize(L);
    all.prev_token[size_t(l)] = one.prev_token[0];
    all.duplicate[size_t(l)] = one.duplicate[0];
    all.induction[size_t(l)] = one.induction[0];
}

// Logits rows r0 .. r1-1 (r1 - r0, V) in one product: the forward's loss and a token change's
// measure, where one set of rows is made at once (gpt_logits_rows' aligned blocks are for a
// row asked for alone; each call packs all of wte, so few calls are cheaper).
void logits_rows_at_once(const Model& m, const ModelTrace& tr, int r0, int r1, Mat& out) {
    const int C = m.config.n_embd;
    out.resize(r1 - r0, m.config.vocab);
    linear_forward_rows(out.data(), tr.ln_f.data() + int64_t(r0) * C, m.wte, Vec(), 0, r1 - r0, KernelKind::fast);
}

// A compact trace's ln_f, and its logits in blocks of rows, read for next_nll and dropped.
void compact_head(const Model& m, ModelTrace& tr) {
    const int T = int(tr.h_out.rows()), C = m.config.n_embd, V = m.config.vocab;
    tr.ln_f.resize(T, C);
    layernorm_forward(tr.ln_f.data(), tr.h_out.data(), m.ln_f, 0, T, C);
    tr.logits.resize(0, 0);
    tr.next_nll.assign(size_t(std::max(0, T - 1)), 0.0);
    Mat block;
    for (int r0 = 0; r0 + 1 < T; r0 += logits_chunk) {
        const int r1 = std::min(T - 1, r0 + logits_chunk);
        logits_rows_at_once(m, tr, r0, r1, block);
        for (int t = r0; t < r1; ++t)
            tr.next_nll[size_t(t)] = nll_row(block.data() + int64_t(t - r0) * V, V, tr.tokens[size_t(t + 1)]);
    }
}

// A compact trace's layer whole (gpt_layer_trace): q, k, v and the heads' outputs as kept,
// the softmax weights by the lean forward's blocks of rows (bit for bit its weights), the raw
// scores those blocks computed and the rest of each row beside them, then concat and y as
// fast_attention_from makes them.
void compact_layer_trace(const Weights& w, const Trace& kept, const Config& ac, const Mat& ln1, Trace& a) {
    prepare_trace(ac, KernelKind::fast, ln1, a);
    const int T = a.T, C = a.C, H = a.H, hd = a.head_dim;
    for (int h = 0; h < H; ++h) {
        a.q[h] = kept.q[size_t(h)];
        a.k[h] = kept.k[size_t(h)];
        a.v[h] = kept.v[size_t(h)];
        a.heads[h] = kept.heads[size_t(h)];
        a.qkv.middleCols(h * hd, hd) = a.q[h];
        a.qkv.middleCols(C + h * hd, hd) = a.k[h];
        a.qkv.middleCols(2 * C + h * hd, hd) = a.v[h];
    }
    constexpr int rows = 64; // fast_attention_from's blocks
    const int blocks = (T + rows - 1) / rows;
    const int threads = int64_t(T) * T * C >= (int64_t(1) << 20) ? work_team_threads() : 1;
    run_pieces(H * blocks, threads, [&](int task) {
        const int h = task % H, r0 = (task / H) * rows, r1 = std::min(T, r0 + rows);
        Mat s(r1 - r0, r1);
        blas_product(a.q[h].middleRows(r0, r1 - r0), a.k[h].topRows(r1), true, s);
        a.raw_scores[h].block(r0, 0, r1 - r0, r1) = s;
        softmax_causal_rows(s, r0, r1, a.scale, a.att[h]);
        if (r1 < T) {
            Mat later(r1 - r0, T - r1);
            blas_product(a.q[h].middleRows(r0, r1 - r0), a.k[h].bottomRows(T - r1), true, later);
            a.raw_scores[h].block(r0, r1, r1 - r0, T - r1) = later;
        }
    });
    for (int h = 0; h < H; ++h) a.concat.middleCols(h * hd, hd) = a.heads[h];
    linear_forward_rows(a.y.data(), a.concat.data(), w.c_proj.weight, w.c_proj.bias, 0, T, KernelKind::fast);
    a.update_cache.p = -1;
}

} // namespace gpt_internal

void gpt_head_weights(const ModelTrace& tr, int l, int h, Mat& att) {
    if (!tr.compact || l < 0 || l >= int(tr.layers.size()) || h < 0 || h >= int(tr.layers[size_t(l)].k.size()))
        throw std::invalid_argument("layer " + std::to_string(l) + " head " + std::to_string(h) +
                                    " is not a head of this compact trace.");
    const Trace& a = tr.layers[size_t(l)];
    const int T = a.T;
    constexpr int rows = 64; // fast_attention_from's blocks
    att.resize(T, T);
    for (int r0 = 0; r0 < T; r0 += rows) {
        const int r1 = std::min(T, r0 + rows);
        Mat s(r1 - r0, r1);
        blas_product(a.q[size_t(h)].middleRows(r0, r1 - r0), a.k[size_t(h)].topRows(r1), true, s);
        softmax_causal_rows(s, r0, r1, a.scale, att);
    }
}

void gpt_logits_rows(const Model& m, const ModelTrace& tr, int r0, int r1, Mat& out) {
    const int T = int(tr.ln_f.rows()), C = m.config.n_embd;
    if (r0 < 0 || r1 > T || r0 > r1 || tr.ln_f.cols() != C)
        throw std::invalid_argument("rows " + std::to_string(r0) + " to " + std::to_string(r1) +
                                    " are not rows of the trace's " + std::to_string(T) + " positions.");
    // sgemm's last bits depend on how many rows one call takes, so every row is made in
    // its own aligned block of logits_block rows, whichever rows are asked for.
    const int V = m.config.vocab;
    out.resize(r1 - r0, V);
    Mat block;
    for (int b0 = r0 / logits_block * logits_block; b0 < r1; b0 += logits_block) {
        const int b1 = std::min(T, b0 + logits_block), from = std::max(r0, b0), to = std::min(r1, b1);
        block.resize(b1 - b0, V);
        linear_forward_rows(block.data(), tr.ln_f.data() + int64_t(b0) * C, m.wte, Vec(), 0, b1 - b0, KernelKind::fast);
        out.middleRows(from - r0, to - from) = block.middleRows(from - b0, to - from);
    }
}

namespace {

// Layers l0 .. L-1 of `out`, whose h0 (and, for l0 > 0, layer l0 - 1's resid_post) is set,
// then h_out, ln_f and the logits; with attention_only, the last layer's attention and
// nothing after it (no MLP, no ln_f, no logits).
void run_layers(const Model& m, int l0, KernelKind kernel, bool lean, const Ablation* ablation, ModelTrace& out,
                bool attention_only = false, bool last_logits = false) {
    const ModelConfig& c = m.config;
    const int T = int(out.h0.rows()), C = c.n_embd;
    const Config ac = attention_config(c, T);
    Mat ln1(T, C);
    for (size_t l = size_t(l0); l < m.h.size(); ++l) {
        const Block& b = m.h[l];
        const Mat& in = gpt_resid_pre(out, int(l));
        Trace& a = out.layers[l];
        BlockTrace& bt = out.blocks[l];
        // x = x + attn(ln_1(x)): the lesson's attention on the normalised stream
        layernorm_forward(ln1.data(), in.data(), b.ln_1, 0, T, C);
        if (lean && kernel == KernelKind::fast) {
            // A lean trace keeps no raw scores: the update's blocks of rows against the
            // keys they see, without the T x T raw scores (a masked half) a full trace keeps.
            prepare_trace(ac, kernel, ln1, a);
            for (Mat& r : a.raw_scores) r.resize(0, 0);
            fast_attention_from(b.attn, 0, false, a);
        } else {
            forward(ac, b.attn, ln1, kernel, a);
        }
        if (ablation) apply_ablation(*ablation, int(l), b.attn, 0, kernel, a);
        if (out.compact) read_compact(out, int(l), a);
        if (attention_only && l + 1 == m.h.size()) {
            if (lean) drop_lean(a, bt);
            bt = BlockTrace{};
            break;
        }
        bt.resid_mid.resize(T, C);
        residual_forward_rows(bt.resid_mid.data(), in.data(), a.y.data(), 0, T, C);
        // x = x + mlp(ln_2(x))
        mlp_rows(b, c.gelu, 0, kernel, bt);
        if (lean) drop_lean(a, bt, out.compact);
    }
    if (attention_only) {
        out.h_out.resize(0, 0);
        out.ln_f.resize(0, 0);
        out.logits.resize(0, 0);
        return;
    }
    out.h_out = out.blocks.back().resid_post;
    if (out.compact) compact_head(m, out);
    else head_rows(m, last_logits ? T - 1 : 0, kernel, out);
}

void forward_tokens(const Model& m, const std::vector<int>& tokens, KernelKind kernel, bool lean, ModelTrace& out,
                    const Ablation* ablation, bool attention_only, bool compact = false, bool last_logits = false) {
    const ModelConfig& c = m.config;
    const int T = int(tokens.size()), C = c.n_embd;
    if (T < 1 || T > c.seq_len)
        throw std::invalid_argument(std::to_string(T) + " tokens do not fit the model's block size " +
                                    std::to_string(c.seq_len) + "; give 1 to " + std::to_string(c.seq_len) +
                                    " tokens.");
    for (int t : tokens) check_token(c, t);
    out.tokens = tokens;
    out.lean = lean;
    out.compact = compact;
    out.att_pool = std::max(1, (T + compact_grid_side - 1) / compact_grid_side);
    out.att_pooled.assign(compact ? m.h.size() : 0, PerHead{});
    out.att_scores = HeadScores{};
    out.next_nll.clear();
    out.logits_delta.clear();
    // h = wte[tok] + wpe[0..T-1]: (T, C)
    out.h0.resize(T, C);
    for (int t = 0; t < T; ++t) out.h0.row(t) = m.wte.row(tokens[size_t(t)]) + m.wpe.row(t);
    out.layers.resize(m.h.size());
    out.blocks.resize(m.h.size());
    run_layers(m, 0, kernel, lean, ablation, out, attention_only, last_logits);
}

} // namespace

void gpt_forward(const Model& m, const std::vector<int>& tokens, KernelKind kernel, bool lean, ModelTrace& out,
                 const Ablation* ablation) {
    forward_tokens(m, tokens, kernel, lean, out, ablation, false);
}

void gpt_forward_compact(const Model& m, const std::vector<int>& tokens, ModelTrace& out, const Ablation* ablation) {
    forward_tokens(m, tokens, KernelKind::fast, true, out, ablation, false, true);
}

void gpt_forward_last(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& out) {
    forward_tokens(m, tokens, kernel, true, out, nullptr, false, false, true);
}

void gpt_attention_forward(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& out,
                           const Ablation* ablation) {
    forward_tokens(m, tokens, kernel, true, out, ablation, true);
}

void gpt_rerun_from(const Model& m, int l0, KernelKind kernel, const Ablation* ablation, ModelTrace& tr) {
    const int T = int(tr.tokens.size());
    if (tr.layers.size() != m.h.size() || tr.blocks.size() != m.h.size() || tr.h0.rows() != T || T < 1)
        throw std::invalid_argument("the trace was not made by this model's forward; run gpt_forward first.");
    l0 = std::clamp(l0, 0, int(m.h.size()));
    if (l0 == int(m.h.size())) return; // nothing changed in any layer
    // A trace of gpt_attention_forward (no logits) is rerun the same way.
    const bool attention_only = tr.logits.size() == 0 && tr.h_out.size() == 0;
    if (tr.compact && kernel != KernelKind::fast)
        throw std::invalid_argument("a compact trace runs on the fast kernel; rerun it with the fast kernel.");
    run_layers(m, l0, kernel, tr.lean, ablation, tr, attention_only);
}

} // namespace attnviz
