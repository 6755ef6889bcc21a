// recompute_ablation.cpp: recompute()'s part of the Model view's head ablation (ablation.h).
//
// While heads are ablated every view shows the ablated model: s.model_run.model_base is the ablated
// run, and the clean one waits in s.ablation.model_clean, so that "Restore all" puts it back bit for
// bit without a forward. A toy model is run again whole (a fraction of a millisecond); a
// GPT model from the first layer whose ablation changed (gpt_rerun_from), so that ablating
// a late head of GPT-2 small costs its last layers only.
//
// Next to the runs, the numbers the Model view prints, before (clean) and after:
//   toy    task_metrics: the task's loss and accuracies on the accuracy probe
//   GPT    next_token_loss on the text, and the top 5 at the predictions' position
//   both   the head detector (on the text, and on repeated sequences with the ablation),
//          and each head's direct logit attribution at the predictions' position onto the
//          clean run's top-1 token there (TransformerLens's ln_f with its scale frozen)
// The clean numbers are kept until the model, its tokens or the kernel change.
#include "either_model.h"
#include "gpt_model.h"
#include "state_internal.h"
#include "text_util.h"
#include <algorithm>
#include <limits>
#include <stdexcept>

namespace attnviz {

using namespace state_detail;

namespace {

bool same_ablation(const Ablation& a, const Ablation& b) {
    return a.heads == b.heads && (a.empty() || a.mode == b.mode) && first_difference(a, b) == std::numeric_limits<int32_t>::max();
}

void put_score(RunSummary& r, RunScore score) {
    r.loss = score.loss;
    r.task = std::move(score.task);
}

// The likeliest token of a (1, V) row of logits; -1 for none.
int argmax(const Mat& row) {
    if (row.rows() != 1 || row.cols() == 0) return -1;
    int best = 0;
    for (int j = 1; j < int(row.cols()); ++j)
        if (row(0, j) > row(0, best)) best = j; // ties: the lower id, as torch.topk on CPU
    return best;
}

const ModelTrace& clean_trace(const AppState& s) { return s.ablation.applied.empty() ? s.model_run.model_base : s.ablation.model_clean; }

// The position the DLA and the top 5 are taken at: the predictions' picker (-1: the last).
int dla_position(const AppState& s) {
    const int N = int(s.model_run.model_base.tokens.size());
    return std::clamp(s.model_view.predict_pos < 0 ? N - 1 : s.model_view.predict_pos, 0, std::max(0, N - 1));
}

void summary_at(const Model& m, const ModelTrace& t, const Ablation* ab, int pos, int token, RunSummary& r) {
    r.has_dla = false;
    r.top = top_next_tokens(m, t, pos, 5);
    if (token < 0) return;
    try {
        r.dla = logit_attribution(m, t, pos, token, ab);
        r.has_dla = true;
    } catch (const std::invalid_argument&) {
        r.dla = LogitAttribution{};
    }
}

// The clean numbers for what model_base holds now (a clean run): reused when they belong
// to the same model, tokens and kernel.
void keep_clean(AppState& s) {
    AblationNumbers& n = s.ablation.numbers;
    const std::shared_ptr<const Model> m = shown_model(s)->model;
    const bool same_model = n.clean_model == m && n.clean_kernel == s.kernel;
    if (same_model && n.clean_tokens == shown_model(s)->tokens) return;
    RunSummary c;
    c.detection.text = text_scores(s.model_run.model_base);
    if (same_model && n.clean_repeat) {
        c.detection.repeat_induction = n.clean.detection.repeat_induction;
        c.detection.repeat_count = n.clean.detection.repeat_count;
        c.detection.repeat_len = n.clean.detection.repeat_len;
        c.detection.repeat_seed = n.clean.detection.repeat_seed;
        c.detection.repeat_bos = n.clean.detection.repeat_bos;
        c.detection.probe = n.clean.detection.probe;
    } else {
        detect_repeat_induction(*m, s.kernel, c.detection, window_probe_count(*m));
    }
    if (same_model && !scores_read_text(*m) && !n.clean.task.accuracy.empty()) c.task = n.clean.task; // the probe is the model's, not the text's
    else put_score(c, score_run(*m, s.model_run.model_base, s.kernel));
    n.clean = std::move(c);
    n.clean_model = m;
    n.clean_tokens = shown_model(s)->tokens;
    n.clean_kernel = s.kernel;
    n.clean_repeat = true;
    n.pos = -1; // the DLA is taken again
    if (!same_model) n.repeat_model.reset();
}

// The ablated run's numbers (model_base ablated with s.ablation.applied).
void summarize_ablated(AppState& s) {
    AblationNumbers& n = s.ablation.numbers;
    if (s.ablation.applied.empty()) {
        n.ablated = RunSummary{};
        return;
    }
    const std::shared_ptr<const Model> m = shown_model(s)->model;
    RunSummary a;
    a.detection.text = text_scores(s.model_run.model_base);
    // The repeated sequences need no text unless the means came from it (a GPT's mean mode).
    const bool text_free = !scores_read_text(*m) || s.ablation.applied.mode == AblationMode::zero;
    if (n.repeat_model == m && text_free && same_ablation(n.repeat_ablation, s.ablation.applied)) {
        const HeadDetection& d = n.ablated.detection;
        a.detection.repeat_induction = d.repeat_induction;
        a.detection.repeat_count = d.repeat_count, a.detection.repeat_len = d.repeat_len;
        a.detection.repeat_seed = d.repeat_seed, a.detection.repeat_bos = d.repeat_bos;
    } else {
        // From the clean probe's kept traces: only the layers from the first ablated one run.
        detect_repeat_induction(*m, s.kernel, a.detection, window_probe_count(*m), detector_repeat_seed, std::nullopt,
                                &s.ablation.applied, n.clean_model == m && n.clean_kernel == s.kernel ? &n.clean.detection : nullptr);
        n.repeat_model = text_free ? m : nullptr;
        n.repeat_ablation = s.ablation.applied;
    }
    put_score(a, score_run(*m, s.model_run.model_base, s.kernel, &s.ablation.applied));
    n.ablated = std::move(a);
    n.pos = -1;
}

// model_base turned from a run with `from` into a run with `to` (the clean run when empty).
void rerun(AppState& s, const Ablation& from, const Ablation& to) {
    const Model& m = *shown_model(s)->model;
    if (to.empty()) {
        if (!from.empty()) s.model_run.model_base = std::move(s.ablation.model_clean); // the clean run, bit for bit
        s.ablation.model_clean = ModelTrace{};
        return;
    }
    if (from.empty()) s.ablation.model_clean = s.model_run.model_base;
    rerun_ablated(m, shown_model(s)->tokens, from, to, s.kernel, s.model_run.model_base);
}

// `heads` and `mode` as an Ablation of the shown model, its means computed in mean mode; ""
// or one sentence saying why it cannot be applied.
std::string make_ablation(const AppState& s, const std::vector<HeadRef>& heads, AblationMode mode, Ablation& out) {
    const Model& m = *shown_model(s)->model;
    const ModelConfig& c = m.config;
    for (const HeadRef& h : heads)
        if (h.layer < 0 || h.layer >= c.n_layer || h.head < 0 || h.head >= c.n_head)
            return "head " + to_string(h) + " is not a head of this model (L.H with L 0.." + std::to_string(c.n_layer - 1) +
                   " and H 0.." + std::to_string(c.n_head - 1) + ")";
    out = Ablation{};
    out.mode = mode;
    out.heads = heads;
    std::sort(out.heads.begin(), out.heads.end());
    out.heads.erase(std::unique(out.heads.begin(), out.heads.end()), out.heads.end());
    if (out.empty()) return "";
    if (c.arch == Arch::gpt) {
        const int T = int(shown_model(s)->tokens.size());
        const int64_t need = gpt_window_bytes(m, T) + gpt_trace_bytes(m, T);
        if (need > s.gpt_memory_cap)
            return "ablating a head keeps the clean run beside the ablated one, about " + human_bytes(need) +
                   " with the model on " + std::to_string(T) + " tokens, over the window's cap of " +
                   human_bytes(s.gpt_memory_cap) + "; give a shorter text";
    }
    if (mode == AblationMode::mean) compute_ablation_means(m, ablation_probe(m, shown_model(s)->tokens), s.kernel, out);
    return "";
}

std::string heads_sentence(const Ablation& a) {
    return a.empty() ? "no head ablated" : ablated_heads_text(a) + " ablated (" + to_string(a.mode) + ")";
}

} // namespace

namespace state_detail {

void ablation_after_run(AppState& s) {
    s.ablation.model_clean = ModelTrace{}; // model_base is the new clean run
    keep_clean(s);
    // The heads still ablated that the new model has; the means again (a GPT's are its text's).
    const ModelConfig& c = shown_model(s)->model->config;
    std::vector<HeadRef> kept;
    for (const HeadRef& h : s.ablation.applied.heads)
        if (h.layer < c.n_layer && h.head < c.n_head) kept.push_back(h);
    Ablation next;
    std::string why = make_ablation(s, kept, s.ablation.applied.mode, next);
    if (!why.empty()) {
        s.error = "Showing the model without its ablation: " + why + ".";
        next = Ablation{};
        next.mode = s.ablation.applied.mode;
    }
    s.ablation.applied = Ablation{}; // model_base is clean
    rerun(s, s.ablation.applied, next);
    s.ablation.applied = std::move(next);
    if (!s.ablation.dirty) { // an ablation asked for with the model (a session, --ablate) is applied next
        s.ablation.put_back();
        s.ablation.edit.means.clear();
    }
    summarize_ablated(s);
}

bool apply_ablation_edit(AppState& s) {
    const Ablation& e = s.ablation.edit;
    auto put_back = [&](const std::string& why) {
        s.error = why;
        s.ablation.put_back();
        s.ablation.edit.means.clear();
        return false;
    };
    if (!heads_ablatable(s) || !s.ready) {
        if (e.empty()) return false;
        return put_back("Kept the lesson's module as it is: ablating a head needs a model; train one (Train view, Open in "
                        "the views) or open one with --model.");
    }
    if (e.heads == s.ablation.applied.heads && (e.mode == s.ablation.applied.mode || e.empty())) {
        s.ablation.applied.mode = e.mode; // nothing ablated changes: at most the mode the next heads get
        return false;
    }
    Ablation next;
    if (std::string why = make_ablation(s, e.heads, e.mode, next); !why.empty())
        return put_back("Kept the ablation (" + heads_sentence(s.ablation.applied) + "): " + why + ".");
    s.error.clear();
    const Ablation from = s.ablation.applied;
    rerun(s, from, next);
    s.ablation.applied = std::move(next);
    s.ablation.put_back();
    s.ablation.edit.means.clear();
    summarize_ablated(s);
    // Every view shows the new run: the shown layer, its ranges and textures, the slider again.
    show_new_run(s);
    s.status = s.ablation.applied.empty() ? "Restored every head: the clean model again."
                                  : "Showing the model with " + heads_sentence(s.ablation.applied) + ".";
    return true;
}

void update_ablation_position(AppState& s) {
    if (!heads_ablatable(s) || s.model_run.model_base.tokens.empty()) return;
    AblationNumbers& n = s.ablation.numbers;
    const int pos = dla_position(s);
    if (pos == n.pos) return;
    const Model& m = *shown_model(s)->model;
    n.pos = pos;
    n.token = argmax(head_logits_row(m, clean_trace(s), pos));
    summary_at(m, clean_trace(s), nullptr, pos, n.token, n.clean);
    if (!s.ablation.applied.empty()) summary_at(m, s.model_run.model_base, &s.ablation.applied, pos, n.token, n.ablated);
}

} // namespace state_detail

void request_ablation(AppState& s, std::vector<HeadRef> heads, AblationMode mode) {
    std::sort(heads.begin(), heads.end());
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    s.ablation.edit = Ablation{};
    s.ablation.edit.mode = mode;
    s.ablation.edit.heads = std::move(heads);
    s.ablation.dirty = true;
}

void toggle_ablation(AppState& s, int layer, int head) {
    std::vector<HeadRef> heads = s.ablation.edit.heads;
    const HeadRef h{layer, head};
    auto it = std::find(heads.begin(), heads.end(), h);
    if (it != heads.end()) heads.erase(it);
    else heads.push_back(h);
    request_ablation(s, std::move(heads), s.ablation.edit.mode);
}

void restore_all_heads(AppState& s) { request_ablation(s, {}, s.ablation.edit.mode); }

bool head_ablated(const AppState& s, int layer, int head) { return s.ablation.applied.has(layer, head); }

std::string ablated_heads_text(const Ablation& a) {
    std::string out;
    for (const HeadRef& h : a.heads) out += (out.empty() ? "" : ", ") + ("L" + std::to_string(h.layer) + " h" + std::to_string(h.head));
    return out;
}

} // namespace attnviz
