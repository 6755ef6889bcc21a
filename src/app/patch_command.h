// patch_command.h: `attnviz patch`, activation patching (patching.h) on a GPT model.
//
//   attnviz patch --model DIR --clean TEXT --corrupt TEXT --answer TOK --wrong TOK [--what resid|heads|both] [--json]
//   attnviz patch --model DIR --clean-tokens IDS --corrupt-tokens IDS --answer-token ID --wrong-token ID
//
// Prints the clean and corrupted logit differences and the normalised tables (text, or JSON
// with --json: patch_json.h). Bad input ends in usage_error: one sentence, exit status 2.
// docs/cli.md documents it.
#pragma once
#include <CLI/CLI.hpp>

namespace attnviz {

// Registers patch on `app`, parsing into arguments this command keeps.
void add_patch_command(CLI::App& app);
// Runs patch when `sub` is it and returns its exit status; -1 otherwise.
int run_patch_command(const CLI::App& sub);

} // namespace attnviz
