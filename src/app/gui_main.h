// gui_main.h: the window: options, the loop, headless screenshots.
#pragma once
#include "options.h"
#include <CLI/CLI.hpp>

namespace attnviz {

struct GuiOptions {
    ConfigOptions config;
};

void add_gui_options(CLI::App& app, GuiOptions& o);
int run_gui(const GuiOptions& o);

} // namespace attnviz
