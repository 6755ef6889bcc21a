// test_uploads.cpp: a slider move sends only what causality lets change (row p of x, q,
// k, v and of the raw scores, column p of the raw scores, rows from p of probs, concat
// and y), and what the window then shows is exactly what a fresh start on the same
// perturbation shows, so no changed cell was left unsent.
#include "app_state.h"
#include "gui_test_support.h"
#include <algorithm>
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

bool has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Config mid_config() {
    Config c;
    c.seq_len = 24;
    c.n_embd = 16;
    c.n_head = 2;
    return c;
}

TEST(Uploads, SliderMoveAsksForRowAndColumnPAndRowsFromP) {
    AppState s;
    init_app_state(s, mid_config(), KernelChoice::reference);
    recompute(s);
    s.upload = UploadRequest{};
    request_perturbation(s, 9, 0.5f);
    recompute(s);
    EXPECT_FALSE(s.upload.full);
    EXPECT_EQ(s.upload.row0, 9);
    EXPECT_TRUE(has(s.upload.rows, 9));
    EXPECT_TRUE(has(s.upload.columns, 9));
    EXPECT_EQ(s.upload.rows.size(), 1u);

    // Moving p: the old row goes back to the recipe's, so both rows and columns are sent,
    // and every row from the earlier of the two.
    s.upload = UploadRequest{};
    request_perturbation(s, 5, 0.5f);
    recompute(s);
    EXPECT_EQ(s.upload.row0, 5);
    EXPECT_TRUE(has(s.upload.rows, 5));
    EXPECT_TRUE(has(s.upload.rows, 9));
    EXPECT_TRUE(has(s.upload.columns, 5));
    EXPECT_TRUE(has(s.upload.columns, 9));
}

// The scores view (raw scores before the mask and softmax weights of every head) and the
// qkv view (x, q, k, v) after dragging the strength and moving p with the keys, against a
// fresh start at the final p and strength: any row or column the partial uploads missed
// would keep its old colour.
TEST(Uploads, DraggedPictureEqualsAFreshStart) {
    const std::vector<std::string> size = {"--seq-len", "24", "--n-embd", "16", "--n-head", "2", "--kernel", "reference"};
    const char* views[][2] = {{"3", "scores"}, {"2", "qkv"}};
    for (const auto& v : views) {
        std::vector<std::string> dragged = size, fresh = size;
        // Causality view: right raises the strength by 0.05 (22 presses reach 1), down moves p
        // from 7 to 8 (row and column 7 go back, 8 change); then the digit switches view.
        std::string keys;
        for (int i = 0; i < 22; ++i) keys += "right,";
        keys += std::string("down,") + v[0];
        for (const std::string& a : {std::string("--view"), std::string("causality"), std::string("--perturb"),
                                     std::string("7"), std::string("--keys"), keys})
            dragged.push_back(a);
        for (const char* a : {"--view", v[1], "--perturb", "8", "--strength", "1"}) fresh.push_back(a);
        Shot d = take_shot(std::string("upload_dragged_") + v[1], dragged);
        Shot f = take_shot(std::string("upload_fresh_") + v[1], fresh);
        ASSERT_EQ(d.result.status, 0) << d.result.err;
        ASSERT_EQ(f.result.status, 0) << f.result.err;
        ASSERT_EQ(d.image.w, f.image.w);
        ASSERT_EQ(d.image.h, f.image.h);
        EXPECT_GT(d.image.distinct_colours(), 20);
        EXPECT_EQ(differing_fraction(d.image, f.image), 0.0) << v[1];
    }
}

} // namespace
