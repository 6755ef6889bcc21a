// gui_test_support.h: running build/attnviz headless (under xvfb-run) and reading back what
// it drew: the screenshot PNG (stb_image), and, through build/attnviz_harness (the same
// window with the test probes), the --layout-out rectangles after --keys.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attnviz_gui_test {

struct RunResult {
    int status = -1; // exit status; -1 when the program could not be started
    std::string err; // stderr
    int err_lines() const;
};

// Runs `argv` (no shell). With unset_display, DISPLAY is removed from the environment.
RunResult run(const std::vector<std::string>& argv, bool unset_display = false);
// Runs ATTNVIZ_BIN with `args` inside `xvfb-run -a -s '-screen 0 1280x800x24'`.
RunResult run_headless(const std::vector<std::string>& args);
// The same for ATTNVIZ_HARNESS_BIN: attnviz's window options plus the probes, --keys and
// --layout-out (tests/harness/screenshot_probes.h).
RunResult run_headless_harness(const std::vector<std::string>& args);
// Runs ATTNVIZ_BIN with `args` directly (for option errors and the no-display case).
RunResult run_direct(const std::vector<std::string>& args, bool unset_display);
// The same for ATTNVIZ_HARNESS_BIN (tests/harness: the probes, the soak, the frame benchmark).
RunResult run_harness(const std::vector<std::string>& args, bool unset_display);

struct Rgb {
    int r = 0, g = 0, b = 0;
};

struct Image {
    int w = 0, h = 0;
    std::vector<uint8_t> rgba;
    Rgb at(int x, int y) const;
    int distinct_colours() const;
};
Image load_png(const std::string& path);
// Fraction of pixels whose colour differs between two images of the same size.
double differing_fraction(const Image& a, const Image& b);

// One screenshot with its layout.
struct Shot {
    RunResult result;
    Image image;
    nlohmann::json layout;
    // Heatmaps / bars with this name (and head, when >= 0).
    std::vector<nlohmann::json> items(const std::string& kind, const std::string& name, int head = -1) const;
};
// attnviz_harness --screenshot DIR/name.png --layout-out DIR/name.json args...
Shot take_shot(const std::string& name, const std::vector<std::string>& args);

// A failed expectation for each drawn item of the shot that is not inside its window.
void expect_inside(const Shot& s, const std::string& what);

// Screen pixel inside cell (row, col) of a heatmap item, at fractions (fx, fy) of the cell;
// false when the cell is not in the item's window.
bool cell_point(const nlohmann::json& heatmap, int row, int col, double fx, double fy, int& x, int& y);

// The looks the heatmap shader gives to special values (shaders/heatmap_frag.glsl).
bool is_masked_grey(Rgb c);  // neutral grey stripes
bool is_nan_dark(Rgb c);     // the NaN look's near-black
bool is_outline_yellow(Rgb c);
bool is_bar_colour(Rgb c);   // vermillion bars of the causality chart

std::string temp_dir(); // one directory per test process

} // namespace attnviz_gui_test
