// commands.h: attnviz's command-line commands.
//
//   lesson   the lesson's four printed lines, computed
//   trace    one run as JSON, with the reference files' field names
//   bench    forward and slider-update timings as JSON
//   export   one intermediate tensor to .npy or .csv
//   save-weights  the seeded (or --weights-loaded) weights to a .safetensors file
//   train, heads  trained models (train_commands.h), which trace also runs
//
// trace, bench and export take the config options and --text, --weights, --layer
// (options.h); docs/cli.md documents every command with examples.
#pragma once
#include "ablation_options.h"
#include "options.h"
#include <CLI/CLI.hpp>

namespace attnviz {

// Everything the commands parse into; filled by CLI11. Values stay text until the
// command checks them, so each bad value gets its own sentence (see options.h).
struct TraceArgs {
    ConfigOptions config;
    bool intermediates = false;
    AblationOptions ablation; // --ablate, --ablate-mode, --dla-pos: whole models only
    bool logit_lens = false;  // --logit-lens: GPT --model only
};

struct BenchArgs {
    ConfigOptions config;
    std::string repeat; // empty: enough runs for about a second, at least 3
    AblationOptions ablation; // --ablate, --ablate-mode: GPT --model only
    bool logit_lens = false;  // --logit-lens: GPT --model only, the lens timed after each forward
};

struct ExportArgs {
    ConfigOptions config;
    std::string tensor, out;
    std::string strength; // empty: 1 (the replacement row itself)
};

struct SaveWeightsArgs {
    ConfigOptions config; // --seed, --n-embd, --n-head, --weights, --layer
    std::string out;      // FILE.safetensors
};

struct Commands {
    TraceArgs trace;
    BenchArgs bench;
    ExportArgs export_args;
    SaveWeightsArgs save_weights;
};

void add_commands(CLI::App& app, Commands& cmds);
// Ends a command's JSON on stdout: a newline, a flush, and 0, or 1 with one sentence on
// stderr ("could not write the <what> to stdout") when stdout refused it (a full disk, a
// closed pipe).
int finish_stdout(const char* what);
// Runs the selected subcommand; returns the process exit status.
int run_command(const CLI::App& sub, const Commands& cmds);

} // namespace attnviz
