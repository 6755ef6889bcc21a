// lesson.h: the lesson's four printed lines, as `attnviz lesson` prints them and the web
// page writes them to the browser's console at start-up.
#pragma once
#include <string>
#include <vector>

namespace attnviz {

// y1's shape, the parameter count, max |y1 - y2| at positions 0-1 and, rounded to 4
// places, at positions 2-3 (seed 0, C 8, H 2, T 4, p 2, reference kernel).
std::vector<std::string> lesson_lines();

} // namespace attnviz
