// test_model_view.cpp: what the Model view shows, through recompute() without a window: the
// head detector on the shown model is the core's on the same forward, the heads it marks
// are those a trained both / induction model has learnt and none of an untrained one, the
// predictions are a softmax of the core's logits, the table sorts, a click on a head opens
// it in the scores view, and the grid's pages fit GPT-2 small's 12 x 12 at 1280 x 720.
#include "app_state.h"
#include "gui_test_support.h"
#include "head_detector.h"
#include "inputs.h"
#include "model_io.h"
#include "model_view.h"
#include "state_test_support.h"
#include <cmath>
#include <gtest/gtest.h>
#include <set>
#include <tuple>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

const std::string data_dir = ATTNVIZ_TEST_DATA "/model_view/";

std::shared_ptr<const TrainedInput> trained(const std::string& file, const std::string& text = "") {
    return trained_input(data_dir + file, text);
}

AppState state_with(const std::shared_ptr<const TrainedInput>& in) { return shown_model(in); }

// (layer, head, kind) of every highlighted head.
std::set<std::tuple<int, int, int>> roles(const HeadDetection& d) {
    std::set<std::tuple<int, int, int>> out;
    for (const HeadRole& r : head_roles(d)) out.insert({r.layer, r.head, r.kind});
    return out;
}

int count_kind(const std::set<std::tuple<int, int, int>>& r, int layer, int kind) {
    int n = 0;
    for (const auto& [l, h, k] : r) n += (layer < 0 || l == layer) && k == kind;
    return n;
}

} // namespace

TEST(ModelView, DetectorIsTheCoresOnTheShownForward) {
    auto in = trained("induction.safetensors", "a b c d e f a b c d e f");
    AppState s = state_with(in);
    ASSERT_EQ(shown_model(s), in) << s.error;
    ModelTrace t;
    model_forward(*in->model, in->tokens, KernelKind::reference, t);
    const HeadScores want = detect_on_text({attention_of(t)});
    EXPECT_EQ(s.model_view.detection.text.prev_token, want.prev_token);
    EXPECT_EQ(s.model_view.detection.text.duplicate, want.duplicate);
    EXPECT_EQ(s.model_view.detection.text.induction, want.induction);
    HeadDetection rep;
    detect_repeat_induction(*in->model, KernelKind::reference, rep);
    EXPECT_EQ(s.model_view.detection.repeat_induction, rep.repeat_induction);
    EXPECT_EQ(s.model_view.detection.repeat_count, detector_repeat_count);
    // A new sequence: the text's scores follow it, the repeated sequences' stay.
    std::string error;
    ASSERT_TRUE(set_trained_sequence(s, "a a b b c c", error)) << error;
    recompute(s);
    EXPECT_NE(s.model_view.detection.text.prev_token, want.prev_token);
    EXPECT_EQ(s.model_view.detection.repeat_induction, rep.repeat_induction);
}

TEST(ModelView, TrainedHeadsAreMarkedAndUntrainedOnesAreNot) {
    // both, 1000 steps (attnviz train --task both): previous-token and duplicate heads.
    const AppState both = state_with(trained("both.safetensors", "a b c d e a b c d e"));
    const auto rb = roles(both.model_view.detection);
    EXPECT_GE(count_kind(rb, 0, 0), 1) << "no previous-token head in the trained both model";
    EXPECT_GE(count_kind(rb, 0, 1), 1) << "no duplicate head in the trained both model";
    // induction, 1500 steps: a previous-token head in layer 0, induction heads in layer 1.
    const AppState ind = state_with(trained("induction.safetensors"));
    const auto ri = roles(ind.model_view.detection);
    EXPECT_GE(count_kind(ri, 0, 0), 1) << "no previous-token head in layer 0";
    EXPECT_GE(count_kind(ri, 1, 2), 1) << "no induction head in layer 1";
    EXPECT_EQ(count_kind(ri, 0, 2), 0) << "an induction head in layer 0, which cannot be one";
    // The same shapes at step 0: nothing learnt, nothing marked.
    for (Task task : {Task::both, Task::induction}) {
        auto in = std::make_shared<TrainedInput>();
        in->model = std::make_shared<Model>(init_model(task_defaults(task).model, 0));
        in->tokens = default_trained_tokens(in->model->config);
        in->source = "untrained";
        const AppState s = state_with(in);
        ASSERT_TRUE(shown_model(s)) << s.error;
        EXPECT_TRUE(head_roles(s.model_view.detection).empty()) << to_string(task) << ": an untrained head marked";
    }
}

TEST(ModelView, PredictionsAreASoftmaxOfTheCoresLogits) {
    auto in = trained("induction.safetensors", "a b c d e f a b c");
    AppState s = state_with(in);
    const Mat& logits = s.model_run.model_base.logits_next;
    ASSERT_EQ(logits.rows(), int(in->tokens.size()));
    ASSERT_EQ(s.model_view.predictions.size(), in->tokens.size());
    for (int pos = 0; pos < int(logits.rows()); ++pos) {
        const std::vector<TokenProb>& top = s.model_view.predictions[size_t(pos)];
        ASSERT_EQ(top.size(), 5u);
        // An independent softmax in double.
        double z = 0, mx = -1e30;
        for (int j = 0; j < logits.cols(); ++j) mx = std::max(mx, double(logits(pos, j)));
        for (int j = 0; j < logits.cols(); ++j) z += std::exp(double(logits(pos, j)) - mx);
        double sum = 0;
        for (size_t k = 0; k < top.size(); ++k) {
            const double want = std::exp(double(logits(pos, top[k].token)) - mx) / z;
            EXPECT_NEAR(top[k].prob, want, 1e-6) << "position " << pos << " rank " << k;
            if (k > 0) {
                EXPECT_GE(top[k - 1].prob, top[k].prob);
            }
            sum += top[k].prob;
        }
        EXPECT_LE(sum, 1.0 + 1e-6);
        // None left out is more likely than the fifth.
        for (int j = 0; j < logits.cols(); ++j) {
            bool in_top = false;
            for (const TokenProb& tp : top) in_top |= tp.token == j;
            if (!in_top) {
                EXPECT_LE(std::exp(double(logits(pos, j)) - mx) / z, top.back().prob + 1e-7);
            }
        }
    }
    // Having seen "a b c d e f a b c", the trained model continues with d.
    EXPECT_EQ(s.model_view.predictions.back()[0].token, token_of(in->model->config, "d"));
    // A model without an LM head predicts nothing.
    const AppState both = state_with(trained("both.safetensors"));
    EXPECT_TRUE(both.model_view.predictions.empty() || both.model_view.predictions[0].empty());
    EXPECT_EQ(prediction_line(both), "");
}

TEST(ModelView, TableSortsByEachColumnWithUnmeasuredScoresLast) {
    const AppState s = state_with(trained("induction.safetensors"));
    const HeadDetection& d = s.model_view.detection;
    for (DetectorColumn c : {DetectorColumn::prev, DetectorColumn::dup, DetectorColumn::ind_text, DetectorColumn::ind_repeat})
        for (bool desc : {true, false}) {
            const auto rows = sorted_heads(d, c, desc);
            ASSERT_EQ(rows.size(), 4u);
            for (size_t i = 1; i < rows.size(); ++i) {
                const float a = detector_score(d, c, rows[i - 1].first, rows[i - 1].second);
                const float b = detector_score(d, c, rows[i].first, rows[i].second);
                if (std::isnan(a)) {
                    EXPECT_TRUE(std::isnan(b)) << "a score after an unmeasured one";
                } else if (!std::isnan(b)) {
                    EXPECT_TRUE(desc ? a >= b : a <= b) << int(c) << " row " << i;
                }
            }
        }
    const auto by_head = sorted_heads(d, DetectorColumn::head, false);
    EXPECT_EQ(by_head.front(), std::make_pair(0, 0));
    EXPECT_EQ(by_head.back(), std::make_pair(1, 1));
    EXPECT_EQ(sorted_heads(d, DetectorColumn::head, true).front(), std::make_pair(1, 1));
    // The best induction head first when sorted by the repeated sequences' score.
    const auto best = sorted_heads(d, DetectorColumn::ind_repeat, true).front();
    EXPECT_EQ(best.first, 1);
    HeadDetection nan;
    nan.text.prev_token = {{NAN, 0.2f, 0.9f}};
    nan.text.duplicate = nan.text.induction = nan.text.prev_token;
    const auto r = sorted_heads(nan, DetectorColumn::prev, false);
    EXPECT_EQ(r[0].second, 1);
    EXPECT_EQ(r[2].second, 0);
}

TEST(ModelView, ClickOpensTheHeadInTheScoresView) {
    AppState s = state_with(trained("induction.safetensors"));
    s.screen.view = View::model;
    open_in_scores(s, 1, 1);
    recompute(s);
    EXPECT_EQ(s.screen.view, View::scores);
    EXPECT_EQ(s.shown.layer, 1);
    EXPECT_EQ(s.screen.windows[int(View::scores)].head0, 1);
    EXPECT_TRUE(same_bits(s.run.trace.att[1], s.model_run.model_base.layers[1].att[1]));
    // The lesson's module: one layer, the head only.
    AppState l = lesson_state();
    open_in_scores(l, 0, 1);
    recompute(l);
    EXPECT_EQ(l.screen.view, View::scores);
    EXPECT_EQ(l.screen.windows[int(View::scores)].head0, 1);
}

TEST(ModelView, LessonShowsItsHeadsWithPreviousTokenScoresOnly) {
    AppState s = lesson_state();
    ASSERT_EQ(s.model_view.detection.text.prev_token.size(), 1u);
    ASSERT_EQ(s.model_view.detection.text.prev_token[0].size(), 2u);
    double want = 0;
    for (int i = 1; i < 4; ++i) want += s.run.trace.att[0](i, i - 1);
    EXPECT_NEAR(s.model_view.detection.text.prev_token[0][0], want / 3, 1e-7);
    EXPECT_TRUE(std::isnan(s.model_view.detection.text.duplicate[0][0])); // no words: no repeated token
    EXPECT_TRUE(s.model_view.detection.repeat_induction.empty());
    std::string error;
    ASSERT_TRUE(set_text(s, "the cat the cat", error)) << error;
    recompute(s);
    EXPECT_FALSE(std::isnan(s.model_view.detection.text.duplicate[0][0]));
}

TEST(ModelView, GridPagesFitGptTwoSmallAt1280x720) {
    // The view's grid area at 1280 x 720 with the side panel (text size 1) and without it (2).
    for (float scale : {1.f, 2.f}) {
        const ImVec2 area = scale == 1 ? ImVec2(600, 560) : ImVec2(680, 470);
        const GridFit f = fit_grid(12, 12, area, 60 * scale, 20 * scale, 20 * scale, 10 * scale, scale);
        EXPECT_GE(f.thumb, min_thumb(scale)) << scale;
        const float w = 60 * scale + float(f.heads) * (f.thumb + 10 * scale);
        const float h = 20 * scale + float(f.layers) * (f.thumb + 20 * scale + 10 * scale);
        EXPECT_LE(w, area.x + 10 * scale) << scale;
        EXPECT_LE(h, area.y + 10 * scale) << scale;
        EXPECT_GE(f.layers, 1);
        EXPECT_GE(f.heads, 1);
        if (scale == 1) {
            EXPECT_EQ(f.heads, 12) << "every head of a layer side by side at text size 1";
        }
    }
    // A toy model is never paged.
    const GridFit small = fit_grid(2, 4, ImVec2(600, 560), 60, 20, 20, 10, 1);
    EXPECT_EQ(small.layers, 2);
    EXPECT_EQ(small.heads, 4);
}
