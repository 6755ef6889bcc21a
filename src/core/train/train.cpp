// train.cpp: one training step of a toy model, as PyTorch takes it (docs/training.md §4-§5): forward
// over the batch, the task's cross-entropy, the backward pass through every layer
// (layers.h) and Adam as torch 1.13's single-tensor loop; see train.h.
//
// Determinism: the batch is cut into chunks by a rule that depends only on B, each chunk
// runs forward and backward into its own buffers (on whichever thread takes it), and the
// chunks' gradients and losses are added in chunk order. So the weights are bit for bit
// the same for any number of threads, and a run continued later is the run done at once.
#include "train.h"
#include "train_work.h"
#include "layers.h"
#include "work_team.h"
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace attnviz {

// ---------------------------------------------------------------------------------------
// Gradients

namespace {

// parameters() (model.cpp) line for line, on the gradients.
template <class Grads, class Ptr>
std::vector<Ptr> grads_in_order(Grads& g, const ModelConfig& c) {
    std::vector<Ptr> p{&g.wte, &g.wpe};
    for (auto& b : g.h) {
        p.push_back(&b.w_qkv);
        p.push_back(&b.w_proj);
    }
    if (c.has_prev_head()) p.push_back(&g.head_prev);
    if (c.has_dup_head()) p.push_back(&g.head_dup);
    if (c.has_lm_head()) p.push_back(&g.lm_head);
    return p;
}

} // namespace

std::vector<Mat*> ModelGrads::in_parameters_order(const ModelConfig& c) {
    return grads_in_order<ModelGrads, Mat*>(*this, c);
}
std::vector<const Mat*> ModelGrads::in_parameters_order(const ModelConfig& c) const {
    return grads_in_order<const ModelGrads, const Mat*>(*this, c);
}

// ---------------------------------------------------------------------------------------
// Scratch buffers

TrainScratch::TrainScratch() : p_(std::make_unique<detail::TrainWorkspace>()) {}
TrainScratch::~TrainScratch() = default;
TrainScratch::TrainScratch(const TrainScratch&) : p_(std::make_unique<detail::TrainWorkspace>()) {}
TrainScratch& TrainScratch::operator=(const TrainScratch&) {
    p_ = std::make_unique<detail::TrainWorkspace>();
    return *this;
}
TrainScratch::TrainScratch(TrainScratch&&) noexcept = default;
TrainScratch& TrainScratch::operator=(TrainScratch&&) noexcept = default;
detail::TrainWorkspace& TrainScratch::get() {
    if (!p_) p_ = std::make_unique<detail::TrainWorkspace>();
    return *p_;
}

namespace detail {

namespace {

void ensure(Mat& m, int64_t rows, int64_t cols) {
    if (m.rows() != rows || m.cols() != cols) m.resize(rows, cols);
}

} // namespace

int chunk_count(int B) { return B < train_chunks ? B : train_chunks; }

void prepare_chunks(const ModelConfig& c, int B, TrainWorkspace& w) {
    const int n = chunk_count(B);
    w.chunks.resize(size_t(n));
    const int N = c.n_tokens(), C = c.n_embd, L = c.n_layer, H = c.n_head, V = c.vocab;
    int b0 = 0;
    for (int k = 0; k < n; ++k) {
        ChunkWork& cw = w.chunks[size_t(k)];
        cw.b0 = b0;
        cw.B = B / n + (k < B % n ? 1 : 0); // the first B mod n chunks take one more
        b0 += cw.B;
        const int64_t M = int64_t(cw.B) * N;
        cw.h.resize(size_t(L + 1));
        cw.qkv.resize(size_t(L));
        cw.att.resize(size_t(L));
        cw.atty.resize(size_t(L));
        for (int l = 0; l <= L; ++l) ensure(cw.h[size_t(l)], M, C);
        for (int l = 0; l < L; ++l) {
            ensure(cw.qkv[size_t(l)], M, 3 * C);
            ensure(cw.att[size_t(l)], int64_t(cw.B) * H * N, N);
            ensure(cw.atty[size_t(l)], M, C);
        }
        if (c.has_prev_head()) ensure(cw.logits_prev, M, V + 1);
        if (c.has_dup_head()) ensure(cw.logits_dup, M, 2);
        if (c.has_lm_head()) ensure(cw.logits_next, M, V);
    }
}

void make_embedding_tables(const Model& m, EmbeddingTables& t) {
    const Mat& W = m.h[0].attn.c_attn.weight;
    ensure(t.qkv0_tok, m.wte.rows(), W.rows());
    ensure(t.qkv0_pos, m.wpe.rows(), W.rows());
    matmul_forward(t.qkv0_tok.data(), m.wte.data(), W, int(m.wte.rows())); // (V+1, 3C)
    matmul_forward(t.qkv0_pos.data(), m.wpe.data(), W, int(m.wpe.rows())); // (N, 3C)
}

// h[0] = embeddings; per block: qkv (block 0's from the tables), attention, proj,
// residual; then the task's logits.
void chunk_forward(const Model& m, const EmbeddingTables& t, const int* tok, ChunkWork& w) {
    const ModelConfig& c = m.config;
    const int N = c.n_tokens(), C = c.n_embd, H = c.n_head, B = w.B, M = B * N;
    const float scale = float(std::pow(double(c.head_dim()), -0.5));
    encoder_forward(w.h[0].data(), tok, m.wte, m.wpe, B, N); // (M, C)
    for (size_t l = 0; l < m.h.size(); ++l) {
        const Weights& a = m.h[l].attn;
        if (l == 0)
            embedding_product_forward(w.qkv[0].data(), tok, t.qkv0_tok, t.qkv0_pos, B, N); // (M, 3C)
        else
            matmul_forward(w.qkv[l].data(), w.h[l].data(), a.c_attn.weight, M);          // (M, 3C)
        attention_forward(w.atty[l].data(), w.att[l].data(), w.qkv[l].data(), B, N, C, H, scale); // (M, C)
        matmul_forward(w.h[l + 1].data(), w.atty[l].data(), a.c_proj.weight, M);         // (M, C)
        residual_forward(w.h[l + 1].data(), w.h[l].data(), w.h[l + 1].data(), int64_t(M) * C);
    }
    const float* hL = w.h.back().data();
    if (c.has_prev_head()) matmul_forward(w.logits_prev.data(), hL, m.head_prev, M); // (M, V+1)
    if (c.has_dup_head()) matmul_forward(w.logits_dup.data(), hL, m.head_dup, M);    // (M, 2)
    if (c.has_lm_head()) matmul_forward(w.logits_next.data(), hL, m.lm_head, M);     // (M, V)
}

namespace {

// The chunk's targets, -1 where a row is not in that loss: prev and dup skip BOS
// (position 0); next uses the `where` positions and predicts the following token.
void chunk_targets(const ModelConfig& c, const Batch& b, ChunkWork& w) {
    const int N = b.N, M = w.B * N, off = w.b0 * N;
    w.tprev.assign(size_t(M), -1);
    w.tdup.assign(size_t(M), -1);
    w.tnext.assign(size_t(M), -1);
    for (int r = 0; r < M; ++r) {
        const int t = r % N, i = off + r;
        if (c.has_prev_head() && t >= 1) w.tprev[size_t(r)] = b.prev[size_t(i)];
        if (c.has_dup_head() && t >= 1) w.tdup[size_t(r)] = b.dup[size_t(i)];
        if (c.has_lm_head() && t + 1 < N && b.where[size_t(i)]) w.tnext[size_t(r)] = b.tok[size_t(i) + 1];
    }
}

// Backward from the loss to every parameter, into w.grads.
void chunk_backward(const Model& m, const int* tok, const Counts& counts, ChunkWork& w) {
    const ModelConfig& c = m.config;
    const int N = c.n_tokens(), C = c.n_embd, H = c.n_head, B = w.B, M = B * N, L = c.n_layer;
    const float scale = float(std::pow(double(c.head_dim()), -0.5));
    ModelGrads& g = w.grads;
    g.h.resize(size_t(L));
    auto zero_like = [](Mat& d, const Mat& p) {
        ensure(d, p.rows(), p.cols());
        d.setZero();
    };
    zero_like(g.wte, m.wte);
    zero_like(g.wpe, m.wpe);
    for (int l = 0; l < L; ++l) {
        if (l > 0) zero_like(g.h[size_t(l)].w_qkv, m.h[size_t(l)].attn.c_attn.weight); // block 0's: the batch's, from its tables
        zero_like(g.h[size_t(l)].w_proj, m.h[size_t(l)].attn.c_proj.weight);
    }
    ensure(w.dh, M, C);
    ensure(w.datty, M, C);
    ensure(w.dqkv, M, 3 * C);
    ensure(w.dscratch, 1, attention_scratch_floats(N, c.head_dim()));
    w.dh.setZero();
    const float* hL = w.h.back().data();
    // Task heads: dlogits from the cross-entropy, then dh += dlogits W, dW += dlogits^T h.
    w.loss[0] = w.loss[1] = w.loss[2] = 0.0;
    auto head = [&](Mat& dW, const Mat& W, const Mat& logits, const std::vector<int>& target, int64_t count,
                    int which) {
        zero_like(dW, W);
        ensure(w.dlogits, M, W.rows());
        w.loss[which] = crossentropy_forward_backward(w.dlogits.data(), logits.data(), target.data(), M,
                                                      int(W.rows()), count > 0 ? float(1.0 / double(count)) : 0.f);
        matmul_backward(w.dh.data(), dW, w.dlogits.data(), hL, W, M, true);
    };
    if (c.has_prev_head()) head(g.head_prev, m.head_prev, w.logits_prev, w.tprev, counts.prev, 0);
    if (c.has_dup_head()) head(g.head_dup, m.head_dup, w.logits_dup, w.tdup, counts.dup, 1);
    if (c.has_lm_head()) head(g.lm_head, m.lm_head, w.logits_next, w.tnext, counts.next, 2);
    // Blocks, last first: h[l+1] = h[l] + proj(attn(qkv(h[l]))), so dh flows on unchanged
    // and gains what comes back through the block.
    for (int l = L - 1; l >= 0; --l) {
        const Weights& a = m.h[size_t(l)].attn;
        BlockGrads& d = g.h[size_t(l)];
        matmul_backward(w.datty.data(), d.w_proj, w.dh.data(), w.atty[size_t(l)].data(), a.c_proj.weight, M, false);
        attention_backward(w.dqkv.data(), w.dscratch.data(), w.datty.data(), w.qkv[size_t(l)].data(),
                           w.att[size_t(l)].data(), B, N, C, H, scale);
        if (l > 0) {
            matmul_backward(w.dh.data(), d.w_qkv, w.dqkv.data(), w.h[size_t(l)].data(), a.c_attn.weight, M, true);
        } else { // G_tok and G_pos (train_work.h); the batch's sums go through W once
            ensure(w.dqkv0_tok, m.wte.rows(), 3 * C);
            ensure(w.dqkv0_pos, m.wpe.rows(), 3 * C);
            w.dqkv0_tok.setZero();
            w.dqkv0_pos.setZero();
            embedding_product_backward(w.dqkv0_tok, w.dqkv0_pos, w.dqkv.data(), tok, B, N);
        }
    }
    encoder_backward(g.wte, g.wpe, w.dh.data(), tok, B, N); // the residual stream's part
}

} // namespace

Counts loss_counts(const ModelConfig& c, const Batch& b) {
    Counts n;
    const int64_t body = int64_t(b.B) * (b.N - 1); // positions 1..T
    if (c.has_prev_head()) n.prev = body;
    if (c.has_dup_head()) n.dup = body;
    if (c.has_lm_head())
        for (int r = 0; r < b.B; ++r)
            for (int t = 0; t + 1 < b.N; ++t) n.next += b.where[size_t(r) * b.N + t] ? 1 : 0;
    return n;
}

float batch_loss_and_grads(const Model& m, const Batch& b, TrainWorkspace& w, ModelGrads& grads, int threads) {
    const ModelConfig& c = m.config;
    prepare_chunks(c, b.B, w);
    const Counts counts = loss_counts(c, b);
    if (threads <= 0) threads = work_team_threads();
    // The tables' products and the ones after the chunks are too small for threads: an
    // OpenMP team here would spin next to the work team's worker.
    SerialEigen serial;
    make_embedding_tables(m, w.tables);
    run_pieces(int(w.chunks.size()), threads, [&](int k) {
        SerialEigen serial;
        ChunkWork& cw = w.chunks[size_t(k)];
        const int* tok = b.tok.data() + size_t(cw.b0) * b.N;
        chunk_targets(c, b, cw);
        chunk_forward(m, w.tables, tok, cw);
        chunk_backward(m, tok, counts, cw);
    });
    // Chunk order, whatever thread ran which chunk: every chunk lists its gradients in the
    // same order as the batch's.
    grads.h.resize(m.h.size());
    const std::vector<Mat*> sum_of = grads.in_parameters_order(c);
    std::vector<std::vector<const Mat*>> part;
    for (const ChunkWork& cw : w.chunks) part.push_back(cw.grads.in_parameters_order(c));
    for (size_t p = 0; p < sum_of.size(); ++p) {
        if (sum_of[p] == &grads.h[0].w_qkv) continue; // no chunk adds to it (below)
        *sum_of[p] = *part[0][p];
        for (size_t k = 1; k < part.size(); ++k) *sum_of[p] += *part[k][p];
    }
    ensure(grads.h[0].w_qkv, m.h[0].attn.c_attn.weight.rows(), m.h[0].attn.c_attn.weight.cols());
    grads.h[0].w_qkv.setZero();
    // Block 0's qkv through its tables (train_work.h), on the batch's G_tok and G_pos.
    Mat& gtok = w.chunks[0].dqkv0_tok;
    Mat& gpos = w.chunks[0].dqkv0_pos;
    for (size_t k = 1; k < w.chunks.size(); ++k) {
        gtok += w.chunks[k].dqkv0_tok;
        gpos += w.chunks[k].dqkv0_pos;
    }
    embedding_product_weights_backward(grads.wte, grads.wpe, grads.h[0].w_qkv, gtok, gpos, m.wte, m.wpe,
                                       m.h[0].attn.c_attn.weight);
    double sum[3] = {0.0, 0.0, 0.0};
    for (const ChunkWork& cw : w.chunks)
        for (int i = 0; i < 3; ++i) sum[i] += cw.loss[i];
    // Each loss is its own float32 mean, and `both` adds them, as PyTorch does (docs/training.md §4).
    float loss = 0.f;
    if (counts.prev > 0) loss += float(sum[0] / double(counts.prev));
    if (counts.dup > 0) loss += float(sum[1] / double(counts.dup));
    if (c.has_lm_head()) loss += counts.next > 0 ? float(sum[2] / double(counts.next)) : NAN;
    return loss;
}

} // namespace detail

float loss_and_grads(const Model& m, const Batch& b, ModelGrads& grads, int threads) {
    detail::TrainWorkspace w;
    return detail::batch_loss_and_grads(m, b, w, grads, threads);
}

TrainRun start_training(const ModelConfig& c, uint64_t seed, double lr, int batch) {
    if (!(lr > 0.0) || !std::isfinite(lr)) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", lr);
        throw std::invalid_argument(std::string("learning rate ") + text + " is not a positive number; use e.g. 5e-3.");
    }
    if (batch < 1 || batch > max_train_batch)
        throw std::invalid_argument("batch " + std::to_string(batch) + " is out of range; use 1 to " +
                                    std::to_string(max_train_batch) + " sequences.");
    TrainRun run;
    run.model = init_model(c, seed); // throws on an invalid config, with validate's sentence
    run.seed = seed;
    run.batch = batch;
    run.batch_gen.manual_seed(seed + 1);
    run.adam.lr = lr;
    for (const Param& p : parameters(run.model)) {
        run.adam.m.push_back(Mat::Zero(p.value->rows(), p.value->cols()));
        run.adam.v.push_back(Mat::Zero(p.value->rows(), p.value->cols()));
    }
    return run;
}

float train_step(TrainRun& run, int threads) {
    const TorchGenerator gen_before = run.batch_gen;
    detail::TrainWorkspace& w = run.scratch.get();
    make_batch(run.model.config, run.batch_gen, run.batch, w.batch);
    const float loss = detail::batch_loss_and_grads(run.model, w.batch, w, w.grads, threads);
    const std::vector<const Mat*> grads = std::as_const(w.grads).in_parameters_order(run.model.config);
    bool finite = std::isfinite(loss);
    for (const Mat* g : grads) finite = finite && g->allFinite();
    if (!finite) {
        run.batch_gen = gen_before;
        return NAN;
    }
    std::vector<Param> params = parameters(run.model);
    if (!detail::adam_step(run.adam, params, grads)) {
        run.batch_gen = gen_before;
        return NAN;
    }
    run.losses.push_back(loss);
    return loss;
}

} // namespace attnviz
