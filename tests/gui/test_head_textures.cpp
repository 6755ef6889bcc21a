// test_head_textures.cpp: the per-head (T, T) textures are sent when a view first draws
// them and freed again under the renderer's budget (texture.h, TextureBudget). A head
// that was freed and is drawn again must look exactly as on a fresh start, also after the
// slider moved while it was freed or while it held deferred rows. And the window's cap
// takes (2048, 2048, 16) but still refuses sizes above it.
#include "app_state.h"
#include "gui_test_support.h"
#include "heatmap_renderer.h"
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

Config size_of(int T, int C, int H) {
    Config c;
    c.seq_len = T;
    c.n_embd = C;
    c.n_head = H;
    return c;
}

// T = 1024 and H = 32: the raw scores and weights of all heads are 64 textures of 4 MiB,
// twice the budget, so walking the head pager to the last heads must free the first ones.
const int big_T = 1024, big_H = 32;
const std::vector<std::string> big = {"--seq-len", "1024", "--n-embd", "64", "--n-head", "32", "--size", "1280x720"};

std::string repeat(const std::string& key, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += key + ",";
    return s;
}

TEST(HeadTextures, TheSizeForcesEvictions) {
    const int64_t all_heads = int64_t(2) * big_H * big_T * big_T * int64_t(sizeof(float));
    EXPECT_GE(all_heads, 2 * head_texture_budget);
    EXPECT_TRUE(validate_window(size_of(big_T, 64, big_H), gui_memory_cap).empty());
}

// Pager to the last heads and back: heads 0 and 1 were freed on the way and are sent
// again whole.
TEST(HeadTextures, HeadsBrowsedAwayAndBackEqualAFreshStart) {
    std::vector<std::string> browsed = big, fresh = big;
    for (const char* a : {"--view", "scores", "--perturb", "5", "--strength", "1"}) {
        browsed.push_back(a);
        fresh.push_back(a);
    }
    browsed.push_back("--keys");
    browsed.push_back(repeat("]", big_H) + repeat("[", big_H) + "3");
    Shot b = take_shot("heads_browsed", browsed);
    Shot f = take_shot("heads_fresh", fresh);
    ASSERT_EQ(b.result.status, 0) << b.result.err;
    ASSERT_EQ(f.result.status, 0) << f.result.err;
    ASSERT_FALSE(b.items("heatmap", "scaled", 0).empty()); // back at head 0
    ASSERT_EQ(b.image.w, f.image.w);
    ASSERT_EQ(b.image.h, f.image.h);
    EXPECT_GT(b.image.distinct_colours(), 20);
    EXPECT_EQ(differing_fraction(b.image, f.image), 0.0);
}

// The slider moves while heads 0 and 1 are freed (their changes are not recorded, the
// whole send covers them) and heads 30 and 31 are kept with deferred rows. Then either
// the scores view shows heads 30 and 31 again (the deferred rows are sent), or the pager
// walks back over every head to 0 and 1 (sent whole). p moves from 5 to 6 (in the top left corner the view shows) and the
// strength from 0 to 1.
TEST(HeadTextures, SliderMovedWhileFreedEqualsAFreshStart) {
    const std::string drag = repeat("]", big_H) + "4," + repeat("right", 22) + "down,3,";
    const struct {
        const char* name;
        std::string keys_dragged, keys_fresh;
        int head;
    } cases[] = {{"kept", drag + "3", repeat("]", big_H) + "3", big_H - 2},
                 {"freed", drag + repeat("[", big_H) + "3", "3", 0}};
    for (const auto& c : cases) {
        std::vector<std::string> dragged = big, fresh = big;
        for (const char* a : {"--view", "scores", "--perturb", "5", "--strength", "0", "--keys"}) dragged.push_back(a);
        dragged.push_back(c.keys_dragged);
        for (const char* a : {"--view", "scores", "--perturb", "6", "--strength", "1", "--keys"}) fresh.push_back(a);
        fresh.push_back(c.keys_fresh);
        Shot d = take_shot(std::string("heads_dragged_") + c.name, dragged);
        Shot f = take_shot(std::string("heads_fresh_") + c.name, fresh);
        ASSERT_EQ(d.result.status, 0) << d.result.err;
        ASSERT_EQ(f.result.status, 0) << f.result.err;
        ASSERT_FALSE(d.items("heatmap", "scaled", c.head).empty()) << c.name;
        ASSERT_FALSE(f.items("heatmap", "scaled", c.head).empty()) << c.name;
        ASSERT_EQ(d.image.w, f.image.w);
        ASSERT_EQ(d.image.h, f.image.h);
        EXPECT_GT(d.image.distinct_colours(), 20) << c.name;
        EXPECT_EQ(differing_fraction(d.image, f.image), 0.0) << c.name;
    }
}

// The largest size the project names fits the window's cap; twice its heads do not, and
// the window says so in one sentence before opening.
TEST(HeadTextures, CapTakesTheLargestNamedSizeAndRefusesLarger) {
    EXPECT_TRUE(validate_window(size_of(2048, 2048, 16), gui_memory_cap).empty());
    const std::string why = validate_window(size_of(2048, 2048, 32), gui_memory_cap);
    EXPECT_NE(why.find("over the cap"), std::string::npos) << why;
    // The soak's and the session tests' over-the-cap size.
    EXPECT_FALSE(validate_window(size_of(max_seq_len, 8, 2), gui_memory_cap).empty());
    // A trace well under the cap whose (T, C) and (C, C) textures are not: the window would
    // peak at 1.6 GB if only the trace were counted.
    EXPECT_LT(trace_bytes(size_of(2800, 4096, 1)), gui_memory_cap);
    EXPECT_NE(validate_window(size_of(2800, 4096, 1), gui_memory_cap).find("in the window"), std::string::npos);
    // A long sequence with a small C: one frame's four (T, T) textures (two heads' scores
    // and weights) are over the head budget; counting only the budget, it would peak at 2.2 GB.
    EXPECT_LT(trace_bytes(size_of(8070, 8, 2)), gui_memory_cap);
    EXPECT_NE(validate_window(size_of(8070, 8, 2), gui_memory_cap).find("in the window"), std::string::npos);
    RunResult r = run_headless({"--seq-len", "2048", "--n-embd", "2048", "--n-head", "32", "--screenshot",
                                temp_dir() + "/never_over_cap.png"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find("over the cap"), std::string::npos) << r.err;
}

} // namespace
