// train_commands.h: the commands for trained models.
//
//   train   train a toy model on one of the toy tasks (docs/training.md); the model to a .safetensors
//           file, the run (losses, accuracy, head scores, seconds) as JSON on stdout
//   heads   the head scores (and accuracy) of a trained model file, as JSON; with --ablate also
//           the task's loss and accuracy before and after ablating heads, and the scores after
//   trace --weights TRAINED.safetensors --text "a b c"   the model's forward on BOS + those
//           words: every block's intermediates, and the effect of changing one word
//
// Bad input ends in usage_error: one sentence on stderr, exit status 2. docs/cli.md
// documents each with examples.
#pragma once
#include "ablation_options.h"
#include "commands.h"
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace attnviz {

// Values stay text until the command checks them (one sentence per bad value).
struct TrainArgs {
    std::string task; // required
    std::optional<std::string> seed, steps, lr, batch, n_embd, n_head, n_layer, seq_len, vocab;
    std::string out;  // required: FILE.safetensors
};

struct HeadsArgs {
    std::string weights; // required
    AblationOptions ablation; // --ablate, --ablate-mode: before / after the ablation too
};

// Registers train and heads on `app`, parsing into arguments this file keeps.
void add_train_commands(CLI::App& app);
// Runs train or heads when `sub` is one of them and returns its exit status; -1 otherwise.
int run_train_command(const CLI::App& sub);
int run_train(const TrainArgs& a);
int run_heads(const HeadsArgs& a);

// True when trace's --weights names a trained model (model_io.h's is_trained_model_file);
// run_trace then hands the whole command to run_trained_trace.
bool wants_trained_trace(const TraceArgs& a);
int run_trained_trace(const TraceArgs& a);

} // namespace attnviz
