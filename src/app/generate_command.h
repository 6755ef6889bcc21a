// generate_command.h: `attnviz generate`, the model writing on token by token (issue 30).
//
//   attnviz generate --model M (--text S | --tokens IDS) --max-new N
//                    [--greedy | --temperature T [--top-k K] [--top-p P] [--seed S]]
//                    [--no-cache] [--check] [--json]
//
// M is what trace --model takes: a GPT-2 directory, a nanoGPT file, a Hub id attnviz get
// downloaded, or a toy model attnviz train wrote with a next-token head (the induction task).
// The prompt runs once (kv_prefill), then each new token alone against the KV cache
// (kv_step; kv_cache.h); --no-cache runs the full forward at every step instead. Without
// --json the generated text streams to stdout, each token flushed as it comes; with --json
// one object (generate_json.h). Bad input ends in usage_error: one sentence, exit status 2.
// docs/cli.md documents it.
#pragma once
#include <CLI/CLI.hpp>

namespace attnviz {

// Registers generate on `app`, parsing into arguments this command keeps.
void add_generate_command(CLI::App& app);
// Runs generate when `sub` is it and returns its exit status; -1 otherwise.
int run_generate_command(const CLI::App& sub);

} // namespace attnviz
