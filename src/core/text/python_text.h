// python_text.h: numbers and shapes as Python prints them, so that attnviz's text (the
// lesson's printout, shapes in titles and files) reads exactly as the lesson's Python does.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attnviz {

// repr(v) as Python 3 prints a float: the shortest text that reads back as the same
// double, "0.0" and "1.5" with their point, "1e-05" and "1e+16" outside [1e-4, 1e16).
std::string python_float_repr(double v);
// Python's round(v, ndigits) for a float: the double nearest to v correctly rounded to
// ndigits decimals (ties to even on v's exact binary value).
double python_round(double v, int ndigits);
// A shape as Python prints a tuple: "(1, 4, 8)", "(8,)", "()".
std::string python_tuple(const std::vector<int64_t>& shape);

} // namespace attnviz
