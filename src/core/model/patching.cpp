// patching.cpp: activation patching's runs and tables; see patching.h.
#include "patching.h"
#include "layers.h"
#include "work_team.h"
#include <cstring>
#include <stdexcept>
#include <string>

namespace attnviz {

using namespace detail;

namespace {

// A GPT's tokens are 0 .. vocab-1 within its block size; a toy model's 0 .. BOS within its
// T + 1 positions.
void check_tokens(const ModelConfig& c, const std::vector<int>& tokens, const char* which) {
    const int top = c.arch == Arch::gpt ? c.vocab - 1 : c.bos();
    if (tokens.empty() || int(tokens.size()) > c.n_tokens())
        throw std::invalid_argument(std::string("the ") + which + " prompt has " + std::to_string(tokens.size()) +
                                    " tokens; give 1 to " + std::to_string(c.n_tokens()) + " (the model's block size).");
    for (int t : tokens)
        if (t < 0 || t > top)
            throw std::invalid_argument(std::string("the ") + which + " prompt's token " + std::to_string(t) +
                                        " is outside the vocabulary 0.." + std::to_string(top) + ".");
}

bool is_gpt(const Model& m) { return m.config.arch == Arch::gpt; }

// GPT: ln_f of h_out's last row, then wte[answer] . x - wte[wrong] . x, each dot summed in order
// from 0 as linear_forward_rows' reference loop (torch's logits bit for bit on that kernel).
// Toy: the difference of the lm_head's two logits at the last row.
float logit_diff(const Model& m, const ModelTrace& tr, int answer, int wrong) {
    if (!is_gpt(m)) {
        const int64_t last = tr.logits_next.rows() - 1;
        return tr.logits_next(last, answer) - tr.logits_next(last, wrong);
    }
    const int T = int(tr.h_out.rows()), C = m.config.n_embd;
    std::vector<float> x(static_cast<size_t>(C));
    layernorm_forward(x.data(), tr.h_out.data() + int64_t(T - 1) * C, m.ln_f, 0, 1, C);
    auto logit = [&](int tok) {
        const float* w = m.wte.data() + int64_t(tok) * C;
        float s = 0.f;
        for (int k = 0; k < C; ++k) s += x[size_t(k)] * w[k];
        return s;
    };
    return logit(answer) - logit(wrong);
}

// Layer l's input: GPT h0 or the previous resid_post; a toy model's block input x.
Mat& resid_pre(const Model& m, ModelTrace& tr, int l) {
    if (!is_gpt(m)) return tr.layers[size_t(l)].x;
    return l == 0 ? tr.h0 : tr.blocks[size_t(l - 1)].resid_post;
}

// Reruns tr from layer l0 (rows from r0 on, GPT on the reference kernel), with head h of layer
// l0 given the clean run's z when h >= 0. A toy model's blocks project y again with
// linear_forward_rows in every layer and every run (its fast attention projects in column
// groups of its own), so that every run sums its projections alike.
void rerun(const PatchRuns& runs, ModelTrace& tr, int l0, int r0, int h, std::vector<Mat>* z = nullptr) {
    const Model& m = *runs.model;
    auto edit = [&](int layer, Trace& a) {
        if (z) (*z)[size_t(layer)] = a.concat;
        const bool patch = h >= 0 && layer == l0;
        if (patch) a.concat.middleCols(h * a.head_dim, a.head_dim) = runs.clean_z[size_t(layer)].middleCols(h * a.head_dim, a.head_dim);
        if (patch || !is_gpt(m)) {
            const Weights& w = m.h[size_t(layer)].attn;
            linear_forward_rows(a.y.data(), a.concat.data(), w.c_proj.weight, w.c_proj.bias, 0, a.T, runs.kernel);
        }
    };
    if (is_gpt(m)) gpt_rerun_rows(m, l0, r0, runs.kernel, tr, edit);
    else model_rerun_edit(m, l0, runs.kernel, tr, edit);
}

// The rerun's first row for a patch at row t: every row on the fast kernel (patching.h).
int first_row(KernelKind kernel, int t) { return kernel == KernelKind::reference ? t : 0; }

} // namespace

void prepare_patch_runs(const Model& m, const std::vector<int>& clean, const std::vector<int>& corrupt, int answer,
                        int wrong, KernelKind kernel, PatchRuns& runs) {
    const ModelConfig& c = m.config;
    if (!is_gpt(m) && !c.has_lm_head())
        throw std::invalid_argument("activation patching measures the next-token logits, which this toy model's task (" +
                                    std::string(to_string(c.task)) + ") does not predict; give a GPT model or an induction model.");
    check_tokens(c, clean, "clean");
    check_tokens(c, corrupt, "corrupted");
    if (clean.size() != corrupt.size())
        throw std::invalid_argument("the clean prompt has " + std::to_string(clean.size()) +
                                    " tokens and the corrupted one " + std::to_string(corrupt.size()) +
                                    "; give two prompts of the same length.");
    for (int tok : {answer, wrong})
        if (tok < 0 || tok >= c.vocab)
            throw std::invalid_argument("answer token " + std::to_string(tok) + " is outside the vocabulary 0.." +
                                        std::to_string(c.vocab - 1) + ".");
    if (answer == wrong)
        throw std::invalid_argument("the answer and the wrong token are both " + std::to_string(answer) +
                                    "; give two different tokens.");
    runs.model = &m;
    runs.kernel = kernel;
    runs.answer = answer;
    runs.wrong = wrong;
    // Both runs through the rerun every patch uses, so an unchanged patch gives their bits.
    const int L = c.n_layer;
    runs.clean_z.assign(size_t(L), Mat());
    if (is_gpt(m)) {
        gpt_forward(m, clean, kernel, true, runs.clean);
        gpt_forward(m, corrupt, kernel, true, runs.corrupt);
    } else {
        model_forward(m, clean, kernel, runs.clean);
        model_forward(m, corrupt, kernel, runs.corrupt);
    }
    rerun(runs, runs.clean, 0, 0, -1, &runs.clean_z);
    rerun(runs, runs.corrupt, 0, 0, -1);
    // Every patch copies the corrupted trace and reads only h_out: a GPT's (T, V) logits stay out.
    if (is_gpt(m)) {
        runs.corrupt.logits.resize(0, 0);
        runs.corrupt.ln_f.resize(0, 0);
    }
    runs.clean_ld = logit_diff(m, runs.clean, answer, wrong);
    runs.corrupt_ld = logit_diff(m, runs.corrupt, answer, wrong);
}

float patched_ld_resid(const PatchRuns& runs, int l, int t) {
    const Model& m = *runs.model;
    ModelTrace tr = runs.corrupt;
    resid_pre(m, tr, l).row(t) = resid_pre(m, const_cast<ModelTrace&>(runs.clean), l).row(t);
    rerun(runs, tr, l, first_row(runs.kernel, t), -1);
    return logit_diff(m, tr, runs.answer, runs.wrong);
}

float patched_ld_head(const PatchRuns& runs, int l, int h) {
    ModelTrace tr = runs.corrupt;
    rerun(runs, tr, l, 0, h);
    return logit_diff(*runs.model, tr, runs.answer, runs.wrong);
}

float normalised_ld(const PatchRuns& runs, float ld) {
    return float((double(ld) - double(runs.corrupt_ld)) / (double(runs.clean_ld) - double(runs.corrupt_ld)));
}

int patch_count(const PatchRuns& runs, bool resid, bool heads) {
    const ModelConfig& c = runs.model->config;
    const int T = int(runs.corrupt.tokens.size());
    return (resid ? c.n_layer * T : 0) + (heads ? c.n_layer * c.n_head : 0);
}

PatchTables patch_tables(const PatchRuns& runs, bool resid, bool heads, std::atomic<int>* done) {
    if (runs.clean_ld == runs.corrupt_ld)
        throw std::invalid_argument("the clean and corrupted logit differences are both " +
                                    std::to_string(runs.clean_ld) +
                                    ", so nothing can be restored; give prompts or answers that the model tells apart.");
    const ModelConfig& c = runs.model->config;
    const int L = c.n_layer, H = c.n_head, T = int(runs.corrupt.tokens.size());
    PatchTables out;
    if (resid) out.resid.assign(size_t(L), std::vector<float>(size_t(T), 0.f));
    if (heads) out.heads.assign(size_t(L), std::vector<float>(size_t(H), 0.f));
    const int n_resid = resid ? L * T : 0, n = patch_count(runs, resid, heads);
    // One patch a piece: each reruns serially (a nested run_pieces runs alone), so the
    // patches' bits do not depend on how many run side by side.
    run_pieces(n, work_team_threads(), [&](int k) {
        SerialEigen serial;
        if (k < n_resid) {
            const int l = k / T, t = k % T;
            // A row equal in both runs (before the first differing token, by causality) would
            // be rerun into the corrupted run's own bits: its 0 is known without the rerun.
            const int C = c.n_embd;
            ModelTrace& clean = const_cast<ModelTrace&>(runs.clean);
            ModelTrace& corrupt = const_cast<ModelTrace&>(runs.corrupt);
            const float* a = resid_pre(*runs.model, clean, l).data() + int64_t(t) * C;
            const float* b = resid_pre(*runs.model, corrupt, l).data() + int64_t(t) * C;
            const bool same = std::memcmp(a, b, size_t(C) * sizeof(float)) == 0;
            out.resid[size_t(l)][size_t(t)] = same ? 0.f : normalised_ld(runs, patched_ld_resid(runs, l, t));
        } else {
            const int l = (k - n_resid) / H, h = (k - n_resid) % H;
            out.heads[size_t(l)][size_t(h)] = normalised_ld(runs, patched_ld_head(runs, l, h));
        }
        if (done) done->fetch_add(1);
    });
    return out;
}

} // namespace attnviz
