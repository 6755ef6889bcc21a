// gpt_causality.cpp: see gpt_causality.h.
#include "gpt_causality.h"
#include <stdexcept>
#include <string>

namespace attnviz {

namespace {

std::string shape(const Mat& m) { return std::to_string(m.rows()) + " x " + std::to_string(m.cols()); }

void check_traces(const ModelTrace& base, const ModelTrace& changed, int p, int new_token) {
    auto refuse = [](const std::string& why) { throw std::invalid_argument(why); };
    const size_t T = base.tokens.size();
    if (T == 0 || base.blocks.empty())
        refuse("the base trace has no tokens or no GPT blocks; give a trace that gpt_forward made");
    if (changed.tokens.size() != T)
        refuse("the changed trace has " + std::to_string(changed.tokens.size()) + " tokens and the base trace " +
               std::to_string(T) + "; give traces of token lists of one length");
    if (changed.blocks.size() != base.blocks.size())
        refuse("the changed trace has " + std::to_string(changed.blocks.size()) + " layers and the base trace " +
               std::to_string(base.blocks.size()) + "; give two traces of the same model");
    if (p < 0 || size_t(p) >= T)
        refuse("position " + std::to_string(p) + " is outside the sequence; give p from 0 to " + std::to_string(T - 1));
    const Mat& logits = base.logits;
    if (changed.compact) {
        // gpt_update_compact measured the logits as it made them (no logits are kept).
        if (!base.compact || changed.logits_delta.size() != T)
            refuse("the changed trace is compact but not gpt_update_compact's of the base trace; give the trace it made");
    } else if (logits.rows() != Eigen::Index(T) || changed.logits.rows() != logits.rows() ||
               changed.logits.cols() != logits.cols()) {
        refuse("the logits are " + shape(logits) + " and " + shape(changed.logits) + " for " + std::to_string(T) +
               " tokens; give two traces of the same model");
    }
    if (new_token < 0 || (!changed.compact && new_token >= logits.cols()))
        refuse("token " + std::to_string(new_token) + " is not in the vocabulary; give an id from 0 to " +
               std::to_string(logits.cols() - 1));
    if (changed.tokens[size_t(p)] != new_token)
        refuse("the changed trace has token " + std::to_string(changed.tokens[size_t(p)]) + " at position " +
               std::to_string(p) + ", not " + std::to_string(new_token) + "; give the trace of the changed tokens");
    for (size_t t = 0; t < T; ++t)
        if (t != size_t(p) && changed.tokens[t] != base.tokens[t])
            refuse("the token lists also differ at position " + std::to_string(t) + ", not only at " +
                   std::to_string(p) + "; change one token");
    for (size_t l = 0; l < base.blocks.size(); ++l) {
        const Mat& a = base.blocks[l].resid_post;
        const Mat& b = changed.blocks[l].resid_post;
        if (a.rows() != Eigen::Index(T) || b.rows() != a.rows() || b.cols() != a.cols())
            refuse("layer " + std::to_string(l) + "'s resid_post is " + shape(a) + " and " + shape(b) + " for " +
                   std::to_string(T) + " tokens; give two traces of the same model");
    }
}

} // namespace

GptCausality gpt_causality(const ModelTrace& base, const ModelTrace& changed, int p, int new_token) {
    check_traces(base, changed, p, new_token);
    GptCausality out;
    out.p = p;
    out.new_token = new_token;
    out.logits_max_abs = changed.compact ? changed.logits_delta : max_abs_diff_per_position(base.logits, changed.logits);
    out.resid_max_abs.reserve(base.blocks.size());
    for (size_t l = 0; l < base.blocks.size(); ++l)
        out.resid_max_abs.push_back(max_abs_diff_per_position(base.blocks[l].resid_post, changed.blocks[l].resid_post));
    return out;
}

} // namespace attnviz
