// get_command.h: `attnviz get`, a GPT-2 family model from the Hugging Face Hub into its cache.
//
//   attnviz get gpt2                       prints the snapshot folder, e.g.
//   attnviz get openai-community/gpt2 --revision main   ~/.cache/huggingface/hub/models--gpt2/snapshots/<commit>
//
// hub_download.h does the work (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, HF_HUB_CACHE); this file
// parses the command and draws the progress on stderr: a bar with bytes, rate and time left
// on a terminal, a plain line every few seconds otherwise. Every failure is one sentence and
// exit status 2 with nothing on stdout. docs/cli.md documents it.
#pragma once
#include <CLI/CLI.hpp>

namespace attnviz {

// Registers get on `app`, parsing into arguments this command keeps.
void add_get_command(CLI::App& app);
// Runs get when `sub` is it and returns its exit status; -1 otherwise.
int run_get_command(const CLI::App& sub);

} // namespace attnviz
