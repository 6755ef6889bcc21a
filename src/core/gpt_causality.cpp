// gpt_causality.cpp: see gpt_causality.h.
#include "gpt_causality.h"
#include <stdexcept>
#include <string>

namespace attnviz {

GptCausality gpt_causality(const ModelTrace& base, const ModelTrace& changed, int p, int new_token) {
    const size_t T = base.tokens.size(), L = base.blocks.size();
    if (T == 0 || L == 0 || changed.tokens.size() != T || changed.blocks.size() != L ||
        base.logits.rows() != int64_t(T) || changed.logits.rows() != int64_t(T) ||
        base.logits.cols() != changed.logits.cols())
        throw std::invalid_argument("the two traces are not GPT traces of one model on one number of tokens.");
    if (p < 0 || size_t(p) >= T)
        throw std::invalid_argument("position " + std::to_string(p) + " is outside 0.." + std::to_string(T - 1) + ".");
    if (changed.tokens[size_t(p)] != new_token)
        throw std::invalid_argument("the changed trace's token " + std::to_string(p) + " is not " +
                                    std::to_string(new_token) + ".");
    for (size_t t = 0; t < T; ++t)
        if (t != size_t(p) && base.tokens[t] != changed.tokens[t])
            throw std::invalid_argument("the token lists differ at " + std::to_string(t) + ", not only at " +
                                        std::to_string(p) + ".");
    GptCausality out;
    out.p = p;
    out.new_token = new_token;
    out.logits_max_abs = max_abs_diff_per_position(base.logits, changed.logits);
    for (size_t l = 0; l < L; ++l)
        out.resid_max_abs.push_back(max_abs_diff_per_position(base.blocks[l].resid_post, changed.blocks[l].resid_post));
    return out;
}

} // namespace attnviz
