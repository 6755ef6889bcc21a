// test_lesson_trace.cpp: `attnviz lesson` prints the lesson's lines, and `attnviz trace`
// reproduces the PyTorch reference files (tests/data) bit for bit on the reference kernel.
#include "run_attnviz.h"
#include <gtest/gtest.h>

using attnviz_test::load_json;
using attnviz_test::run_attnviz;
using attnviz_test::RunResult;
using attnviz_test::same_float32;
using nlohmann::json;

namespace {

json lesson_example() { return load_json(ATTNVIZ_TEST_DATA "/lesson_example.json"); }
json public_cases() { return load_json(ATTNVIZ_TEST_DATA "/cases_public.json")["cases"]; }

// Runs trace and parses its stdout; fails the test on a non-zero status.
json trace(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"trace"};
    all.insert(all.end(), args.begin(), args.end());
    RunResult r = run_attnviz(all);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r.out.substr(0, 200);
    return j;
}

// The trace arguments that reproduce a reference case's recipe.
std::vector<std::string> recipe_args(const json& ref) {
    return {"--seed",       std::to_string(ref["seed"].get<long long>()),
            "--n-embd",     std::to_string(ref["n_embd"].get<int>()),
            "--n-head",     std::to_string(ref["n_head"].get<int>()),
            "--seq-len",    std::to_string(ref["T"].get<int>()),
            "--perturb",    std::to_string(ref["perturbed_position"].get<int>()),
            "--kernel",     "reference",
            "--intermediates"};
}

std::vector<int64_t> shape_of(const json& j) {
    std::vector<int64_t> s;
    const json* p = &j;
    while (p->is_array()) {
        s.push_back(int64_t(p->size()));
        if (p->empty()) break;
        p = &(*p)[0];
    }
    return s;
}

void expect_same(const json& ours, const json& ref, const std::string& key, const std::string& label) {
    std::string where;
    ASSERT_TRUE(ours.contains(key)) << label << ": no field " << key;
    EXPECT_TRUE(same_float32(ours[key], ref, key, where)) << label << ": " << where;
}

// Every numeric field the reference has, compared bit for bit.
void expect_matches_reference(const json& ours, const json& ref, const std::string& label) {
    for (const char* key : {"seed", "n_embd", "n_head", "B", "T", "perturbed_position", "head_dim",
                            "scale_float32", "param_count", "qkv_weight", "proj_weight", "x",
                            "perturbed_row", "x2", "y1", "y2", "max_abs_diff_per_position"})
        expect_same(ours, ref[key], key, label);
    const json& ref_i = ref["intermediates_for_x"];
    ASSERT_TRUE(ours.contains("intermediates_for_x")) << label;
    for (auto it = ref_i.begin(); it != ref_i.end(); ++it)
        expect_same(ours["intermediates_for_x"], it.value(), it.key(), label + " intermediates_for_x");
    EXPECT_EQ(ours["intermediates_for_x"]["shapes"], ref_i["shapes"]) << label;
}

} // namespace

TEST(Lesson, PrintsExactlyTheLessonsFourLines) {
    RunResult r = run_attnviz({"lesson"});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.err, "");
    // The four lines the lesson's code prints: y1's shape, the parameter count, and
    // max |y1 - y2| over positions 0-1 and (rounded to 4 places) over positions 2-3.
    EXPECT_EQ(r.out, "(1, 4, 8)\n256\n0.0\n0.3175\n");
}

TEST(Trace, DefaultsAreTheLessonsAndFieldsHaveTheirShapes) {
    json j = trace({});
    EXPECT_EQ(j["seed"], 0);
    EXPECT_EQ(j["n_embd"], 8);
    EXPECT_EQ(j["n_head"], 2);
    EXPECT_EQ(j["B"], 1);
    EXPECT_EQ(j["T"], 4);
    EXPECT_EQ(j["head_dim"], 4);
    EXPECT_EQ(j["mask"], "causal");
    EXPECT_EQ(j["scale"], "head-dim");
    EXPECT_EQ(j["kernel"], "reference");
    EXPECT_EQ(j["param_count"], 256);
    EXPECT_EQ(shape_of(j["qkv_weight"]), (std::vector<int64_t>{24, 8}));
    EXPECT_EQ(shape_of(j["proj_weight"]), (std::vector<int64_t>{8, 8}));
    EXPECT_EQ(shape_of(j["x"]), (std::vector<int64_t>{1, 4, 8}));
    EXPECT_EQ(shape_of(j["y1"]), (std::vector<int64_t>{1, 4, 8}));
    for (const char* absent : {"perturbed_position", "perturbed_row", "x2", "y2", "max_abs_diff_per_position",
                               "intermediates_for_x"})
        EXPECT_FALSE(j.contains(absent)) << absent;
}

TEST(Trace, PerturbAndIntermediatesAddTheirFieldsWithTheirShapes) {
    // A shape where C, T, 3C and head_dim all differ, so a swapped axis shows.
    json j = trace({"--seed", "5", "--n-embd", "12", "--n-head", "3", "--seq-len", "5", "--perturb", "1",
                    "--intermediates"});
    EXPECT_EQ(j["perturbed_position"], 1);
    EXPECT_EQ(shape_of(j["perturbed_row"]), (std::vector<int64_t>{12}));
    EXPECT_EQ(shape_of(j["x2"]), (std::vector<int64_t>{1, 5, 12}));
    EXPECT_EQ(shape_of(j["y2"]), (std::vector<int64_t>{1, 5, 12}));
    EXPECT_EQ(shape_of(j["max_abs_diff_per_position"]), (std::vector<int64_t>{5}));
    const json& i = j["intermediates_for_x"];
    const std::vector<int64_t> per_head_hd = {1, 3, 5, 4}, per_head_tt = {1, 3, 5, 5};
    EXPECT_EQ(shape_of(i["qkv"]), (std::vector<int64_t>{1, 5, 36}));
    for (const char* k : {"q", "k", "v", "head_outputs"}) EXPECT_EQ(shape_of(i[k]), per_head_hd) << k;
    for (const char* k : {"raw_scores", "scaled_scores", "masked_scores", "softmax_probs"})
        EXPECT_EQ(shape_of(i[k]), per_head_tt) << k;
    EXPECT_EQ(shape_of(i["y_concat_before_proj"]), (std::vector<int64_t>{1, 5, 12}));
    for (auto it = i["shapes"].begin(); it != i["shapes"].end(); ++it)
        EXPECT_EQ(it.value().get<std::vector<int64_t>>(), shape_of(i[it.key()])) << it.key();
    EXPECT_EQ(i["shapes"].size(), 10u);
    // The causal mask: keys after the query are null (-inf) in masked_scores and exactly 0 in probs.
    for (int h = 0; h < 3; ++h)
        for (int q = 0; q < 5; ++q)
            for (int k = q + 1; k < 5; ++k) {
                EXPECT_TRUE(i["masked_scores"][0][h][q][k].is_null());
                EXPECT_EQ(i["softmax_probs"][0][h][q][k].get<double>(), 0.0);
            }
    // Causality: positions before the perturbed one do not move at all.
    EXPECT_EQ(j["max_abs_diff_per_position"][0].get<double>(), 0.0);
    EXPECT_GT(j["max_abs_diff_per_position"][1].get<double>(), 0.0);
}

TEST(Trace, LessonExampleEqualsPyTorchBitForBit) {
    json ref = lesson_example();
    expect_matches_reference(trace(recipe_args(ref)), ref, "lesson_example");
}

TEST(Trace, PublicCasesEqualPyTorchBitForBit) {
    for (const json& ref : public_cases())
        expect_matches_reference(trace(recipe_args(ref)), ref, ref["name"].get<std::string>());
}

// mask_variants: y1, y2 and their differences, and the softmax and masked scores of x,
// for `--mask none` (no_mask) and `--mask off-by-one` (off_by_one_mask, NaN row 0 -> null).
TEST(Trace, MaskVariantsEqualPyTorchBitForBit) {
    std::vector<json> cases = {lesson_example()};
    for (const json& c : public_cases()) cases.push_back(c);
    for (const json& ref : cases) {
        for (auto [variant, mask] : {std::pair{"no_mask", "none"}, std::pair{"off_by_one_mask", "off-by-one"}}) {
            std::vector<std::string> args = recipe_args(ref);
            args.push_back("--mask");
            args.push_back(mask);
            json ours = trace(args);
            const json& mv = ref["mask_variants"][variant];
            std::string label = ref["name"].get<std::string>() + " " + variant;
            EXPECT_EQ(ours["mask"], mask);
            for (const char* key : {"y1", "y2", "max_abs_diff_per_position"}) expect_same(ours, mv[key], key, label);
            expect_same(ours["intermediates_for_x"], mv["softmax_probs_for_x"], "softmax_probs", label);
            expect_same(ours["intermediates_for_x"], mv["masked_scores_for_x"], "masked_scores", label);
        }
    }
}

TEST(Trace, OffByOneRowZeroIsNull) {
    json j = trace({"--mask", "off-by-one", "--intermediates"});
    for (const json& v : j["y1"][0][0]) EXPECT_TRUE(v.is_null());
    for (const json& v : j["intermediates_for_x"]["softmax_probs"][0][0][0]) EXPECT_TRUE(v.is_null());
    EXPECT_FALSE(j["y1"][0][1][0].is_null());
}

TEST(Trace, ScaleModesChangeTheStoredScale) {
    // scale_float32 is f32(d ** -0.5): d = head_dim 4 -> 0.5, d = C 16 -> 0.25, none -> 1.
    EXPECT_EQ(trace({"--n-embd", "16", "--n-head", "4"})["scale_float32"].get<double>(), 0.5);
    EXPECT_EQ(trace({"--n-embd", "16", "--n-head", "4", "--scale", "n-embd"})["scale_float32"].get<double>(), 0.25);
    EXPECT_EQ(trace({"--n-embd", "16", "--n-head", "4", "--scale", "none"})["scale_float32"].get<double>(), 1.0);
}

TEST(Trace, FastKernelAgreesWithReferenceWithin1e5) {
    json ref = lesson_example();
    std::vector<std::string> args = recipe_args(ref);
    args[11] = "fast"; // the value after --kernel
    json ours = trace(args);
    EXPECT_EQ(ours["kernel"], "fast");
    for (int t = 0; t < 4; ++t)
        for (int c = 0; c < 8; ++c) {
            EXPECT_NEAR(ours["y1"][0][t][c].get<double>(), ref["y1"][0][t][c].get<double>(), 1e-5);
            EXPECT_NEAR(ours["y2"][0][t][c].get<double>(), ref["y2"][0][t][c].get<double>(), 1e-5);
        }
}
