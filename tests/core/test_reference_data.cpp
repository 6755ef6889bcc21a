// test_reference_data.cpp: the lesson's example and the public cases against the numbers
// PyTorch 1.13 printed (tests/data, written by scripts/gen_reference.py): the generator's
// outputs and the reference kernel's intermediates bit for bit, the fast kernel within 1e-5.
#include "core_test_util.h"

namespace attnviz::test {
namespace {

constexpr float fast_tol = 1e-5f;
const float neg_inf = -INFINITY;

std::string case_name(const json& j) { return j.at("name").get<std::string>(); }

TEST(ReferenceData, FilesHoldTheLessonAndThePublicCases) {
    std::vector<json> cases = reference_cases();
    ASSERT_GE(cases.size(), 4u);
    EXPECT_EQ(case_name(cases[0]), "lesson_example");
    // The lesson's printed numbers: (1, 4, 8) / 256 / 0.0 / 0.3175.
    const json& lesson = cases[0];
    EXPECT_EQ(lesson.at("param_count").get<int>(), 256);
    EXPECT_EQ(lesson.at("max_abs_diff_per_position")[2].get<double>(), 0.317545503);
}

TEST(ReferenceData, GeneratorOutputsAreBitExact) {
    for (const json& j : reference_cases()) {
        SCOPED_TRACE(case_name(j));
        const Config c = case_config(j);
        const int p = j.at("perturbed_position").get<int>();
        Experiment e = make_experiment(c);
        EXPECT_TRUE(same(e.weights.c_attn.weight, flat(j.at("qkv_weight")))) << "qkv_weight";
        EXPECT_TRUE(same(e.weights.c_proj.weight, flat(j.at("proj_weight")))) << "proj_weight";
        EXPECT_TRUE(same(e.x, flat(j.at("x")))) << "x";
        EXPECT_TRUE(same(perturbed_row(e, p, 1.f), flat(j.at("perturbed_row")))) << "perturbed_row";
        EXPECT_TRUE(same(perturbed_input(e, p, 1.f), flat(j.at("x2")))) << "x2";
        const json& draws = j.at("rng").at("mt_draws_cumulative");
        EXPECT_EQ(e.draws_after_weights, draws.at("after_proj_weight").get<uint64_t>());
        EXPECT_EQ(e.draws_after_x, draws.at("after_x").get<uint64_t>());
        EXPECT_EQ(e.draws_after_row, draws.at("after_perturbed_row").get<uint64_t>());
        EXPECT_EQ(c.param_count(), j.at("param_count").get<int64_t>());
        EXPECT_EQ(score_scale(c), j.at("scale_float32").get<float>());

        // Drawing qkv.weight alone stops where torch's count says.
        TorchGenerator gen(c.seed);
        std::vector<float> w(size_t(3) * c.n_embd * c.n_embd);
        gen.kaiming_uniform(w.data(), 3 * c.n_embd, c.n_embd);
        EXPECT_EQ(gen.draws(), draws.at("after_qkv_weight").get<uint64_t>());
        EXPECT_EQ(gen.has_cached_normal(), false);
    }
}

TEST(ReferenceData, LoadedWeightsKeepTheSeededInput) {
    for (const json& j : reference_cases()) {
        SCOPED_TRACE(case_name(j));
        const Config c = case_config(j);
        Experiment seeded = make_experiment(c);
        Weights other = seeded.weights;
        other.c_attn.weight.setConstant(0.25f);
        other.source = "test";
        Experiment loaded = make_experiment(c, other);
        EXPECT_TRUE(same(loaded.x, seeded.x));
        EXPECT_TRUE(same(loaded.replacement, seeded.replacement));
        EXPECT_EQ(loaded.draws_after_row, seeded.draws_after_row);
        EXPECT_EQ(loaded.weights.c_attn.weight(0, 0), 0.25f);
    }
}

// y1, y2, the per-position differences, and (for the mask variants) the softmax and the
// masked scores for x, at tolerance tol.
void check_outputs(const json& expected, const Trace& t1, const Trace& t2, float tol, bool intermediates) {
    EXPECT_TRUE(same(t1.y, flat(expected.at("y1")), tol)) << "y1";
    EXPECT_TRUE(same(t2.y, flat(expected.at("y2")), tol)) << "y2";
    EXPECT_TRUE(same(max_abs_diff_per_position(t1.y, t2.y), flat(expected.at("max_abs_diff_per_position")), tol))
        << "max_abs_diff_per_position";
    if (!intermediates) return;
    EXPECT_TRUE(same(t1.att, flat(expected.at("softmax_probs_for_x")), tol)) << "softmax_probs_for_x";
    PerHead masked(size_t(t1.H));
    for (int h = 0; h < t1.H; ++h) t1.fill_masked(h, masked[size_t(h)]);
    EXPECT_TRUE(same(masked, flat(expected.at("masked_scores_for_x"), neg_inf), tol)) << "masked_scores_for_x";
}

void check_case(const json& j, KernelKind kernel, float tol) {
    const Config causal = case_config(j);
    const int p = j.at("perturbed_position").get<int>();
    Experiment e = make_experiment(causal);
    Mat x2 = perturbed_input(e, p, 1.f);

    Trace t1, t2;
    forward(causal, e.weights, e.x, kernel, t1);
    forward(causal, e.weights, x2, kernel, t2);

    // Every intermediate of the shape walk for x.
    const json& in = j.at("intermediates_for_x");
    EXPECT_TRUE(same(t1.qkv, flat(in.at("qkv")), tol)) << "qkv";
    EXPECT_TRUE(same(t1.q, flat(in.at("q")), tol)) << "q";
    EXPECT_TRUE(same(t1.k, flat(in.at("k")), tol)) << "k";
    EXPECT_TRUE(same(t1.v, flat(in.at("v")), tol)) << "v";
    EXPECT_TRUE(same(t1.raw_scores, flat(in.at("raw_scores")), tol)) << "raw_scores";
    PerHead scaled(size_t(t1.H)), masked(size_t(t1.H));
    for (int h = 0; h < t1.H; ++h) {
        t1.fill_scaled(h, scaled[size_t(h)]);
        t1.fill_masked(h, masked[size_t(h)]);
    }
    EXPECT_TRUE(same(scaled, flat(in.at("scaled_scores")), tol)) << "scaled_scores";
    EXPECT_TRUE(same(masked, flat(in.at("masked_scores"), neg_inf), tol)) << "masked_scores";
    EXPECT_TRUE(same(t1.att, flat(in.at("softmax_probs")), tol)) << "softmax_probs";
    EXPECT_TRUE(same(t1.heads, flat(in.at("head_outputs")), tol)) << "head_outputs";
    EXPECT_TRUE(same(t1.concat, flat(in.at("y_concat_before_proj")), tol)) << "y_concat_before_proj";
    check_outputs(j, t1, t2, tol, false);

    const std::pair<const char*, MaskMode> variants[] = {{"no_mask", MaskMode::none},
                                                         {"off_by_one_mask", MaskMode::off_by_one}};
    for (auto [name, mask] : variants) {
        SCOPED_TRACE(name);
        Config c = causal;
        c.mask = mask;
        Trace v1, v2;
        forward(c, e.weights, e.x, kernel, v1);
        forward(c, e.weights, x2, kernel, v2);
        check_outputs(j.at("mask_variants").at(name), v1, v2, tol, true);
    }
}

TEST(ReferenceData, ReferenceKernelIsBitExact) {
    for (const json& j : reference_cases()) {
        SCOPED_TRACE(case_name(j));
        check_case(j, KernelKind::reference, 0.f);
    }
}

TEST(ReferenceData, FastKernelIsWithinTolerance) {
    for (const json& j : reference_cases()) {
        SCOPED_TRACE(case_name(j));
        check_case(j, KernelKind::fast, fast_tol);
    }
}

TEST(ReferenceData, UpdateRowGivesTorchsY2) {
    for (const json& j : reference_cases()) {
        for (KernelKind kernel : all_kernels) {
            SCOPED_TRACE(case_name(j) + " " + to_string(kernel));
            const Config c = case_config(j);
            const int p = j.at("perturbed_position").get<int>();
            Experiment e = make_experiment(c);
            Trace t;
            forward(c, e.weights, e.x, kernel, t);
            Vec row = perturbed_row(e, p, 1.f);
            update_row(e.weights, p, row.data(), t);
            EXPECT_TRUE(same(t.y, flat(j.at("y2")), kernel == KernelKind::reference ? 0.f : fast_tol));
        }
    }
}

} // namespace
} // namespace attnviz::test
