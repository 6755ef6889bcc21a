// check_ablation.cpp: question 4's "Show me". The check view asks how to show that a head
// matters, not only where it looks. This trains the 2-layer induction model at its recipe's
// defaults (on a worker, as question 2's runs train), then recompute() finds layer 0's
// previous-token heads with the detector, ablates them (their output set to zero) and
// measures, before, ablated and restored: layer 1's induction heads' scores on repeated
// sequences, their patterns on the probe, and the next-token accuracy. The sentence the
// class reads is built from those numbers, so it says what this run did.
#include "app_state.h"
#include "head_detector.h"
#include "train_view_state.h"
#include "text_util.h"
#include <algorithm>
#include <cstdio>

namespace attnviz {

namespace {

double next_accuracy(const TaskMetrics& m) {
    for (const auto& [k, v] : m.accuracy)
        if (k == "next") return v;
    return 0;
}

// "h0", "h0 and h1", "h0, h1 and h3"
std::string head_list(const std::vector<int>& heads) {
    std::string out;
    for (size_t i = 0; i < heads.size(); ++i)
        out += (i == 0 ? "" : i + 1 == heads.size() ? " and " : ", ") + ("h" + std::to_string(heads[i]));
    return out;
}

// The induction heads' scores of one state, "0.88 and 0.85".
std::string scores_of(const AblationDemo& d, const AblationDemoState& st) {
    std::vector<std::string> v;
    for (int h : d.induction_heads) v.push_back(two_decimals(st.induction[1][size_t(h)]));
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
    return out;
}

} // namespace

void start_ablation_demo(AppState& s) {
    TrainViewState& t = train_view(s);
    AblationDemo& d = t.ablation_demo;
    d = AblationDemo{}; // joins a run still going
    d.settings = default_train_settings(Task::induction);
    d.steps = task_defaults(Task::induction).steps;
    d.scroll = true;
    s.screen.view = View::check;
    refresh_ablation_demo(t);
}

void refresh_ablation_demo(TrainViewState& t, bool wait) {
    AblationDemo& d = t.ablation_demo;
    if (!d.asked() || d.trained()) return;
    if (!d.session) {
        d.session = std::make_unique<TrainSession>(d.settings);
        d.session->run_to(d.steps);
    }
    if (wait) d.session->wait_idle();
    d.status = d.session->status();
    if (d.status.busy) return;
    TrainPicture p;
    p.model = d.session->latest(&p.step);
    p.probe = default_probe(d.settings.model);
    d.picture = std::move(p);
    d.session.reset(); // the model is all the demonstration needs
}

void compute_ablation_demo(AblationDemo& d) {
    const Model& m = *d.picture.model;
    const ModelConfig& c = m.config;
    const KernelKind kernel = KernelKind::reference;
    // Layer 0's previous-token heads, by the recipe's detector on its probe (train.h).
    const HeadScores hs = head_scores(m);
    d.prev_heads.clear();
    d.prev_scores.clear();
    for (int h = 0; h < c.n_head; ++h)
        if (hs.prev_token[0][size_t(h)] >= prev_token_threshold) {
            d.prev_heads.push_back(h);
            d.prev_scores.push_back(hs.prev_token[0][size_t(h)]);
        }
    Ablation ab;
    ab.mode = AblationMode::zero;
    for (int h : d.prev_heads) ab.heads.push_back({0, h});
    const char* names[3] = {"before", "ablated", "restored"};
    for (int k = 0; k < 3; ++k) {
        AblationDemoState& st = d.states[k];
        st = AblationDemoState{};
        st.name = names[k];
        if (k == 1) st.ablation = ab;
        const Ablation* a = st.ablation.empty() ? nullptr : &st.ablation;
        HeadDetection det;
        detect_repeat_induction(m, kernel, det, detector_repeat_count, detector_repeat_seed, std::nullopt, a);
        st.induction = det.repeat_induction;
        st.metrics = task_metrics(m, kernel, a);
    }
    // Layer 1's induction heads in the clean model (the best one when none passes).
    d.induction_heads.clear();
    const std::vector<float>& clean = d.states[0].induction[1];
    for (int h = 0; h < c.n_head; ++h)
        if (clean[size_t(h)] >= induction_threshold) d.induction_heads.push_back(h);
    if (d.induction_heads.empty())
        d.induction_heads.push_back(int(std::max_element(clean.begin(), clean.end()) - clean.begin()));
    // Their patterns on the probe, in each state.
    const int N = int(d.picture.probe.size());
    for (AblationDemoState& st : d.states) {
        ModelTrace tr;
        model_forward(m, d.picture.probe, kernel, tr, st.ablation.empty() ? nullptr : &st.ablation);
        for (int h : d.induction_heads) {
            HeadView hv;
            hv.layer = 1, hv.head = h;
            const Mat& p = tr.layers[1].att[size_t(h)];
            hv.probs.assign(size_t(N) * size_t(N), 0.f);
            for (int i = 0; i < N; ++i)
                for (int j = 0; j <= i; ++j) hv.probs[size_t(i) * size_t(N) + size_t(j)] = p(i, j);
            hv.induction = st.induction[1][size_t(h)];
            hv.label = "L1 h" + std::to_string(h) + ": ind " + two_decimals(hv.induction);
            st.heads.push_back(std::move(hv));
        }
    }
    d.chance = 1.0 / double(c.vocab);
    d.sentence = ablation_demo_sentence(d);
    d.computed = true;
    d.scroll = true; // the result has grown the view: bring it into sight again
}

std::string ablation_demo_sentence(const AblationDemo& d) {
    const AblationDemoState &before = d.states[0], &off = d.states[1], &back = d.states[2];
    const double a0 = next_accuracy(before.metrics), a1 = next_accuracy(off.metrics), a2 = next_accuracy(back.metrics);
    const int V = d.picture.model ? d.picture.model->config.vocab : 0;
    const std::string chance = "1/" + std::to_string(V) + " = " + two_decimals(d.chance);
    if (d.prev_heads.empty())
        return "This run has no previous-token head in layer 0 (no score passes " + two_decimals(prev_token_threshold) +
               "), so there is nothing to ablate; next-token accuracy " + two_decimals(a0) + ", chance " + chance + ".";
    const bool many = d.prev_heads.size() > 1, many_ind = d.induction_heads.size() > 1;
    std::string prev = "layer 0's previous-token head" + std::string(many ? "s " : " ") + head_list(d.prev_heads) + " (";
    for (size_t i = 0; i < d.prev_scores.size(); ++i) prev += (i ? ", " : "") + two_decimals(d.prev_scores[i]);
    prev += ")";
    double lowest_after = 1;
    for (int h : d.induction_heads) lowest_after = std::min(lowest_after, double(off.induction[1][size_t(h)]));
    double highest_after = 0;
    for (int h : d.induction_heads) highest_after = std::max(highest_after, double(off.induction[1][size_t(h)]));
    const bool lost = highest_after < induction_threshold;
    const bool near_chance = a1 <= 2 * d.chance;
    bool same = a2 == a0;
    for (int h : d.induction_heads) same = same && back.induction[1][size_t(h)] == before.induction[1][size_t(h)];
    std::string out = "With " + prev + (many ? " ablated (all of them, their output set to zero), " : " ablated (its output set to zero), ") +
                      "layer 1's induction head" + (many_ind ? "s " : " ") + head_list(d.induction_heads) + " score" +
                      (many_ind ? " " : "s ") + scores_of(d, off) + " instead of " + scores_of(d, before) + " on repeated sequences" +
                      (lost ? ", below the detector's " + two_decimals(induction_threshold) : "") +
                      ", and the next-token accuracy falls from " + two_decimals(a0) + " to " + two_decimals(a1) +
                      (near_chance ? ", about chance (" + chance + ")" : " (chance is " + chance + ")") + ". ";
    out += "Restored, the score" + std::string(many_ind ? "s are " : " is ") + scores_of(d, back) + " and the accuracy " + two_decimals(a2) +
           (same ? " again, exactly. " : ". ");
    out += "The induction head" + std::string(many_ind ? "s" : "") + " still compute" + (many_ind ? "" : "s") +
           " a pattern, but " + (many_ind ? "they find" : "it finds") +
           " what to copy through the previous-token head's output: that is what the head is for.";
    return out;
}

void open_ablation_demo(AppState& s) {
    if (!s.train || !s.train->ablation_demo.computed) return;
    const AblationDemo& d = s.train->ablation_demo;
    auto in = std::make_shared<TrainedInput>();
    in->model = d.picture.model;
    in->tokens = d.picture.probe;
    in->source = "check yourself, question 4 (induction, step " + std::to_string(d.picture.step) + ")";
    request_trained_model(s, in);
    s.edit_layer = 1;
    std::vector<HeadRef> heads;
    for (int h : d.prev_heads) heads.push_back({0, h});
    request_ablation(s, heads, AblationMode::zero);
    s.screen.view = View::model;
}

} // namespace attnviz
