// test_sampling.cpp: the next token from a row of logits (sampling.h). sampling_probs against
// Hugging Face's warpers written out again here, the draws against it by a chi-square test,
// the seed's determinism, greedy's ties and the options' messages.
#include "sampling.h"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <fstream>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace attnviz {
namespace {

// Twelve logits with two ties (ids 2 and 7 at 1.5, ids 4 and 9 at 0.25) and a -inf.
const std::vector<float> logits = {0.5f, -1.0f, 1.5f, 3.0f, 0.25f, 2.25f, -3.0f, 1.5f, 0.75f, 0.25f, -INFINITY, 2.0f};
const int V = int(logits.size());

SamplingOptions sampling(double temperature, int top_k, double top_p, uint64_t seed = 0) {
    SamplingOptions o;
    o.greedy = false;
    o.temperature = temperature;
    o.top_k = top_k;
    o.top_p = top_p;
    o.seed = seed;
    return o;
}

// softmax of logits / temperature over the ids in `kept`, 0 elsewhere.
std::vector<double> softmax_over(const std::vector<int>& kept, double temperature) {
    std::vector<double> p(static_cast<size_t>(V), 0.0);
    double mx = -INFINITY, sum = 0.0;
    for (int i : kept) mx = std::max(mx, double(logits[size_t(i)]) / temperature);
    for (int i : kept) sum += std::exp(double(logits[size_t(i)]) / temperature - mx);
    for (int i : kept) p[size_t(i)] = std::exp(double(logits[size_t(i)]) / temperature - mx) / sum;
    return p;
}

// The ids by logit, largest first (ties: the lower id first).
std::vector<int> by_logit() {
    std::vector<int> ids(static_cast<size_t>(V));
    std::iota(ids.begin(), ids.end(), 0);
    std::stable_sort(ids.begin(), ids.end(), [](int a, int b) { return logits[size_t(a)] > logits[size_t(b)]; });
    return ids;
}

TEST(Sampling, ProbsFollowTheFormula) {
    std::vector<float> probs;
    // temperature alone: softmax(logits / T) over every token
    std::vector<int> all(static_cast<size_t>(V));
    std::iota(all.begin(), all.end(), 0);
    for (double t : {0.5, 1.0, 2.0}) {
        sampling_probs(logits.data(), V, sampling(t, 0, 1.0), probs);
        const std::vector<double> want = softmax_over(all, t);
        for (int i = 0; i < V; ++i) EXPECT_NEAR(probs[size_t(i)], want[size_t(i)], 1e-7) << "T " << t << " id " << i;
    }
    // top-k 1 keeps the largest alone, top-k 5 exactly the five largest (3, 5, 11, 2, 7)
    sampling_probs(logits.data(), V, sampling(1.0, 1, 1.0), probs);
    for (int i = 0; i < V; ++i) EXPECT_EQ(probs[size_t(i)], i == 3 ? 1.f : 0.f);
    sampling_probs(logits.data(), V, sampling(1.0, 5, 1.0), probs);
    const std::vector<int> ids = by_logit();
    const std::vector<int> five(ids.begin(), ids.begin() + 5);
    const std::vector<double> want5 = softmax_over(five, 1.0);
    for (int i = 0; i < V; ++i) EXPECT_NEAR(probs[size_t(i)], want5[size_t(i)], 1e-7);
    EXPECT_EQ(std::count_if(probs.begin(), probs.end(), [](float p) { return p > 0.f; }), 5);
    // top-k 4 ends at a tie (ids 2 and 7 at 1.5): both are kept, as TopKLogitsWarper keeps them
    sampling_probs(logits.data(), V, sampling(1.0, 4, 1.0), probs);
    EXPECT_GT(probs[2], 0.f);
    EXPECT_GT(probs[7], 0.f);
    EXPECT_EQ(std::count_if(probs.begin(), probs.end(), [](float p) { return p > 0.f; }), 5);
    // top-p: the smallest set of the largest whose probability reaches p
    for (double p : {0.5, 0.9, 0.3, 0.99}) {
        const std::vector<double> full = softmax_over(all, 1.0);
        std::vector<int> kept;
        double mass = 0.0;
        for (int i : ids) {
            kept.push_back(i);
            mass += full[size_t(i)];
            if (mass >= p) break;
        }
        sampling_probs(logits.data(), V, sampling(1.0, 0, p), probs);
        const std::vector<double> want = softmax_over(kept, 1.0);
        for (int i = 0; i < V; ++i) EXPECT_NEAR(probs[size_t(i)], want[size_t(i)], 1e-7) << "p " << p << " id " << i;
    }
    // a temperature so small that the logits divided by it overflow: the largest alone
    sampling_probs(logits.data(), V, sampling(1e-308, 0, 1.0), probs);
    for (int i = 0; i < V; ++i) EXPECT_EQ(probs[size_t(i)], i == 3 ? 1.f : 0.f) << "id " << i;
    // a very small p still keeps the largest
    sampling_probs(logits.data(), V, sampling(1.0, 0, 1e-9), probs);
    EXPECT_EQ(probs[3], 1.f);
    // greedy reports the plain softmax
    SamplingOptions greedy;
    sampling_probs(logits.data(), V, greedy, probs);
    const std::vector<double> plain = softmax_over(all, 1.0);
    for (int i = 0; i < V; ++i) EXPECT_NEAR(probs[size_t(i)], plain[size_t(i)], 1e-7);
}

TEST(Sampling, TheSameSeedGivesTheSameTokensAndAnotherSeedOthers) {
    for (const SamplingOptions& o : {sampling(1.0, 0, 1.0, 5), sampling(0.7, 5, 0.9, 5)}) {
        Sampler a(o), b(o);
        std::vector<int> ta, tb;
        for (int s = 0; s < 200; ++s) {
            ta.push_back(a.next(logits.data(), V));
            tb.push_back(b.next(logits.data(), V));
        }
        EXPECT_EQ(ta, tb);
    }
    Sampler a(sampling(1.0, 0, 1.0, 5)), c(sampling(1.0, 0, 1.0, 6));
    std::vector<int> ta, tc;
    for (int s = 0; s < 200; ++s) {
        ta.push_back(a.next(logits.data(), V));
        tc.push_back(c.next(logits.data(), V));
    }
    EXPECT_NE(ta, tc);
}

TEST(Sampling, GreedyTakesTheLowestIdOfATie) {
    const std::vector<float> tied = {0.f, 2.f, -1.f, 2.f, 2.f};
    EXPECT_EQ(argmax_token(tied.data(), 5), 1);
    Sampler s(SamplingOptions{});
    float prob = 0.f;
    EXPECT_EQ(s.next(tied.data(), 5, &prob), 1);
    const double want = std::exp(0.0) / (3 * std::exp(0.0) + std::exp(-2.0) + std::exp(-3.0));
    EXPECT_NEAR(prob, want, 1e-7);
    EXPECT_EQ(argmax_token(logits.data(), V), 3);
}

TEST(Sampling, ValidateNamesTheValue) {
    EXPECT_EQ(validate(SamplingOptions{}), "");
    EXPECT_EQ(validate(sampling(0.5, 5, 0.9)), "");
    EXPECT_EQ(validate(sampling(1.0, 0, 1.0)), "");
    for (double t : {0.0, -1.0, double(NAN), double(INFINITY)}) {
        const std::string e = validate(sampling(t, 0, 1.0));
        EXPECT_NE(e.find("temperature"), std::string::npos) << t;
        EXPECT_NE(e.find("--greedy"), std::string::npos) << t;
    }
    EXPECT_NE(validate(sampling(1.0, -1, 1.0)).find("top-k -1"), std::string::npos);
    EXPECT_NE(validate(sampling(1.0, -1, 1.0)).find("1 or more"), std::string::npos);
    for (double p : {0.0, -0.5, 1.5, double(NAN)}) EXPECT_NE(validate(sampling(1.0, 0, p)).find("top-p"), std::string::npos);
    std::vector<float> probs;
    EXPECT_THROW(sampling_probs(logits.data(), V, sampling(0.0, 0, 1.0), probs), std::invalid_argument);
    const std::vector<float> bad = {0.f, NAN, 1.f};
    EXPECT_THROW(sampling_probs(bad.data(), 3, SamplingOptions{}, probs), std::invalid_argument);
}


// Pearson's chi-square of `counts` against n * p over the tokens p keeps; tokens p cuts must
// never be drawn. Returns false (and says why) when the statistic passes the 0.1% critical
// value (Wilson and Hilferty's approximation of the chi-square quantile).
bool chi_square_passes(const std::vector<int64_t>& counts, const std::vector<double>& p, int64_t n) {
    double stat = 0.0;
    int categories = 0;
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] == 0.0) {
            if (counts[i] != 0) {
                ADD_FAILURE() << "token " << i << " has probability 0 but was drawn " << counts[i] << " times";
                return false;
            }
            continue;
        }
        const double e = double(n) * p[i];
        stat += (double(counts[i]) - e) * (double(counts[i]) - e) / e;
        ++categories;
    }
    if (categories == 1) return true; // one token: every draw is it (checked above)
    const double df = categories - 1, z = 3.090232; // the 99.9% point of N(0, 1)
    const double critical = df * std::pow(1.0 - 2.0 / (9.0 * df) + z * std::sqrt(2.0 / (9.0 * df)), 3.0);
    if (stat > critical) ADD_FAILURE() << "chi-square " << stat << " over " << df << " degrees of freedom passes " << critical;
    return stat <= critical;
}

TEST(Sampling, DrawsFollowTheDistributionByChiSquare) {
    const std::vector<int> ids = by_logit();
    std::vector<int> all(static_cast<size_t>(V));
    std::iota(all.begin(), all.end(), 0);
    const std::vector<double> full = softmax_over(all, 1.0);
    // top-p's kept set from the formula: the largest first until their probability reaches p
    auto nucleus = [&](double p) {
        std::vector<int> kept;
        double mass = 0.0;
        for (int i : ids) {
            kept.push_back(i);
            mass += full[size_t(i)];
            if (mass >= p) break;
        }
        return kept;
    };
    struct Setting {
        SamplingOptions o;
        std::vector<double> want;
    };
    const std::vector<Setting> settings = {
        {sampling(0.5, 0, 1.0, 1), softmax_over(all, 0.5)},
        {sampling(1.0, 0, 1.0, 2), softmax_over(all, 1.0)},
        {sampling(2.0, 0, 1.0, 3), softmax_over(all, 2.0)},
        {sampling(1.0, 1, 1.0, 4), softmax_over({ids[0]}, 1.0)},
        {sampling(1.0, 5, 1.0, 5), softmax_over(std::vector<int>(ids.begin(), ids.begin() + 5), 1.0)},
        {sampling(1.0, 0, 0.5, 6), softmax_over(nucleus(0.5), 1.0)},
        {sampling(1.0, 0, 0.9, 7), softmax_over(nucleus(0.9), 1.0)},
    };
    const int64_t n = 100000;
    for (const Setting& st : settings) {
        SCOPED_TRACE("temperature " + std::to_string(st.o.temperature) + " top-k " + std::to_string(st.o.top_k) +
                     " top-p " + std::to_string(st.o.top_p));
        Sampler sampler(st.o);
        std::vector<int64_t> counts(static_cast<size_t>(V), 0);
        std::vector<float> probs;
        float prob = 0.f;
        for (int64_t k = 0; k < n; ++k) {
            const int t = sampler.next(logits.data(), V, &prob, k == 0 ? &probs : nullptr);
            ++counts[size_t(t)];
            if (k == 0) {
                EXPECT_EQ(prob, probs[size_t(t)]);
            }
        }
        // the distribution drawn from is the formula's
        for (int i = 0; i < V; ++i) EXPECT_NEAR(probs[size_t(i)], st.want[size_t(i)], 1e-7) << "token " << i;
        EXPECT_TRUE(chi_square_passes(counts, st.want, n));
    }
}

TEST(Sampling, TopPKeepsTheSetThatReachesPExactly) {
    // four tokens of 1/4: three reach p = 3/4 exactly, so the first in ascending order (equal
    // scores: the lowest id) is cut, as TopPLogitsWarper cuts cumulative <= 1 - p
    const std::vector<float> flat = {0.f, 0.f, 0.f, 0.f};
    std::vector<float> probs;
    sampling_probs(flat.data(), 4, sampling(1.0, 0, 0.75), probs);
    EXPECT_EQ(probs, (std::vector<float>{0.f, 1.f / 3, 1.f / 3, 1.f / 3}));
    sampling_probs(flat.data(), 4, sampling(1.0, 0, 0.76), probs);
    EXPECT_EQ(probs, (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f}));
}

// The uniform number of a draw is torch.rand((), dtype=torch.float64)'s from the same seed
// (tests/data/generate/reference.json): the low 53 bits of next_u64, times 2^-53.
TEST(Sampling, TheDrawsUniformIsTorchsFloat64Rand) {
    std::ifstream f(std::string(ATTNVIZ_TEST_DATA) + "/generate/reference.json");
    const nlohmann::json ref = nlohmann::json::parse(f);
    ASSERT_FALSE(ref["uniform_doubles"].empty());
    for (const auto& [seed, values] : ref["uniform_doubles"].items()) {
        TorchGenerator g(std::stoull(seed));
        for (const auto& v : values) {
            const double u = double(g.next_u64() & ((uint64_t(1) << 53) - 1)) * 0x1p-53;
            EXPECT_EQ(u, v.get<double>()) << "seed " << seed;
        }
    }
    // and a Sampler's first draw uses that u: with two tokens of probability 1/2, token 1
    // exactly when u >= 1/2
    const std::vector<float> even = {0.f, 0.f};
    for (const auto& [seed, values] : ref["uniform_doubles"].items()) {
        Sampler s(sampling(1.0, 0, 1.0, std::stoull(seed)));
        EXPECT_EQ(s.next(even.data(), 2), values[0].get<double>() >= 0.5 ? 1 : 0) << "seed " << seed;
    }
}

} // namespace
} // namespace attnviz
