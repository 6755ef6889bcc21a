// test_view_tabs.cpp: the row of view tabs over every view. While the window serves the class,
// pages refused for --per-address are named there, in sight, with the option (the side
// panel's sentence is below the fold at 1280 x 800): beside the tabs when there is room,
// else on a row of its own that pushes the view down.
#include "imgui_frame.h"
#include "state_test_support.h"
#include "window_layout.h"
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

TEST(ViewTabs, PagesRefusedForPerAddressAreNamedBesideTheTabs) {
    AppState s = lesson_state();
    ImGuiFrame f;
    for (const float x_end : {1270.f, 700.f}) {
        s.follow = FollowStatus{};
        float plain = 0, warned = 0;
        f.frame(ImVec2(-1, -1), false, [&] { plain = draw_view_tabs(s, f.ui, ImVec2(10, 10), x_end); });
        EXPECT_EQ(f.find("refused_pages", "1 page refused (--per-address)"), nullptr);
        s.follow.serving = true;
        s.follow.per_address = 8;
        s.follow.refused_address = 1;
        f.frame(ImVec2(-1, -1), false, [&] { warned = draw_view_tabs(s, f.ui, ImVec2(10, 10), x_end); });
        const LayoutItem* it = f.find("refused_pages", "1 page refused (--per-address)");
        ASSERT_NE(it, nullptr) << "at " << x_end;
        EXPECT_EQ(it->value, 1.f);
        EXPECT_LE(it->x + it->w, x_end + 0.5f) << "nothing cut";
        EXPECT_GE(it->x, 10.f);
        if (x_end > 1000) EXPECT_EQ(warned, plain) << "beside the tabs: the view keeps its place";
        else EXPECT_GT(warned, plain) << "a row of its own: the view starts under it";
        EXPECT_LT(it->y, warned) << "above the view";
    }
    EXPECT_NE(refused_pages_text(s.follow).find("1 page was refused: more than 8 from one address"), std::string::npos);
    EXPECT_NE(refused_pages_text(s.follow).find("--per-address 0"), std::string::npos);
    s.follow.refused_address = 0;
    EXPECT_EQ(refused_pages_text(s.follow), "");
}
