// key_script.cpp: see key_script.h.
#include "key_script.h"
#include "text_util.h"
#include <GLFW/glfw3.h>
#include <cctype>
#include <imgui.h>

namespace attnviz {

namespace {

bool key_of(const std::string& n, KeyPress& k) {
    if (n.size() == 1 && std::isalpha(static_cast<unsigned char>(n[0]))) {
        k.key = std::toupper(static_cast<unsigned char>(n[0])); // GLFW letter codes are 'A'..'Z'
        k.ch = unsigned(k.shift ? std::toupper(static_cast<unsigned char>(n[0])) : std::tolower(static_cast<unsigned char>(n[0])));
        return true;
    }
    if (n.size() == 1 && std::isdigit(static_cast<unsigned char>(n[0]))) {
        k.key = n[0];
        k.ch = unsigned(n[0]);
        return true;
    }
    if (n == "=") return k.key = GLFW_KEY_EQUAL, k.ch = '=', true;
    if (n == "-") return k.key = GLFW_KEY_MINUS, k.ch = '-', true;
    if (n == "[") return k.key = GLFW_KEY_LEFT_BRACKET, k.ch = '[', true;
    if (n == "]") return k.key = GLFW_KEY_RIGHT_BRACKET, k.ch = ']', true;
    if (n == "." || n == "period") return k.key = GLFW_KEY_PERIOD, k.ch = '.', true; // the next layer
    if (n == "comma") return k.key = GLFW_KEY_COMMA, k.ch = ',', true;
    if (n == "?") return k.key = GLFW_KEY_SLASH, k.shift = true, k.ch = '?', true;
    if (n == "left") return k.key = GLFW_KEY_LEFT, true;
    if (n == "right") return k.key = GLFW_KEY_RIGHT, true;
    if (n == "up") return k.key = GLFW_KEY_UP, true;
    if (n == "down") return k.key = GLFW_KEY_DOWN, true;
    if (n == "esc") return k.key = GLFW_KEY_ESCAPE, true;
    if (n.size() >= 2 && n[0] == 'f') {
        int f = 0;
        for (size_t i = 1; i < n.size(); ++i) {
            if (!std::isdigit(static_cast<unsigned char>(n[i]))) return false;
            f = f * 10 + (n[i] - '0');
        }
        if (f < 1 || f > 12) return false;
        k.key = GLFW_KEY_F1 + f - 1;
        return true;
    }
    return false;
}

} // namespace

bool parse_key_script(const std::string& text, std::vector<KeyPress>& out, std::string& error) {
    std::vector<KeyPress> keys;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        std::string n = text.substr(start, end - start);
        KeyPress k;
        k.name = n;
        for (char& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
        if (n.rfind("ctrl+", 0) == 0 && n.size() > 5) k.ctrl = true, n = n.substr(5);
        else if (n.rfind("shift+", 0) == 0 && n.size() > 6) k.shift = true, n = n.substr(6);
        else if (n.rfind("alt+", 0) == 0 && n.size() > 4) k.alt = true, n = n.substr(4);
        if (!key_of(n, k)) {
            error = "--keys: " + quote(k.name) + " is not a key; use letters, digits, f1 to f12, left, right, up, down, esc, =, -, [, ], ?, ., comma "
                    "with an optional ctrl+, shift+ or alt+, separated by commas";
            return false;
        }
        if (k.ctrl || k.alt) k.ch = 0; // Ctrl+key and Alt+key type nothing
        keys.push_back(k);
        start = end + 1;
    }
    out = keys;
    return true;
}

void press_key(const KeyPress& k, bool down) {
    ImGuiIO& io = ImGui::GetIO();
    if (k.key >= 0 && k.key < IM_ARRAYSIZE(io.KeysDown)) io.KeysDown[k.key] = down;
    io.KeyCtrl = down && k.ctrl;
    io.KeyShift = down && k.shift;
    io.KeyAlt = down && k.alt;
    if (down && k.ch) io.AddInputCharacter(k.ch);
}

} // namespace attnviz
