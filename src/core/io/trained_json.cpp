// trained_json.cpp: see trained_json.h.
#include "trained_json.h"
#include "ablation_json.h"
#include "attention.h"
#include "model_io.h"
#include "tensor_table.h"
#include <limits>

namespace attnviz {

// A (rows, cols) matrix with B = 1 in front; nothing when the model has no such output
// (a toy model has only its task's logits).
static void write_mat(JsonWriter& w, const char* key, const Mat& m) {
    if (m.size() == 0) return;
    w.key(key);
    w.array(m.data(), {1, m.rows(), m.cols()});
}

static void write_layer(JsonWriter& w, int l, const Trace& tr) {
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

void write_task_metrics(JsonWriter& w, const TaskMetrics& t) {
    w.begin_object();
    w.key("loss"); w.value(float(t.loss));
    w.key("accuracy");
    w.begin_object();
    for (const auto& [key, value] : t.accuracy) { w.key(key); w.value(float(value)); }
    w.end_object();
    w.end_object();
}

// The class the unembedding DLA reads (ablation.h) scores highest at `pos`.
static int top_class(const Model& m, const ModelTrace& tr, int pos) {
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

// "weights": the trained model's file and what it is.
static void write_trained_source(JsonWriter& w, const ModelConfig& c, const std::string& path) {
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
}

// The next token of the vocabulary at p (wrapping), and what changes downstream of it.
static void write_trained_perturbation(JsonWriter& w, const Model& m, const std::vector<int>& tokens, int p, KernelKind kernel,
                                       const Ablation* ablated, const ModelTrace& tr) {
    const ModelConfig& c = m.config;
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

// The task's loss and accuracy on the accuracy probe (train.h), before and after the ablation.
static void write_trained_ablation(JsonWriter& w, const Model& m, KernelKind kernel, const Ablation& ablated) {
    const TaskMetrics before = task_metrics(m, kernel), after = task_metrics(m, kernel, &ablated);
    w.key("ablation");
    w.begin_object();
    write_ablation_heads(w, ablated);
    w.key("before"); write_task_metrics(w, before);
    w.key("after"); write_task_metrics(w, after);
    TaskMetrics delta = after;
    delta.loss = after.loss - before.loss;
    for (size_t i = 0; i < delta.accuracy.size() && i < before.accuracy.size(); ++i)
        delta.accuracy[i].second -= before.accuracy[i].second;
    w.key("delta"); write_task_metrics(w, delta);
    w.end_object();
}

void write_trained_trace_json(std::ostream& out, const Model& m, const TrainedTraceRequest& r) {
    const ModelConfig& c = m.config;
    const std::vector<int>& tokens = r.tokens;
    const KernelKind kernel = r.kernel;
    const Ablation* ablated = r.ablation && !r.ablation->empty() ? r.ablation : nullptr;
    const int N = int(tokens.size());
    const int dla_pos = r.dla_pos.value_or(N - 1);

    // The clean run picks the DLA's class; the traced tensors are the ablated run's.
    ModelTrace tr;
    model_forward(m, tokens, kernel, tr);
    const int dla_class = top_class(m, tr, dla_pos);
    if (ablated) model_forward(m, tokens, kernel, tr, ablated);

    JsonWriter w(out);
    w.begin_object();
    w.key("n_embd"); w.value_int(c.n_embd);
    w.key("n_head"); w.value_int(c.n_head);
    w.key("n_layer"); w.value_int(c.n_layer);
    w.key("B"); w.value_int(1);
    w.key("T"); w.value_int(N);
    w.key("text"); w.value_string(r.text);
    w.key("tokens");
    w.begin_array();
    for (const std::string& s : r.words) w.value_string(s);
    w.end_array();
    w.key("token_ids");
    w.begin_array();
    for (int t : tokens) w.value_int(t);
    w.end_array();
    if (r.perturb) { w.key("perturbed_position"); w.value_int(*r.perturb); }
    w.key("head_dim"); w.value_int(c.head_dim());
    w.key("scale_float32"); w.value(tr.layers.empty() ? 0.f : tr.layers[0].scale);
    w.key("mask"); w.value_string("causal");
    w.key("scale"); w.value_string("head-dim");
    w.key("kernel"); w.value_string(to_string(kernel));
    int64_t params = 0;
    for (const ModelTensor& t : model_layout(c)) params += int64_t(t.rows) * t.cols;
    w.key("param_count"); w.value_int(params);
    write_trained_source(w, c, r.path);
    write_mat(w, "x", tr.h0);
    write_mat(w, "y1", tr.h_out);
    w.key("logits");
    w.begin_object();
    write_mat(w, "prev", tr.logits_prev);
    write_mat(w, "dup", tr.logits_dup);
    write_mat(w, "next", tr.logits_next);
    w.end_object();
    if (r.intermediates) {
        w.key("layers");
        w.begin_array();
        for (size_t l = 0; l < tr.layers.size(); ++l) write_layer(w, int(l), tr.layers[l]);
        w.end_array();
    }
    if (r.perturb) write_trained_perturbation(w, m, tokens, *r.perturb, kernel, ablated, tr);
    if (ablated) write_trained_ablation(w, m, kernel, *ablated);
    if (ablated || r.dla_pos) {
        w.key("dla");
        write_dla(w, logit_attribution(m, tr, dla_pos, dla_class, ablated), nullptr);
    }
    w.end_object();
    w.flush();
}

} // namespace attnviz
