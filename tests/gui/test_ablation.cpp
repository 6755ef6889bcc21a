// test_ablation.cpp: the Model view's head ablation through recompute() without a window.
// A requested ablation is applied by recompute and its numbers are the core's called
// directly (the runs, task_metrics, next_token_loss, the detector with the ablation,
// logit_attribution); every view shows the ablated run (the shown layer, the causality
// view's change); Restore all brings the clean run back bit for bit; a refused ablation
// keeps the state with one sentence; a new text keeps the heads; sessions keep the
// ablation; and a click on a head's mark in the panel (a real ImGui frame, no window)
// ablates it, as the key A does over a hovered head.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" // GCC 12 inside Eigen's AVX-512 products
#endif
#include "ablation.h"
#include "app_state.h"
#include "gpt_model.h"
#include "gpt_test_dir.h"
#include "imgui_frame.h"
#include "head_detector.h"
#include "model_io.h"
#include "model_view.h"
#include "session.h"
#include "session_state.h"
#include "state_test_support.h"
#include "theme.h"
#include "train.h"
#include "ui_context.h"
#include "views.h"
#include <cmath>
#include <gtest/gtest.h>
#include <imgui.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

const std::string data_dir = ATTNVIZ_TEST_DATA "/model_view/";

std::shared_ptr<const TrainedInput> toy(const std::string& file, const std::string& text = "") {
    return trained_input(data_dir + file, text);
}

std::shared_ptr<const TrainedInput> tiny_gpt(const std::string& text = "The cat sat on the mat, and the cat saw it.") {
    return tiny_gpt_input(text);
}

AppState shown(const std::shared_ptr<const TrainedInput>& in) { return shown_model(in); }

// Layer 0's best previous-token head of a model, by the recipe's detector.
int prev_head(const Model& m) {
    const HeadScores hs = head_scores(m);
    int best = 0;
    for (int h = 1; h < m.config.n_head; ++h)
        if (hs.prev_token[0][size_t(h)] > hs.prev_token[0][size_t(best)]) best = h;
    return best;
}

Ablation zero_of(std::vector<HeadRef> heads) {
    Ablation a;
    a.heads = std::move(heads);
    return a;
}

void expect_same_trace(const ModelTrace& a, const ModelTrace& b, const std::string& what) {
    ASSERT_EQ(a.layers.size(), b.layers.size()) << what;
    for (size_t l = 0; l < a.layers.size(); ++l) {
        EXPECT_TRUE(same_bits(a.layers[l].concat, b.layers[l].concat)) << what << ": layer " << l << " concat";
        EXPECT_TRUE(same_bits(a.layers[l].y, b.layers[l].y)) << what << ": layer " << l << " y";
        for (size_t h = 0; h < a.layers[l].att.size(); ++h)
            EXPECT_TRUE(same_bits(a.layers[l].att[h], b.layers[l].att[h])) << what << ": layer " << l << " head " << h;
    }
    EXPECT_TRUE(same_bits(a.h_out, b.h_out)) << what;
    EXPECT_TRUE(same_bits(a.logits_next, b.logits_next)) << what;
    EXPECT_TRUE(same_bits(a.logits, b.logits)) << what;
}

void expect_same_metrics(const TaskMetrics& a, const TaskMetrics& b, const std::string& what) {
    EXPECT_EQ(a.loss, b.loss) << what;
    EXPECT_EQ(a.accuracy, b.accuracy) << what;
}

void expect_same_dla(const LogitAttribution& a, const LogitAttribution& b, const std::string& what) {
    EXPECT_EQ(a.pos, b.pos) << what;
    EXPECT_EQ(a.token, b.token) << what;
    EXPECT_EQ(a.logit, b.logit) << what;
    EXPECT_EQ(a.heads, b.heads) << what;
    EXPECT_EQ(a.mlp, b.mlp) << what;
}

} // namespace

TEST(Ablation, ToyAblationIsAppliedByRecomputeWithTheCoresNumbers) {
    const auto in = toy("induction.safetensors", "a b c d e f a b c d e f");
    AppState s = shown(in);
    ASSERT_EQ(shown_model(s), in) << s.error;
    const Model& m = *in->model;
    const int h = prev_head(m);
    ModelTrace clean;
    model_forward(m, in->tokens, KernelKind::reference, clean);
    expect_same_trace(s.model_run.model_base, clean, "before any ablation");

    request_ablation(s, {{0, h}}, AblationMode::zero);
    EXPECT_FALSE(s.ablation.applied.has(0, h)) << "nothing is applied before recompute";
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    ASSERT_TRUE(s.ablation.applied.has(0, h));
    const Ablation ab = zero_of({{0, h}});
    ModelTrace want;
    model_forward(m, in->tokens, KernelKind::reference, want, &ab);
    expect_same_trace(s.model_run.model_base, want, "the ablated run");
    expect_same_trace(s.ablation.model_clean, clean, "the clean run kept beside it");
    // Before and after: the core's task metrics, detector and DLA.
    const AblationNumbers& n = s.ablation.numbers;
    expect_same_metrics(n.clean.task, task_metrics(m, KernelKind::reference), "clean task metrics");
    expect_same_metrics(n.ablated.task, task_metrics(m, KernelKind::reference, &ab), "ablated task metrics");
    HeadDetection rep;
    detect_repeat_induction(m, KernelKind::reference, rep, detector_repeat_count, detector_repeat_seed, std::nullopt, &ab);
    EXPECT_EQ(s.model_view.detection.repeat_induction, rep.repeat_induction) << "the table shows the ablated model's scores";
    EXPECT_EQ(s.model_view.detection.text.prev_token, detect_on_text({attention_of(want)}).prev_token);
    HeadDetection rep_clean;
    detect_repeat_induction(m, KernelKind::reference, rep_clean);
    EXPECT_EQ(n.clean.detection.repeat_induction, rep_clean.repeat_induction);
    const int pos = int(in->tokens.size()) - 1;
    int token = 0;
    for (int j = 1; j < int(clean.logits_next.cols()); ++j)
        if (clean.logits_next(pos, j) > clean.logits_next(pos, token)) token = j;
    EXPECT_EQ(n.pos, pos);
    EXPECT_EQ(n.token, token);
    ASSERT_TRUE(n.clean.has_dla && n.ablated.has_dla);
    expect_same_dla(n.clean.dla, logit_attribution(m, clean, pos, token), "clean DLA");
    expect_same_dla(n.ablated.dla, logit_attribution(m, want, pos, token, &ab), "ablated DLA");
    EXPECT_EQ(head_value(s, DetectorColumn::dla, 1, 0), n.ablated.dla.heads[1][0]);
    EXPECT_EQ(head_value(s, DetectorColumn::dla_delta, 1, 0), n.ablated.dla.heads[1][0] - n.clean.dla.heads[1][0]);
    EXPECT_EQ(n.ablated.dla.heads[0][size_t(h)], 0.f) << "a zeroed head adds nothing to the logit";
    // The ablation matters: the induction task falls.
    EXPECT_LT(n.ablated.task.accuracy.back().second, n.clean.task.accuracy.back().second - 0.3);
    // Every view shows the ablated run: layer 1's trace is the ablated forward's.
    request_layer(s, 1);
    recompute(s);
    EXPECT_TRUE(same_bits(s.run.trace.y, want.layers[1].y));
    EXPECT_TRUE(same_bits(s.run.trace.att[0], want.layers[1].att[0]));
    // Moving the predictions' position takes the DLA there.
    s.model_view.predict_pos = 3;
    recompute(s);
    EXPECT_EQ(s.ablation.numbers.pos, 3);
    expect_same_dla(s.ablation.numbers.ablated.dla, logit_attribution(m, want, 3, s.ablation.numbers.token, &ab), "DLA at 3");
}

TEST(Ablation, TheCausalityViewPerturbsTheAblatedModel) {
    const auto in = toy("induction.safetensors", "a b c d e f a b c d e f");
    AppState s = shown(in);
    const Model& m = *in->model;
    request_ablation(s, {{0, prev_head(m)}}, AblationMode::zero);
    request_perturbation(s, 3, 1.f);
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    const Ablation ab = zero_of({{0, prev_head(m)}});
    ModelTrace base, want;
    model_forward(m, in->tokens, KernelKind::reference, base, &ab);
    Mat h0 = base.h0;
    h0.row(3) = m.wte.row(replacement_token(s, 3)) + m.wpe.row(3);
    model_blocks(m, h0, KernelKind::reference, want, &ab);
    EXPECT_TRUE(same_bits(s.model_run.model_perturbed.h_out, want.h_out));
    EXPECT_EQ(s.model_run.dy_out, max_abs_diff_per_position(want.h_out, base.h_out));
}

TEST(Ablation, RestoreAllBringsTheCleanRunBackBitForBit) {
    const auto in = toy("induction.safetensors");
    AppState s = shown(in);
    const ModelTrace clean = s.model_run.model_base;
    const HeadDetection det = s.model_view.detection;
    const Trace trace = s.run.trace;
    const auto predictions = s.model_view.predictions;
    request_ablation(s, {{0, 0}, {0, 1}, {1, 1}}, AblationMode::zero);
    recompute(s);
    ASSERT_EQ(s.ablation.applied.heads.size(), 3u) << s.error;
    EXPECT_NE(s.model_view.detection.repeat_induction, det.repeat_induction);
    restore_all_heads(s);
    recompute(s);
    EXPECT_TRUE(s.ablation.applied.empty());
    expect_same_trace(s.model_run.model_base, clean, "restored");
    EXPECT_TRUE(s.ablation.model_clean.layers.empty()) << "no second copy once nothing is ablated";
    EXPECT_EQ(s.model_view.detection.text.prev_token, det.text.prev_token);
    EXPECT_EQ(s.model_view.detection.text.induction, det.text.induction);
    EXPECT_EQ(s.model_view.detection.repeat_induction, det.repeat_induction);
    EXPECT_TRUE(same_bits(s.run.trace.y, trace.y));
    EXPECT_EQ(s.model_view.predictions.size(), predictions.size());
    for (size_t t = 0; t < predictions.size(); ++t)
        for (size_t k = 0; k < predictions[t].size(); ++k) {
            EXPECT_EQ(s.model_view.predictions[t][k].token, predictions[t][k].token);
            EXPECT_EQ(s.model_view.predictions[t][k].prob, predictions[t][k].prob);
        }
    // Toggling one head in and out again is the same round trip.
    toggle_ablation(s, 1, 0);
    recompute(s);
    EXPECT_TRUE(s.ablation.applied.has(1, 0));
    toggle_ablation(s, 1, 0);
    recompute(s);
    expect_same_trace(s.model_run.model_base, clean, "toggled twice");
}

TEST(Ablation, ARefusedAblationKeepsTheStateAndSaysWhy) {
    const auto in = toy("induction.safetensors");
    AppState s = shown(in);
    request_ablation(s, {{0, 1}}, AblationMode::zero);
    recompute(s);
    ASSERT_TRUE(s.ablation.applied.has(0, 1));
    const ModelTrace before = s.model_run.model_base;
    request_ablation(s, {{0, 1}, {2, 0}}, AblationMode::zero); // the model has layers 0..1
    recompute(s);
    EXPECT_NE(s.error.find("head 2.0 is not a head of this model"), std::string::npos) << s.error;
    EXPECT_EQ(s.error.find('\n'), std::string::npos);
    EXPECT_EQ(s.ablation.applied.heads, (std::vector<HeadRef>{{0, 1}}));
    EXPECT_EQ(s.ablation.edit.heads, s.ablation.applied.heads) << "the asked-for ablation is put back";
    expect_same_trace(s.model_run.model_base, before, "refused");
    request_ablation(s, {{0, 7}}, AblationMode::zero);
    recompute(s);
    EXPECT_NE(s.error.find("H 0..1"), std::string::npos) << s.error;
    // The lesson's module has no model to ablate.
    AppState l = lesson_state();
    request_ablation(l, {{0, 0}}, AblationMode::zero);
    recompute(l);
    EXPECT_NE(l.error.find("ablating a head needs a model"), std::string::npos) << l.error;
    EXPECT_TRUE(l.ablation.applied.empty());
}

TEST(Ablation, MeanModeUsesTheCoresMeansOverTheProbe) {
    const auto in = toy("induction.safetensors");
    AppState s = shown(in);
    const Model& m = *in->model;
    request_ablation(s, {{0, 1}}, AblationMode::mean);
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    Ablation want = zero_of({{0, 1}});
    want.mode = AblationMode::mean;
    compute_ablation_means(m, ablation_probe(m, in->tokens), KernelKind::reference, want);
    ASSERT_EQ(s.ablation.applied.means.size(), 1u);
    EXPECT_TRUE(same_bits(Mat(s.ablation.applied.means[0].transpose()), Mat(want.means[0].transpose())));
    ModelTrace t;
    model_forward(m, in->tokens, KernelKind::reference, t, &want);
    expect_same_trace(s.model_run.model_base, t, "mean-ablated");
    expect_same_metrics(s.ablation.numbers.ablated.task, task_metrics(m, KernelKind::reference, &want), "mean metrics");
}

TEST(Ablation, ANewTextKeepsTheAblatedHeadsAndItsCleanNumbers) {
    const auto in = toy("induction.safetensors");
    AppState s = shown(in);
    request_ablation(s, {{0, 1}}, AblationMode::zero);
    recompute(s);
    std::string error;
    ASSERT_TRUE(set_trained_sequence(s, "a b c a b c a b", error)) << error;
    recompute(s);
    EXPECT_EQ(s.ablation.applied.heads, (std::vector<HeadRef>{{0, 1}}));
    const Model& m = *shown_model(s)->model;
    ModelTrace clean, want;
    model_forward(m, shown_model(s)->tokens, KernelKind::reference, clean);
    const Ablation ab = zero_of({{0, 1}});
    model_forward(m, shown_model(s)->tokens, KernelKind::reference, want, &ab);
    expect_same_trace(s.model_run.model_base, want, "new text, ablated");
    expect_same_trace(s.ablation.model_clean, clean, "new text, clean");
    EXPECT_EQ(s.ablation.numbers.clean.detection.text.prev_token, detect_on_text({attention_of(clean)}).prev_token);
    // Back to the lesson: no model, nothing ablated.
    reset_to_lesson(s);
    recompute(s);
    EXPECT_TRUE(s.ablation.applied.empty());
}

TEST(Ablation, GptAblationRerunsFromTheFirstChangedLayerWithTheCoresNumbers) {
    const auto in = tiny_gpt();
    AppState s = shown(in);
    ASSERT_EQ(shown_model(s), in) << s.error;
    const Model& m = *in->model;
    ModelTrace clean;
    gpt_forward(m, in->tokens, KernelKind::reference, false, clean);
    request_ablation(s, {{1, 2}}, AblationMode::zero);
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    const Ablation ab = zero_of({{1, 2}});
    ModelTrace want;
    gpt_forward(m, in->tokens, KernelKind::reference, false, want, &ab);
    expect_same_trace(s.model_run.model_base, want, "GPT, ablated");
    expect_same_trace(s.ablation.model_clean, clean, "GPT, clean");
    const AblationNumbers& n = s.ablation.numbers;
    EXPECT_EQ(n.clean.loss, next_token_loss(clean));
    EXPECT_EQ(n.ablated.loss, next_token_loss(want));
    const int pos = int(in->tokens.size()) - 1;
    const auto top = [&](const ModelTrace& t) {
        return top_k(softmax_logits(t.logits.data() + int64_t(pos) * t.logits.cols(), int(t.logits.cols())), 5);
    };
    ASSERT_EQ(n.ablated.top.size(), 5u);
    for (size_t k = 0; k < 5; ++k) {
        EXPECT_EQ(n.clean.top[k].token, top(clean)[k].token);
        EXPECT_EQ(n.ablated.top[k].prob, top(want)[k].prob);
    }
    EXPECT_EQ(n.token, top(clean)[0].token) << "the DLA is onto the clean run's top-1 token";
    expect_same_dla(n.ablated.dla, logit_attribution(m, want, pos, n.token, &ab), "GPT ablated DLA");
    // The shown layer, and the causality view's token change, are of the ablated model.
    request_layer(s, 1);
    request_perturbation(s, 2, 1.f);
    recompute(s);
    Trace layer;
    gpt_layer_trace(m, want, 1, KernelKind::reference, layer, &ab);
    EXPECT_TRUE(same_bits(s.run.base.concat, layer.concat));
    EXPECT_TRUE(same_bits(s.run.base.y, layer.y));
    ModelTrace changed = want;
    gpt_update(m, 2, replacement_token(s, 2), KernelKind::reference, changed, &ab);
    EXPECT_TRUE(same_bits(s.model_run.model_perturbed.logits, changed.logits));
    // Restore: the clean run bit for bit.
    restore_all_heads(s);
    recompute(s);
    expect_same_trace(s.model_run.model_base, clean, "GPT restored");
}

TEST(Ablation, SessionsKeepTheAblationAndOldOnesOpenWithout) {
    const auto in = toy("induction.safetensors");
    AppState s = shown(in);
    request_ablation(s, {{0, 1}, {1, 0}}, AblationMode::mean);
    recompute(s);
    const std::string path = temp_dir() + "/ablated_session.json";
    std::string error;
    ASSERT_TRUE(write_session_files(path, s, error)) << error;
    Session ss;
    ASSERT_TRUE(read_session(path, ss, error)) << error;
    EXPECT_EQ(ss.model.ablate, "0.1,1.0");
    EXPECT_EQ(ss.model.ablate_mode, "mean");
    AppState back = lesson_state();
    ASSERT_TRUE(apply_session(back, ss, error)) << error;
    recompute(back);
    EXPECT_EQ(back.ablation.applied.heads, s.ablation.applied.heads) << back.error;
    EXPECT_EQ(back.ablation.applied.mode, AblationMode::mean);
    expect_same_trace(back.model_run.model_base, s.model_run.model_base, "reopened");
    // A session written before the ablation existed has no "ablate": it opens unablated.
    ss.model.ablate.clear();
    ss.model.ablate_mode = "zero";
    std::string text = session_to_json(ss);
    EXPECT_EQ(text.find("ablate"), std::string::npos);
    Session old;
    ASSERT_TRUE(parse_session(text, path, old, error)) << error; // its model file beside it, as saved
    AppState o = lesson_state();
    ASSERT_TRUE(apply_session(o, old, error)) << error;
    recompute(o);
    EXPECT_TRUE(o.ablation.applied.empty());
    // A session naming a head the model lacks is refused with one sentence.
    ss.model.ablate = "5.0";
    AppState bad = lesson_state();
    EXPECT_FALSE(apply_session(bad, ss, error));
    EXPECT_NE(error.find("the session's ablation"), std::string::npos) << error;
}

// ---- The panel: a real ImGui frame without a window (no GL: patterns without textures)

namespace {

struct PanelHarness : ImGuiFrame {
    using ImGuiFrame::ImGuiFrame;
    // One frame of the Model view with the mouse at `mouse`, button 0 `down`, key A `key_a`.
    void frame(AppState& s, ImVec2 mouse, bool down, bool key_a = false) {
        ImGui::GetIO().KeysDown['A'] = key_a;
        ImGuiFrame::frame(mouse, down, [&] { handle_keys(s); },
                          [&] { draw_model_view(s, ui, ImVec2(10, 10), ImVec2(1270, 710)); });
    }
    const LayoutItem* find(const std::string& kind, int layer, int head) const {
        for (const LayoutItem& it : layout)
            if (it.kind == kind && it.position == layer && it.head == head) return &it;
        return nullptr;
    }
};

ImVec2 centre(const LayoutItem& it) { return ImVec2(it.x + it.w / 2, it.y + it.h / 2); }

} // namespace

TEST(AblationPanel, ClickingAHeadsMarkAblatesItAndTheKeyARestoresIt) {
    AppState s = shown(toy("induction.safetensors"));
    s.screen.view = View::model;
    PanelHarness p;
    p.frame(s, ImVec2(-1, -1), false);
    const LayoutItem* mark = p.find("ablate_mark", 0, 1);
    ASSERT_NE(mark, nullptr) << "every head of a model has its mark";
    EXPECT_EQ(mark->value, 0.f);
    const ImVec2 c = centre(*mark);
    p.frame(s, c, false); // hover
    p.frame(s, c, true);  // press
    p.frame(s, c, false); // release: the click
    EXPECT_TRUE(s.ablation.dirty) << "the panel only records the edit";
    EXPECT_FALSE(s.ablation.applied.has(0, 1));
    recompute(s);
    EXPECT_TRUE(s.ablation.applied.has(0, 1)) << s.error;
    EXPECT_EQ(s.screen.view, View::model) << "the mark is not the pattern's click (which opens the scores view)";
    p.frame(s, ImVec2(-1, -1), false);
    mark = p.find("ablate_mark", 0, 1);
    ASSERT_NE(mark, nullptr);
    EXPECT_EQ(mark->value, 1.f) << "the head is drawn as ablated";
    // The key A over the head's pattern restores it.
    const LayoutItem* head = p.find("grid_head", 0, 1);
    ASSERT_NE(head, nullptr);
    const ImVec2 hc(head->x + head->w * 0.25f, head->y + head->h * 0.75f);
    p.frame(s, hc, false);
    p.frame(s, hc, false, true);
    p.frame(s, hc, false, false);
    recompute(s);
    EXPECT_FALSE(s.ablation.applied.has(0, 1));
}

TEST(AblationPanel, TheTablesBoxAblatesAndTheBoxPrintsTheNumbers) {
    AppState s = shown(toy("induction.safetensors"));
    s.screen.view = View::model;
    PanelHarness p;
    p.frame(s, ImVec2(-1, -1), false);
    const LayoutItem* box = p.find("ablate_check", 1, 1);
    ASSERT_NE(box, nullptr);
    const ImVec2 c = centre(*box);
    p.frame(s, c, false);
    p.frame(s, c, true);
    p.frame(s, c, false);
    recompute(s);
    EXPECT_TRUE(s.ablation.applied.has(1, 1)) << s.error;
    p.frame(s, ImVec2(-1, -1), false);
    // The box prints recompute's numbers: before, after and their difference.
    const TaskMetrics& a = s.ablation.numbers.ablated.task;
    const TaskMetrics& b = s.ablation.numbers.clean.task;
    int found = 0;
    for (const LayoutItem& it : p.layout) {
        if (it.kind != "ablation_number") continue;
        if (it.name == "task loss before") {
            EXPECT_EQ(it.value, float(b.loss));
            ++found;
        }
        if (it.name == "task loss after") {
            EXPECT_EQ(it.value, float(a.loss));
            ++found;
        }
        if (it.name == "accuracy next after") {
            EXPECT_EQ(it.value, float(a.accuracy.back().second));
            ++found;
        }
        if (it.name == "accuracy next delta") {
            EXPECT_EQ(it.value, float(a.accuracy.back().second - b.accuracy.back().second));
            ++found;
        }
    }
    EXPECT_EQ(found, 4);
    // Shift+A: every head back.
    ImGui::GetIO().KeyShift = true;
    p.frame(s, ImVec2(-1, -1), false, true);
    ImGui::GetIO().KeyShift = false;
    p.frame(s, ImVec2(-1, -1), false, false);
    recompute(s);
    EXPECT_TRUE(s.ablation.applied.empty());
}
