// text_input.h: words as input. "the cat saw the cat" becomes T = 5 positions.
//
// Each distinct word gets its own row of a seeded embedding table, so a repeated word
// gives an identical input row (the lesson's "a repeated word" made visible). In PyTorch:
//
//   torch.manual_seed(seed); attn = SelfAttention(C, H)
//   vocab = distinct words in order of first appearance; ids = [vocab.index(w) for w in words]
//   E = torch.randn(len(vocab), C)        # N(0, 1) per channel
//   x = E[ids].unsqueeze(0)               # (1, T, C)
//   x2[0, p] = torch.randn(C)             # the perturbation row, as in the lesson
#pragma once
#include "experiment.h"
#include <string>
#include <vector>

namespace attnviz {

// Splits on whitespace (spaces, tabs, newlines); empty pieces are dropped.
std::vector<std::string> tokenize(const std::string& text);

// The distinct words in order of first appearance, and each position's index into them.
void build_vocab(const std::vector<std::string>& tokens, std::vector<std::string>& vocab, std::vector<int>& ids);

// The experiment above; config.seq_len is set to the number of words. `weights` (from a
// file) replaces the seeded ones, with the generator advanced past their draws exactly as
// make_experiment does. Fails with one sentence when there are no words, more words than
// max_seq_len, or the config is otherwise invalid.
bool make_text_experiment(const Config& config, const std::vector<std::string>& tokens, const Weights* weights,
                          Experiment& out, std::string& error);

} // namespace attnviz
