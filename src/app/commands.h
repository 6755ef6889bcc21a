// commands.h: attnviz's command-line commands (lesson, trace, ...).
#pragma once
#include "options.h"
#include <CLI/CLI.hpp>

namespace attnviz {

// Everything the commands parse into; filled by CLI11.
struct Commands {
    ConfigOptions trace;
    bool intermediates = false;
};

void add_commands(CLI::App& app, Commands& cmds);
// Runs the selected subcommand; returns the process exit status.
int run_command(const CLI::App& sub, const Commands& cmds);

} // namespace attnviz
