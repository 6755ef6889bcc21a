// ablation.cpp: heads replaced by zero or their mean, the task's and the text's losses, and
// each head's direct logit attribution; see ablation.h.
// GCC 12's -Wmaybe-uninitialized inside Eigen's AVX-512 products is silenced as in model.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "ablation.h"
#include "either_model.h" // head_logits: the toy head's logits that go with dla_unembedding
#include "gpt_model.h"
#include "layers.h"
#include "text_util.h"
#include "train.h"
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <deque>
#include <stdexcept>

namespace attnviz {

const char* to_string(AblationMode m) { return m == AblationMode::zero ? "zero" : "mean"; }

bool parse_ablation_mode(const std::string& s, AblationMode& out, std::string& error) {
    if (s == "zero") out = AblationMode::zero;
    else if (s == "mean") out = AblationMode::mean;
    else {
        error = "ablation mode " + quote(s, 20) + " is not known; use zero (the head's output set to 0) or mean (set to its mean over the probe).";
        return false;
    }
    return true;
}

std::string to_string(const HeadRef& h) { return std::to_string(h.layer) + "." + std::to_string(h.head); }

namespace {

bool parse_small_int(const std::string& s, int& out) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoi(s);
    return true;
}

} // namespace

bool parse_heads(const std::string& text, const ModelConfig& c, std::vector<HeadRef>& out, std::string& error) {
    out.clear();
    const std::string range = "give heads as L.H with L 0.." + std::to_string(c.n_layer - 1) + " and H 0.." +
                              std::to_string(c.n_head - 1) + ", separated by commas (e.g. 0.1,1.0)";
    std::string item;
    auto flush = [&]() {
        if (item.empty()) return true;
        const size_t dot = item.find('.');
        int l = -1, h = -1;
        const std::string shown = quote(item, 20);
        if (dot == std::string::npos || !parse_small_int(item.substr(0, dot), l) || !parse_small_int(item.substr(dot + 1), h)) {
            error = shown + " is not a head; " + range + ".";
            return false;
        }
        if (l >= c.n_layer || h >= c.n_head) {
            error = "head " + shown + " is not in the model (" + std::to_string(c.n_layer) + " layers of " +
                    std::to_string(c.n_head) + " heads); " + range + ".";
            return false;
        }
        out.push_back({l, h});
        item.clear();
        return true;
    };
    // A comma with no head before it (",0.1", "0.1,,1.0") or after it ("0.1,") is refused:
    // a head left out of a list by mistake must not pass silently.
    const std::string empty_item = quote(text, 40) + " has an empty item between commas; " + range + ".";
    size_t heads_at_comma = 0;
    bool after_comma = false;
    for (char ch : text) {
        if (ch == ',' || ch == ' ' || ch == '\t' || ch == '\n') {
            if (!flush()) return false;
            if (ch != ',') continue;
            if (out.size() == heads_at_comma) {
                error = empty_item;
                return false;
            }
            heads_at_comma = out.size();
            after_comma = true;
        } else {
            item += ch;
        }
    }
    if (!flush()) return false;
    if (after_comma && out.size() == heads_at_comma) {
        error = empty_item;
        return false;
    }
    if (out.empty()) {
        error = "no head given; " + range + ".";
        return false;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return true;
}

bool Ablation::has(int layer, int head) const { return std::binary_search(heads.begin(), heads.end(), HeadRef{layer, head}); }

bool Ablation::in_layer(int layer) const {
    for (const HeadRef& h : heads)
        if (h.layer == layer) return true;
    return false;
}

int Ablation::first_layer() const { return heads.empty() ? INT32_MAX : heads.front().layer; }

const Vec* Ablation::replacement(int layer, int head, int head_dim) const {
    const auto it = std::lower_bound(heads.begin(), heads.end(), HeadRef{layer, head});
    if (it == heads.end() || !(*it == HeadRef{layer, head})) return nullptr;
    const size_t i = size_t(it - heads.begin());
    if (mode == AblationMode::mean) {
        if (i >= means.size() || means[i].size() != head_dim)
            throw std::invalid_argument("the mean ablation of head " + to_string(*it) +
                                        " has no mean of its output; compute the means first (compute_ablation_means).");
        return &means[i];
    }
    // One vector of zeros per length, kept for the thread (a deque: earlier ones never move).
    thread_local std::deque<Vec> zeros;
    for (const Vec& z : zeros)
        if (z.size() == head_dim) return &z;
    zeros.push_back(Vec::Zero(head_dim));
    return &zeros.back();
}

int first_difference(const Ablation& a, const Ablation& b) {
    int layers = 0;
    for (const HeadRef& h : a.heads) layers = std::max(layers, h.layer + 1);
    for (const HeadRef& h : b.heads) layers = std::max(layers, h.layer + 1);
    for (int l = 0; l < layers; ++l) {
        std::vector<std::pair<int, const Vec*>> x, y; // (head, mean or nullptr) of layer l
        for (size_t i = 0; i < a.heads.size(); ++i)
            if (a.heads[i].layer == l)
                x.emplace_back(a.heads[i].head, a.mode == AblationMode::mean && i < a.means.size() ? &a.means[i] : nullptr);
        for (size_t i = 0; i < b.heads.size(); ++i)
            if (b.heads[i].layer == l)
                y.emplace_back(b.heads[i].head, b.mode == AblationMode::mean && i < b.means.size() ? &b.means[i] : nullptr);
        if (x.size() != y.size()) return l;
        if (x.empty()) continue;
        if (a.mode != b.mode) return l;
        for (size_t i = 0; i < x.size(); ++i) {
            if (x[i].first != y[i].first) return l;
            const Vec* u = x[i].second;
            const Vec* v = y[i].second;
            if ((u == nullptr) != (v == nullptr)) return l;
            if (u && (u->size() != v->size() || std::memcmp(u->data(), v->data(), size_t(u->size()) * sizeof(float)) != 0)) return l;
        }
    }
    return INT32_MAX;
}

std::vector<std::vector<int>> ablation_probe(const Model& m, const std::vector<int>& text_tokens) {
    if (m.config.arch == Arch::gpt) return {text_tokens};
    constexpr int B = 256; // train.h's accuracy probe
    TorchGenerator g(4321);
    Batch batch;
    make_batch(m.config, g, B, batch);
    std::vector<std::vector<int>> out(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b)
        out[size_t(b)].assign(batch.tok.begin() + int64_t(b) * batch.N, batch.tok.begin() + int64_t(b + 1) * batch.N);
    return out;
}

namespace {

// Head h's output z at row t of a layer's trace: heads[h] when the trace keeps it, else
// att[h] row t times v[h] (a lean GPT trace keeps only those), in float32.
void head_output(const Trace& a, int h, int t, float* z) {
    const int hd = a.head_dim;
    if (size_t(h) < a.heads.size() && a.heads[size_t(h)].rows() == a.T) {
        for (int d = 0; d < hd; ++d) z[d] = a.heads[size_t(h)](t, d);
        return;
    }
    const Mat& p = a.att[size_t(h)];
    const Mat& v = a.v[size_t(h)];
    for (int d = 0; d < hd; ++d) {
        float s = 0.f;
        for (int j = 0; j < a.T; ++j) s += p(t, j) * v(j, d);
        z[d] = s;
    }
}

void run_model(const Model& m, const std::vector<int>& tokens, KernelKind kernel, const Ablation* ab, ModelTrace& tr) {
    if (m.config.arch == Arch::gpt) gpt_forward(m, tokens, kernel, true, tr, ab);
    else model_forward(m, tokens, kernel, tr, ab);
}

} // namespace

void compute_ablation_means(const Model& m, const std::vector<std::vector<int>>& probe, KernelKind kernel, Ablation& ab) {
    const int hd = m.config.head_dim();
    std::vector<std::vector<double>> sums(ab.heads.size(), std::vector<double>(size_t(hd), 0.0));
    int64_t rows = 0;
    ModelTrace tr;
    std::vector<float> z(static_cast<size_t>(hd));
    for (const std::vector<int>& seq : probe) {
        run_model(m, seq, kernel, nullptr, tr);
        for (size_t i = 0; i < ab.heads.size(); ++i) {
            const Trace& a = tr.layers[size_t(ab.heads[i].layer)];
            for (int t = 0; t < a.T; ++t) {
                head_output(a, ab.heads[i].head, t, z.data());
                for (int d = 0; d < hd; ++d) sums[i][size_t(d)] += double(z[size_t(d)]);
            }
        }
        rows += int64_t(seq.size());
    }
    ab.means.assign(ab.heads.size(), Vec::Zero(hd));
    for (size_t i = 0; i < ab.heads.size(); ++i)
        for (int d = 0; d < hd; ++d) ab.means[i][d] = rows > 0 ? float(sums[i][size_t(d)] / double(rows)) : 0.f;
}

void apply_ablation(const Ablation& ab, int layer, const Weights& w, int r0, KernelKind kernel, Trace& tr) {
    if (!ab.in_layer(layer)) return;
    const int T = tr.T, hd = tr.head_dim;
    if (r0 >= T) return;
    for (const HeadRef& h : ab.heads) {
        if (h.layer != layer) continue;
        if (h.head < 0 || h.head >= tr.H)
            throw std::invalid_argument("head " + to_string(h) + " is not in a layer of " + std::to_string(tr.H) + " heads.");
        const Vec& r = *ab.replacement(h.layer, h.head, hd);
        for (int t = r0; t < T; ++t) tr.concat.row(t).segment(h.head * hd, hd) = r; // r is a row (Vec)
    }
    detail::linear_forward_rows(tr.y.data(), tr.concat.data(), w.c_proj.weight, w.c_proj.bias, r0, T, kernel);
    tr.update_cache.p = -1; // its partial sums are of the heads' own outputs
}

namespace {

// log(sum exp(row)) - row[target] in double: one cross-entropy term.
double cross_entropy_row(const float* row, int n, int target) {
    float mx = row[0];
    for (int k = 1; k < n; ++k) mx = std::max(mx, row[k]);
    double s = 0;
    for (int k = 0; k < n; ++k) s += std::exp(double(row[k]) - double(mx));
    return std::log(s) + double(mx) - double(row[target]);
}

int argmax_of(const float* row, int n) {
    int best = 0;
    for (int k = 1; k < n; ++k)
        if (row[k] > row[best]) best = k;
    return best;
}

} // namespace

TaskMetrics task_metrics(const Model& m, KernelKind kernel, const Ablation* ab) {
    const ModelConfig& c = m.config;
    if (c.arch != Arch::toy) throw std::invalid_argument("task_metrics is for the toy models; a GPT model has next_token_loss.");
    constexpr int B = 256;
    TorchGenerator g(4321);
    Batch batch;
    make_batch(c, g, B, batch);
    const int N = batch.N;
    double loss_prev = 0, loss_dup = 0, loss_next = 0;
    int64_t hit_prev = 0, hit_dup = 0, hit_next = 0, n_next = 0;
    ModelTrace tr;
    std::vector<int> seq(static_cast<size_t>(N));
    for (int b = 0; b < B; ++b) {
        const size_t base = size_t(b) * size_t(N);
        std::copy(batch.tok.begin() + int64_t(base), batch.tok.begin() + int64_t(base) + N, seq.begin());
        model_forward(m, seq, kernel, tr, ab);
        for (int t = 1; t < N; ++t) { // BOS predicts nothing
            if (c.has_prev_head()) {
                const float* row = tr.logits_prev.data() + int64_t(t) * tr.logits_prev.cols();
                loss_prev += cross_entropy_row(row, int(tr.logits_prev.cols()), batch.prev[base + size_t(t)]);
                hit_prev += argmax_of(row, int(tr.logits_prev.cols())) == batch.prev[base + size_t(t)];
            }
            if (c.has_dup_head()) {
                const float* row = tr.logits_dup.data() + int64_t(t) * tr.logits_dup.cols();
                loss_dup += cross_entropy_row(row, 2, batch.dup[base + size_t(t)]);
                hit_dup += argmax_of(row, 2) == batch.dup[base + size_t(t)];
            }
        }
        if (c.has_lm_head())
            for (int t = 0; t + 1 < N; ++t) {
                if (!batch.where[base + size_t(t)]) continue;
                const float* row = tr.logits_next.data() + int64_t(t) * tr.logits_next.cols();
                const int target = seq[size_t(t + 1)];
                loss_next += cross_entropy_row(row, int(tr.logits_next.cols()), target);
                hit_next += argmax_of(row, int(tr.logits_next.cols())) == target;
                ++n_next;
            }
    }
    // The recipe's loss_of adds each task's mean; its accuracy is a float32 mean of 0/1 values.
    TaskMetrics out;
    const double body = double(B) * double(N - 1);
    const float body_f = float(B) * float(N - 1);
    if (c.has_prev_head()) {
        out.loss += loss_prev / body;
        out.accuracy.emplace_back("prev", double(float(hit_prev) / body_f));
    }
    if (c.has_dup_head()) {
        out.loss += loss_dup / body;
        out.accuracy.emplace_back("dup", double(float(hit_dup) / body_f));
    }
    if (c.has_lm_head()) {
        out.loss += n_next > 0 ? loss_next / double(n_next) : NAN;
        out.accuracy.emplace_back("next", n_next > 0 ? double(float(hit_next) / float(n_next)) : NAN);
    }
    return out;
}

double next_token_loss(const ModelTrace& tr) {
    const int T = int(tr.tokens.size());
    if (tr.compact) { // the forward's terms, summed as below
        if (T < 2 || tr.next_nll.size() != size_t(T - 1)) return NAN;
        double s = 0;
        for (double v : tr.next_nll) s += v;
        return s / double(T - 1);
    }
    if (T < 2 || tr.logits.rows() != T) return NAN;
    // Per row detail::nll_row: float exp, summed in double (GPT-2's 50257 logits a row would
    // take a while in double exp).
    double s = 0;
    for (int t = 0; t + 1 < T; ++t)
        s += detail::nll_row(tr.logits.data() + int64_t(t) * tr.logits.cols(), int(tr.logits.cols()), tr.tokens[size_t(t + 1)]);
    return s / double(T - 1);
}

float LogitAttribution::sum() const {
    double s = double(embed) + double(pos_embed) + double(ln_bias);
    for (const std::vector<float>& l : heads)
        for (float v : l) s += double(v);
    for (float v : attn_bias) s += double(v);
    for (float v : mlp) s += double(v);
    return float(s);
}

const Mat& dla_unembedding(const Model& m) {
    const ModelConfig& c = m.config;
    if (c.arch == Arch::gpt) return m.wte;
    if (c.has_lm_head()) return m.lm_head;
    if (c.has_prev_head()) return m.head_prev;
    return m.head_dup;
}

namespace {

void check_dla_args(const Model& m, const ModelTrace& tr, int pos, int token) {
    const Mat& U = dla_unembedding(m);
    const int T = int(tr.tokens.size());
    if (pos < 0 || pos >= T)
        throw std::invalid_argument("position " + std::to_string(pos) + " is outside the " + std::to_string(T) +
                                    " tokens; give 0 to " + std::to_string(T - 1) + ".");
    if (token < 0 || token >= U.rows())
        throw std::invalid_argument("token " + std::to_string(token) + " is not one of the " + std::to_string(U.rows()) +
                                    " outputs of the model's unembedding; give 0 to " + std::to_string(U.rows() - 1) + ".");
    if (int(tr.layers.size()) != int(m.h.size()) || tr.h_out.rows() != T)
        throw std::invalid_argument("the trace was not made by this model's forward; run the forward first.");
}

// u: the direction a component is read along. Toy: U[token]. GPT: ln_f frozen at this
// position's scale, so a component c gives ((c - mean c) / sigma * w) . wte[token] =
// (c - mean c) . u with u = w * wte[token] / sigma. Also fills out's logit, scale and ln_bias.
std::vector<double> dla_direction(const Model& m, const ModelTrace& tr, LogitAttribution& out) {
    const Mat& U = dla_unembedding(m);
    const int C = m.config.n_embd, pos = out.pos, token = out.token;
    std::vector<double> u(static_cast<size_t>(C));
    for (int k = 0; k < C; ++k) u[size_t(k)] = double(U(token, k));
    if (m.config.arch != Arch::gpt) {
        out.logit = head_logits(m, tr)(pos, token);
        return u;
    }
    double mean = 0, var = 0;
    for (int k = 0; k < C; ++k) mean += double(tr.h_out(pos, k));
    mean /= C;
    for (int k = 0; k < C; ++k) var += (double(tr.h_out(pos, k)) - mean) * (double(tr.h_out(pos, k)) - mean);
    var /= C;
    const double sigma = std::sqrt(var + 1e-5);
    out.scale = float(sigma);
    for (int k = 0; k < C; ++k) u[size_t(k)] *= (m.ln_f.weight.size() == C ? double(m.ln_f.weight[k]) : 1.0) / sigma;
    if (m.ln_f.bias.size() == C) {
        double b = 0;
        for (int k = 0; k < C; ++k) b += double(m.ln_f.bias[k]) * double(U(token, k));
        out.ln_bias = float(b);
    }
    if (tr.compact) { // no logits kept: the row the forward made
        Mat row;
        gpt_logits_rows(m, tr, pos, pos + 1, row);
        out.logit = row(0, token);
    } else {
        out.logit = tr.logits(pos, token);
    }
    return u;
}

// A component's term along u: centred first for a GPT (LayerNorm removes the mean).
struct DlaTerm {
    std::vector<double> u, comp;
    bool gpt;
    float operator()() const {
        double mean = 0;
        if (gpt) {
            for (double v : comp) mean += v;
            mean /= double(comp.size());
        }
        double s = 0;
        for (size_t k = 0; k < comp.size(); ++k) s += (comp[k] - mean) * u[k];
        return float(s);
    }
};

// Layer l's heads (each one's part of y, W_proj's columns h*hd.. times z), its attention bias
// and its MLP, at out.pos.
void dla_layer(const Model& m, const ModelTrace& tr, int l, const Ablation* ab, DlaTerm& term, LogitAttribution& out) {
    const ModelConfig& c = m.config;
    const int C = c.n_embd, H = c.n_head, hd = c.head_dim(), pos = out.pos, T = int(tr.tokens.size());
    std::vector<double>& comp = term.comp;
    std::vector<float> z(static_cast<size_t>(hd));
    std::vector<double> attn(static_cast<size_t>(C), 0.0);
    const Trace& a = tr.layers[size_t(l)];
    const Weights& w = m.h[size_t(l)].attn;
    for (int h = 0; h < H; ++h) {
        const Vec* r = ab ? ab->replacement(l, h, hd) : nullptr;
        if (r) for (int d = 0; d < hd; ++d) z[size_t(d)] = (*r)[d];
        else head_output(a, h, pos, z.data());
        for (int k = 0; k < C; ++k) {
            double s = 0;
            for (int d = 0; d < hd; ++d) s += double(w.c_proj.weight(k, h * hd + d)) * double(z[size_t(d)]);
            comp[size_t(k)] = s;
            attn[size_t(k)] += s;
        }
        out.heads[size_t(l)][size_t(h)] = term();
    }
    if (!term.gpt) return;
    if (w.c_proj.bias.size() == C) {
        for (int k = 0; k < C; ++k) {
            comp[size_t(k)] = double(w.c_proj.bias[k]);
            attn[size_t(k)] += double(w.c_proj.bias[k]);
        }
        out.attn_bias[size_t(l)] = term();
    }
    // The MLP's output: the trace's own, or (lean) what resid_post adds beyond the
    // block's input and its attention.
    const BlockTrace& bt = tr.blocks[size_t(l)];
    if (bt.mlp.rows() == T) {
        for (int k = 0; k < C; ++k) comp[size_t(k)] = double(bt.mlp(pos, k));
    } else {
        const Mat& in = gpt_resid_pre(tr, l);
        for (int k = 0; k < C; ++k) comp[size_t(k)] = double(bt.resid_post(pos, k)) - double(in(pos, k)) - attn[size_t(k)];
    }
    out.mlp[size_t(l)] = term();
}

} // namespace

LogitAttribution logit_attribution(const Model& m, const ModelTrace& tr, int pos, int token, const Ablation* ab) {
    const ModelConfig& c = m.config;
    const bool gpt = c.arch == Arch::gpt;
    const int C = c.n_embd, H = c.n_head, L = int(m.h.size());
    check_dla_args(m, tr, pos, token);
    LogitAttribution out;
    out.pos = pos;
    out.token = token;
    DlaTerm term{dla_direction(m, tr, out), std::vector<double>(static_cast<size_t>(C)), gpt};
    const int tok = tr.tokens[size_t(pos)];
    for (int k = 0; k < C; ++k) term.comp[size_t(k)] = double(m.wte(tok, k));
    out.embed = term();
    for (int k = 0; k < C; ++k) term.comp[size_t(k)] = double(m.wpe(pos, k));
    out.pos_embed = term();
    out.heads.assign(size_t(L), std::vector<float>(size_t(H), 0.f));
    if (gpt) {
        out.mlp.assign(size_t(L), 0.f);
        if (c.bias) out.attn_bias.assign(size_t(L), 0.f);
    }
    for (int l = 0; l < L; ++l) dla_layer(m, tr, l, ab, term, out);
    return out;
}

} // namespace attnviz
