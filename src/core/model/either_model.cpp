// either_model.cpp: see either_model.h.
#include "either_model.h"
#include "gpt_model.h"

namespace attnviz {

namespace {
bool gpt(const Model& m) { return m.config.arch == Arch::gpt; }
} // namespace

void forward_either(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& out, const Ablation* ab) {
    if (gpt(m)) gpt_forward(m, tokens, kernel, true, out, ab);
    else model_forward(m, tokens, kernel, out, ab);
}

void rerun_ablated(const Model& m, const std::vector<int>& tokens, const Ablation& from, const Ablation& to,
                   KernelKind kernel, ModelTrace& tr) {
    if (!gpt(m)) {
        model_forward(m, tokens, kernel, tr, &to);
        return;
    }
    const int l0 = first_difference(from, to);
    if (l0 < m.config.n_layer) gpt_rerun_from(m, l0, kernel, &to, tr);
}

const Mat& next_token_logits(const Model& m, const ModelTrace& t) { return gpt(m) ? t.logits : t.logits_next; }

const Mat& head_logits(const Model& m, const ModelTrace& t) {
    if (gpt(m)) return t.logits;
    if (m.config.has_lm_head()) return t.logits_next; // the heads dla_unembedding reads
    if (m.config.has_prev_head()) return t.logits_prev;
    return t.logits_dup;
}

namespace {
Mat logits_row(const Model& m, const ModelTrace& t, const Mat& all, int pos) {
    Mat row;
    if (pos < 0 || pos >= int(t.tokens.size())) return row;
    if (gpt(m) && t.compact) gpt_logits_rows(m, t, pos, pos + 1, row);
    else if (pos < all.rows()) row = all.middleRows(pos, 1);
    return row;
}
} // namespace

Mat next_token_row(const Model& m, const ModelTrace& t, int pos) { return logits_row(m, t, next_token_logits(m, t), pos); }

Mat head_logits_row(const Model& m, const ModelTrace& t, int pos) { return logits_row(m, t, head_logits(m, t), pos); }

bool scores_read_text(const Model& m) { return gpt(m); }

RunScore score_run(const Model& m, const ModelTrace& run, KernelKind kernel, const Ablation* ab) {
    RunScore r;
    if (gpt(m)) r.loss = next_token_loss(run);
    else r.task = task_metrics(m, kernel, ab);
    return r;
}

std::vector<TokenProb> top_next_tokens(const Model& m, const ModelTrace& t, int pos, int k) {
    if (!gpt(m)) return {};
    const Mat row = head_logits_row(m, t, pos);
    if (row.size() == 0) return {};
    return top_k(softmax_logits(row.data(), int(row.cols())), k);
}

} // namespace attnviz
