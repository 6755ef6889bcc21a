// walk_steps.h: the words of the shape walk - the code it prints, and per step the part of
// the code lit, the shapes before and after, and one sentence of why. The lesson's module
// walks SelfAttention.forward; a trained model's walk prints the model's forward above it,
// starts from its embeddings and ends on the residual h + attn(h).
#pragma once
#include "app_state.h"
#include <string>
#include <vector>

namespace attnviz {

struct Span {
    int line;
    std::string text; // found in the line; empty: the whole line after its indent
};

struct WalkStep {
    std::string title;
    std::vector<Span> spans;
    std::string before, after; // shapes, filled per config
    std::string why;
};

// The code the walk prints for what `s` shows (one indent level less than the source).
std::vector<std::string> code_lines(const AppState& s);
// Step 0 (the input) .. walk_last_step (proj) for what `s` shows.
WalkStep walk_step(const AppState& s, int step);

} // namespace attnviz
