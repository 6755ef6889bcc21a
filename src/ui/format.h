// format.h: numbers and shapes as the lesson writes them.
//
// A minus sign is U+2212 "−", -inf is "−∞", NaN is "NaN", and an exact zero is "0" (a
// softmax weight of a masked key) or "0.0 (exactly)" (an output that did not move), so an
// exact zero never looks like a small number that was rounded.
#pragma once
#include "config.h"
#include <imgui.h>
#include <string>

namespace attnviz {

// v with `decimals` digits after the point ("−0.52", "−∞", "NaN", exact zero "0"). A
// nonzero value that would round to zero reads "4e−4" (or "≈0" with one decimal).
std::string format_value(float v, int decimals);
// The longest of format_value(v, 3), (v, 2), (v, 1), (v, 0) that fits `width` pixels in
// `font`; empty if none fits.
std::string format_fitting(float v, float width, ImFont* font);
// Every digit a float32 has ("0.280876935").
std::string format_exact(float v);
// A difference: "0.0 (exactly)" for an exact zero, otherwise all 9 significant digits.
std::string format_diff(float d);
// 256 -> "256"; 16777216 -> "16,777,216 (about 16.8M)".
std::string format_count(int64_t n);
// v with a printf format ("%.3f"), "NaN" for NaN.
std::string format_with(double v, const char* printf_format);
// "(B, T, C) = (1, 4, 8)" from symbols and the numbers for the config.
std::string format_shape(const char* symbols, const Config& c);

} // namespace attnviz
