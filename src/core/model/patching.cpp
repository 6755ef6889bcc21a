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

void check_tokens(const ModelConfig& c, const std::vector<int>& tokens, const char* which) {
    if (tokens.empty() || int(tokens.size()) > c.seq_len)
        throw std::invalid_argument(std::string("the ") + which + " prompt has " + std::to_string(tokens.size()) +
                                    " tokens; give 1 to " + std::to_string(c.seq_len) + " (the model's block size).");
    for (int t : tokens)
        if (t < 0 || t >= c.vocab)
            throw std::invalid_argument(std::string("the ") + which + " prompt's token " + std::to_string(t) +
                                        " is outside the vocabulary 0.." + std::to_string(c.vocab - 1) + ".");
}

// ln_f of h_out's last row, then wte[answer] . x - wte[wrong] . x, each dot summed in order
// from 0 as linear_forward_rows' reference loop (torch's logits bit for bit on that kernel).
float logit_diff(const Model& m, const ModelTrace& tr, int answer, int wrong) {
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

// The rerun's first row for a patch at row t: every row on the fast kernel (patching.h).
int first_row(KernelKind kernel, int t) { return kernel == KernelKind::reference ? t : 0; }

} // namespace

void prepare_patch_runs(const Model& m, const std::vector<int>& clean, const std::vector<int>& corrupt, int answer,
                        int wrong, KernelKind kernel, PatchRuns& runs) {
    const ModelConfig& c = m.config;
    if (c.arch != Arch::gpt)
        throw std::invalid_argument("activation patching runs on GPT models; this is a toy model.");
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
    gpt_forward(m, clean, kernel, true, runs.clean);
    gpt_rerun_rows(m, 0, 0, kernel, runs.clean, [&](int l, Trace& a) { runs.clean_z[size_t(l)] = a.concat; });
    gpt_forward(m, corrupt, kernel, true, runs.corrupt);
    gpt_rerun_rows(m, 0, 0, kernel, runs.corrupt);
    // Every patch copies the corrupted trace and reads only h_out: its (T, V) logits stay out.
    runs.corrupt.logits.resize(0, 0);
    runs.corrupt.ln_f.resize(0, 0);
    runs.clean_ld = logit_diff(m, runs.clean, answer, wrong);
    runs.corrupt_ld = logit_diff(m, runs.corrupt, answer, wrong);
}

float patched_ld_resid(const PatchRuns& runs, int l, int t) {
    const Model& m = *runs.model;
    ModelTrace tr = runs.corrupt;
    Mat& pre = l == 0 ? tr.h0 : tr.blocks[size_t(l - 1)].resid_post; // gpt_resid_pre(tr, l)
    pre.row(t) = gpt_resid_pre(runs.clean, l).row(t);
    gpt_rerun_rows(m, l, first_row(runs.kernel, t), runs.kernel, tr);
    return logit_diff(m, tr, runs.answer, runs.wrong);
}

float patched_ld_head(const PatchRuns& runs, int l, int h) {
    const Model& m = *runs.model;
    ModelTrace tr = runs.corrupt;
    const Weights& w = m.h[size_t(l)].attn;
    gpt_rerun_rows(m, l, 0, runs.kernel, tr, [&](int layer, Trace& a) {
        if (layer != l) return;
        const int hd = a.head_dim, T = a.T;
        a.concat.middleCols(h * hd, hd) = runs.clean_z[size_t(l)].middleCols(h * hd, hd);
        linear_forward_rows(a.y.data(), a.concat.data(), w.c_proj.weight, w.c_proj.bias, 0, T, runs.kernel);
    });
    return logit_diff(m, tr, runs.answer, runs.wrong);
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
            const float* a = gpt_resid_pre(runs.clean, l).data() + int64_t(t) * C;
            const float* b = gpt_resid_pre(runs.corrupt, l).data() + int64_t(t) * C;
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
