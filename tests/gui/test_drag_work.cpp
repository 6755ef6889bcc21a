// test_drag_work.cpp: what a slider move redoes outside the core - the per-position max
// |dy| and the colour ranges, both rescanned only where causality lets values change - must
// equal a full rescan after any sequence of moves; and the causality view at (512, 512, 8)
// still draws x and y (as windows of readable cells), which the frame benchmark times.
#include "app_state.h"
#include "gui_test_support.h"
#include "state_test_support.h"
#include <cmath>
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

// Largest finite |v| over columns [c0, c1) of every row: what a full scan finds.
float top(const Mat& m, int c0, int c1) {
    float best = 0;
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (int j = c0; j < c1; ++j)
            if (std::isfinite(m(r, j))) best = std::max(best, std::fabs(m(r, j)));
    return best;
}

// The ranges a full scan of every trace the state has shown would give: they only grow,
// so each is the largest value seen so far. Kept per family and head.
struct Seen {
    float x = 0, y = 0;
    std::vector<float> q, k, v, raw, heads;
    void see(const Trace& t) {
        const int C = t.C, hd = t.head_dim;
        q.resize(size_t(t.H)), k.resize(size_t(t.H)), v.resize(size_t(t.H)), raw.resize(size_t(t.H)),
            heads.resize(size_t(t.H));
        x = std::max(x, top(t.x, 0, C));
        y = std::max(y, top(t.y, 0, C));
        for (int h = 0; h < t.H; ++h) {
            const size_t i = size_t(h);
            q[i] = std::max(q[i], top(t.qkv, h * hd, (h + 1) * hd));
            k[i] = std::max(k[i], top(t.qkv, C + h * hd, C + (h + 1) * hd));
            v[i] = std::max(v[i], top(t.qkv, 2 * C + h * hd, 2 * C + (h + 1) * hd));
            raw[i] = std::max(raw[i], top(t.raw_scores[i], 0, t.T));
            heads[i] = std::max(heads[i], top(t.concat, h * hd, (h + 1) * hd));
        }
    }
};

// max |dy| per position recomputed whole, NaN where y is NaN.
void expect_dy_whole(const AppState& s, const std::string& where) {
    const std::vector<float> whole = max_abs_diff_per_position(s.run.trace.y, s.run.base_y);
    ASSERT_EQ(s.run.dy.size(), whole.size()) << where;
    for (size_t t = 0; t < whole.size(); ++t) {
        if (std::isnan(whole[t])) EXPECT_TRUE(std::isnan(s.run.dy[t])) << where << " t " << t;
        else EXPECT_EQ(s.run.dy[t], whole[t]) << where << " t " << t;
    }
}

// Moves that go up and down in p, back to strength 0 and to p = 0 and T - 1: each leaves
// a different set of rows stale if the rescans skip too much. Every mask: the causal one
// rescans only what changed; the others rescan all (and off-by-one has a NaN row, which
// the ranges must skip).
TEST(DragWork, DyAndRangesEqualAFullScanAfterEveryMove) {
    Config c = lesson_config();
    c.seq_len = 16, c.n_embd = 12, c.n_head = 3;
    for (KernelChoice kernel : {KernelChoice::reference, KernelChoice::fast})
        for (MaskMode mask : {MaskMode::causal, MaskMode::none, MaskMode::off_by_one}) {
            c.mask = mask;
            AppState s;
            init_app_state(s, c, kernel);
            recompute(s);
            ASSERT_TRUE(s.ready) << s.error;
            Seen seen;
            seen.see(s.run.trace);
            const std::pair<int, float> moves[] = {{9, 1.f},  {9, 0.35f}, {3, 0.7f}, {12, 1.f}, {12, 0.f},
                                                   {15, 1.f}, {0, 1.f},   {5, 0.5f}, {5, 0.f},  {2, 1.f}};
            for (auto [p, strength] : moves) {
                request_perturbation(s, p, strength);
                recompute(s);
                seen.see(s.run.trace);
                const std::string where = std::string(mask == MaskMode::causal ? "causal" : "other mask") + " p " +
                                          std::to_string(p) + " strength " + std::to_string(strength);
                expect_dy_whole(s, where);
                EXPECT_EQ(s.run.ranges.x.all, seen.x) << where;
                EXPECT_EQ(s.run.ranges.y.all, seen.y) << where;
                EXPECT_TRUE(std::isfinite(s.run.ranges.y.all)) << where;
                for (int h = 0; h < c.n_head; ++h) {
                    const size_t i = size_t(h);
                    EXPECT_EQ(s.run.ranges.q.head[i], seen.q[i]) << where << " head " << h;
                    EXPECT_EQ(s.run.ranges.k.head[i], seen.k[i]) << where << " head " << h;
                    EXPECT_EQ(s.run.ranges.v.head[i], seen.v[i]) << where << " head " << h;
                    EXPECT_EQ(s.run.ranges.raw.head[i], seen.raw[i]) << where << " head " << h;
                    EXPECT_EQ(s.run.ranges.heads.head[i], seen.heads[i]) << where << " head " << h;
                }
            }
        }
}

// At (512, 512, 8) in the benchmark's 1280 x 800 and in 1280 x 720, the causality view shows
// input x and output y as windows of readable cells (their whole 512 rows cannot be), with
// row p outlined; before, a check of the whole matrices' fit hid them both.
TEST(DragWork, CausalityViewDrawsXAndYAtLargeSizes) {
    for (const char* size : {"1280x800", "1280x720"}) {
        Shot shot = take_shot(std::string("causality_512_") + size,
                              {"--size", size, "--seq-len", "512", "--n-embd", "512", "--n-head", "8", "--view",
                               "causality", "--perturb", "2", "--strength", "1"});
        ASSERT_EQ(shot.result.status, 0) << shot.result.err;
        for (const char* name : {"x", "y"}) {
            const auto items = shot.items("heatmap", name);
            ASSERT_EQ(items.size(), 1u) << size << " " << name;
            const auto& it = items[0];
            EXPECT_EQ(it["rows"], 512) << size << " " << name;
            EXPECT_LT(it["nrows"].get<int>(), 512) << size << " " << name;
            EXPECT_LE(it["row0"].get<int>(), 2) << size << " " << name; // p = 2 is on screen
            EXPECT_GE(it["h"].get<float>() / it["nrows"].get<float>(), 12.f) << size << " " << name;
        }
    }
}

} // namespace
