// gpt_causality.h: what changing one token does to a whole GPT, position by position and
// layer by layer. Token p of a sequence is replaced by new_token; by causality nothing before
// p can move in any layer, so every entry before p is exactly 0.0 and the entries from p on
// show how far the change reaches through the residual stream to the logits.
#pragma once
#include "model.h"
#include <vector>

namespace attnviz {

struct GptCausality {
    int p = 0, new_token = 0;
    std::vector<float> logits_max_abs;             // T: max over vocab of |Δ logits[t, :]|
    std::vector<std::vector<float>> resid_max_abs; // L x T: max over C of |Δ resid_post[l][t, :]|
};

// base and changed: traces of the same model on token lists that differ only at p.
// changed is gpt_forward on the new tokens, or base after gpt_update(m, p, new_token, ...);
// lean or not, or gpt_update_compact's of a compact base (its logits_delta). NaN propagates as torch's max does (max_abs_diff_per_position).
// Throws std::invalid_argument with one sentence when they are not two GPT traces of one
// model and one length, p is outside 0 .. T-1, changed's token p is not new_token, or the
// token lists differ anywhere else.
GptCausality gpt_causality(const ModelTrace& base, const ModelTrace& changed, int p, int new_token);

} // namespace attnviz
