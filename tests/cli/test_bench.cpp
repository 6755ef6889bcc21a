// test_bench.cpp: `attnviz bench` runs at a small size and prints its JSON fields.
// No timing is asserted: the machines are shared; only that the numbers are there and sane.
#include "run_attnviz.h"
#include <gtest/gtest.h>

using attnviz_test::run_attnviz;
using attnviz_test::RunResult;
using nlohmann::json;

TEST(Bench, PrintsItsFieldsAsJson) {
    for (const char* kernel : {"reference", "fast"}) {
        RunResult r = run_attnviz({"bench", "--n-embd", "16", "--n-head", "4", "--seq-len", "8", "--repeat", "3",
                                   "--kernel", kernel});
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.err, "");
        json j = json::parse(r.out, nullptr, false);
        ASSERT_FALSE(j.is_discarded()) << r.out;
        EXPECT_EQ(j["kernel"], kernel);
        EXPECT_EQ(j["n_embd"], 16);
        EXPECT_EQ(j["n_head"], 4);
        EXPECT_EQ(j["T"], 8);
        EXPECT_EQ(j["repeat"], 3);
        EXPECT_EQ(j["perturbed_position"], 4); // T/2 by default
        EXPECT_GE(j["threads"].get<int>(), 1);
        for (const char* k : {"forward_ms", "update_ms", "update_first_ms", "forward_cpu_ms", "update_cpu_ms", "gflops",
                              "peak_rss_mb"}) {
            ASSERT_TRUE(j.contains(k) && j[k].is_number()) << k << " in " << r.out;
            EXPECT_GE(j[k].get<double>(), 0.0) << k;
        }
        // 2*T*C*3C + 2 * 2*C * T(T+1)/2 + 2*T*C*C for T = 8, C = 16.
        EXPECT_EQ(j["flops"].get<double>(), 2.0 * 8 * 16 * 48 + 4.0 * 16 * 36 + 2.0 * 8 * 16 * 16);
        EXPECT_GT(j["peak_rss_mb"].get<double>(), 0.0);
    }
}

TEST(Bench, DefaultRepeatIsAtLeastThreeAndPerturbIsHonoured) {
    RunResult r = run_attnviz({"bench", "--seq-len", "6", "--perturb", "5"});
    ASSERT_EQ(r.status, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_GE(j["repeat"].get<int>(), 3);
    EXPECT_LE(j["repeat"].get<int>(), 200);
    EXPECT_EQ(j["perturbed_position"], 5);
}
