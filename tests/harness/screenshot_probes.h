// screenshot_probes.h: attnviz_harness's probes (src/app/probe.h) for a --screenshot run,
// the two things only the tests need, kept out of the shipped attnviz:
//   --keys K,...        key presses before the picture, one per frame (key_script.h)
//   --layout-out FILE   the picture's drawn rectangles as JSON (layout_record.h)
#pragma once
#include "key_script.h"
#include "probe.h"
#include <string>
#include <vector>

namespace attnviz {

class KeyScriptProbe : public Probe {
public:
    void add_options(CLI::App& app) override;
    bool check(const GuiOptions& o, std::string& error) override;
    void before_picture(GuiRun& r, const std::function<void()>& next_frame) override;

private:
    std::string text_;
    std::vector<KeyPress> keys_;
};

class LayoutProbe : public Probe {
public:
    void add_options(CLI::App& app) override;
    bool check(const GuiOptions& o, std::string& error) override;
    bool after_picture(GuiRun& r, int width, int height, std::string& error) override;

private:
    std::string path_;
};

} // namespace attnviz
