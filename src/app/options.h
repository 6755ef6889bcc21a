// options.h: the config options shared by every command and by the GUI.
//
//   --seed N --n-embd C --n-head H --seq-len T --mask causal|none|off-by-one
//   --scale head-dim|n-embd|none --kernel reference|fast --perturb P     (add_config_options)
//   --text TEXT --weights FILE.safetensors --layer N                     (add_input_options)
//
// Values are taken as text and checked here, so that every bad value gets one sentence
// that names it and says what is allowed (exit status 2), never a bare converter error.
//
// Where the sizes come from: C and H from --n-embd and --n-head, or from the --weights
// file (C from its shapes, H from --n-head or the file's __metadata__); T from --seq-len,
// or from --text (one position per word). An option that contradicts the file or the
// text is an error sentence, never silently overridden.
//
// For the GUI: register add_config_options and add_input_options on the top level, then
// to_inputs gives the config, the words (tokens) and the loaded weights, and
// to_experiment the lesson's recipe over them; to_config alone gives just the config.
#pragma once
#include "config.h"
#include "experiment.h"
#include "weights_io.h"
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace attnviz {

struct ConfigOptions {
    std::string seed = "0";
    // Not given (nullopt): 8, 2 and 4, unless --weights gives C (and H) or --text gives T.
    std::optional<std::string> n_embd, n_head, seq_len;
    std::string mask = "causal", scale = "head-dim";
    std::string kernel;  // empty: choose automatically (see choose_kernel)
    std::string perturb; // empty: no perturbation
    // add_input_options; nullopt when not given.
    std::optional<std::string> text;    // words as input, split on whitespace (text_input.h)
    std::optional<std::string> weights; // a .safetensors file instead of the seeded weights
    std::optional<std::string> layer;   // which h.N of a layered file (default 0); needs weights
    // add_model_file_options (trace, export, bench); model_commands.h reads them.
    std::optional<std::string> model;   // a whole model: GPT-2 directory, nanoGPT file, toy model
    std::optional<std::string> tokens;  // token ids for a GPT model, "1,2,3"
    std::optional<std::string> replace; // with --perturb: the id token P becomes (default: the next id)
    std::optional<std::string> revision; // with a Hub id as --model: the cached revision (default main)
    std::string model_name;              // what messages call the model: the Hub id, or the path given
};

// Adds --seed, --n-embd, --n-head, --seq-len, --mask, --scale and, when asked, --kernel and
// --perturb to `app` (a command or the top level).
void add_config_options(CLI::App& app, ConfigOptions& o, bool with_kernel, bool with_perturb);
// Adds --text, --weights and --layer.
void add_input_options(CLI::App& app, ConfigOptions& o);
// Adds --model, --tokens and --replace (whole models; docs/cli.md).
void add_model_file_options(CLI::App& app, ConfigOptions& o);
// Pieces of the above, for commands that take only some: --seed, --n-embd and --n-head;
// --weights and --layer.
void add_model_options(CLI::App& app, ConfigOptions& o);
void add_weights_options(CLI::App& app, ConfigOptions& o);

// What the options ask for, checked, with the weights file read.
struct Inputs {
    Config config;                        // seq_len = number of words with --text
    std::vector<std::string> tokens;      // --text split on whitespace; empty without --text
    std::optional<LoadedWeights> weights; // --weights; nullopt: the seeded weights
    std::string weights_path;             // --weights as given
};

// Turns the texts into Inputs. On failure returns false and sets `error` to one sentence
// (without a trailing newline): a bad value, a contradiction (--seq-len vs --text,
// --n-embd vs the file), or the weights loader's own sentence.
bool to_inputs(const ConfigOptions& o, Inputs& in, std::string& error);
// Just the config of to_inputs (which reads the --weights file, if given, for C and H).
bool to_config(const ConfigOptions& o, Config& c, std::string& error);
// The lesson's recipe over the inputs: make_experiment, or make_text_experiment with
// --text; with --weights the file's weights replace the seeded ones and x is unchanged
// (the generator skips the weight draws). Fails only with make_text_experiment's sentence.
bool to_experiment(const Inputs& in, Experiment& e, std::string& error);
// The perturbed position, if --perturb was given; checked against 0..T-1.
bool to_perturb(const ConfigOptions& o, const Config& c, std::optional<int>& p, std::string& error);
// The kernel: --kernel if given, otherwise the reference kernel where it is fast enough
// for a live slider and the fast kernel above that.
bool to_kernel(const ConfigOptions& o, const Config& c, KernelKind& k, std::string& error);
KernelKind choose_kernel(const Config& c);

// --model NAME: a path that exists stays; a Hub id becomes its cached snapshot folder
// (hub_cache.h, never the network), model_name keeping the id. False and one sentence when
// it is neither, or when --revision comes without --model.
bool resolve_model_option(ConfigOptions& o, std::string& error);

// Prints "attnviz: <sentence>" to stderr and returns 2, the exit status for bad input.
int usage_error(const std::string& sentence);

// One sentence for an error CLI11's parser raised (unknown option or command, missing
// value, ...), naming what was typed and where to look: "see attnviz trace --help".
std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& e);

} // namespace attnviz
