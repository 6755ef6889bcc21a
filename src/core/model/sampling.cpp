// sampling.cpp: the next token from a row of logits; see sampling.h and docs/numerics.md,
// "Sampling". The warpers run in double on copies of the logits, so the cut of top-k and
// top-p and the probabilities do not depend on float32 rounding of the temperature's divide.
#include "sampling.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace attnviz {

namespace {

constexpr double neg_inf = -std::numeric_limits<double>::infinity();

// A real number as a reader typed it: 0.5, 2, 1e-09, nan.
std::string number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

// NaN or +inf logits have no softmax; every logit -inf has none either.
void check_logits(const float* logits, int V) {
    if (V < 1) throw std::invalid_argument("a row of " + std::to_string(V) + " logits has no token to choose; give 1 or more.");
    bool any_finite = false;
    for (int i = 0; i < V; ++i) {
        if (std::isnan(logits[i]) || logits[i] == std::numeric_limits<float>::infinity())
            throw std::invalid_argument("logit " + std::to_string(i) + " is " + number(logits[i]) +
                                        ", which has no probability; the model's logits must be finite.");
        any_finite |= std::isfinite(logits[i]);
    }
    if (!any_finite) throw std::invalid_argument("every logit is -inf, so no token has a probability; check the model.");
}

// probs = softmax(scores) in double (the largest score taken out first), then float32.
void softmax_into(const std::vector<double>& scores, std::vector<float>& probs) {
    const double mx = *std::max_element(scores.begin(), scores.end());
    double sum = 0.0;
    std::vector<double> e(scores.size());
    for (size_t i = 0; i < scores.size(); ++i) {
        e[i] = scores[i] == neg_inf ? 0.0 : std::exp(scores[i] - mx);
        sum += e[i];
    }
    probs.resize(scores.size());
    for (size_t i = 0; i < scores.size(); ++i) probs[i] = float(e[i] / sum);
}

// TopKLogitsWarper: scores below the k-th largest -> -inf; ties at the k-th are kept.
void top_k_filter(int k, std::vector<double>& s) {
    const int V = int(s.size());
    if (k <= 0 || k >= V) return;
    std::vector<double> sorted = s;
    std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<double>());
    const double kth = sorted[size_t(k - 1)];
    for (double& x : s)
        if (x < kth) x = neg_inf;
}

// TopPLogitsWarper: sort ascending (a stable sort: among equal scores the lower id comes
// first, so it is cut first), cumulative softmax, cut those whose cumulative probability is
// <= 1 - p; the largest is always kept (min_tokens_to_keep 1).
void top_p_filter(double p, std::vector<double>& s) {
    if (p >= 1.0) return; // Hugging Face adds no warper at top_p 1
    const size_t V = s.size();
    std::vector<int> order(V);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return s[size_t(a)] < s[size_t(b)]; });
    std::vector<double> sorted(V);
    for (size_t i = 0; i < V; ++i) sorted[i] = s[size_t(order[i])];
    const double mx = sorted.back();
    double sum = 0.0;
    for (double x : sorted) sum += x == neg_inf ? 0.0 : std::exp(x - mx);
    double cum = 0.0;
    for (size_t i = 0; i + 1 < V; ++i) {
        cum += (sorted[i] == neg_inf ? 0.0 : std::exp(sorted[i] - mx)) / sum;
        if (cum <= 1.0 - p) s[size_t(order[i])] = neg_inf;
    }
}

} // namespace

std::string validate(const SamplingOptions& o) {
    if (o.greedy) return ""; // greedy reads none of the sampling options
    if (!(o.temperature > 0.0) || !std::isfinite(o.temperature))
        return "temperature " + number(o.temperature) +
               " is not a finite number above 0; give one above 0 (1 leaves the logits as they are), or use greedy "
               "decoding (--greedy) for the most likely token at every step.";
    if (o.top_k < 0)
        return "top-k " + std::to_string(o.top_k) + " is not a number of tokens; give 1 or more.";
    if (!(o.top_p > 0.0 && o.top_p <= 1.0))
        return "top-p " + number(o.top_p) +
               " is outside (0, 1]; give a probability above 0 and at most 1 (1 keeps every token).";
    return "";
}

int argmax_token(const float* logits, int V) {
    int best = 0;
    for (int i = 1; i < V; ++i)
        if (logits[i] > logits[best]) best = i; // strictly greater: ties stay with the lowest id
    return best;
}

void sampling_probs(const float* logits, int V, const SamplingOptions& o, std::vector<float>& probs) {
    check_logits(logits, V);
    std::vector<double> s(static_cast<size_t>(V));
    if (o.greedy) {
        for (int i = 0; i < V; ++i) s[size_t(i)] = logits[i];
        softmax_into(s, probs);
        return;
    }
    const std::string error = validate(o);
    if (!error.empty()) throw std::invalid_argument(error);
    // TemperatureLogitsWarper, with the largest logit taken out first: the same softmax and
    // the same cuts, and a tiny temperature cannot overflow a score to +inf
    const double mx = *std::max_element(logits, logits + V);
    for (int i = 0; i < V; ++i) s[size_t(i)] = (double(logits[i]) - mx) / o.temperature;
    top_k_filter(o.top_k, s);
    top_p_filter(o.top_p, s);
    softmax_into(s, probs);
}

Sampler::Sampler(const SamplingOptions& o) : o_(o), g_(o.seed) {}

int Sampler::next(const float* logits, int V, float* prob, std::vector<float>* probs) {
    sampling_probs(logits, V, o_, probs_);
    int token;
    if (o_.greedy) {
        token = argmax_token(logits, V);
    } else {
        // torch.rand((), dtype=torch.float64): the low 53 bits of one 64-bit draw (two 32-bit
        // draws, the first high) times 2^-53, in [0, 1). It is scaled by the float32
        // probabilities' own sum, so the last kept token is always reachable.
        const double u = double(g_.next_u64() & ((uint64_t(1) << 53) - 1)) * 0x1p-53;
        double total = 0.0;
        for (float p : probs_) total += p;
        const double target = u * total;
        double cum = 0.0;
        token = -1;
        for (int i = 0; i < V; ++i) {
            if (probs_[size_t(i)] == 0.f) continue;
            cum += probs_[size_t(i)];
            token = i;
            if (cum > target) break;
        }
    }
    if (prob) *prob = probs_[size_t(token)];
    if (probs) *probs = probs_;
    return token;
}

} // namespace attnviz
