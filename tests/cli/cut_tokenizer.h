// cut_tokenizer.h: GPT-2's tokenizer cut to the tiny model's 1000 entries, for the commands'
// --text on tests/data/gpt_tiny.
#pragma once
#include <string>

namespace attnviz_test {

// vocab.json and merges.txt (Hugging Face's names) into `dir`: the 256 byte tokens and the
// first 744 merges, whose results are ids 256..999 in GPT-2's own vocabulary (its merges come
// in rank order, each from bytes or earlier merges).
void write_cut_tokenizer(const std::string& dir);

} // namespace attnviz_test
