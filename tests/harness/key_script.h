// key_script.h: key presses for a headless run (attnviz_harness --keys), so that tests can
// drive the app's shortcuts the way a user does: one press per frame before the screenshot.
#pragma once
#include <string>
#include <vector>

namespace attnviz {

struct KeyPress {
    int key = -1;       // GLFW key code, or -1 for a typed character only
    bool ctrl = false, shift = false, alt = false;
    unsigned ch = 0;    // the character it types, 0: none
    std::string name;
};

// "t,p,f2,ctrl+=,?,right": comma-separated key names (letters, digits, f1..f12, left, right,
// up, down, esc, =, -, ?, with an optional ctrl+, shift+ or alt+). On failure one sentence in `error`.
bool parse_key_script(const std::string& text, std::vector<KeyPress>& out, std::string& error);
// Holds (down) or releases one key press in ImGui's input state, before a frame.
void press_key(const KeyPress& k, bool down);

} // namespace attnviz
