// probe.h: what a test build adds to a --screenshot run without being in attnviz: options
// of its own on the window's command line, input before the picture, and what it reads from
// the picture's frame. attnviz registers none; attnviz_harness (tests/harness) registers the
// key script and the layout dump, so that the shipped binary holds neither.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace attnviz {

struct GuiOptions;
struct GuiRun;

class Probe {
public:
    virtual ~Probe() = default;
    // Its options, beside the window's on the same command line.
    virtual void add_options(CLI::App&) {}
    // After parsing, before any window opens: false with one sentence in the string (exit 2).
    virtual bool check(const GuiOptions&, std::string&) { return true; }
    // --screenshot, after the first frame and before the picture's state settles: input for
    // the frames the function draws and shows, one per call.
    virtual void before_picture(GuiRun&, const std::function<void()>&) {}
    // --screenshot: the picture's frame, drawn and read back (width x height), not yet shown.
    // False with one sentence in the string (exit 2).
    virtual bool after_picture(GuiRun&, int, int, std::string&) { return true; }
};
using Probes = std::vector<Probe*>;

} // namespace attnviz
