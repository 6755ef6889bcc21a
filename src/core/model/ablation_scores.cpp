// ablation_scores.cpp: see ablation_scores.h.
#include "ablation_scores.h"
#include "head_detector.h"
#include <stdexcept>

namespace attnviz {

RecipeProbe recipe_probe(const ModelConfig& c) {
    constexpr int B = 256; // head_scores' probe batch
    TorchGenerator g(1234);
    RecipeProbe p;
    std::vector<int64_t> body(size_t(B) * size_t(c.seq_len));
    g.randint(body.data(), int64_t(body.size()), 0, c.vocab);
    for (int b = 0; b < B; ++b) {
        std::vector<int> row{c.bos()};
        for (int t = 0; t < c.seq_len; ++t) row.push_back(int(body[size_t(b) * size_t(c.seq_len) + size_t(t)]));
        p.uniform.push_back(std::move(row));
    }
    p.repeated = repeated_sequences(c, g, B, c.n_tokens(), c.seq_len / 3);
    return p;
}

namespace {

std::vector<ModelTrace> run_all(const Model& m, const std::vector<std::vector<int>>& seqs, KernelKind kernel,
                                const Ablation* ab) {
    std::vector<ModelTrace> out(seqs.size());
    for (size_t b = 0; b < seqs.size(); ++b) model_forward(m, seqs[b], kernel, out[b], ab);
    return out;
}

std::vector<SequenceAttention> views(const std::vector<ModelTrace>& t) {
    std::vector<SequenceAttention> out;
    out.reserve(t.size());
    for (const ModelTrace& x : t) out.push_back(attention_of(x));
    return out;
}

} // namespace

HeadScores ablated_head_scores(const Model& m, KernelKind kernel, const Ablation* ab) {
    if (m.config.arch != Arch::toy)
        throw std::invalid_argument("the recipe's head scores are a toy model's; a GPT model has the head detector");
    const RecipeProbe p = recipe_probe(m.config);
    HeadScores out;
    {
        const std::vector<ModelTrace> uni = run_all(m, p.uniform, kernel, ab);
        const HeadScores text = detect_on_text(views(uni));
        out.prev_token = text.prev_token;
        out.duplicate = text.duplicate;
    }
    const std::vector<ModelTrace> rep = run_all(m, p.repeated, kernel, ab);
    out.induction = detect_induction_on_repeats(views(rep), 1, m.config.seq_len / 3);
    return out;
}

} // namespace attnviz
