// main.cpp: attnviz's entry point. The commands (lesson, trace, ...) live in commands.cpp,
// the window in gui_main.cpp; this file only parses and dispatches.
#include "commands.h"
#include "generate_command.h"
#include "get_command.h"
#include "gui_main.h"
#include "options.h"
#include "patch_command.h"
#include "tokenize_command.h"
#include <CLI/CLI.hpp>
#include <string>

int main(int argc, char** argv) {
    using namespace attnviz;

    // Setup: one CLI11 app; commands are subcommands, the GUI owns the top level.
    CLI::App app{"attnviz: a visualizer for the lesson's causal multi-head self-attention.\n"
                 "With no command it opens the window on the lesson's example.",
                 "attnviz"}; // the name help shows, whatever path started it
    app.set_version_flag("--version", std::string("attnviz ") + ATTNVIZ_VERSION);
    app.require_subcommand(0, 1);
    Commands commands;
    add_commands(app, commands);
    add_tokenize_command(app); // GPT-2's tokenizer on a text (tokenize_command.h)
    add_get_command(app);      // a model from the Hugging Face Hub (get_command.h)
    add_generate_command(app); // a model writing on, with a KV cache (generate_command.h)
    add_patch_command(app);    // activation patching on a GPT model (patch_command.h)
    GuiOptions gui;
    add_gui_options(app, gui);

    // Parse: help and version exit 0; anything else the parser rejects is bad input.
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return usage_error(describe_parse_error(app, e));
    }

    // --model NAME: a Hub id becomes its cached snapshot folder before any command reads it.
    for (ConfigOptions* c : {&commands.trace.config, &commands.bench.config, &commands.export_args.config, &gui.config}) {
        std::string error;
        if (!resolve_model_option(*c, error)) return usage_error(error);
    }

    // Dispatch.
    for (CLI::App* sub : app.get_subcommands()) {
        if (int status = run_tokenize_command(*sub); status >= 0) return status;
        if (int status = run_get_command(*sub); status >= 0) return status;
        if (int status = run_generate_command(*sub); status >= 0) return status;
        if (int status = run_patch_command(*sub); status >= 0) return status;
        return run_command(*sub, commands);
    }
    return run_gui(gui);
}
