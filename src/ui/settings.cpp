// settings.cpp: see settings.h.
#include "settings.h"
#include "text_util.h"
#include "atomic_file.h"
#include "session.h"
#include "theme.h"
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/stat.h>

namespace attnviz {

std::string default_settings_path() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    // The XDG base directory spec: a relative XDG_CONFIG_HOME is invalid and ignored.
    if (xdg && xdg[0] == '/') return std::string(xdg) + "/attnviz/settings.json";
    const char* home = std::getenv("HOME");
    if (home && *home) return std::string(home) + "/.config/attnviz/settings.json";
    return "";
}

SettingsRead read_settings(const std::string& path, Settings& out, std::string& warning) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return SettingsRead::missing;
    std::stringstream buf;
    buf << f.rdbuf();
    const std::string head = "attnviz: warning: ignoring the settings file " + escaped(path) + ": ";
    const nlohmann::json j = nlohmann::json::parse(buf.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        warning = head + "it is not a JSON object; fix or delete it (it is rewritten when a setting changes)";
        return SettingsRead::broken;
    }
    Settings s = out;
    std::string error;
    if (j.contains("theme")) {
        if (!j["theme"].is_string() || !parse_theme(j["theme"].get<std::string>(), s.theme, error)) {
            warning = head + "\"theme\" must be dark, light or high-contrast";
            return SettingsRead::broken;
        }
    }
    if (j.contains("font_scale")) {
        const auto& v = j["font_scale"];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 1 || v.get<double>() > 3) {
            warning = head + "\"font_scale\" must be a number from 1 to 3";
            return SettingsRead::broken;
        }
        s.font_scale = float(v.get<double>());
    }
    if (j.contains("palette")) {
        if (!j["palette"].is_string() || !parse_palette(j["palette"].get<std::string>(), s.palette, error)) {
            warning = head + "\"palette\" must be default or cb";
            return SettingsRead::broken;
        }
    }
    out = s;
    return SettingsRead::found;
}

namespace {

// mkdir -p for the folders of `path`.
bool make_parent_dirs(const std::string& path, std::string& error) {
    for (size_t i = 1; i < path.size(); ++i) {
        if (path[i] != '/') continue;
        const std::string dir = path.substr(0, i);
        if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
            error = "cannot make the settings folder " + dir + "; check that it is writable";
            return false;
        }
    }
    return true;
}

} // namespace

bool write_settings(const std::string& path, const Settings& s, std::string& error) {
    if (!make_parent_dirs(path, error)) return false;
    nlohmann::json j = nlohmann::json::object();
    j["theme"] = to_string(s.theme);
    j["font_scale"] = double(s.font_scale);
    j["palette"] = to_string(s.palette);
    return write_file_atomically(path, j.dump(2) + "\n", error);
}

Settings settings_of(const AppState& s) {
    Settings out;
    out.theme = s.screen.theme;
    out.font_scale = s.screen.font_scale;
    out.palette = s.screen.palette;
    return out;
}

} // namespace attnviz
