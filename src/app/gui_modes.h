// gui_modes.h: what attnviz does with the open window. The harness (tests/harness) adds the
// frame benchmark and the soak as modes of its own.
#pragma once
#include "gui_main.h"

namespace attnviz {

// --screenshot: press the --keys, let the layout settle, read back the frame into the PNG,
// then --layout-out and --save-session.
int run_screenshot(GuiRun& r);
// The window's loop until it is closed; then --save-session.
int run_interactive(GuiRun& r);

} // namespace attnviz
