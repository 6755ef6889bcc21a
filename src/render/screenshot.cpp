// screenshot.cpp: see screenshot.h.
#include "screenshot.h"
#include "text_util.h"
#include "gl_api.h"
#include <stb/stb_image_write.h> // implementation already in libstb.so
#include <cstring>

namespace attnviz {

std::vector<unsigned char> read_back_buffer(int w, int h) {
    std::vector<unsigned char> pixels(size_t(w) * size_t(h) * 4);
    glFinish();
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    // GL's rows start at the bottom; PNG's at the top.
    const size_t stride = size_t(w) * 4;
    std::vector<unsigned char> row(stride);
    for (int y = 0; y < h / 2; ++y) {
        unsigned char* a = pixels.data() + size_t(y) * stride;
        unsigned char* b = pixels.data() + size_t(h - 1 - y) * stride;
        std::memcpy(row.data(), a, stride);
        std::memcpy(a, b, stride);
        std::memcpy(b, row.data(), stride);
    }
    for (size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;
    return pixels;
}

bool write_screenshot_png(const std::string& path, int w, int h, std::string& error) {
    std::vector<unsigned char> pixels = read_back_buffer(w, h);
    if (!stbi_write_png(path.c_str(), w, h, 4, pixels.data(), w * 4)) {
        error = "could not write the screenshot to " + quote_path(path) + "; check that its folder exists and is writable";
        return false;
    }
    return true;
}

bool write_screenshot_png_region(const std::string& path, int w, int h, int x, int y, int rw, int rh,
                                 std::string& error) {
    if (x < 0 || y < 0 || rw < 1 || rh < 1 || x + rw > w || y + rh > h) {
        error = "the part of the window to save is empty or outside it; make the window larger and save again";
        return false;
    }
    std::vector<unsigned char> pixels = read_back_buffer(w, h);
    const unsigned char* first = pixels.data() + (size_t(y) * size_t(w) + size_t(x)) * 4;
    if (!stbi_write_png(path.c_str(), rw, rh, 4, first, w * 4)) {
        error = "could not write the PNG to " + quote_path(path) + "; check that its folder exists and is writable";
        return false;
    }
    return true;
}

} // namespace attnviz
