// trained_trace.cpp: attnviz trace --weights TRAINED.safetensors --text "a b c a b d".
//
// The model reads BOS (^) and then the words, each a token of its vocabulary (a, b, c, ...).
// The JSON keeps the lesson trace's keys where they mean the same (n_embd, n_head, B, T,
// text, tokens, head_dim, scale_float32, mask, scale, kernel, param_count, weights, x, y1,
// perturbed_position, y2, max_abs_diff_per_position), with x the embeddings wte + wpe and
// y1 the final residual stream (the heads' input); what a stack adds is new keys:
// n_layer, token_ids, logits, and with --intermediates "layers", one object per block with
// its input x, the shape walk's intermediates under intermediates_for_x's names and its
// attention output y (before the residual add).
#include "ablation.h"
#include "ablation_json.h"
#include "ablation_options.h"
#include "commands.h"
#include "formats.h"
#include "model_io.h"
#include "options.h"
#include "text_input.h"
#include "text_util.h"
#include "train_commands.h"
#include <cstdio>
#include <iostream>
#include <limits>

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

void write_mat(JsonWriter& w, const char* key, const Mat& m) {
    if (m.size() == 0) return;
    w.key(key);
    w.array(m.data(), {1, m.rows(), m.cols()});
}

void write_layer(JsonWriter& w, int l, const Trace& tr) {
    w.begin_object();
    w.key("layer"); w.value_int(l);
    w.key("x"); w.array(tr.x.data(), {1, tr.x.rows(), tr.x.cols()});
    const TensorName walk[] = {TensorName::qkv, TensorName::q,      TensorName::k,     TensorName::v,
                               TensorName::scores, TensorName::scaled, TensorName::masked, TensorName::probs,
                               TensorName::heads, TensorName::concat};
    for (TensorName n : walk) {
        TensorView t = tensor_by_name(tr, n);
        std::vector<int64_t> shape = t.shape;
        shape.insert(shape.begin(), 1);
        std::vector<float> data = t.data();
        w.key(reference_key(n));
        w.array(data.data(), shape);
    }
    w.key("y"); w.array(tr.y.data(), {1, tr.y.rows(), tr.y.cols()});
    w.end_object();
}

void write_metrics(JsonWriter& w, const TaskMetrics& t) {
    w.begin_object();
    w.key("loss"); w.value(float(t.loss));
    w.key("accuracy");
    w.begin_object();
    for (const auto& [key, value] : t.accuracy) { w.key(key); w.value(float(value)); }
    w.end_object();
    w.end_object();
}

// The class the unembedding DLA reads (ablation.h) scores highest at `pos`.
int top_class(const Model& m, const ModelTrace& tr, int pos) {
    const Mat& U = dla_unembedding(m);
    int best = 0;
    float best_logit = -std::numeric_limits<float>::infinity();
    for (int r = 0; r < int(U.rows()); ++r) {
        float s = 0.f;
        for (int j = 0; j < int(U.cols()); ++j) s += U(r, j) * tr.h_out(pos, j);
        if (s > best_logit) best_logit = s, best = r;
    }
    return best;
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
    const Ablation* ablated = ab.empty() ? nullptr : &ab;
    if (ab.mode == AblationMode::mean && ablated) compute_ablation_means(m, ablation_probe(m, {}), kernel, ab);

    // The clean run picks the DLA's class; the traced tensors are the ablated run's.
    ModelTrace tr;
    model_forward(m, tokens, kernel, tr);
    const int dla_class = top_class(m, tr, dla_pos);
    if (ablated) model_forward(m, tokens, kernel, tr, ablated);

    std::ios::sync_with_stdio(false);
    {
        JsonWriter w(std::cout);
        w.begin_object();
        w.key("n_embd"); w.value_int(c.n_embd);
        w.key("n_head"); w.value_int(c.n_head);
        w.key("n_layer"); w.value_int(c.n_layer);
        w.key("B"); w.value_int(1);
        w.key("T"); w.value_int(N);
        w.key("text"); w.value_string(*a.config.text);
        w.key("tokens");
        w.begin_array();
        for (const std::string& s : words) w.value_string(s);
        w.end_array();
        w.key("token_ids");
        w.begin_array();
        for (int t : tokens) w.value_int(t);
        w.end_array();
        if (p >= 0) { w.key("perturbed_position"); w.value_int(p); }
        w.key("head_dim"); w.value_int(c.head_dim());
        w.key("scale_float32"); w.value(tr.layers.empty() ? 0.f : tr.layers[0].scale);
        w.key("mask"); w.value_string("causal");
        w.key("scale"); w.value_string("head-dim");
        w.key("kernel"); w.value_string(to_string(kernel));
        int64_t params = 0;
        for (const ModelTensor& t : model_layout(c)) params += int64_t(t.rows) * t.cols;
        w.key("param_count"); w.value_int(params);
        w.key("weights");
        w.begin_object();
        w.key("file"); w.value_string(path);
        w.key("scheme"); w.value_string("trained model");
        w.key("task"); w.value_string(to_string(c.task));
        w.key("vocab_size"); w.value_int(c.vocab);
        w.key("seq_len"); w.value_int(c.seq_len);
        w.key("description");
        w.value_string(path + ": " + to_string(c.task) + " model trained by attnviz train, V " + std::to_string(c.vocab) +
                       ", T " + std::to_string(c.seq_len) + ", n_embd " + std::to_string(c.n_embd) + ", n_head " +
                       std::to_string(c.n_head) + ", " + std::to_string(c.n_layer) +
                       (c.n_layer == 1 ? " block" : " blocks"));
        w.key("layers");
        w.begin_array();
        for (int l = 0; l < c.n_layer; ++l) w.value_int(l);
        w.end_array();
        w.end_object();
        write_mat(w, "x", tr.h0);
        write_mat(w, "y1", tr.h_out);
        w.key("logits");
        w.begin_object();
        write_mat(w, "prev", tr.logits_prev);
        write_mat(w, "dup", tr.logits_dup);
        write_mat(w, "next", tr.logits_next);
        w.end_object();
        if (a.intermediates) {
            w.key("layers");
            w.begin_array();
            for (size_t l = 0; l < tr.layers.size(); ++l) write_layer(w, int(l), tr.layers[l]);
            w.end_array();
        }
        if (p >= 0) {
            // The next token of the vocabulary at p (wrapping), and what changes downstream.
            std::vector<int> tokens2 = tokens;
            tokens2[size_t(p)] = (tokens[size_t(p)] + 1) % c.vocab;
            ModelTrace tr2;
            model_forward(m, tokens2, kernel, tr2, ablated);
            w.key("perturbed_token");
            w.begin_object();
            w.key("from"); w.value_string(token_name(c, tokens[size_t(p)]));
            w.key("to"); w.value_string(token_name(c, tokens2[size_t(p)]));
            w.end_object();
            write_mat(w, "y2", tr2.h_out);
            std::vector<float> diff = max_abs_diff_per_position(tr.h_out, tr2.h_out);
            w.key("max_abs_diff_per_position"); w.array(diff.data(), {int64_t(diff.size())});
            w.key("max_abs_diff_per_position_per_layer");
            w.begin_array();
            for (size_t l = 0; l < tr.layers.size(); ++l) {
                std::vector<float> d = max_abs_diff_per_position(tr.layers[l].y, tr2.layers[l].y);
                w.array(d.data(), {int64_t(d.size())});
            }
            w.end_array();
        }
        if (ablated) {
            // The task's loss and accuracy on the accuracy probe (train.h), before and after.
            const TaskMetrics before = task_metrics(m, kernel), after = task_metrics(m, kernel, ablated);
            w.key("ablation");
            w.begin_object();
            write_ablation_heads(w, ab);
            w.key("before"); write_metrics(w, before);
            w.key("after"); write_metrics(w, after);
            TaskMetrics delta = after;
            delta.loss = after.loss - before.loss;
            for (size_t i = 0; i < delta.accuracy.size() && i < before.accuracy.size(); ++i)
                delta.accuracy[i].second -= before.accuracy[i].second;
            w.key("delta"); write_metrics(w, delta);
            w.end_object();
        }
        if (ablated || a.ablation.dla_pos) {
            w.key("dla");
            write_dla(w, logit_attribution(m, tr, dla_pos, dla_class, ablated), nullptr);
        }
        w.end_object();
        w.flush();
    }
    return finish_stdout("trace");
}

} // namespace attnviz
