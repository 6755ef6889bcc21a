// model_commands.h: trace, export and bench on a whole model (--model PATH).
//
// A GPT-2 directory or nanoGPT file runs gpt_model.h's forward on --tokens; a toy model
// that attnviz train wrote goes to the trained-model trace (trained_trace.cpp). The
// commands call these first when --model is given; docs/cli.md documents the output.
#pragma once
#include "commands.h"

namespace attnviz {

int run_model_trace(const TraceArgs& a);
int run_model_export(const ExportArgs& a);
int run_model_bench(const BenchArgs& a);

} // namespace attnviz
