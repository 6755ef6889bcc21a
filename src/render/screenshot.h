// screenshot.h: the back buffer as a PNG file.
#pragma once
#include <string>
#include <vector>

namespace attnviz {

// Reads the w x h back buffer before the swap (RGBA, rows top first, alpha forced opaque:
// under Xvfb it can read back as anything).
std::vector<unsigned char> read_back_buffer(int w, int h);
// read_back_buffer() written as a PNG. On failure sets `error` to one sentence.
bool write_screenshot_png(const std::string& path, int w, int h, std::string& error);
// The part x, y, rw, rh (pixels, origin top-left) of the w x h back buffer as a PNG.
bool write_screenshot_png_region(const std::string& path, int w, int h, int x, int y, int rw, int rh,
                                 std::string& error);

} // namespace attnviz
