// test_presentation.cpp: the text size and each theme change the picture.
#include "gui_test_support.h"
#include <gtest/gtest.h>

using namespace attnviz_gui_test;

TEST(Presentation, FontScaleTwoAndEachThemeChangeThePicture) {
    Shot base = take_shot("pres_base", {"--view", "walk"});
    ASSERT_EQ(base.result.status, 0) << base.result.err;
    Shot big = take_shot("pres_big", {"--view", "walk", "--font-scale", "2"});
    ASSERT_EQ(big.result.status, 0) << big.result.err;
    EXPECT_GT(differing_fraction(base.image, big.image), 0.05);
    for (const char* theme : {"light", "high-contrast"}) {
        Shot t = take_shot(std::string("pres_") + theme, {"--view", "walk", "--theme", theme});
        ASSERT_EQ(t.result.status, 0) << t.result.err;
        EXPECT_GT(differing_fraction(base.image, t.image), 0.05) << theme;
    }
}
