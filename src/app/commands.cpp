// commands.cpp: placeholder until the command line lands.
#include "commands.h"
#include <cstdio>

namespace attnviz {

void add_commands(CLI::App& app, Commands& cmds) {
    app.add_subcommand("lesson", "Print the lesson's four lines, computed");
}

int run_command(const CLI::App& sub, const Commands& cmds) {
    std::fprintf(stderr, "attnviz: '%s' is not implemented yet\n", sub.get_name().c_str());
    return 2;
}

} // namespace attnviz
