// head_detector.cpp: see head_detector.h.
#include "head_detector.h"
#include "ablation.h"
#include "gpt_model.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnviz {

namespace {

int layers_of(const std::vector<SequenceAttention>& seqs) { return seqs.empty() ? 0 : int(seqs[0].layers.size()); }
int heads_of(const std::vector<SequenceAttention>& seqs) {
    return seqs.empty() || seqs[0].layers.empty() || !seqs[0].layers[0] ? 0 : int(seqs[0].layers[0]->size());
}

void check(const std::vector<SequenceAttention>& seqs) {
    const int L = layers_of(seqs), H = heads_of(seqs);
    for (const SequenceAttention& s : seqs) {
        if (!s.tokens || int(s.layers.size()) != L) throw std::invalid_argument("every sequence needs its tokens and every layer");
        const int N = int(s.tokens->size());
        for (const PerHead* ph : s.layers) {
            if (!ph || int(ph->size()) != H) throw std::invalid_argument("every layer needs the same heads");
            for (const Mat& a : *ph)
                if (a.rows() != N || a.cols() != N) throw std::invalid_argument("attention must be (N, N) for N tokens");
        }
    }
}

} // namespace

SequenceAttention attention_of(const ModelTrace& t) {
    SequenceAttention s;
    s.tokens = &t.tokens;
    for (const Trace& tr : t.layers) s.layers.push_back(&tr.att);
    return s;
}

namespace {

// Per query of one sequence, the keys each score reads: the earlier copies of its token,
// and the keys just after them (each once; j + 1 = i is the query itself).
struct QueryKeys {
    int query = 0;
    std::vector<int> dup, ind;
};
std::vector<QueryKeys> keys_of(const std::vector<int>& tok) {
    std::vector<QueryKeys> out;
    const int N = int(tok.size());
    for (int i = 0; i < N; ++i) {
        QueryKeys q;
        q.query = i;
        for (int j = 0; j < i; ++j)
            if (tok[size_t(j)] == tok[size_t(i)]) q.dup.push_back(j), q.ind.push_back(j + 1);
        if (!q.dup.empty()) out.push_back(std::move(q));
    }
    return out;
}

} // namespace

HeadScores detect_on_text(const std::vector<SequenceAttention>& seqs) {
    check(seqs);
    const int L = layers_of(seqs), H = heads_of(seqs);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<std::vector<QueryKeys>> keys;
    for (const SequenceAttention& s : seqs) keys.push_back(keys_of(*s.tokens));
    HeadScores out;
    for (int l = 0; l < L; ++l) {
        std::vector<float> prev(size_t(H), nan), dup(size_t(H), nan), ind(size_t(H), nan);
        for (int h = 0; h < H; ++h) {
            double sp = 0, sd = 0, si = 0;
            int64_t np = 0, nq = 0;
            for (size_t b = 0; b < seqs.size(); ++b) {
                const Mat& a = (*seqs[b].layers[size_t(l)])[size_t(h)];
                const int N = int(seqs[b].tokens->size());
                for (int i = 1; i < N; ++i, ++np) sp += a(i, i - 1);
                // A query's mass on its keys is summed in float32, in key order, and those
                // sums averaged, as the recipe does (a * same).sum(-1)[has].mean().
                for (const QueryKeys& q : keys[b]) {
                    float d = 0.f, in = 0.f;
                    for (int j : q.dup) d += a(q.query, j);
                    for (int j : q.ind) in += a(q.query, j);
                    sd += d, si += in, ++nq;
                }
            }
            if (np > 0) prev[size_t(h)] = float(sp / double(np));
            if (nq > 0) dup[size_t(h)] = float(sd / double(nq)), ind[size_t(h)] = float(si / double(nq));
        }
        out.prev_token.push_back(prev);
        out.duplicate.push_back(dup);
        out.induction.push_back(ind);
    }
    return out;
}

namespace {

// One sequence's induction stripe: per layer and head, a[i, i - R + 1] for the second copy's
// queries i = start + R .. start + 2R - 2 that the sequence holds.
using Stripe = std::vector<std::vector<std::vector<float>>>; // [layer][head][query]
Stripe stripe_of(const SequenceAttention& q, int start, int repeat) {
    Stripe out(q.layers.size());
    const int N = int(q.tokens->size());
    for (size_t l = 0; l < q.layers.size(); ++l)
        for (const Mat& a : *q.layers[l]) {
            std::vector<float> v;
            for (int i = start + repeat; i < std::min(N, start + 2 * repeat - 1); ++i) v.push_back(a(i, i - repeat + 1));
            out[l].push_back(std::move(v));
        }
    return out;
}

// The mean over every (query, sequence) pair: query by query, then sequence by sequence, as
// the recipe stacks a[:, hd, i, i - R + 1]; NaN where there is none.
std::vector<std::vector<float>> pool_stripes(const std::vector<Stripe>& stripes, int L, int H) {
    std::vector<std::vector<float>> out;
    for (int l = 0; l < L; ++l) {
        std::vector<float> ind(size_t(H), std::numeric_limits<float>::quiet_NaN());
        for (int h = 0; h < H; ++h) {
            double s = 0;
            int64_t n = 0;
            for (size_t i = 0;; ++i) {
                bool any = false;
                for (const Stripe& st : stripes) {
                    const std::vector<float>& v = st[size_t(l)][size_t(h)];
                    if (i >= v.size()) continue;
                    s += v[i];
                    ++n;
                    any = true;
                }
                if (!any) break;
            }
            if (n > 0) ind[size_t(h)] = float(s / double(n));
        }
        out.push_back(ind);
    }
    return out;
}

} // namespace

std::vector<std::vector<float>> detect_induction_on_repeats(const std::vector<SequenceAttention>& seqs, int start,
                                                            int repeat) {
    check(seqs);
    std::vector<Stripe> stripes;
    for (const SequenceAttention& q : seqs) stripes.push_back(stripe_of(q, start, repeat));
    return pool_stripes(stripes, layers_of(seqs), heads_of(seqs));
}

int bos_token(const ModelConfig& c) {
    if (c.arch == Arch::toy) return c.bos(); // every toy task reads BOS first
    return c.vocab == gpt2_vocab_size || c.vocab == nanogpt_gpt2_vocab_size ? gpt2_endoftext : -1;
}

bool starts_with_bos(const ModelConfig& c) { return bos_token(c) >= 0; }

std::vector<std::vector<int>> repeated_sequences(int vocab, int bos, TorchGenerator& g, int count, int length,
                                                 int repeat) {
    const int s0 = bos >= 0 ? 1 : 0;
    const int rest = length - s0 - 2 * repeat;
    if (count < 1 || repeat < 1 || rest < 0)
        throw std::invalid_argument("a repeated sequence of " + std::to_string(length) + " tokens cannot hold " +
                                    (s0 ? "a BOS and " : "") + "two copies of " + std::to_string(repeat));
    std::vector<int64_t> r(size_t(count) * size_t(repeat)), filler(size_t(count) * size_t(rest));
    g.randint(r.data(), int64_t(r.size()), 0, vocab);
    if (rest > 0) g.randint(filler.data(), int64_t(filler.size()), 0, vocab);
    std::vector<std::vector<int>> out(static_cast<size_t>(count));
    for (int b = 0; b < count; ++b) {
        std::vector<int>& row = out[size_t(b)];
        if (s0) row.push_back(bos);
        for (int copy = 0; copy < 2; ++copy)
            for (int t = 0; t < repeat; ++t) row.push_back(int(r[size_t(b) * size_t(repeat) + size_t(t)]));
        for (int t = 0; t < rest; ++t) row.push_back(int(filler[size_t(b) * size_t(rest) + size_t(t)]));
    }
    return out;
}

std::vector<std::vector<int>> repeated_sequences(const ModelConfig& c, TorchGenerator& g, int count, int length,
                                                 int repeat) {
    return repeated_sequences(c.vocab, bos_token(c), g, count, length, repeat);
}

void detect_repeat_induction(const Model& m, KernelKind kernel, HeadDetection& out, int count, uint64_t seed,
                             std::optional<int> bos, const Ablation* ablation, const HeadDetection* clean) {
    const ModelConfig& c = m.config;
    const int first = bos ? *bos : bos_token(c);
    // Token ids the model's embedding has: a toy model's BOS is its last row.
    const int ids = c.arch == Arch::toy ? c.vocab + 1 : c.vocab;
    if (first < -1 || first >= ids)
        throw std::invalid_argument("BOS " + std::to_string(first) + " is not a token of the model's " +
                                    std::to_string(ids) + "; give an id below " + std::to_string(ids) + " or -1 for none");
    const int s0 = first >= 0 ? 1 : 0;
    // The recipe's probe on a toy model; on a long context (GPT-2's 1024) copies of
    // detector_max_repeat tokens, so that the probe stays a few short forwards.
    const int repeat = std::min(c.seq_len / 3, detector_max_repeat);
    const int length = repeat == c.seq_len / 3 ? c.n_tokens() : s0 + 2 * repeat;
    if (ablation && ablation->empty()) ablation = nullptr;
    const bool reuse = ablation && clean && clean->probe && clean->repeat_count == count && clean->repeat_seed == seed &&
                       clean->repeat_bos == first && clean->repeat_len == repeat &&
                       clean->probe->size() == size_t(count);
    const std::shared_ptr<const std::vector<ModelTrace>> clean_probe = reuse ? clean->probe : nullptr;
    out.repeat_induction.clear();
    out.repeat_count = count;
    out.repeat_len = repeat;
    out.repeat_seed = seed;
    out.repeat_bos = first;
    out.probe.reset();
    if (repeat < 2) return; // no query of the second copy has a known next token
    std::vector<Stripe> stripes;
    if (clean_probe) {
        // The clean traces from the first ablated layer on: the layers before it are the same.
        const int l0 = ablation->first_layer();
        ModelTrace tr;
        for (const ModelTrace& t : *clean_probe) {
            tr = t;
            if (c.arch == Arch::gpt) gpt_rerun_from(m, l0, kernel, ablation, tr);
            else model_rerun_from(m, l0, kernel, tr, ablation);
            stripes.push_back(stripe_of(attention_of(tr), s0, repeat));
        }
        out.repeat_induction = pool_stripes(stripes, c.n_layer, c.n_head);
        return;
    }
    TorchGenerator g(seed);
    const std::vector<std::vector<int>> seqs = repeated_sequences(c.vocab, first, g, count, length, repeat);
    // One forward at a time, keeping only its stripe (and, clean, its lean trace).
    auto kept = std::make_shared<std::vector<ModelTrace>>();
    ModelTrace tr;
    for (const std::vector<int>& seq : seqs) {
        // The attention weights of every layer are all the detector reads: a GPT runs lean
        // and stops after the last layer's attention.
        if (c.arch == Arch::gpt) gpt_attention_forward(m, seq, kernel, tr, ablation);
        else model_forward(m, seq, kernel, tr, ablation);
        stripes.push_back(stripe_of(attention_of(tr), s0, repeat));
        if (!ablation) kept->push_back(std::move(tr));
    }
    out.repeat_induction = pool_stripes(stripes, c.n_layer, c.n_head);
    if (!ablation) out.probe = std::move(kept);
}

int window_probe_count(const Model& m) {
    const ModelConfig& c = m.config;
    const int repeat = std::min(c.seq_len / 3, detector_max_repeat);
    const int length = (starts_with_bos(c) ? 1 : 0) + 2 * std::max(repeat, 1);
    double params = double(m.wte.size());
    for (const Block& b : m.h) params += double(b.attn.c_attn.weight.size() + b.attn.c_proj.weight.size() + b.mlp.c_fc.weight.size() + b.mlp.c_proj.weight.size());
    return std::clamp(int(2e10 / (double(length) * params)), 2, detector_repeat_count);
}

std::vector<HeadRole> head_roles(const HeadDetection& d, float threshold) {
    std::vector<HeadRole> out;
    const HeadScores& t = d.text;
    for (size_t l = 0; l < t.prev_token.size(); ++l)
        for (size_t h = 0; h < t.prev_token[l].size(); ++h) {
            const bool repeat = l < d.repeat_induction.size() && h < d.repeat_induction[l].size();
            const float scores[3] = {t.prev_token[l][h], t.duplicate[l][h],
                                     repeat ? d.repeat_induction[l][h] : t.induction[l][h]};
            HeadRole best{int(l), int(h), -1, 0.f};
            for (int k = 0; k < 3; ++k)
                if (scores[k] >= threshold && scores[k] > best.score) best = HeadRole{int(l), int(h), k, scores[k]};
            if (best.kind >= 0) out.push_back(best);
        }
    return out;
}

const char* role_tag(int kind) {
    switch (kind) {
    case 0: return "prev";
    case 1: return "dup";
    case 2: return "ind";
    }
    return "?";
}

std::vector<float> softmax_logits(const float* logits, int n) {
    std::vector<float> p(logits, logits + n);
    if (n <= 0) return p;
    float m = p[0];
    bool any_nan = std::isnan(m);
    for (int j = 1; j < n; ++j) {
        m = p[size_t(j)] > m ? p[size_t(j)] : m;
        any_nan |= std::isnan(p[size_t(j)]);
    }
    if (any_nan) m = std::numeric_limits<float>::quiet_NaN();
    for (float& v : p) v = sleef_expf_u10(v - m);
    // The attention softmax's 8-lane sum (docs/numerics.md §3.7), then one reciprocal.
    float sum = 0.f;
    if (n < 8) {
        sum = p[0];
        for (int j = 1; j < n; ++j) sum += p[size_t(j)];
    } else {
        float lane[8];
        for (int l = 0; l < 8; ++l) lane[l] = p[size_t(l)];
        int j = 8;
        for (; j + 8 <= n; j += 8)
            for (int l = 0; l < 8; ++l) lane[l] += p[size_t(j + l)];
        for (int l = 0; j + l < n; ++l) lane[l] += p[size_t(j + l)];
        sum = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
    }
    const float inv = 1.f / sum;
    for (float& v : p) v = v * inv;
    return p;
}

std::vector<TokenProb> top_k(const std::vector<float>& probs, int k) {
    std::vector<TokenProb> all;
    all.reserve(probs.size());
    for (size_t i = 0; i < probs.size(); ++i) all.push_back(TokenProb{int(i), probs[i]});
    k = std::clamp(k, 0, int(all.size()));
    // NaN sorts last; equal probabilities keep the lower token first.
    auto before = [](const TokenProb& a, const TokenProb& b) {
        const bool an = std::isnan(a.prob), bn = std::isnan(b.prob);
        if (an != bn) return bn;
        if (a.prob != b.prob) return a.prob > b.prob;
        return a.token < b.token;
    };
    std::partial_sort(all.begin(), all.begin() + k, all.end(), before);
    all.resize(size_t(k));
    return all;
}

} // namespace attnviz
