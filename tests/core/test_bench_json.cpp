// test_bench_json.cpp: bench's JSON (bench_json.h) from given timings, where the writer
// decides something: medians of even and odd counts, minimums, GFLOP/s from the forward's
// median, the masks' pair counts in the FLOPs, and the ablation object only when heads are.
#include "bench_json.h"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace attnviz::test {
namespace {

using nlohmann::json;

TEST(BenchJson, MedianOfOddAndEvenCounts) {
    EXPECT_DOUBLE_EQ(median_ms({3, 1, 2}), 2);
    EXPECT_DOUBLE_EQ(median_ms({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median_ms({7}), 7);
}

TEST(BenchJson, UsefulFlopsCountOnlyTheVisiblePairs) {
    Config c;
    c.n_embd = 8;
    c.n_head = 2;
    c.seq_len = 4;
    const double products = 2.0 * 4 * 8 * 24 + 2.0 * 4 * 8 * 8; // qkv and proj
    c.mask = MaskMode::causal;
    EXPECT_DOUBLE_EQ(useful_flops(c), products + 4.0 * 8 * 10); // 4 * 5 / 2 pairs
    c.mask = MaskMode::none;
    EXPECT_DOUBLE_EQ(useful_flops(c), products + 4.0 * 8 * 16);
    c.mask = MaskMode::off_by_one;
    EXPECT_DOUBLE_EQ(useful_flops(c), products + 4.0 * 8 * 6);
}

TEST(BenchJson, LessonTimesAreMediansMinimumsAndRates) {
    LessonBenchTimes t;
    t.config.n_embd = 8;
    t.config.n_head = 2;
    t.config.seq_len = 4;
    t.kernel = KernelKind::fast;
    t.text_input = true;
    t.weights_source = "seeded";
    t.repeat = 4;
    t.perturbed_position = 2;
    t.forward_ms = {4, 1, 2, 8};
    t.update_ms = {0.5, 0.25, 1};
    t.update_first_ms = {1, 3};
    t.forward_cpu_ms = {2};
    t.update_cpu_ms = {1};
    t.peak_rss_mb = 12.5;
    std::ostringstream out;
    write_lesson_bench_json(out, t);
    const json j = json::parse(out.str());
    EXPECT_EQ(j["kernel"], "fast");
    EXPECT_EQ(j["input"], "text");
    EXPECT_EQ(j["head_dim"], 4);
    EXPECT_FLOAT_EQ(j["forward_ms"].get<float>(), 3.f);
    EXPECT_FLOAT_EQ(j["forward_ms_min"].get<float>(), 1.f);
    EXPECT_FLOAT_EQ(j["update_ms"].get<float>(), 0.5f);
    EXPECT_FLOAT_EQ(j["update_ms_min"].get<float>(), 0.25f);
    EXPECT_FLOAT_EQ(j["update_first_ms"].get<float>(), 2.f);
    EXPECT_FLOAT_EQ(j["peak_rss_mb"].get<float>(), 12.5f);
    const double flops = useful_flops(t.config);
    EXPECT_FLOAT_EQ(j["flops"].get<float>(), float(flops));
    EXPECT_FLOAT_EQ(j["gflops"].get<float>(), float(flops / 3e6));
}

TEST(BenchJson, GptTimesHaveAnAblationObjectOnlyWithHeads) {
    Model m; // the writer reads only its config
    m.config.n_layer = 2;
    m.config.n_head = 2;
    GptFileInfo info;
    GptBenchTimes t;
    t.model = &m;
    t.info = &info;
    t.path = "tiny";
    t.T = 5;
    t.repeat = 2;
    t.forward_ms = {2, 4};
    t.update_ms = {1, 1};
    Ablation none;
    t.ablation = &none;
    std::ostringstream a;
    write_gpt_bench_json(a, t);
    const json ja = json::parse(a.str());
    EXPECT_FALSE(ja.contains("ablation"));
    EXPECT_FLOAT_EQ(ja["update_over_forward"].get<float>(), 1.f / 3.f);

    Ablation ab;
    ab.heads = {{1, 0}};
    t.ablation = &ab;
    t.ablation_times.forward_ms = {2, 2};
    t.ablation_times.rerun_ms = {1, 3};
    t.ablation_times.restore_ms = {1};
    t.ablation_times.detector_ms = {5};
    t.ablation_times.with_detector_ms = {6, 8};
    for (auto& p : t.ablation_times.parts_ms) p = {0.5};
    std::ostringstream b;
    write_gpt_bench_json(b, t);
    const json jb = json::parse(b.str());
    ASSERT_TRUE(jb.contains("ablation"));
    EXPECT_EQ(jb["ablation"]["first_layer"], 1);
    EXPECT_FLOAT_EQ(jb["ablation"]["rerun_over_forward"].get<float>(), 1.f);
    EXPECT_FLOAT_EQ(jb["ablation"]["rerun_ms_min"].get<float>(), 1.f);
    EXPECT_FLOAT_EQ(jb["ablation"]["with_detector_over_forward"].get<float>(), 3.5f);
}

} // namespace
} // namespace attnviz::test
