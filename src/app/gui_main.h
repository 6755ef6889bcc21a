// gui_main.h: the window's run. Open the window (window.h), put the state on the plan
// (gui_plan.h), run one mode, and let the window's guard tear everything down once.
#pragma once
#include "app_state.h"
#include "gui_plan.h"
#include "settings.h"
#include "window.h"
#include <functional>
#include <string>

namespace attnviz {

// The settings file of a run (settings.h), "" for none, and what was last written to it:
// it is written only when the app changes a setting, not for this run's options.
struct SettingsFile {
    std::string path;
    Settings written;
    void save_if_changed(const AppState& s);
};

// What a mode runs on: the options and plan, the open window and the state put on the plan.
struct GuiRun {
    const GuiOptions& options;
    const GuiPlan& plan;
    AppWindow& window;
    AppState& state;
    SettingsFile& settings;
};
// A mode returns the process exit status.
using GuiMode = std::function<int(GuiRun&)>;

// What open_window sets up; destroyed in reverse order, the window last.
struct OpenWindow {
    AppWindow window;
    AppState state;
    SettingsFile settings;
};
// Opens the window for `plan`, reads the settings and prepares the state. Returns 0, or 2
// when the window cannot open. The web page keeps `w` for the page's life (web_main.cpp).
int open_window(const GuiOptions& o, const GuiPlan& plan, OpenWindow& w);
// open_window, then `mode`.
// Returns the mode's status, or 2 when the window cannot open.
int run_window(const GuiOptions& o, const GuiPlan& plan, const GuiMode& mode);

// attnviz without a command: --screenshot renders one frame into a PNG, otherwise the
// window's loop runs until it is closed. Returns 0, or 2 for bad input and for no display.
int run_gui(const GuiOptions& o);

} // namespace attnviz
