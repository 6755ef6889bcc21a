// text_input.cpp: words as input; see text_input.h.
#include "text_input.h"
#include <cctype>
#include <unordered_map>

namespace attnviz {

std::vector<std::string> tokenize(const std::string& text) {
    std::vector<std::string> tokens;
    std::string word;
    for (char ch : text) {
        if (std::isspace(static_cast<unsigned char>(ch))) {
            if (!word.empty()) tokens.push_back(word);
            word.clear();
        } else {
            word += ch;
        }
    }
    if (!word.empty()) tokens.push_back(word);
    return tokens;
}

void build_vocab(const std::vector<std::string>& tokens, std::vector<std::string>& vocab, std::vector<int>& ids) {
    std::unordered_map<std::string, int> index;
    vocab.clear();
    ids.clear();
    for (const std::string& t : tokens) {
        auto it = index.find(t);
        if (it == index.end()) {
            it = index.emplace(t, int(vocab.size())).first;
            vocab.push_back(t);
        }
        ids.push_back(it->second);
    }
}

bool make_text_experiment(const Config& config, const std::vector<std::string>& tokens, const Weights* weights,
                          Experiment& out, std::string& error) {
    if (tokens.empty()) {
        error = "the text has no words; type at least one word, separated by spaces";
        return false;
    }
    if (tokens.size() > size_t(max_seq_len)) {
        error = "the text has " + std::to_string(tokens.size()) + " words, more than the " +
                std::to_string(max_seq_len) + " positions attnviz takes (one position per word); shorten it";
        return false;
    }
    Config c = config;
    c.seq_len = int(tokens.size());
    error = validate(c);
    if (!error.empty()) return false;
    if (weights && weights->n_embd() != c.n_embd) {
        error = "the weights have n_embd " + std::to_string(weights->n_embd()) + " but the config asks for " +
                std::to_string(c.n_embd);
        return false;
    }

    const int C = c.n_embd, T = c.seq_len;
    std::vector<std::string> vocab;
    std::vector<int> ids;
    build_vocab(tokens, vocab, ids);

    Experiment e;
    e.config = c;
    TorchGenerator gen(c.seed);
    if (weights) {
        gen.skip_draws(4 * uint64_t(C) * uint64_t(C)); // where SelfAttention(C, H) would draw
        e.weights = *weights;
    } else {
        e.weights = init_weights(gen, C);
    }
    e.draws_after_weights = gen.draws();
    Mat table(int(vocab.size()), C); // E = torch.randn(V, C)
    gen.randn(table.data(), int64_t(vocab.size()) * C);
    e.x.resize(T, C);
    for (int t = 0; t < T; ++t) e.x.row(t) = table.row(ids[t]);
    e.draws_after_x = gen.draws();
    e.replacement.resize(C);
    gen.randn(e.replacement.data(), C);
    e.draws_after_row = gen.draws();
    out = std::move(e);
    return true;
}

} // namespace attnviz
