// options.h: the config options shared by every command and by the GUI.
//
//   --seed N --n-embd C --n-head H --seq-len T --mask causal|none|off-by-one
//   --scale head-dim|n-embd|none --kernel reference|fast
//
// Values are taken as text and checked here, so that every bad value gets one sentence
// that names it and says what is allowed (exit status 2), never a bare converter error.
#pragma once
#include "config.h"
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace attnviz {

struct ConfigOptions {
    std::string seed = "0", n_embd = "8", n_head = "2", seq_len = "4";
    std::string mask = "causal", scale = "head-dim";
    std::string kernel;  // empty: choose automatically (see choose_kernel)
    std::string perturb; // empty: no perturbation
};

// Adds the options above to `app` (a command or the top level).
void add_config_options(CLI::App& app, ConfigOptions& o, bool with_kernel, bool with_perturb);

// Turns the texts into a Config. On failure returns false and sets `error` to one
// sentence (without a trailing newline).
bool to_config(const ConfigOptions& o, Config& c, std::string& error);
// The perturbed position, if --perturb was given; checked against 0..T-1.
bool to_perturb(const ConfigOptions& o, const Config& c, std::optional<int>& p, std::string& error);
// The kernel: --kernel if given, otherwise the reference kernel where it is fast enough
// for a live slider and the fast kernel above that.
bool to_kernel(const ConfigOptions& o, const Config& c, KernelKind& k, std::string& error);
KernelKind choose_kernel(const Config& c);

// Prints "attnviz: <sentence>" to stderr and returns 2, the exit status for bad input.
int usage_error(const std::string& sentence);

// One sentence for an error CLI11's parser raised (unknown option or command, missing
// value, ...), naming what was typed and where to look: "see attnviz trace --help".
std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& e);

} // namespace attnviz
