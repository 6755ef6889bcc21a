// gui_main.h: the window: options, the loop, headless screenshots.
//
//   attnviz [config options] [--view walk|qkv|scores|causality] [--step N] [--perturb P]
//           [--strength A] [--theme dark|light|high-contrast] [--font-scale S] [--palette default|cb]
//           [--settings FILE]
//   attnviz ... --screenshot FILE.png [--size WxH] [--layout-out FILE.json]
//   attnviz ... --bench-frames N
//   attnviz --open FILE [--screenshot ...] [--save-session FILE]
//   attnviz --soak N [--soak-seed S]   (gui_soak.h)
#pragma once
#include "options.h"
#include <CLI/CLI.hpp>
#include <string>

namespace attnviz {

struct GuiOptions {
    ConfigOptions config;
    std::string screenshot;   // render one state into this PNG and exit
    std::string size;         // "WxH", default 1280x800
    std::string view;         // walk (default), qkv, scores, causality
    std::string step;         // shape-walk step, 0 (the input x) .. 11 (proj)
    std::string strength;     // 0 (original row) .. 1 (the lesson's replacement row)
    std::string layout_out;   // with --screenshot: the drawn rectangles as JSON
    std::string theme;        // dark (default), light, high-contrast
    std::string font_scale;   // 1 .. 3
    std::string bench_frames; // headless: time N idle and N dragging frames, print JSON
    std::string open;         // start from this session file
    std::string save_session; // write the state to this session file (after the screenshot, or on exit)
    std::string palette;      // default (RdBu, viridis) or cb (PuOr, cividis)
    std::string settings;     // the settings file (settings.h); headless runs use one only when given
    std::string keys;         // headless: key presses before the screenshot, e.g. "t,p,f2" (key_script.h)
    // Soak run (gui_soak.h): frames, random seed, a deliberate fault for the tests.
    std::string soak, soak_seed, soak_fault;
};

void add_gui_options(CLI::App& app, GuiOptions& o);
// Returns the process exit status: 0, or 2 for bad input and for no display.
int run_gui(const GuiOptions& o);

} // namespace attnviz
