// train_tasks.cpp: the batches (make_batch, docs/training.md §3) and the probes (head_scores, accuracy),
// draw for draw as PyTorch takes them; see train.h.
#include "train_work.h"
#include "work_team.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

void make_batch(const ModelConfig& c, TorchGenerator& g, int B, Batch& out) {
    const int V = c.vocab, T = c.seq_len, N = T + 1, BOS = c.bos();
    out.B = B;
    out.N = N;
    // body = randint(0, V, (B, T)), row-major: sequence by sequence
    std::vector<int64_t> body(size_t(B) * T);
    g.randint(body.data(), int64_t(body.size()), 0, V);
    out.where.clear();
    if (c.task == Task::induction) {
        std::vector<int64_t> lens(static_cast<size_t>(B)), starts(static_cast<size_t>(B));
        g.randint(lens.data(), B, 3, T / 2); // length of the repeated segment
        g.randint(starts.data(), B, 0, 2);   // where it starts in body
        out.where.assign(size_t(B) * N, 0);
        for (int b = 0; b < B; ++b) {
            const int L = int(lens[size_t(b)]), s = int(starts[size_t(b)]);
            int64_t* row = body.data() + size_t(b) * T;
            std::copy(row + s, row + s + L, row + s + L); // body[b, s+L : s+2L] = body[b, s : s+L]
            // positions whose next token the first copy gives away (+1: BOS shifts body by one)
            for (int t = 1 + s + L; t < 1 + s + 2 * L - 1; ++t) out.where[size_t(b) * N + t] = 1;
        }
    }
    out.tok.resize(size_t(B) * N);
    for (int b = 0; b < B; ++b) {
        out.tok[size_t(b) * N] = BOS;
        for (int t = 0; t < T; ++t) out.tok[size_t(b) * N + 1 + t] = int(body[size_t(b) * T + t]);
    }
    out.prev.clear();
    out.dup.clear();
    if (c.has_prev_head()) {
        // [BOS, tok[:, :-1]]: the token one place back, BOS for BOS itself
        out.prev.resize(size_t(B) * N);
        for (int b = 0; b < B; ++b) {
            out.prev[size_t(b) * N] = BOS;
            for (int t = 1; t < N; ++t) out.prev[size_t(b) * N + t] = out.tok[size_t(b) * N + t - 1];
        }
    }
    if (c.has_dup_head()) {
        // 1 where the same token stands at an earlier position
        out.dup.assign(size_t(B) * N, 0);
        for (int b = 0; b < B; ++b) {
            const int* row = out.tok.data() + size_t(b) * N;
            for (int i = 0; i < N; ++i)
                for (int j = 0; j < i; ++j)
                    if (row[j] == row[i]) {
                        out.dup[size_t(b) * N + i] = 1;
                        break;
                    }
        }
    }
}

namespace {

// The model on B sequences (B, N), in chunks as training runs it; w keeps every layer's
// attention weights and the logits.
void probe_forward(const Model& m, const std::vector<int>& tok, int B, detail::TrainWorkspace& w) {
    detail::prepare_chunks(m.config, B, w);
    const int N = m.config.n_tokens();
    {
        detail::SerialEigen serial; // too small for threads (see batch_loss_and_grads)
        detail::make_embedding_tables(m, w.tables);
    }
    detail::run_pieces(int(w.chunks.size()), detail::work_team_threads(), [&](int k) {
        detail::SerialEigen serial;
        detail::ChunkWork& cw = w.chunks[size_t(k)];
        detail::chunk_forward(m, w.tables, tok.data() + size_t(cw.b0) * N, cw);
    });
}

// att[b, h, i, j] of layer l, b counted within the batch.
struct AttAt {
    const detail::TrainWorkspace& w;
    int H, N;
    float operator()(int l, int b, int h, int i, int j) const {
        for (const detail::ChunkWork& cw : w.chunks)
            if (b < cw.b0 + cw.B)
                return cw.att[size_t(l)]((int64_t(b - cw.b0) * H + h) * N + i, j);
        return NAN;
    }
};

int argmax_row(const Mat& logits, int64_t r) {
    int best = 0;
    for (int j = 1; j < logits.cols(); ++j)
        if (logits(r, j) > logits(r, best)) best = j; // the first of equal maxima, as torch.argmax
    return best;
}

} // namespace

HeadScores head_scores(const Model& m) {
    const ModelConfig& c = m.config;
    const int V = c.vocab, T = c.seq_len, N = T + 1, H = c.n_head, L = c.n_layer;
    constexpr int B = 256;
    TorchGenerator g(1234);
    HeadScores out;
    detail::TrainWorkspace w;
    const AttAt att{w, H, N};

    // Uniform random tokens after BOS: previous-token and duplicate scores.
    std::vector<int64_t> body(size_t(B) * T);
    g.randint(body.data(), int64_t(body.size()), 0, V);
    std::vector<int> tok(size_t(B) * N);
    for (int b = 0; b < B; ++b) {
        tok[size_t(b) * N] = V;
        for (int t = 0; t < T; ++t) tok[size_t(b) * N + 1 + t] = int(body[size_t(b) * T + t]);
    }
    probe_forward(m, tok, B, w);
    for (int l = 0; l < L; ++l) {
        std::vector<float> prev(static_cast<size_t>(H)), dup(static_cast<size_t>(H));
        for (int h = 0; h < H; ++h) {
            // mean attention of query i on key i - 1, i >= 1
            double sp = 0.0;
            for (int b = 0; b < B; ++b)
                for (int i = 1; i < N; ++i) sp += att(l, b, h, i, i - 1);
            prev[size_t(h)] = float(sp / (double(B) * T));
            // mean attention on earlier keys with the same token, over queries that have one
            double sd = 0.0;
            int64_t nd = 0;
            for (int b = 0; b < B; ++b)
                for (int i = 0; i < N; ++i) {
                    const int* row = tok.data() + size_t(b) * N;
                    float s = 0.f;
                    bool has = false;
                    for (int j = 0; j < i; ++j)
                        if (row[j] == row[i]) {
                            s += att(l, b, h, i, j);
                            has = true;
                        }
                    if (has) {
                        sd += s;
                        ++nd;
                    }
                }
            dup[size_t(h)] = nd > 0 ? float(sd / double(nd)) : NAN;
        }
        out.prev_token.push_back(prev);
        out.duplicate.push_back(dup);
    }

    // [BOS, r, r, filler], r of length T // 3: query i of the second copy on key i - R + 1.
    const int R = T / 3;
    std::vector<int64_t> r(size_t(B) * R), filler(size_t(B) * (T - 2 * R));
    g.randint(r.data(), int64_t(r.size()), 0, V);
    g.randint(filler.data(), int64_t(filler.size()), 0, V);
    for (int b = 0; b < B; ++b) {
        int* row = tok.data() + size_t(b) * N;
        row[0] = V;
        for (int t = 0; t < R; ++t) row[1 + t] = row[1 + R + t] = int(r[size_t(b) * R + t]);
        for (int t = 0; t < T - 2 * R; ++t) row[1 + 2 * R + t] = int(filler[size_t(b) * (T - 2 * R) + t]);
    }
    probe_forward(m, tok, B, w);
    for (int l = 0; l < L; ++l) {
        std::vector<float> ind(static_cast<size_t>(H));
        for (int h = 0; h < H; ++h) {
            double s = 0.0;
            int64_t n = 0;
            for (int i = R + 1; i < 2 * R; ++i)
                for (int b = 0; b < B; ++b, ++n) s += att(l, b, h, i, i - R + 1);
            ind[size_t(h)] = n > 0 ? float(s / double(n)) : NAN;
        }
        out.induction.push_back(ind);
    }
    return out;
}

std::map<std::string, double> accuracy(const Model& m) {
    const ModelConfig& c = m.config;
    constexpr int B = 256;
    TorchGenerator g(4321);
    Batch batch;
    make_batch(c, g, B, batch);
    detail::TrainWorkspace w;
    probe_forward(m, batch.tok, B, w);
    const int N = batch.N;
    int64_t hit_prev = 0, hit_dup = 0, hit_next = 0, n_next = 0;
    for (const detail::ChunkWork& cw : w.chunks)
        for (int64_t r = 0; r < int64_t(cw.B) * N; ++r) {
            const int t = int(r % N);
            const size_t i = size_t(cw.b0) * N + size_t(r);
            if (t == 0) continue; // BOS is in no score
            if (c.has_prev_head()) hit_prev += argmax_row(cw.logits_prev, r) == batch.prev[i];
            if (c.has_dup_head()) hit_dup += argmax_row(cw.logits_dup, r) == batch.dup[i];
        }
    if (c.has_lm_head())
        for (const detail::ChunkWork& cw : w.chunks)
            for (int64_t r = 0; r < int64_t(cw.B) * N; ++r) {
                const size_t i = size_t(cw.b0) * N + size_t(r);
                if (r % N + 1 >= N || !batch.where[i]) continue;
                hit_next += argmax_row(cw.logits_next, r) == batch.tok[i + 1];
                ++n_next;
            }
    // torch's float32 mean of 0/1 values: an exact count over an exact n, rounded once.
    std::map<std::string, double> acc;
    const float body = float(B) * float(N - 1);
    if (c.has_prev_head()) acc["prev"] = double(float(hit_prev) / body);
    if (c.has_dup_head()) acc["dup"] = double(float(hit_dup) / body);
    if (c.has_lm_head()) acc["next"] = n_next > 0 ? double(float(hit_next) / float(n_next)) : NAN;
    return acc;
}

} // namespace attnviz
