// model.cpp: the toy models' configuration, initialisation and forward for one sequence;
// see model.h. Training (batches, loss, backward, Adam) is in train.cpp and its layers.
// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics (the
// _mm512_undefined_ps idiom) wherever Eigen's products inline them; the values are
// defined, so the warning is silenced for this file, as in kernel_fast.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "model.h"
#include "ablation.h"
#include <algorithm>
#include <stdexcept>

namespace attnviz {

const char* to_string(Task t) {
    switch (t) {
    case Task::prev: return "prev";
    case Task::dup: return "dup";
    case Task::both: return "both";
    case Task::induction: return "induction";
    }
    return "both";
}

const char* to_string(Gelu g) { return g == Gelu::tanh ? "tanh (gelu_new)" : "erf (nn.GELU())"; }

bool parse_task(const std::string& s, Task& out, std::string& error) {
    for (Task t : {Task::prev, Task::dup, Task::both, Task::induction})
        if (s == to_string(t)) {
            out = t;
            return true;
        }
    error = "unknown task '" + s + "'; the tasks are prev, dup, both and induction.";
    return false;
}

TrainDefaults task_defaults(Task t) {
    // The defaults of docs/training.md §1.
    TrainDefaults d;
    d.model.task = t;
    d.model.vocab = 16;
    d.model.seq_len = 16;
    d.model.n_embd = 64;
    d.model.n_head = 2;
    d.model.n_layer = 1;
    d.lr = 5e-3;
    d.batch = 64;
    switch (t) {
    case Task::prev: d.steps = 300; break;
    case Task::dup: d.steps = 600; break;
    case Task::both:
        d.model.n_head = 4;
        d.steps = 1000;
        break;
    case Task::induction:
        d.model.seq_len = 24;
        d.model.n_layer = 2;
        d.lr = 3e-3;
        d.steps = 1500;
        break;
    }
    return d;
}

std::string validate(const ModelConfig& c) {
    const std::string task = to_string(c.task);
    if (c.vocab < 2 || c.vocab > max_train_vocab)
        return "vocab " + std::to_string(c.vocab) + " is out of range; a toy model needs 2 to " +
               std::to_string(max_train_vocab) + " tokens.";
    if (c.n_layer < 1 || c.n_layer > max_train_n_layer)
        return "n_layer " + std::to_string(c.n_layer) + " is out of range; use 1 to " +
               std::to_string(max_train_n_layer) + " layers.";
    if (c.n_embd < 1 || c.n_embd > max_train_n_embd)
        return "n_embd " + std::to_string(c.n_embd) + " is out of range; use 1 to " +
               std::to_string(max_train_n_embd) + ".";
    if (c.n_head < 1 || c.n_head > max_train_n_head)
        return "n_head " + std::to_string(c.n_head) + " is out of range; use 1 to " +
               std::to_string(max_train_n_head) + ".";
    if (c.n_embd % c.n_head != 0)
        return "n_embd " + std::to_string(c.n_embd) + " is not divisible by n_head " +
               std::to_string(c.n_head) + "; choose n_head among the divisors of n_embd.";
    if (c.seq_len > max_train_seq_len)
        return "seq_len " + std::to_string(c.seq_len) + " is too long for training; use at most " +
               std::to_string(max_train_seq_len) + ".";
    // randint(3, T // 2) draws the repeated segment's length: it needs T // 2 > 3.
    if (c.task == Task::induction && c.seq_len < 8)
        return "seq_len " + std::to_string(c.seq_len) +
               " is too short for induction, whose repeated segment needs at least 3 tokens twice; use 8 or more.";
    if (c.seq_len < 2)
        return "seq_len " + std::to_string(c.seq_len) + " is too short for task " + task + "; use 2 or more.";
    return "";
}

namespace {

void randn_mat(TorchGenerator& g, Mat& m, int rows, int cols) {
    m.resize(rows, cols);
    g.randn(m.data(), m.size()); // row-major is torch's memory order
}

void linear_mat(TorchGenerator& g, Mat& m, int out, int in) {
    m.resize(out, in);
    g.kaiming_uniform(m.data(), out, in);
}

} // namespace

Model init_model(const ModelConfig& c, uint64_t seed) {
    const std::string error = validate(c);
    if (!error.empty()) throw std::invalid_argument(error);
    const int V = c.vocab, C = c.n_embd;
    TorchGenerator g(seed);
    Model m;
    m.config = c;
    // nn.Embedding(n, C).weight is torch.randn(n, C) at the same point of the stream.
    randn_mat(g, m.wte, V + 1, C);
    randn_mat(g, m.wpe, c.n_tokens(), C);
    m.h.resize(size_t(c.n_layer));
    for (Block& b : m.h) {
        linear_mat(g, b.attn.c_attn.weight, 3 * C, C);
        linear_mat(g, b.attn.c_proj.weight, C, C);
        b.attn.source = "trained";
    }
    if (c.has_prev_head()) linear_mat(g, m.head_prev, V + 1, C);
    if (c.has_dup_head()) linear_mat(g, m.head_dup, 2, C);
    if (c.has_lm_head()) linear_mat(g, m.lm_head, V, C);
    return m;
}

std::vector<Param> parameters(Model& m) {
    std::vector<Param> p;
    p.push_back({"transformer.wte.weight", &m.wte});
    p.push_back({"transformer.wpe.weight", &m.wpe});
    for (size_t l = 0; l < m.h.size(); ++l) {
        const std::string prefix = "transformer.h." + std::to_string(l) + ".attn.";
        p.push_back({prefix + "c_attn.weight", &m.h[l].attn.c_attn.weight});
        p.push_back({prefix + "c_proj.weight", &m.h[l].attn.c_proj.weight});
    }
    if (m.config.has_prev_head()) p.push_back({"head_prev.weight", &m.head_prev});
    if (m.config.has_dup_head()) p.push_back({"head_dup.weight", &m.head_dup});
    if (m.config.has_lm_head()) p.push_back({"lm_head.weight", &m.lm_head});
    return p;
}

namespace {

// logits = h W^T: (N, C) x (K, C)^T -> (N, K). The reference kernel sums each output
// sequentially from 0, as the reference BLAS's sgemm does for nn.Linear.
void head_logits(const Mat& h, const Mat& W, KernelKind kernel, Mat& out) {
    if (kernel == KernelKind::fast) {
        out.noalias() = h * W.transpose();
        return;
    }
    out.resize(h.rows(), W.rows());
    for (Eigen::Index i = 0; i < h.rows(); ++i)
        for (Eigen::Index o = 0; o < W.rows(); ++o) {
            float s = 0.f;
            for (Eigen::Index c = 0; c < h.cols(); ++c) s += h(i, c) * W(o, c);
            out(i, o) = s;
        }
}

} // namespace

Config block_config(const ModelConfig& c, int N) {
    Config ac;
    ac.n_embd = c.n_embd;
    ac.n_head = c.n_head;
    ac.seq_len = N;
    ac.mask = MaskMode::causal;
    ac.scale = ScaleMode::head_dim;
    return ac;
}

namespace {

// Blocks l0 .. L-1 from h, block l0's input, then h_out.
void blocks_from(const Model& m, int l0, Mat h, KernelKind kernel, ModelTrace& out, const Ablation* ablation,
                 const LayerEdit* edit = nullptr) {
    const Config ac = block_config(m.config, int(h.rows()));
    out.layers.resize(m.h.size());
    for (size_t l = size_t(l0); l < m.h.size(); ++l) {
        // The block sees h; its output joins the residual stream in float32, as x + attn(x).
        forward(ac, m.h[l].attn, h, kernel, out.layers[l]);
        if (ablation) apply_ablation(*ablation, int(l), m.h[l].attn, 0, kernel, out.layers[l]);
        if (edit) (*edit)(int(l), out.layers[l]);
        h += out.layers[l].y;
    }
    out.h_out = std::move(h);
}

void task_heads(const Model& m, KernelKind kernel, ModelTrace& out) {
    const ModelConfig& c = m.config;
    out.logits_prev.resize(0, 0);
    out.logits_dup.resize(0, 0);
    out.logits_next.resize(0, 0);
    const Mat& h = out.h_out;
    if (c.has_prev_head()) head_logits(h, m.head_prev, kernel, out.logits_prev);
    if (c.has_dup_head()) head_logits(h, m.head_dup, kernel, out.logits_dup);
    if (c.has_lm_head()) head_logits(h, m.lm_head, kernel, out.logits_next);
}

} // namespace

void model_blocks(const Model& m, const Mat& h0, KernelKind kernel, ModelTrace& out, const Ablation* ablation) {
    const ModelConfig& c = m.config;
    const int N = int(h0.rows());
    if (N < 1 || N > c.n_tokens() || h0.cols() != c.n_embd)
        throw std::invalid_argument("embeddings of " + std::to_string(N) + " x " + std::to_string(h0.cols()) +
                                    " do not fit the model's " + std::to_string(c.n_tokens()) + " positions of " +
                                    std::to_string(c.n_embd) + " channels.");
    if (&out.h0 != &h0) out.h0 = h0;
    blocks_from(m, 0, h0, kernel, out, ablation);
}

void model_rerun_from(const Model& m, int l0, KernelKind kernel, ModelTrace& tr, const Ablation* ablation) {
    if (tr.layers.size() != m.h.size() || tr.h0.rows() < 1 || tr.h0.cols() != m.config.n_embd)
        throw std::invalid_argument("the trace was not made by this model's forward; run model_forward first.");
    l0 = std::clamp(l0, 0, int(m.h.size()));
    if (l0 == int(m.h.size())) return; // nothing changed in any block
    blocks_from(m, l0, tr.layers[size_t(l0)].x, kernel, tr, ablation);
    task_heads(m, kernel, tr);
}

void model_rerun_edit(const Model& m, int l0, KernelKind kernel, ModelTrace& tr, const LayerEdit& edit) {
    if (tr.layers.size() != m.h.size() || tr.h0.rows() < 1 || tr.h0.cols() != m.config.n_embd || l0 < 0 ||
        l0 >= int(m.h.size()))
        throw std::invalid_argument("the trace was not made by this model's forward, or block " + std::to_string(l0) +
                                    " is not in it; run model_forward first.");
    blocks_from(m, l0, tr.layers[size_t(l0)].x, kernel, tr, nullptr, edit ? &edit : nullptr);
    task_heads(m, kernel, tr);
}

void model_forward(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& out,
                   const Ablation* ablation) {
    const ModelConfig& c = m.config;
    const int N = int(tokens.size()), C = c.n_embd;
    if (N < 1 || N > c.n_tokens())
        throw std::invalid_argument("a sequence of " + std::to_string(N) + " tokens does not fit the model's " +
                                    std::to_string(c.n_tokens()) + " positions.");
    for (int t : tokens)
        if (t < 0 || t > c.bos())
            throw std::invalid_argument("token " + std::to_string(t) + " is outside the model's vocabulary 0.." +
                                        std::to_string(c.bos()) + ".");
    out.tokens = tokens;
    // h = wte[tok] + wpe[0..N-1]: (N, C)
    out.h0.resize(N, C);
    for (int t = 0; t < N; ++t) out.h0.row(t) = m.wte.row(tokens[size_t(t)]) + m.wpe.row(t);

    model_blocks(m, out.h0, kernel, out, ablation);
    task_heads(m, kernel, out);
}

} // namespace attnviz
