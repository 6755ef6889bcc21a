// screenshot_probes.cpp: see screenshot_probes.h.
#include "screenshot_probes.h"
#include "gui_main.h"
#include "layout_record.h"

namespace attnviz {

void KeyScriptProbe::add_options(CLI::App& app) {
    app.add_option("--keys", text_, "with --screenshot: key presses before the picture, e.g. t,p,f2")->type_name("K,...");
}

bool KeyScriptProbe::check(const GuiOptions& o, std::string& error) {
    if (text_.empty()) return true;
    if (o.screenshot.empty()) {
        error = "--keys needs --screenshot: the keys are pressed before the screenshot's frame";
        return false;
    }
    return parse_key_script(text_, keys_, error);
}

void KeyScriptProbe::before_picture(GuiRun&, const std::function<void()>& next_frame) {
    // Each key held for one frame and released in the next, as a user presses it.
    for (const KeyPress& k : keys_) {
        press_key(k, true);
        next_frame();
        press_key(k, false);
        next_frame();
    }
}

void LayoutProbe::add_options(CLI::App& app) {
    app.add_option("--layout-out", path_, "with --screenshot: write the drawn rectangles as JSON")->type_name("FILE");
}

bool LayoutProbe::check(const GuiOptions& o, std::string& error) {
    if (path_.empty() || !o.screenshot.empty()) return true;
    error = "--layout-out needs --screenshot: the layout is written for the screenshot's frame";
    return false;
}

bool LayoutProbe::after_picture(GuiRun& r, int width, int height, std::string& error) {
    return path_.empty() || write_layout_json(path_, r.state, width, height, error);
}

} // namespace attnviz
