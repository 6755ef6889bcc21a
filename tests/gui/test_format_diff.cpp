// test_format_diff.cpp: the causality bars' labels carry the exact float32 max |Δy|.
#include "format.h"
#include <cstdlib>
#include <gtest/gtest.h>

TEST(FormatDiff, ExactZeroIsSaidInWords) { EXPECT_EQ(attnviz::format_diff(0.f), "0.0 (exactly)"); }

TEST(FormatDiff, ReadsBackToTheSameFloat) {
    // The lesson's max |Δy| and values whose first digits agree.
    for (float v : {0.317545503f, 0.31754551f, 1e-7f, 3.14159274f, 12345.678f}) {
        const std::string s = attnviz::format_diff(v);
        EXPECT_EQ(std::strtof(s.c_str(), nullptr), v) << s;
    }
}
