// gui_modes.h: what attnviz does with the open window. The harness (tests/harness) adds the
// frame benchmark and the soak as modes of its own.
#pragma once
#include "gui_main.h"
#include "probe.h"

namespace attnviz {

// --screenshot: the probes' input (none in attnviz), let the layout settle, read back the
// frame into the PNG, then the probes' reading of it, --save-session and --save-weights.
int run_screenshot(GuiRun& r, const Probes& probes);
// The window's loop until it is closed; then --save-session.
int run_interactive(GuiRun& r);

} // namespace attnviz
