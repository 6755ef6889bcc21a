// kv_cache.cpp: generation one token at a time with a KV cache; see kv_cache.h and
// docs/numerics.md, "The KV cache".
//
// A step computes one row of every layer with the forward's own pieces: layers.h's
// layernorm, linear, gelu and residual on one row (each row of those is computed on its
// own in the forward too), and on the reference kernel the attention kernel's own softmax
// and att v loops (kernels.h), over the pos + 1 keys the new row sees, which is the whole
// length of the forward's last row. So every float32 operation of the forward's last row
// happens here in the same order, and the bits are the same.
// GCC 12's -Wmaybe-uninitialized inside Eigen's AVX-512 products is silenced as in model.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "kv_cache.h"
#include "gpt_model.h"
#include "kernels.h"
#include "layers.h"
#include "work_team.h"
#include <algorithm>
#include <stdexcept>

namespace attnviz {

using namespace detail;

namespace {

// From this many keys on, the reference softmax sums a row in 8 lanes (kernels.h, lane_sum).
constexpr int lane_sum_keys = 8;

// Rows a cache reserves at least: a short prompt still takes a few dozen steps without a copy.
constexpr int min_reserved_rows = 64;

// Room for `need` rows in every head of kv, rows 0 .. keep-1 kept: twice what is needed
// (at most `limit`), so n steps copy the cache O(log n) times, not n times.
void reserve_rows(LayerKv& kv, int need, int keep, int limit) {
    for (PerHead* ph : {&kv.k, &kv.v})
        for (Mat& m : *ph) {
            if (m.rows() >= need) continue;
            const int rows = std::max(need, std::min(limit, std::max(min_reserved_rows, 2 * need)));
            Mat grown(rows, m.cols());
            grown.topRows(keep) = m.topRows(keep);
            m.swap(grown);
        }
}

// The keys and values of a trace's T rows into kv, replacing what it held.
void cache_from_trace(const Trace& a, int limit, LayerKv& kv) {
    const int T = a.T;
    kv.k.assign(a.k.size(), Mat());
    kv.v.assign(a.v.size(), Mat());
    for (size_t h = 0; h < a.k.size(); ++h) {
        kv.k[h].resize(0, a.head_dim);
        kv.v[h].resize(0, a.head_dim);
    }
    reserve_rows(kv, T, 0, limit);
    for (size_t h = 0; h < a.k.size(); ++h) {
        kv.k[h].topRows(T) = a.k[h].topRows(T);
        kv.v[h].topRows(T) = a.v[h].topRows(T);
    }
}

// out = in W^T (+ b) for one row. The reference kernel is linear_forward_rows' own loops.
// The fast one: row groups of W on the work team, each a matrix-vector product by Eigen, which
// reads W once; OpenBLAS's sgemm with one row packs W first and measured 2.5 times slower
// (GPT-2 small's step at position 1023: 70 ms against 28 ms).
void linear_one_row(float* out, const float* in, const Mat& W, const Vec& b, KernelKind kernel) {
    if (kernel == KernelKind::reference) {
        linear_forward_rows(out, in, W, b, 0, 1, kernel);
        return;
    }
    const int OC = int(W.rows()), IC = int(W.cols());
    const int threads = int64_t(OC) * IC >= (int64_t(1) << 20) ? work_team_threads() : 1;
    const int pieces = threads > 1 ? 4 * threads : 1;
    const int step = (OC + pieces - 1) / pieces;
    const Eigen::Map<const Eigen::VectorXf> x(in, IC);
    run_pieces(pieces, threads, [&](int k) {
        const int c0 = k * step, c1 = std::min(OC, c0 + step);
        if (c1 <= c0) return;
        SerialEigen serial;
        Eigen::Map<Eigen::VectorXf> o(out + c0, c1 - c0);
        o.noalias() = W.middleRows(c0, c1 - c0) * x;
        if (b.size() > 0) o += b.segment(c0, c1 - c0).transpose();
    });
}

// Softmax of the n scores raw * scale into p, as the fast kernel's softmax rows (Eigen's exp).
void fast_softmax(const float* raw, float scale, int n, float* p) {
    Eigen::Map<const Eigen::ArrayXf> r(raw, n);
    Eigen::Map<Eigen::ArrayXf> e(p, n);
    const float m = r.maxCoeff() * scale; // scale > 0: max(raw * scale) = max(raw) * scale
    e = (r * scale - m).exp();
    e *= 1.f / e.sum();
}

// One causal attention row at position T of a layer whose cache holds rows 0 .. T-1: x's
// q, k, v (k and v appended at row T), its scores against keys 0 .. T, softmax, att v and
// c_proj. `limit`: the most rows the cache may reserve.
void attend_row(const Weights& w, const float* x, float scale, KernelKind kernel, int T, int limit, LayerKv& kv,
                AttentionStepRow& out) {
    const int C = int(w.c_proj.weight.rows()), H = int(kv.k.size()), hd = C / H, N = T + 1;
    out.pos = T;
    out.qkv.resize(3 * C);
    linear_one_row(out.qkv.data(), x, w.c_attn.weight, w.c_attn.bias, kernel);
    reserve_rows(kv, N, T, limit);
    out.raw_scores.resize(H, N);
    out.att.resize(H, N);
    out.heads.resize(H, hd);
    for (int h = 0; h < H; ++h) {
        const float* q = out.qkv.data() + h * hd;
        std::copy(q + C, q + C + hd, kv.k[size_t(h)].row(T).data());
        std::copy(q + 2 * C, q + 2 * C + hd, kv.v[size_t(h)].row(T).data());
        float* raw = out.raw_scores.row(h).data();
        float* p = out.att.row(h).data();
        const Mat& K = kv.k[size_t(h)];
        const Mat& V = kv.v[size_t(h)];
        if (kernel == KernelKind::reference) {
            reference_dot_rows(q, K.data(), N, hd, raw);
            softmax_values(raw, scale, N, N, p);
            head_values(p, V.data(), N, hd, out.heads.row(h).data());
        } else {
            out.raw_scores.row(h).noalias() = (K.topRows(N) * Eigen::Map<const Eigen::VectorXf>(q, hd)).transpose();
            fast_softmax(raw, scale, N, p);
            out.heads.row(h).noalias() = out.att.row(h) * V.topRows(N);
        }
    }
    out.y.resize(C);
    // heads (H, hd) row-major is the concat row: heads side by side
    linear_one_row(out.y.data(), out.heads.data(), w.c_proj.weight, w.c_proj.bias, kernel);
}

void check_support(const Model& m) {
    const std::string error = generation_support(m);
    if (!error.empty()) throw std::invalid_argument(error);
}

// The model's own forward over the tokens: GPT lean (att, k, v kept) with the last position's
// logits alone (only that row is read here), toy model_forward.
void forward_for(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& tr) {
    check_support(m);
    if (m.config.arch == Arch::gpt)
        gpt_forward_last(m, tokens, kernel, tr);
    else
        model_forward(m, tokens, kernel, tr);
}

// The last position's softmax rows and logits of a forward.
void last_row_of(const Model& m, const ModelTrace& tr, KvStepRow& out) {
    const int T = int(tr.tokens.size());
    out.pos = T - 1;
    out.att.resize(tr.layers.size());
    for (size_t l = 0; l < tr.layers.size(); ++l) {
        const Trace& a = tr.layers[l];
        out.att[l].resize(a.H, T);
        for (int h = 0; h < a.H; ++h) out.att[l].row(h) = a.att[size_t(h)].row(T - 1).head(T);
    }
    out.logits = m.config.arch == Arch::gpt ? tr.logits.row(T - 1) : tr.logits_next.row(T - 1);
}

void check_token(const Model& m, int token) {
    // A toy model's forward takes its BOS too (model_forward's check); a GPT's only its vocabulary.
    const int last = m.config.arch == Arch::gpt ? m.config.vocab - 1 : m.config.bos();
    if (token < 0 || token > last)
        throw std::invalid_argument("token " + std::to_string(token) + " is outside the model's vocabulary 0.." +
                                    std::to_string(last) + "; give ids from 0 to " + std::to_string(last) + ".");
}

} // namespace

int64_t KvCache::bytes() const { return 2 * int64_t(layers.size()) * T * n_embd * int64_t(sizeof(float)); }

std::string generation_support(const Model& m) {
    if (m.config.arch == Arch::gpt || m.config.has_lm_head()) return "";
    return std::string("a model of the ") + to_string(m.config.task) +
           " task has no next-token head, so it cannot write on; only the induction task's models and GPT models "
           "generate.";
}

int generation_block_size(const Model& m) { return m.config.n_tokens(); }

void kv_prefill(const Model& m, const std::vector<int>& tokens, KernelKind kernel, KvCache& cache, KvStepRow& last) {
    ModelTrace tr;
    forward_for(m, tokens, kernel, tr);
    const int limit = generation_block_size(m);
    cache.layers.resize(tr.layers.size());
    for (size_t l = 0; l < tr.layers.size(); ++l) cache_from_trace(tr.layers[l], limit, cache.layers[l]);
    cache.T = int(tokens.size());
    cache.n_embd = m.config.n_embd;
    cache.tokens = tokens;
    cache.lane_sums = cache.T >= lane_sum_keys;
    last_row_of(m, tr, last);
}

void kv_step(const Model& m, int token, KernelKind kernel, KvCache& cache, KvStepRow& out) {
    check_support(m);
    const ModelConfig& c = m.config;
    const int C = c.n_embd, T = cache.T, limit = generation_block_size(m);
    if (cache.layers.size() != m.h.size() || cache.n_embd != C || T < 0 || int(cache.tokens.size()) != T)
        throw std::invalid_argument("the cache was not made by this model's prefill; run kv_prefill first.");
    check_token(m, token);
    if (T >= limit)
        throw std::invalid_argument("the cache holds " + std::to_string(T) + " positions, the model's block size, so " +
                                    "no position is left for another token; stop here or go back first.");
    if (kernel == KernelKind::reference && (T + 1 >= lane_sum_keys) != cache.lane_sums) {
        // The forward over T + 1 positions sums every earlier softmax row the other way
        // (lane_sum): its earlier rows, and so the later layers' k and v, differ in the last
        // bits from the cache's. Running the sequence again keeps the step bit for bit.
        std::vector<int> all = cache.tokens;
        all.push_back(token);
        kv_prefill(m, all, kernel, cache, out);
        return;
    }
    const float scale = score_scale(block_config(c, T + 1));
    // h = wte[token] + wpe[T], as the forward's h0 row
    Vec h = m.wte.row(token) + m.wpe.row(T);
    Vec ln(C), mid(C), ln2(C), fc, mlp(C);
    AttentionStepRow row;
    out.pos = T;
    out.att.resize(m.h.size());
    for (size_t l = 0; l < m.h.size(); ++l) {
        const Block& b = m.h[l];
        if (c.arch == Arch::gpt) {
            // h = h + attn(ln_1(h)); h = h + mlp(ln_2(h)), one row as mlp_rows runs each row
            layernorm_forward(ln.data(), h.data(), b.ln_1, 0, 1, C);
            attend_row(b.attn, ln.data(), scale, kernel, T, limit, cache.layers[l], row);
            residual_forward(mid.data(), h.data(), row.y.data(), C);
            layernorm_forward(ln2.data(), mid.data(), b.ln_2, 0, 1, C);
            fc.resize(4 * C);
            linear_one_row(fc.data(), ln2.data(), b.mlp.c_fc.weight, b.mlp.c_fc.bias, kernel);
            gelu_forward(fc.data(), fc.data(), 4 * C, c.gelu, kernel);
            linear_one_row(mlp.data(), fc.data(), b.mlp.c_proj.weight, b.mlp.c_proj.bias, kernel);
            residual_forward(h.data(), mid.data(), mlp.data(), C);
        } else {
            // h = h + attn(h)
            attend_row(b.attn, h.data(), scale, kernel, T, limit, cache.layers[l], row);
            h += row.y;
        }
        out.att[l] = std::move(row.att);
    }
    out.logits.resize(c.vocab);
    if (c.arch == Arch::gpt) {
        layernorm_forward(ln.data(), h.data(), m.ln_f, 0, 1, C);
        linear_one_row(out.logits.data(), ln.data(), m.wte, Vec(), kernel); // the tied head
    } else {
        linear_one_row(out.logits.data(), h.data(), m.lm_head, Vec(), kernel);
    }
    cache.T = T + 1;
    cache.tokens.push_back(token);
}

void kv_truncate(KvCache& cache, int T) {
    if (T < 0 || T > cache.T)
        throw std::invalid_argument("position " + std::to_string(T) + " is not one the cache can go back to; give 0 to " +
                                    std::to_string(cache.T) + ".");
    cache.T = T; // the rows from T on stay reserved and are written over by the next steps
    cache.tokens.resize(size_t(T));
}

void full_last_row(const Model& m, const std::vector<int>& tokens, KernelKind kernel, KvStepRow& out) {
    ModelTrace tr;
    forward_for(m, tokens, kernel, tr);
    last_row_of(m, tr, out);
}

void attention_cache_from(const Trace& tr, LayerKv& kv, int& T) {
    if (tr.config.mask != MaskMode::causal)
        throw std::invalid_argument(std::string("the mask is ") + to_string(tr.config.mask) +
                                    ", not causal: without the causal mask a new row changes the earlier rows, so " +
                                    "their keys and values cannot be kept; use the causal mask.");
    cache_from_trace(tr, max_seq_len, kv);
    T = tr.T;
}

void attention_step(const Config& c, const Weights& w, const float* x_row, KernelKind kernel, LayerKv& kv, int& T,
                    AttentionStepRow& out) {
    if (c.mask != MaskMode::causal)
        throw std::invalid_argument(std::string("the mask is ") + to_string(c.mask) +
                                    ", not causal: without the causal mask a new row changes the earlier rows, so " +
                                    "a cache of their keys and values is wrong; use the causal mask.");
    const int C = c.n_embd, H = c.n_head;
    if (C < 1 || H < 1 || C % H != 0 || w.c_attn.weight.rows() != 3 * C || w.c_attn.weight.cols() != C ||
        w.c_proj.weight.rows() != C || w.c_proj.weight.cols() != C)
        throw std::invalid_argument("the weights do not fit n_embd " + std::to_string(C) + " and n_head " +
                                    std::to_string(H) + "; give the weights the cache was made with.");
    if (int(kv.k.size()) != H || int(kv.v.size()) != H || T < 0)
        throw std::invalid_argument("the cache holds " + std::to_string(kv.k.size()) + " heads, not the config's " +
                                    std::to_string(H) + "; make it with attention_cache_from first.");
    for (int h = 0; h < H; ++h)
        if (kv.k[size_t(h)].cols() != c.head_dim() || kv.k[size_t(h)].rows() < T || kv.v[size_t(h)].rows() < T)
            throw std::invalid_argument("the cache's keys are not " + std::to_string(T) + " rows of head_dim " +
                                        std::to_string(c.head_dim()) + "; make it with attention_cache_from first.");
    if (T >= max_seq_len)
        throw std::invalid_argument("the module already holds " + std::to_string(T) + " positions, the most it takes (" +
                                    std::to_string(max_seq_len) + "); go back before adding another.");
    attend_row(w, x_row, score_scale(c), kernel, T, max_seq_len, kv, out);
    T += 1;
}

} // namespace attnviz
