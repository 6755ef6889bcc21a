// settings.h: what the app remembers between runs - theme, text size and colour palette -
// in $XDG_CONFIG_HOME/attnviz/settings.json (default ~/.config/attnviz/settings.json).
//
// Read at start (command-line options override it for that run), written whenever one of
// them is changed in the app and on exit, through a temporary file and a rename. A broken
// file is ignored with a one-line warning. Headless runs (--screenshot, --bench-frames,
// --soak) neither read nor write it, so their pictures do not depend on the user's
// choices, unless --settings FILE names a file for them.
#pragma once
#include "app_state.h"
#include <string>

namespace attnviz {

struct Settings {
    Theme theme = Theme::dark;
    float font_scale = 1;
    PaletteKind palette = PaletteKind::standard;
};

// $XDG_CONFIG_HOME/attnviz/settings.json when XDG_CONFIG_HOME is set to an absolute path,
// else $HOME/.config/attnviz/settings.json; "" when neither is known.
std::string default_settings_path();

enum class SettingsRead { found, missing, broken };
// Reads `path` into `out`. A missing file leaves `out` alone (missing); a file that is not
// valid settings leaves it alone too and sets `warning` to one sentence (broken).
SettingsRead read_settings(const std::string& path, Settings& out, std::string& warning);
// Makes the folder if need be, then writes atomically; on failure one sentence in `error`.
bool write_settings(const std::string& path, const Settings& s, std::string& error);

Settings settings_of(const AppState& s);

} // namespace attnviz
