// test_screenshots.cpp: every view renders headless, is not blank and differs from the
// others; pixel checks where the layout says a cell or a bar is.
#include "gui_test_support.h"
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>

using namespace attnviz_gui_test;

namespace {

// Removes the screenshots when the test program ends.
class CleanTempDir : public ::testing::Environment {
public:
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(temp_dir(), ec);
    }
};
const auto* clean_env = ::testing::AddGlobalTestEnvironment(new CleanTempDir);

// Corner points of a cell, away from its border and from the value printed in its middle.
const double corners[4][2] = {{0.2, 0.15}, {0.8, 0.15}, {0.2, 0.85}, {0.8, 0.85}};

int count_in_cell(const Image& im, const nlohmann::json& hm, int r, int c, bool (*test)(Rgb)) {
    int n = 0;
    for (auto& f : corners) {
        int x = 0, y = 0;
        if (cell_point(hm, r, c, f[0], f[1], x, y)) n += test(im.at(x, y));
    }
    return n;
}

} // namespace

TEST(Views, EachViewRendersNonBlankAndDistinct) {
    const char* views[] = {"walk", "qkv", "scores", "causality"};
    std::vector<Image> images;
    for (const char* v : views) {
        Shot s = take_shot(std::string("view_") + v, {"--view", v, "--perturb", "2"});
        ASSERT_EQ(s.result.status, 0) << v << ": " << s.result.err;
        ASSERT_EQ(s.image.w, 1280) << v;
        ASSERT_EQ(s.image.h, 800) << v;
        // Heatmaps, text and colour bars: far more than a handful of colours.
        EXPECT_GT(s.image.distinct_colours(), 300) << v;
        EXPECT_GT(s.layout["items"].size(), 0u) << v;
        images.push_back(s.image);
    }
    for (size_t a = 0; a < images.size(); ++a)
        for (size_t b = a + 1; b < images.size(); ++b)
            EXPECT_GT(differing_fraction(images[a], images[b]), 0.05) << views[a] << " vs " << views[b];
}

TEST(Views, SizeOptionSetsTheScreenshotSize) {
    Shot s = take_shot("size_960", {"--size", "960x600", "--view", "scores"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    EXPECT_EQ(s.image.w, 960);
    EXPECT_EQ(s.image.h, 600);
    EXPECT_EQ(s.layout["width"], 960);
    // Every heatmap lies inside the picture.
    for (const auto& it : s.layout["items"]) {
        EXPECT_GE(double(it["x"]), 0.0);
        EXPECT_LE(double(it["x"]) + double(it["w"]), 960.0) << it.dump();
        EXPECT_LE(double(it["y"]) + double(it["h"]), 600.0) << it.dump();
    }
}

TEST(Walk, StepsShowTheirOwnTensors) {
    Shot first = take_shot("walk_0", {"--view", "walk", "--step", "0"});
    Shot last = take_shot("walk_11", {"--view", "walk", "--step", "11"});
    ASSERT_EQ(first.result.status, 0) << first.result.err;
    ASSERT_EQ(last.result.status, 0) << last.result.err;
    EXPECT_EQ(first.items("heatmap", "x").size(), 1u);
    EXPECT_EQ(first.items("heatmap", "y").size(), 0u);
    EXPECT_EQ(last.items("heatmap", "y").size(), 1u);
    EXPECT_EQ(last.items("heatmap", "w_proj_t").size(), 1u);
    EXPECT_GT(differing_fraction(first.image, last.image), 0.05);
}

TEST(Scores, MaskedFillOnlyAboveTheDiagonalAfterTheMask) {
    Shot s = take_shot("scores_causal", {"--view", "scores"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    auto after = s.items("heatmap", "masked");
    auto before = s.items("heatmap", "scaled");
    ASSERT_FALSE(after.empty());
    ASSERT_EQ(after.size(), before.size());
    for (const auto& hm : after) {
        ASSERT_EQ(hm["nrows"], 4);
        ASSERT_EQ(hm["ncols"], 4);
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
                const int grey = count_in_cell(s.image, hm, i, j, is_masked_grey);
                if (j > i) EXPECT_EQ(grey, 4) << "head " << hm["head"] << " cell " << i << "," << j << " should be masked";
                else EXPECT_EQ(grey, 0) << "head " << hm["head"] << " cell " << i << "," << j << " should show a number";
            }
    }
    for (const auto& hm : before)
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j)
                EXPECT_EQ(count_in_cell(s.image, hm, i, j, is_masked_grey), 0)
                    << "before the mask, cell " << i << "," << j << " of head " << hm["head"];
}

TEST(Scores, NoMaskHasNoMaskedCells) {
    Shot s = take_shot("scores_none", {"--view", "scores", "--mask", "none"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    auto after = s.items("heatmap", "masked");
    ASSERT_FALSE(after.empty());
    for (const auto& hm : after)
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) EXPECT_EQ(count_in_cell(s.image, hm, i, j, is_masked_grey), 0);
}

TEST(Scores, OffByOneShowsTheNanLookInRowZeroOnly) {
    Shot s = take_shot("scores_off_by_one", {"--view", "scores", "--mask", "off-by-one"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    auto probs = s.items("heatmap", "probs");
    ASSERT_FALSE(probs.empty());
    for (const auto& hm : probs) {
        for (int j = 0; j < 4; ++j) EXPECT_GE(count_in_cell(s.image, hm, 0, j, is_nan_dark), 1) << "row 0, key " << j;
        for (int i = 1; i < 4; ++i)
            for (int j = 0; j < 4; ++j) EXPECT_EQ(count_in_cell(s.image, hm, i, j, is_nan_dark), 0) << i << "," << j;
    }
    // The off-by-one mask also hides the diagonal.
    for (const auto& hm : s.items("heatmap", "masked"))
        for (int i = 0; i < 4; ++i) EXPECT_EQ(count_in_cell(s.image, hm, i, i, is_masked_grey), 4) << "diagonal " << i;
}

namespace {

// The bars of the causality chart by position.
std::vector<nlohmann::json> bars(const Shot& s) {
    std::vector<nlohmann::json> b = s.items("bar", "dy");
    std::sort(b.begin(), b.end(), [](const auto& a, const auto& c) { return int(a["position"]) < int(c["position"]); });
    return b;
}

// Vermillion pixels in a bar's column, from its top to the baseline.
int bar_pixels(const Image& im, const nlohmann::json& bar, double baseline) {
    const int x = int(double(bar["x"]) + double(bar["w"]) / 2);
    int n = 0;
    for (int y = int(baseline) - 60; y < int(baseline); ++y) n += is_bar_colour(im.at(x, y));
    return n;
}

} // namespace

TEST(Causality, LessonPerturbationMovesOnlyPositionsFromP) {
    Shot s = take_shot("causality_lesson", {"--view", "causality", "--perturb", "2", "--strength", "1"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    auto b = bars(s);
    ASSERT_EQ(b.size(), 4u);
    const double baseline = double(b[0]["y"]) + double(b[0]["h"]);
    EXPECT_EQ(double(b[0]["h"]), 0.0);
    EXPECT_EQ(double(b[1]["h"]), 0.0);
    EXPECT_GT(double(b[2]["h"]), 0.0);
    EXPECT_GT(double(b[3]["h"]), 0.0);
    EXPECT_EQ(bar_pixels(s.image, b[0], baseline), 0);
    EXPECT_EQ(bar_pixels(s.image, b[1], baseline), 0);
    EXPECT_GT(bar_pixels(s.image, b[2], baseline), 10);
    EXPECT_GT(bar_pixels(s.image, b[3], baseline), 10);
    // The lesson prints round(max over positions 2, 3, 4 decimals) = 0.3175.
    EXPECT_EQ(double(b[0]["value"]), 0.0);
    EXPECT_EQ(double(b[1]["value"]), 0.0);
    EXPECT_NEAR(std::max(double(b[2]["value"]), double(b[3]["value"])), 0.3175, 0.00005);

    // Changed cells of y are outlined: rows 2 and 3, never rows 0 and 1.
    auto y = s.items("heatmap", "y");
    ASSERT_EQ(y.size(), 1u);
    const auto& hm = y[0];
    const double cw = double(hm["w"]) / int(hm["ncols"]), ch = double(hm["h"]) / int(hm["nrows"]);
    for (int r = 0; r < 4; ++r) {
        int yellow = 0;
        for (int c = 0; c < int(hm["ncols"]); ++c)
            for (int py = 0; py < int(ch); ++py)
                for (int px = 0; px < int(cw); ++px)
                    yellow += is_outline_yellow(s.image.at(int(double(hm["x"]) + c * cw) + px, int(double(hm["y"]) + r * ch) + py));
        if (r < 2) EXPECT_EQ(yellow, 0) << "row " << r;
        else EXPECT_GT(yellow, 20) << "row " << r;
    }
}

TEST(Causality, WithoutTheMaskEarlierPositionsMove) {
    Shot s = take_shot("causality_none", {"--view", "causality", "--perturb", "2", "--mask", "none"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    auto b = bars(s);
    ASSERT_EQ(b.size(), 4u);
    const double baseline = double(b[2]["y"]) + double(b[2]["h"]);
    for (int t = 0; t < 4; ++t) {
        EXPECT_GT(double(b[size_t(t)]["h"]), 0.0) << t;
        EXPECT_GT(bar_pixels(s.image, b[size_t(t)], baseline), 10) << t;
    }
}

TEST(Causality, OffByOneShowsANanRow) {
    Shot s = take_shot("causality_off_by_one", {"--view", "causality", "--perturb", "2", "--mask", "off-by-one"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    auto b = bars(s);
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[0]["value"], "NaN");
    auto y = s.items("heatmap", "y");
    ASSERT_EQ(y.size(), 1u);
    for (int c = 0; c < 8; ++c) EXPECT_GE(count_in_cell(s.image, y[0], 0, c, is_nan_dark), 1) << "y row 0, channel " << c;
    for (int c = 0; c < 8; ++c) EXPECT_EQ(count_in_cell(s.image, y[0], 1, c, is_nan_dark), 0) << "y row 1, channel " << c;
}

TEST(Causality, StrengthZeroChangesNothing) {
    Shot s = take_shot("causality_zero", {"--view", "causality", "--perturb", "2", "--strength", "0"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    for (const auto& bar : bars(s)) EXPECT_EQ(double(bar["h"]), 0.0);
    int yellow = 0;
    for (int y = 0; y < s.image.h; ++y)
        for (int x = 0; x < s.image.w; ++x) yellow += is_outline_yellow(s.image.at(x, y));
    EXPECT_LT(yellow, 40); // the legend's sample of the outline at most
}

TEST(LargeSizes, ShowAReadableWindowOfCells) {
    Shot s = take_shot("large_512", {"--view", "scores", "--seq-len", "512", "--n-embd", "512", "--n-head", "8"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    auto probs = s.items("heatmap", "probs");
    ASSERT_FALSE(probs.empty());
    for (const auto& hm : probs) {
        EXPECT_EQ(hm["rows"], 512);
        EXPECT_LT(int(hm["nrows"]), 512); // a window, not a smear of 512 rows
        EXPECT_GE(double(hm["w"]) / int(hm["ncols"]), 10.0);
        EXPECT_GE(double(hm["h"]) / int(hm["nrows"]), 10.0);
    }
}

TEST(Scores, PerturbationOutlinesChangedCellsButNotMaskedOnes) {
    Shot s = take_shot("scores_perturbed", {"--view", "scores", "--perturb", "2"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    // Yellow ring pixels anywhere in cell (i, j).
    auto yellow_in = [&](const nlohmann::json& hm, int i, int j) {
        int n = 0, x = 0, y = 0;
        for (double fy = 0.02; fy < 1.0; fy += 0.04)
            for (double fx = 0.02; fx < 1.0; fx += 0.04)
                if (cell_point(hm, i, j, fx, fy, x, y)) n += is_outline_yellow(s.image.at(x, y));
        return n;
    };
    for (const auto& hm : s.items("heatmap", "scaled")) {
        // Key 2 changed for every query (its k), query 2 for every key (its q).
        for (int i = 0; i < 4; ++i) EXPECT_GT(yellow_in(hm, i, 2), 0) << "before the mask, query " << i;
        for (int j = 0; j < 4; ++j) EXPECT_GT(yellow_in(hm, 2, j), 0) << "before the mask, key " << j;
        EXPECT_EQ(yellow_in(hm, 0, 0), 0);
        EXPECT_EQ(yellow_in(hm, 1, 1), 0);
    }
    for (const auto& hm : s.items("heatmap", "masked")) {
        EXPECT_EQ(yellow_in(hm, 0, 2), 0) << "a masked cell is -inf before and after";
        EXPECT_EQ(yellow_in(hm, 1, 2), 0) << "a masked cell is -inf before and after";
        EXPECT_GT(yellow_in(hm, 3, 2), 0);
    }
}
