// The logit lens and activation patching against torch's forward pre-hooks
// (scripts/gen_patch_reference.py, tests/data/patch/reference.json) on the tiny GPTs of
// tests/data/gpt_tiny, both layouts, their weights scaled as the script scales them, and on
// the trained toy induction model of tests/data/generate; and patching's exact zeros and ones.
#include "core_test_util.h"
#include "gpt_test_util.h"
#include "logit_lens.h"
#include "model_io.h"
#include "patching.h"
#include <cmath>
#include <cstring>

namespace attnviz::test {
namespace {

const json& reference() {
    static const json j = load_json("patch/reference.json");
    return j;
}

// gen_patch_reference.py's sharpen(): powers of two, so the scaled weights are exact.
Model sharpened(const std::string& file) {
    Model m = load_fixture_model(gpt_data(file));
    m.wte *= 16.f;
    for (Block& b : m.h) {
        b.attn.c_attn.weight *= 4.f;
        b.attn.c_proj.weight *= 8.f;
        b.mlp.c_proj.weight *= 8.f;
    }
    return m;
}

std::vector<int> ids(const json& a) { return a.get<std::vector<int>>(); }

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class PatchReference : public ::testing::TestWithParam<std::tuple<int, KernelKind>> {};

TEST_P(PatchReference, LogitLensMatchesTorch) {
    const auto [index, kernel] = GetParam();
    const json& c = reference()["models"][size_t(index)];
    const Model m = sharpened(c["file"]);
    const std::vector<int> tokens = ids(c["clean"]);
    ModelTrace tr;
    gpt_forward(m, tokens, kernel, true, tr);
    const LogitLens lens = logit_lens(m, tr, kernel);
    const json& ref = c["lens"];
    const int T = int(tokens.size());
    ASSERT_EQ(lens.rows(), m.config.n_layer + 1);
    for (int r = 0; r < lens.rows(); ++r)
        for (int t = 0; t < T; ++t) {
            const std::vector<TokenProb>& top = lens.top[size_t(r)][size_t(t)];
            ASSERT_EQ(top.size(), 5u);
            for (size_t i = 0; i < 5; ++i) {
                EXPECT_EQ(top[i].token, ref["top"][size_t(r)][size_t(t)][i].get<int>()) << "row " << r << " pos " << t;
                EXPECT_NEAR(top[i].prob, ref["probs"][size_t(r)][size_t(t)][i].get<double>(), 1e-5);
            }
            if (t + 1 < T)
                EXPECT_NEAR(lens.next_prob[size_t(r)][size_t(t)], ref["next_prob"][size_t(r)][size_t(t)].get<double>(), 1e-5);
            else
                EXPECT_TRUE(std::isnan(lens.next_prob[size_t(r)][size_t(t)]));
        }
}

TEST_P(PatchReference, TablesMatchTorch) {
    const auto [index, kernel] = GetParam();
    const json& c = reference()["models"][size_t(index)];
    const Model m = sharpened(c["file"]);
    PatchRuns runs;
    prepare_patch_runs(m, ids(c["clean"]), ids(c["corrupt"]), c["answer"], c["wrong"], kernel, runs);
    for (const char* k : {"clean_ld", "corrupt_ld"}) {
        const double ref = c[k].get<double>();
        EXPECT_NEAR(k[1] == 'l' ? runs.clean_ld : runs.corrupt_ld, ref, 1e-4 * std::max(1.0, std::abs(ref))) << k;
    }
    ASSERT_GE(std::abs(c["clean_ld"].get<double>() - c["corrupt_ld"].get<double>()), 1.0);
    const PatchTables tables = patch_tables(runs, true, true);
    const int L = m.config.n_layer, H = m.config.n_head, T = int(runs.corrupt.tokens.size());
    ASSERT_EQ(tables.resid.size(), size_t(L));
    ASSERT_EQ(tables.heads.size(), size_t(L));
    for (int l = 0; l < L; ++l) {
        ASSERT_EQ(tables.resid[size_t(l)].size(), size_t(T));
        for (int t = 0; t < T; ++t)
            EXPECT_NEAR(tables.resid[size_t(l)][size_t(t)], c["resid"][size_t(l)][size_t(t)].get<double>(), 1e-4)
                << "resid layer " << l << " pos " << t;
        for (int h = 0; h < H; ++h)
            EXPECT_NEAR(tables.heads[size_t(l)][size_t(h)], c["heads"][size_t(l)][size_t(h)].get<double>(), 1e-4)
                << "head " << l << "." << h;
    }
}

INSTANTIATE_TEST_SUITE_P(TinyGpts, PatchReference,
                         ::testing::Combine(::testing::Values(0, 1),
                                            ::testing::Values(KernelKind::reference, KernelKind::fast)));

class PatchExact : public ::testing::TestWithParam<KernelKind> {};

// Clean and corrupted differ at p alone: every resid_pre before p, and at layer 0 every
// position but p, is the same in both runs, so its patch gives the corrupted run bit for bit;
// resid_pre of layer 0 at p turns the corrupted run into the clean one.
TEST_P(PatchExact, UnchangedActivationsGiveExactZeroAndTheDifferingTokenOne) {
    const KernelKind kernel = GetParam();
    const Model m = sharpened("nanogpt_nobias.safetensors");
    const std::vector<int> clean{906, 663, 449, 769, 22, 381, 95, 144, 335, 287};
    std::vector<int> corrupt = clean;
    const int p = 4;
    corrupt[size_t(p)] = 21;
    PatchRuns runs;
    prepare_patch_runs(m, clean, corrupt, 121, 444, kernel, runs);
    ASSERT_NE(runs.clean_ld, runs.corrupt_ld);
    const PatchTables tables = patch_tables(runs, true, false);
    const int L = m.config.n_layer, T = int(clean.size());
    for (int l = 0; l < L; ++l)
        for (int t = 0; t < T; ++t) {
            if (t >= p && !(l == 0 && t != p)) continue;
            EXPECT_TRUE(same_bits(patched_ld_resid(runs, l, t), runs.corrupt_ld)) << "layer " << l << " pos " << t;
            EXPECT_EQ(tables.resid[size_t(l)][size_t(t)], 0.f) << "layer " << l << " pos " << t;
        }
    EXPECT_NEAR(tables.resid[0][size_t(p)], 1.0, 1e-6);
    EXPECT_TRUE(same_bits(patched_ld_resid(runs, 0, p), runs.clean_ld));
}

// A head patched from a clean run that is the corrupted run itself changes nothing.
TEST_P(PatchExact, HeadPatchedWithItselfChangesNothing) {
    const KernelKind kernel = GetParam();
    const Model m = sharpened("gpt2");
    const std::vector<int> tokens{906, 663, 21, 769, 22, 381, 95, 144, 335, 287};
    PatchRuns runs;
    prepare_patch_runs(m, tokens, tokens, 708, 9, kernel, runs);
    EXPECT_TRUE(same_bits(runs.clean_ld, runs.corrupt_ld));
    for (int l = 0; l < m.config.n_layer; ++l)
        for (int h = 0; h < m.config.n_head; ++h) {
            EXPECT_TRUE(same_bits(patched_ld_head(runs, l, h), runs.corrupt_ld)) << "head " << l << "." << h;
            EXPECT_TRUE(same_bits(patched_ld_resid(runs, l, 3), runs.corrupt_ld)) << "layer " << l;
        }
    // Equal logit differences cannot be normalised.
    EXPECT_THROW(patch_tables(runs, true, true), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Kernels, PatchExact, ::testing::Values(KernelKind::reference, KernelKind::fast));

class ToyPatch : public ::testing::TestWithParam<KernelKind> {};

Model toy_induction() {
    Model m;
    std::string error;
    if (!load_model(std::string(ATTNVIZ_TEST_DATA) + "/generate/induction_c32_s3.safetensors", m, error))
        throw std::runtime_error(error);
    return m;
}

// The trained induction model: the segment's last token comes back through the induction
// heads of layer 1 (torch's tables, within 1e-4), and a patch with itself changes nothing.
TEST_P(ToyPatch, InductionModelMatchesTorchAndKeepsItsExactZero) {
    const KernelKind kernel = GetParam();
    const json& c = reference()["toy"];
    const Model m = toy_induction();
    PatchRuns runs;
    prepare_patch_runs(m, ids(c["clean"]), ids(c["corrupt"]), c["answer"], c["wrong"], kernel, runs);
    EXPECT_NEAR(runs.clean_ld, c["clean_ld"].get<double>(), 1e-4 * std::abs(c["clean_ld"].get<double>()));
    EXPECT_NEAR(runs.corrupt_ld, c["corrupt_ld"].get<double>(), 1e-4 * std::abs(c["corrupt_ld"].get<double>()));
    const PatchTables tables = patch_tables(runs, true, true);
    for (size_t l = 0; l < tables.resid.size(); ++l) {
        for (size_t t = 0; t < tables.resid[l].size(); ++t)
            EXPECT_NEAR(tables.resid[l][t], c["resid"][l][t].get<double>(), 1e-4) << "resid layer " << l << " pos " << t;
        for (size_t h = 0; h < tables.heads[l].size(); ++h)
            EXPECT_NEAR(tables.heads[l][h], c["heads"][l][h].get<double>(), 1e-4) << "head " << l << "." << h;
    }
    PatchRuns same;
    prepare_patch_runs(m, ids(c["corrupt"]), ids(c["corrupt"]), c["answer"], c["wrong"], kernel, same);
    for (int l = 0; l < m.config.n_layer; ++l) {
        for (int h = 0; h < m.config.n_head; ++h)
            EXPECT_TRUE(same_bits(patched_ld_head(same, l, h), same.corrupt_ld)) << "head " << l << "." << h;
        EXPECT_TRUE(same_bits(patched_ld_resid(same, l, 4), same.corrupt_ld)) << "layer " << l;
        EXPECT_TRUE(same_bits(patched_ld_resid(runs, l, 2), runs.corrupt_ld)) << "layer " << l; // before the change
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, ToyPatch, ::testing::Values(KernelKind::reference, KernelKind::fast));

TEST(Patching, RefusesBadInput) {
    const Model m = sharpened("gpt2");
    PatchRuns runs;
    const std::vector<int> a{1, 2, 3}, b{1, 2};
    auto message = [&](auto&& f) {
        try {
            f();
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message([&] { prepare_patch_runs(m, a, b, 1, 2, KernelKind::reference, runs); }).find("3 tokens"),
              std::string::npos);
    EXPECT_NE(message([&] { prepare_patch_runs(m, a, a, 5, 5, KernelKind::reference, runs); }).find("both 5"),
              std::string::npos);
    EXPECT_NE(message([&] { prepare_patch_runs(m, a, a, 1000, 5, KernelKind::reference, runs); }).find("1000"),
              std::string::npos);
    ModelTrace tr;
    const Model toy = toy_induction();
    EXPECT_THROW(logit_lens(toy, tr, KernelKind::reference), std::invalid_argument);
    Model prev = toy;
    prev.config.task = Task::prev;
    EXPECT_NE(message([&] { prepare_patch_runs(prev, a, a, 1, 2, KernelKind::reference, runs); }).find("(prev)"),
              std::string::npos);
}

} // namespace
} // namespace attnviz::test
