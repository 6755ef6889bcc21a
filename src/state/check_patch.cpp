// check_patch.cpp: question 6's demonstration; see check_patch.h. Small enough (a 2-layer
// toy model on 14 tokens, a handful of heads) to patch in recompute() once the model is in.
#include "check_patch.h"
#include "app_state.h"
#include "train.h"
#include "train_view_state.h"
#include "text_util.h"
#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace attnviz {

namespace {

std::string letter(const ModelConfig& c, int t) { return sequence_text(c, {c.bos(), t}); }

} // namespace

void patch_demo_sequences(const ModelConfig& c, std::vector<int>& clean, std::vector<int>& corrupt, int& answer, int& wrong) {
    // Letters spread over the vocabulary, so that the segment is not the alphabet in order.
    const int k = std::max(2, std::min({7, c.vocab - 1, c.seq_len / 2}));
    std::vector<int> seg;
    for (int i = 0; int(seg.size()) < k && i < 4 * c.vocab; ++i) {
        const int t = (i * 5 + 2) % c.vocab;
        if (std::find(seg.begin(), seg.end(), t) == seg.end()) seg.push_back(t);
    }
    answer = seg.back();
    wrong = 0;
    while (std::find(seg.begin(), seg.end(), wrong) != seg.end()) ++wrong;
    clean = {c.bos()};
    clean.insert(clean.end(), seg.begin(), seg.end());
    clean.insert(clean.end(), seg.begin(), seg.end() - 1);
    corrupt = clean;
    corrupt[size_t(k)] = wrong; // the first copy's last letter
}

void start_patch_demo(AppState& s) {
    TrainViewState& t = train_view(s);
    if (!t.ablation_demo.asked()) start_ablation_demo(s); // its run trains the model patched here
    t.patch_demo = PatchDemo{};
    t.patch_demo.asked = true;
    t.patch_demo.scroll = true;
    s.screen.view = View::check;
}

void update_patch_demo(AppState& s) {
    if (!s.train) return;
    PatchDemo& d = s.train->patch_demo;
    const AblationDemo& a = s.train->ablation_demo;
    if (!d.asked || d.computed || !a.trained()) return;
    d.model = a.picture.model;
    d.step = a.picture.step;
    const Model& m = *d.model;
    patch_demo_sequences(m.config, d.clean, d.corrupt, d.answer, d.wrong);
    try {
        PatchRuns runs;
        prepare_patch_runs(m, d.clean, d.corrupt, d.answer, d.wrong, KernelKind::reference, runs);
        d.clean_ld = runs.clean_ld;
        d.corrupt_ld = runs.corrupt_ld;
        d.heads = patch_tables(runs, false, true).heads;
    } catch (const std::invalid_argument& e) {
        d.error = e.what();
    }
    d.induction = head_scores(m).induction;
    d.best_layer = d.best_head = -1;
    for (size_t l = 0; l < d.heads.size(); ++l)
        for (size_t h = 0; h < d.heads[l].size(); ++h)
            if (d.best_layer < 0 || d.heads[l][h] > d.heads[size_t(d.best_layer)][size_t(d.best_head)])
                d.best_layer = int(l), d.best_head = int(h);
    d.sentence = patch_demo_sentence(d);
    d.computed = true;
    d.scroll = true;
}

std::string patch_demo_sentence(const PatchDemo& d) {
    if (!d.error.empty()) return "This run could not be patched: " + d.error;
    const ModelConfig& c = d.model->config;
    const std::string ans = letter(c, d.answer), wr = letter(c, d.wrong);
    const float best = d.heads[size_t(d.best_layer)][size_t(d.best_head)];
    const float ind = d.induction[size_t(d.best_layer)][size_t(d.best_head)];
    std::string out = "Copying L" + std::to_string(d.best_layer) + " h" + std::to_string(d.best_head) +
                      "'s output from the clean run into the corrupted one brings back " + two_decimals(best) +
                      " of the logit difference " + ans + " − " + wr + " (clean " + two_decimals(d.clean_ld) + ", corrupted " +
                      two_decimals(d.corrupt_ld) + "), the most of any head; its induction score is " + two_decimals(ind) +
                      (ind >= induction_threshold ? ", above the detector's " + two_decimals(induction_threshold) + ": an induction head. "
                                                  : ", below the detector's " + two_decimals(induction_threshold) + ". ");
    float layer0 = 0;
    for (float v : d.heads[0]) layer0 = std::max(layer0, v);
    out += "Layer 0's heads bring back at most " + two_decimals(layer0) +
           ": they prepare where to look, but the copied letter reaches the answer through the head that reads it.";
    return out;
}

void open_patch_demo(AppState& s) {
    if (!s.train || !s.train->patch_demo.computed) return;
    const PatchDemo& d = s.train->patch_demo;
    auto in = std::make_shared<TrainedInput>();
    in->model = d.model;
    in->tokens = d.clean;
    in->source = "check yourself, question 6 (induction, step " + std::to_string(d.step) + ")";
    request_trained_model(s, in);
    s.edit_layer = std::min(1, d.model->config.n_layer - 1);
    const ModelConfig& c = d.model->config;
    s.patch.corrupt_field = sequence_text(c, d.corrupt);
    s.patch.answer_field = letter(c, d.answer);
    s.patch.wrong_field = letter(c, d.wrong);
    s.patch.fields_for = d.model.get(); // the fields are these, not the model's defaults
    s.patch.run_asked = true;
    s.model_view.panel = ModelPanel::patching;
    s.screen.view = View::model;
}

} // namespace attnviz
