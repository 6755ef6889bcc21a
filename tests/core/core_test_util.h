// core_test_util.h: reading the PyTorch reference files and comparing tensors, for the
// core tests. A comparison either demands the same bits (tolerance 0) or a tolerance
// relative to max(1, |expected|); NaN matches only NaN, infinities only themselves.
#pragma once
#include "attention.h"
#include "experiment.h"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace attnviz::test {

using nlohmann::json;

inline json load_json(const std::string& name) {
    std::ifstream in(std::string(ATTNVIZ_TEST_DATA) + "/" + name);
    if (!in) throw std::runtime_error("cannot open test data " + name);
    return json::parse(in);
}

// The lesson's example followed by every public case.
inline std::vector<json> reference_cases() {
    std::vector<json> cases{load_json("lesson_example.json")};
    const json file = load_json("cases_public.json");
    for (const json& c : file.at("cases")) cases.push_back(c);
    return cases;
}

inline Config case_config(const json& j) {
    Config c;
    c.seed = j.at("seed").get<uint64_t>();
    c.n_embd = j.at("n_embd").get<int>();
    c.n_head = j.at("n_head").get<int>();
    c.seq_len = j.at("T").get<int>();
    return c;
}

// Nested JSON arrays in row-major order; null becomes `null_value` (NaN or -inf).
inline void flatten(const json& j, float null_value, std::vector<float>& out) {
    if (j.is_array()) {
        for (const json& e : j) flatten(e, null_value, out);
    } else if (j.is_null()) {
        out.push_back(null_value);
    } else {
        out.push_back(float(j.get<double>())); // 9 digits: the double rounds back to the float
    }
}

inline std::vector<float> flat(const json& j, float null_value = NAN) {
    std::vector<float> v;
    flatten(j, null_value, v);
    return v;
}

inline std::vector<float> flat(const Mat& m) { return std::vector<float>(m.data(), m.data() + m.size()); }
inline std::vector<float> flat(const Vec& m) { return std::vector<float>(m.data(), m.data() + m.size()); }
inline std::vector<float> flat(const PerHead& ph) {
    std::vector<float> v;
    for (const Mat& m : ph) v.insert(v.end(), m.data(), m.data() + m.size());
    return v;
}
inline std::vector<float> flat(const std::vector<float>& v) { return v; }

inline uint32_t bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

inline bool close_enough(float actual, float expected, float tol) {
    if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
    if (std::isinf(expected) || std::isinf(actual)) return actual == expected;
    if (tol == 0.f) return actual == expected; // bits, but +0 == -0 (JSON "-0" reads as 0)
    return std::fabs(actual - expected) <= tol * std::max(1.f, std::fabs(expected));
}

// Reports the first few mismatches with their index and both values' bits.
inline ::testing::AssertionResult same_values(const std::vector<float>& actual, const std::vector<float>& expected,
                                              float tol = 0.f) {
    if (actual.size() != expected.size())
        return ::testing::AssertionFailure() << "size " << actual.size() << " != expected " << expected.size();
    std::ostringstream msg;
    int bad = 0;
    float worst = 0.f;
    for (size_t i = 0; i < actual.size(); ++i) {
        if (close_enough(actual[i], expected[i], tol)) continue;
        if (bad < 5)
            msg << "\n  [" << i << "] " << std::setprecision(9) << actual[i] << " (0x" << std::hex << bits(actual[i])
                << ") != expected " << expected[i] << " (0x" << bits(expected[i]) << std::dec << ")";
        if (std::isfinite(actual[i]) && std::isfinite(expected[i]))
            worst = std::max(worst, std::fabs(actual[i] - expected[i]));
        ++bad;
    }
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << bad << " of " << actual.size() << " values differ (tolerance " << tol
                                         << ", largest finite difference " << worst << "):" << msg.str();
}

template <class A, class B>
::testing::AssertionResult same(const A& actual, const B& expected, float tol = 0.f) {
    return same_values(flat(actual), flat(expected), tol);
}

// Every field of two traces.
inline void expect_same_trace(const Trace& a, const Trace& b, float tol, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_TRUE(same(a.x, b.x, tol)) << "x";
    EXPECT_TRUE(same(a.qkv, b.qkv, tol)) << "qkv";
    EXPECT_TRUE(same(a.q, b.q, tol)) << "q";
    EXPECT_TRUE(same(a.k, b.k, tol)) << "k";
    EXPECT_TRUE(same(a.v, b.v, tol)) << "v";
    EXPECT_TRUE(same(a.raw_scores, b.raw_scores, tol)) << "raw_scores";
    EXPECT_TRUE(same(a.att, b.att, tol)) << "probs";
    EXPECT_TRUE(same(a.heads, b.heads, tol)) << "heads";
    EXPECT_TRUE(same(a.concat, b.concat, tol)) << "concat";
    EXPECT_TRUE(same(a.y, b.y, tol)) << "y";
}

// A random configuration for the invariant tests: C from divisors-friendly sizes, H
// dividing C, T in [1, max_T], any seed, the given mask and scale.
inline Config random_config(std::mt19937& rng, int max_T, int max_C, MaskMode mask, ScaleMode scale) {
    Config c;
    c.n_embd = std::uniform_int_distribution<int>(1, max_C)(rng);
    std::vector<int> d = divisors(c.n_embd);
    c.n_head = d[std::uniform_int_distribution<size_t>(0, d.size() - 1)(rng)];
    c.seq_len = std::uniform_int_distribution<int>(1, max_T)(rng);
    c.seed = std::uniform_int_distribution<uint64_t>(0, uint64_t(1) << 40)(rng);
    c.mask = mask;
    c.scale = scale;
    return c;
}

inline std::string describe(const Config& c) {
    std::ostringstream o;
    o << "T=" << c.seq_len << " C=" << c.n_embd << " H=" << c.n_head << " seed=" << c.seed
      << " mask=" << to_string(c.mask) << " scale=" << to_string(c.scale);
    return o.str();
}

constexpr MaskMode all_masks[] = {MaskMode::causal, MaskMode::none, MaskMode::off_by_one};
constexpr ScaleMode all_scales[] = {ScaleMode::head_dim, ScaleMode::n_embd, ScaleMode::none};
constexpr KernelKind all_kernels[] = {KernelKind::reference, KernelKind::fast};

} // namespace attnviz::test
