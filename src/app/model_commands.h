// model_commands.h: trace, export and bench on a whole model (--model PATH).
//
// A GPT-2 directory or nanoGPT file runs gpt_model.h's forward on --tokens; a toy model
// that attnviz train wrote goes to the trained-model trace (trained_trace.cpp). The
// commands call these first when --model is given; docs/cli.md documents the output.
#pragma once
#include "bpe_tokenizer.h"
#include "commands.h"
#include "model.h"
#include <optional>

namespace attnviz {

int run_model_trace(const TraceArgs& a);

// Shared with patch (patch_command.h): --text through the tokenizer beside the GPT model at
// `path` (checked against its wte and block size), a comma-separated list of ids, and that
// tokenizer when there is one. false and one sentence on failure.
bool text_to_gpt_tokens(const Model& m, const std::string& text, const std::string& path, std::vector<int>& out,
                        std::string& error);
bool parse_token_list(const std::string& text, const ModelConfig& c, std::vector<int>& out, std::string& error);
std::optional<BpeTokenizer> tokenizer_beside(const Model& m, const std::string& path);
int run_model_export(const ExportArgs& a);
int run_model_bench(const BenchArgs& a);

} // namespace attnviz
