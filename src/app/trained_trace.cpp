// trained_trace.cpp: attnviz trace --weights TRAINED.safetensors --text "a b c a b d".
//
// The options a trained model fixes itself are refused, --text becomes BOS and the words'
// tokens, and the trace's JSON is the core's (trained_json.h).
#include "ablation.h"
#include "ablation_options.h"
#include "commands.h"
#include "formats.h"
#include "model_io.h"
#include "options.h"
#include "text_input.h"
#include "text_util.h"
#include "trained_json.h"
#include "train_commands.h"
#include <iostream>

namespace attnviz {

bool wants_trained_trace(const TraceArgs& a) { return a.config.weights && is_trained_model_file(*a.config.weights); }

namespace {

// The lesson's options that a trained model fixes itself: each is refused when given with
// a value other than the model's, so nothing is silently ignored.
bool check_options(const ConfigOptions& o, const Model& m, const std::string& path, std::string& error) {
    const ModelConfig& c = m.config;
    const std::string model = escaped(path) + " is a trained model";
    auto refuse = [&](const std::string& what, const std::string& why) {
        error = what + " does not apply: " + model + " " + why;
        return false;
    };
    if (o.seed != "0") return refuse("--seed " + escaped(o.seed, 40), "whose weights are in the file; leave out --seed");
    if (o.seq_len)
        return refuse("--seq-len " + escaped(*o.seq_len, 40), "whose positions are BOS and the words of --text; leave out --seq-len");
    if (o.mask != "causal") return refuse("--mask " + escaped(o.mask, 40), "trained with the causal mask; leave out --mask");
    if (o.scale != "head-dim") return refuse("--scale " + escaped(o.scale, 40), "trained with head_dim ** -0.5; leave out --scale");
    if (o.layer) return refuse("--layer " + escaped(*o.layer, 40), "and the trace holds every block; leave out --layer");
    int64_t v = 0;
    if (o.n_embd && (!parse_int(*o.n_embd, "--n-embd", 1, max_n_embd, v, error) || v != c.n_embd)) {
        if (error.empty()) error = "--n-embd " + escaped(*o.n_embd, 40) + " does not match " + escaped(path) + ", whose n_embd is " +
                                   std::to_string(c.n_embd) + "; leave out --n-embd (C comes from the file)";
        return false;
    }
    if (o.n_head && (!parse_int(*o.n_head, "--n-head", 1, max_n_head, v, error) || v != c.n_head)) {
        if (error.empty()) error = "--n-head " + escaped(*o.n_head, 40) + " does not match " + escaped(path) + ", whose n_head is " +
                                   std::to_string(c.n_head) + "; leave out --n-head (H comes from the file)";
        return false;
    }
    return true;
}

bool to_tokens(const ConfigOptions& o, const ModelConfig& c, const std::string& path, std::vector<int>& tokens,
               std::vector<std::string>& words, std::string& error) {
    const std::string vocab = "(" + vocabulary_text(c) + ")";
    if (!o.text) {
        error = escaped(path) + " is a trained model that reads words: give --text with words of its vocabulary " + vocab +
                ", e.g. --text \"a b c a b d\"";
        return false;
    }
    if (size_t at = invalid_utf8_at(*o.text); at != std::string::npos) {
        error = "--text is not valid UTF-8 (at offset " + std::to_string(at) + "); give words of the vocabulary " + vocab;
        return false;
    }
    words = tokenize(*o.text);
    if (words.empty()) {
        error = "--text has no words; give words of the vocabulary " + vocab + ", e.g. --text \"a b c a b d\"";
        return false;
    }
    if (words.size() > size_t(c.seq_len)) {
        error = "--text has " + std::to_string(words.size()) + " words but " + escaped(path) + " knows " +
                std::to_string(c.seq_len) + " positions after BOS; give at most " + std::to_string(c.seq_len) + " words";
        return false;
    }
    tokens = {c.bos()};
    for (const std::string& w : words) {
        const int t = token_of(c, w);
        if (t < 0 || t == c.bos()) {
            error = "--text word " + quote(w, 20) + " is not in the vocabulary of " +
                    escaped(path) + " " + vocab + (t == c.bos() ? "; BOS (^) is put first by attnviz itself" : "");
            return false;
        }
        tokens.push_back(t);
    }
    words.insert(words.begin(), "^");
    return true;
}

} // namespace

int run_trained_trace(const TraceArgs& a) {
    const std::string& path = *a.config.weights;
    Model m;
    std::string error;
    if (!load_model(path, m, error)) return usage_error(error);
    const ModelConfig& c = m.config;
    std::vector<int> tokens;
    std::vector<std::string> words;
    if (!check_options(a.config, m, path, error) || !to_tokens(a.config, c, path, tokens, words, error))
        return usage_error(error);
    const int N = int(tokens.size());
    KernelKind kernel = KernelKind::reference;
    if (!a.config.kernel.empty() && !parse_kernel(a.config.kernel, kernel, error)) return usage_error(error);
    int p = -1;
    if (!a.config.perturb.empty()) {
        int64_t v = 0;
        if (!parse_int(a.config.perturb, "--perturb", 0, N - 1, v, error)) return usage_error(error);
        if (v == 0)
            return usage_error("--perturb 0 is BOS (^), which is always the first token and is never replaced; give a "
                               "position from 1 to " + std::to_string(N - 1));
        p = int(v);
    }

    Ablation ab;
    int dla_pos = N - 1;
    if (!to_ablation(a.ablation, m, ab, error) || !to_dla_pos(a.ablation, N, N - 1, dla_pos, error))
        return usage_error(error);
    if (ab.mode == AblationMode::mean && !ab.empty()) compute_ablation_means(m, ablation_probe(m, {}), kernel, ab);

    TrainedTraceRequest r;
    r.path = path;
    r.text = *a.config.text;
    r.tokens = std::move(tokens);
    r.words = std::move(words);
    r.kernel = kernel;
    r.intermediates = a.intermediates;
    if (p >= 0) r.perturb = p;
    r.ablation = &ab;
    if (a.ablation.dla_pos) r.dla_pos = dla_pos;
    std::ios::sync_with_stdio(false);
    write_trained_trace_json(std::cout, m, r);
    return finish_stdout("trace");
}

} // namespace attnviz
