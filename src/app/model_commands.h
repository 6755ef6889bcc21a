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
#include <string>
#include <vector>

namespace attnviz {

int run_model_trace(const TraceArgs& a);

int run_model_export(const ExportArgs& a);
int run_model_bench(const BenchArgs& a);

// The pieces generate and patch share (generate_command.h, patch_command.h):
// --text as GPT token ids, with the tokenizer saved beside the model (`path`); one sentence
// when there is none, the text is empty, or it is longer than the block size.
bool text_to_gpt_tokens(const Model& m, const std::string& text, const std::string& path, std::vector<int>& out,
                        std::string& error);
// --tokens "1,2,3": ids below the vocabulary size, at most the block size of them.
bool parse_token_list(const std::string& text, const ModelConfig& c, std::vector<int>& out, std::string& error);
// The tokenizer beside the model when one fits wte's rows; nullopt otherwise (not an error).
std::optional<BpeTokenizer> tokenizer_beside(const Model& m, const std::string& path);
// trace's kernel when --kernel is not given: the reference kernel where a forward over T
// tokens takes well under a second, the fast one above.
KernelKind default_gpt_kernel(const ModelConfig& c, int T);

} // namespace attnviz
