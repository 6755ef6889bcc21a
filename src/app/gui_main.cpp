// gui_main.cpp: placeholder until the window lands.
#include "gui_main.h"

namespace attnviz {

void add_gui_options(CLI::App& app, GuiOptions& o) { add_config_options(app, o.config, true, true); }

int run_gui(const GuiOptions& o) { return usage_error("the window is not implemented yet"); }

} // namespace attnviz
