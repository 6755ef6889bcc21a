// test_reference_large.cpp: the larger PyTorch cases (tests/data/cases_large.json, written by
// scripts/gen_reference_large.py): T up to 300, so the softmax's 8-lane sum runs over many
// full groups; head_dim 16 to 64, so head_row's 16-channel blocks are filled; C up to 256;
// biases on qkv and proj; the no-mask and off-by-one masks. The reference kernel must give
// torch's bits (y1, y2 and softmax rows value by value, the other intermediates by hash),
// the fast kernel torch's numbers within 1e-5, and update_row torch's y2 on both.
#include "core_test_util.h"
#include "rng.h"
#include <cstdio>

namespace attnviz::test {
namespace {

constexpr float fast_tol = 1e-5f;

// Throws when the file holds no case, so that no test here can pass by looping over nothing.
std::vector<json> large_cases() {
    const json file = load_json("cases_large.json");
    std::vector<json> cases(file.at("cases").begin(), file.at("cases").end());
    if (cases.empty()) throw std::runtime_error("cases_large.json holds no case");
    return cases;
}

std::string case_name(const json& j) { return j.at("name").get<std::string>(); }

MaskMode case_mask(const json& j) {
    const std::string m = j.at("mask").get<std::string>();
    if (m == "causal") return MaskMode::causal;
    if (m == "none") return MaskMode::none;
    if (m == "off_by_one") return MaskMode::off_by_one;
    throw std::runtime_error("cases_large.json: unknown mask " + m);
}

Config large_config(const json& j) {
    Config c = case_config(j);
    c.mask = case_mask(j);
    return c;
}

// FNV-1a 64 over the float32 bits, as the generator script hashes torch's tensors: -0
// counts as +0 (as in every other comparison here) and every NaN as 0x7fc00000.
std::string hash_hex(const std::vector<float>& v) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (float f : v) {
        uint32_t b = std::isnan(f) ? 0x7fc00000u : bits(f + 0.f);
        h ^= b;
        h *= 0x100000001b3ull;
    }
    char text[19];
    std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(h));
    return text;
}

template <class A>
::testing::AssertionResult hash_is(const A& actual, const json& hashes, const char* name) {
    const std::string expected = hashes.at(name).get<std::string>();
    const std::string got = hash_hex(flat(actual));
    if (got == expected) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << name << ": hash " << got << " != torch's " << expected;
}

// What the case's recipe draws after x and the row: b_qkv = randn(3C), b_proj = randn(C).
Weights case_weights(const json& j, const Experiment& e) {
    Weights w = e.weights;
    if (!j.at("bias").get<bool>()) return w;
    const Config& c = e.config;
    TorchGenerator gen(c.seed);
    gen.skip_draws(4 * uint64_t(c.n_embd) * uint64_t(c.n_embd));
    gen.randn(int64_t(c.seq_len) * c.n_embd);
    gen.randn(c.n_embd);
    std::vector<float> b_qkv = gen.randn(3 * c.n_embd), b_proj = gen.randn(c.n_embd);
    w.c_attn.bias = Eigen::Map<const Vec>(b_qkv.data(), 3 * c.n_embd);
    w.c_proj.bias = Eigen::Map<const Vec>(b_proj.data(), c.n_embd);
    w.source = "seeded, with seeded biases";
    return w;
}

// y2 as torch printed it: y1's rows before y2_from_row (the causal mask's rows before p,
// which torch's own y2 has bit for bit), then the stored rows.
std::vector<float> expected_y2(const json& j) {
    const int C = j.at("n_embd").get<int>();
    const size_t first = j.at("y2_from_row").get<size_t>();
    std::vector<float> y2 = flat(j.at("y1"));
    y2.resize(first * size_t(C));
    for (float v : flat(j.at("y2_rows"))) y2.push_back(v);
    return y2;
}

void check_softmax_rows(const json& j, const Trace& t, float tol) {
    for (const json& r : j.at("softmax_rows_for_x")) {
        const int h = r.at("head").get<int>(), i = r.at("query").get<int>();
        SCOPED_TRACE("softmax row head " + std::to_string(h) + " query " + std::to_string(i));
        Vec row = t.att[size_t(h)].row(i);
        EXPECT_TRUE(same(row, flat(r.at("values")), tol));
    }
}

// y1, y2, the per-position differences and the softmax rows, for x and x2 under the
// case's mask; with tolerance 0 also every other intermediate for x by hash.
void check_case(const json& j, KernelKind kernel, float tol) {
    const Config c = large_config(j);
    const int p = j.at("perturbed_position").get<int>();
    Experiment e = make_experiment(c);
    const Weights w = case_weights(j, e);
    Trace t1, t2;
    forward(c, w, e.x, kernel, t1);
    forward(c, w, perturbed_input(e, p, 1.f), kernel, t2);

    EXPECT_TRUE(same(t1.y, flat(j.at("y1")), tol)) << "y1";
    EXPECT_TRUE(same(t2.y, expected_y2(j), tol)) << "y2";
    EXPECT_TRUE(same(max_abs_diff_per_position(t1.y, t2.y), flat(j.at("max_abs_diff_per_position")), tol))
        << "max_abs_diff_per_position";
    check_softmax_rows(j, t1, tol);
    if (tol != 0.f) return;
    const json& hashes = j.at("hashes_for_x");
    EXPECT_TRUE(hash_is(t1.qkv, hashes, "qkv"));
    EXPECT_TRUE(hash_is(t1.raw_scores, hashes, "raw_scores"));
    EXPECT_TRUE(hash_is(t1.att, hashes, "softmax_probs"));
    EXPECT_TRUE(hash_is(t1.heads, hashes, "head_outputs"));
    EXPECT_TRUE(hash_is(t1.concat, hashes, "y_concat_before_proj"));
}

TEST(LargeReferenceData, FileReachesTheSizesThePublicCasesLack) {
    int lane_groups = 0, head_dim = 0, C = 0, biased = 0, no_mask = 0, off_by_one = 0;
    for (const json& j : large_cases()) {
        lane_groups = std::max(lane_groups, j.at("T").get<int>() / 8);
        head_dim = std::max(head_dim, j.at("head_dim").get<int>());
        C = std::max(C, j.at("n_embd").get<int>());
        biased += j.at("bias").get<bool>();
        no_mask += case_mask(j) == MaskMode::none;
        off_by_one += case_mask(j) == MaskMode::off_by_one;
    }
    EXPECT_GE(lane_groups, 3);
    EXPECT_GE(head_dim, 32);
    EXPECT_GE(C, 256);
    EXPECT_GE(biased, 2);
    EXPECT_GE(no_mask, 1);
    EXPECT_GE(off_by_one, 1);
}

TEST(LargeReferenceData, GeneratorOutputsAreBitExact) {
    for (const json& j : large_cases()) {
        SCOPED_TRACE(case_name(j));
        const Config c = large_config(j);
        Experiment e = make_experiment(c);
        EXPECT_TRUE(hash_is(e.x, j.at("hashes_for_x"), "x"));
        EXPECT_TRUE(hash_is(e.replacement, j.at("hashes_for_x"), "perturbed_row"));
        EXPECT_EQ(score_scale(c), j.at("scale_float32").get<float>());
        const Weights w = case_weights(j, e);
        EXPECT_EQ(w.has_bias(), j.at("bias").get<bool>());
        if (w.has_bias()) {
            EXPECT_TRUE(same(w.c_attn.bias, flat(j.at("qkv_bias")))) << "qkv_bias";
            EXPECT_TRUE(same(w.c_proj.bias, flat(j.at("proj_bias")))) << "proj_bias";
        }
    }
}

TEST(LargeReferenceData, ReferenceKernelIsBitExact) {
    for (const json& j : large_cases()) {
        SCOPED_TRACE(case_name(j));
        check_case(j, KernelKind::reference, 0.f);
    }
}

TEST(LargeReferenceData, FastKernelIsWithinTolerance) {
    for (const json& j : large_cases()) {
        SCOPED_TRACE(case_name(j));
        check_case(j, KernelKind::fast, fast_tol);
    }
}

// x, then the row moved to torch's replacement, back, and to it again: the last move is
// the fast kernel's cached path (UpdateCache), the first its full recomputation.
TEST(LargeReferenceData, UpdateRowGivesTorchsY2) {
    for (const json& j : large_cases()) {
        for (KernelKind kernel : all_kernels) {
            SCOPED_TRACE(case_name(j) + " " + to_string(kernel));
            const float tol = kernel == KernelKind::reference ? 0.f : fast_tol;
            const Config c = large_config(j);
            const int p = j.at("perturbed_position").get<int>();
            Experiment e = make_experiment(c);
            const Weights w = case_weights(j, e);
            Trace t;
            forward(c, w, e.x, kernel, t);
            const Vec row = perturbed_row(e, p, 1.f), original = e.x.row(p);
            update_row(w, p, row.data(), t);
            EXPECT_TRUE(same(t.y, expected_y2(j), tol)) << "first move";
            update_row(w, p, original.data(), t);
            EXPECT_TRUE(same(t.y, flat(j.at("y1")), tol)) << "moved back";
            update_row(w, p, row.data(), t);
            EXPECT_TRUE(same(t.y, expected_y2(j), tol)) << "moved again";
        }
    }
}

} // namespace
} // namespace attnviz::test
