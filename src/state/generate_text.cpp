// generate_text.cpp: the Generate view's generation as the panels name it: its text, a
// token's label and the cache's sizes (generate_state.h).
#include "app_state.h"
#include "generate_state.h"
#include <algorithm>

namespace attnviz {

bool generate_working(const AppState& s) { return bool(s.generate.work); }

CacheSizes generate_cache_sizes(const AppState& s) {
    const GenerateState& g = s.generate;
    if (g.received) return g.received_cache;
    if (!g.input) return {1, g.lesson_T, g.lesson_config.n_embd};
    return {int(g.cache.layers.size()), g.cache.T, g.cache.n_embd};
}

std::string generate_token_label(const AppState& s, int token) {
    const GenerateState& g = s.generate;
    if (g.received) {
        const auto it = g.received_labels.find(token);
        return it != g.received_labels.end() ? it->second : std::to_string(token);
    }
    return model_token_label(s, token);
}

namespace {

std::string tokens_text(const AppState& s, int from, int to) {
    const GenerateState& g = s.generate;
    if (from >= to) return "";
    return model_text(s, std::vector<int>(g.tokens.begin() + from, g.tokens.begin() + to), from > 0);
}

} // namespace

std::string generate_prompt_text(const AppState& s) {
    if (s.generate.received) return s.generate.received_prompt;
    return tokens_text(s, 0, std::min<int>(s.generate.prompt_len, int(s.generate.tokens.size())));
}

std::string generate_new_text(const AppState& s) {
    if (s.generate.received) return s.generate.received_new;
    return tokens_text(s, s.generate.prompt_len, int(s.generate.tokens.size()));
}

} // namespace attnviz
