// tokenize_command.h: `attnviz tokenize`, GPT-2's tokenizer (bpe_tokenizer.h) on a text.
//
//   attnviz tokenize --tokenizer DIR --text "The cat sat."   {"ids": [...], "tokens": [...]}
//   attnviz tokenize --tokenizer DIR --file story.txt
//
// DIR holds vocab.json + merges.txt (Hugging Face) or encoder.json + vocab.bpe (OpenAI).
// Bad input ends in usage_error: one sentence on stderr, exit status 2. docs/cli.md documents it.
#pragma once
#include <CLI/CLI.hpp>

namespace attnviz {

// Registers tokenize on `app`, parsing into arguments this command keeps.
void add_tokenize_command(CLI::App& app);
// Runs tokenize when `sub` is it and returns its exit status; -1 otherwise.
int run_tokenize_command(const CLI::App& sub);

} // namespace attnviz
