// test_patch_panel.cpp: the Model view's logit lens table and Patching panel (lens_state.h,
// patch_state.h) at the state level and in a real ImGui frame without a window: the panel's
// tables equal patch_tables's on the same prompts (a toy induction model and the tiny GPT),
// bad input is refused with one sentence and the tables kept, the worker's result arrives,
// clicking a head opens it in the scores view; the lens's cells are the core's for the
// positions the table shows, and only those, and a new run drops them.
#include "app_state.h"
#include "check_questions.h"
#include "follow_gpt.h"
#include "model_io.h"
#include "train_view_state.h"
#include <cstdio>
#include "gpt_test_dir.h"
#include "imgui_frame.h"
#include "logit_lens.h"
#include "model_view.h"
#include "patching.h"
#include "state_test_support.h"
#include "theme.h"
#include "ui_context.h"
#include "views.h"
#include <chrono>
#include <cmath>
#include <gtest/gtest.h>
#include <imgui.h>
#include <thread>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

const std::string toy_file = ATTNVIZ_TEST_DATA "/generate/induction_c32_s3.safetensors";

AppState shown_toy(const std::string& text) { return shown_model(trained_input(toy_file, text)); }
AppState shown_gpt(const std::string& text) { return shown_model(tiny_gpt_input(text)); }

// recompute() until `done` or a generous deadline: the worker's result arrives by polling.
template <class F>
bool until(AppState& s, F done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (int i = 0; i < 200000 && std::chrono::steady_clock::now() < end; ++i) {
        recompute(s);
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
}

PatchTables core_tables(const AppState& s, const std::vector<int>& corrupt, int answer, int wrong, PatchRuns& runs) {
    prepare_patch_runs(*shown_model(s)->model, shown_model(s)->tokens, corrupt, answer, wrong, s.kernel, runs);
    return patch_tables(runs, true, true);
}

::testing::AssertionResult same_tables(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " rows against " << b.size();
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].size() != b[i].size()) return ::testing::AssertionFailure() << "row " << i << " sizes differ";
        for (size_t j = 0; j < a[i].size(); ++j)
            if (!(a[i][j] == b[i][j]))
                return ::testing::AssertionFailure() << "[" << i << "][" << j << "] " << a[i][j] << " against " << b[i][j];
    }
    return ::testing::AssertionSuccess();
}

// Runs the panel on its fields and waits for the worker.
bool run_panel(AppState& s, const std::string& corrupt, const std::string& answer, const std::string& wrong) {
    s.patch.corrupt_field = corrupt;
    s.patch.answer_field = answer;
    s.patch.wrong_field = wrong;
    if (!request_patch_run(s)) return false;
    EXPECT_TRUE(patch_running(s));
    return until(s, [&] { return !patch_running(s); });
}

} // namespace

TEST(PatchPanel, ToyTablesAreTheCoresAndTheWorkersResultArrives) {
    AppState s = shown_toy("a b c d e f a b c d");
    ASSERT_TRUE(patch_available(s));
    EXPECT_FALSE(s.patch.corrupt_field.empty()) << "the fields are filled for the model shown";
    ASSERT_TRUE(run_panel(s, "a b c d g f a b c d", "e", "g")) << s.patch.error;
    EXPECT_TRUE(s.patch.error.empty()) << s.patch.error;
    const PatchResult& r = s.patch.result;
    ASSERT_EQ(r.model, shown_model(s)->model);
    std::vector<int> corrupt;
    std::string error;
    ASSERT_TRUE(parse_trained_sequence(r.model->config, "a b c d g f a b c d", corrupt, error)) << error;
    EXPECT_EQ(r.corrupt, corrupt);
    PatchRuns runs;
    const PatchTables want = core_tables(s, corrupt, 4, 6, runs);
    EXPECT_EQ(r.answer, 4);
    EXPECT_EQ(r.wrong, 6);
    EXPECT_EQ(r.clean_ld, runs.clean_ld);
    EXPECT_EQ(r.corrupt_ld, runs.corrupt_ld);
    EXPECT_TRUE(same_tables(r.tables.resid, want.resid));
    EXPECT_TRUE(same_tables(r.tables.heads, want.heads));
    EXPECT_EQ(r.tables.heads.size(), size_t(r.model->config.n_layer));
}

TEST(PatchPanel, GptTablesAreTheCores) {
    // Words of the cut tokenizer's 1000 ids (" Mary" is two tokens there).
    const std::string clean = "The cat sat on the mat, and the cat saw it", corrupt_text = "The cat sat in the mat, and the cat saw it";
    AppState s = shown_gpt(clean);
    ASSERT_TRUE(run_panel(s, corrupt_text, " the", " a")) << s.patch.error;
    const TrainedInput& in = *shown_model(s);
    std::vector<int> corrupt;
    std::string error;
    ASSERT_TRUE(parse_gpt_input(in, corrupt_text, corrupt, error)) << error;
    const int mary = in.tokenizer->encode(" the")[0], john = in.tokenizer->encode(" a")[0];
    PatchRuns runs;
    const PatchTables want = core_tables(s, corrupt, mary, john, runs);
    EXPECT_EQ(s.patch.result.answer, mary);
    EXPECT_EQ(s.patch.result.clean_ld, runs.clean_ld);
    EXPECT_EQ(s.patch.result.corrupt_ld, runs.corrupt_ld);
    EXPECT_TRUE(same_tables(s.patch.result.tables.resid, want.resid));
    EXPECT_TRUE(same_tables(s.patch.result.tables.heads, want.heads));
    EXPECT_EQ(int(s.patch.result.tables.resid[0].size()), int(in.tokens.size()));
}

TEST(PatchPanel, BadInputIsRefusedInOneSentenceAndTheTablesKept) {
    AppState s = shown_toy("a b c d e f a b c d");
    ASSERT_TRUE(run_panel(s, "a b c d g f a b c d", "e", "g")) << s.patch.error;
    const PatchTables kept = s.patch.result.tables;
    auto refused = [&](const std::string& corrupt, const std::string& answer, const std::string& wrong, const std::string& says) {
        s.patch.corrupt_field = corrupt;
        s.patch.answer_field = answer;
        s.patch.wrong_field = wrong;
        s.patch.error.clear();
        if (request_patch_run(s)) {
            // Refused by the worker (equal logit differences): the poll says so.
            EXPECT_TRUE(until(s, [&] { return !patch_running(s); }));
        }
        EXPECT_NE(s.patch.error.find(says), std::string::npos) << s.patch.error;
        EXPECT_EQ(s.patch.error.find('\n'), std::string::npos);
        EXPECT_EQ(s.error, s.patch.error);
        EXPECT_TRUE(same_tables(s.patch.result.tables.resid, kept.resid)) << says;
        EXPECT_TRUE(same_tables(s.patch.result.tables.heads, kept.heads)) << says;
    };
    refused("a b c d g f a b c", "e", "g", "is 10 tokens and the clean one");        // lengths differ
    refused("a b c d g f a b c d", "e f", "g", "not one");                           // two letters
    refused("a b c d g f a b c d", "e", "4", "both token 4");                        // answer == wrong (by id)
    refused("a b c d g f a b c d", "99", "g", "not a token id");                     // outside the vocabulary
    refused("a b c d e f a b c d", "e", "g", "nothing can be restored");             // clean == corrupted
}

TEST(PatchPanel, ClickingAHeadOpensItInTheScoresView) {
    AppState s = shown_toy("a b c d e f a b c d");
    ASSERT_TRUE(run_panel(s, "a b c d g f a b c d", "e", "g")) << s.patch.error;
    s.screen.view = View::model;
    s.model_view.panel = ModelPanel::patching;
    ImGuiFrame f;
    auto frame = [&](ImVec2 mouse, bool down) {
        f.frame(mouse, down, [&] { draw_model_view(s, f.ui, ImVec2(10, 10), ImVec2(1270, 710)); });
    };
    frame(ImVec2(-1, -1), false);
    const LayoutItem* heads = f.find("heatmap", "patch_heads");
    ASSERT_NE(heads, nullptr) << "the heads' map is drawn";
    EXPECT_EQ(heads->rows, 2);
    EXPECT_EQ(heads->cols, 2);
    // Layer 1, head 1's cell.
    const ImVec2 c(heads->x + heads->w * 0.75f, heads->y + heads->h * 0.75f);
    frame(c, false);
    frame(c, true);
    frame(c, false);
    EXPECT_EQ(s.screen.view, View::scores);
    EXPECT_EQ(s.edit_layer, 1);
    EXPECT_EQ(s.screen.windows[int(View::scores)].head0, 1);
}

TEST(LensTable, CellsAreTheCoresForTheShownPositionsOnly) {
    for (const bool gpt : {true, false}) {
        AppState s = gpt ? shown_gpt("The cat sat on the mat, and the cat saw it.") : shown_toy("a b c d e f a b c d");
        ASSERT_TRUE(lens_available(s));
        s.screen.view = View::model;
        recompute(s);
        EXPECT_EQ(s.model_view.lens.count(), 0) << "nothing is made while the table is not shown";
        s.model_view.panel = ModelPanel::lens;
        s.model_view.lens.columns = 4; // as the view sets it
        request_lens_first(s, 2);
        ASSERT_TRUE(until(s, [&] { return !lens_busy(s) && s.model_view.lens.count() > 0; }));
        const LensTable& t = s.model_view.lens;
        EXPECT_EQ(t.p0, 2);
        EXPECT_EQ(t.count(), 4) << "only the positions shown";
        const LogitLens whole = logit_lens(*shown_model(s)->model, s.model_run.model_base, s.kernel);
        ASSERT_EQ(t.lens.rows(), whole.rows());
        for (int r = 0; r < whole.rows(); ++r)
            for (int pos = 2; pos < 6; ++pos) {
                const std::vector<TokenProb>* top = t.top(r, pos);
                ASSERT_NE(top, nullptr);
                const std::vector<TokenProb>& want = whole.top[size_t(r)][size_t(pos)];
                ASSERT_EQ(top->size(), want.size());
                for (size_t i = 0; i < want.size(); ++i) {
                    EXPECT_EQ((*top)[i].token, want[i].token) << (gpt ? "gpt" : "toy") << " row " << r << " pos " << pos;
                    EXPECT_EQ((*top)[i].prob, want[i].prob);
                }
                EXPECT_EQ(t.next_prob(r, pos), whole.next_prob[size_t(r)][size_t(pos)]);
            }
        EXPECT_EQ(t.top(0, 6), nullptr);
        // The window moves: those positions are made; a new run drops every cell.
        request_lens_first(s, 4);
        ASSERT_TRUE(until(s, [&] { return !lens_busy(s) && s.model_view.lens.has(7); }));
        EXPECT_EQ(s.model_view.lens.p0, 4);
        s.model_view.panel = ModelPanel::heads;
        request_trained_model(s, gpt ? tiny_gpt_input("The dog ran to the park and the dog sat.") : trained_input(toy_file, "a b c a b c"));
        recompute(s);
        EXPECT_EQ(s.model_view.lens.count(), 0) << "a new run's cells are made again";
    }
}

// ---- Follow the teacher: the header carries the lens cells and the tables; a page shows them.

TEST(FollowProbes, APageShowsTheTeachersLensCellsAndPatchTables) {
    const std::string clean = "The cat sat on the mat, and the cat saw it", corrupt_text = "The cat sat in the mat, and the cat saw it";
    AppState s = shown_gpt(clean);
    ASSERT_TRUE(run_panel(s, corrupt_text, " the", " a")) << s.patch.error;
    s.screen.view = View::model;
    s.model_view.panel = ModelPanel::lens;
    s.model_view.lens.columns = 5;
    request_lens_first(s, 3);
    ASSERT_TRUE(until(s, [&] { return !lens_busy(s) && s.model_view.lens.count() == 5; }));
    const nlohmann::json header = gpt_follow_header(s);
    std::string bytes[gpt_part_count], error;
    const std::string* parts[gpt_part_count] = {};
    for (int p = 0; p < gpt_part_count; ++p) {
        ASSERT_TRUE(gpt_part_bytes(s, GptPart(p), bytes[p], error)) << error;
        parts[p] = &bytes[p];
    }
    AppState page = lesson_state();
    // Through the JSON's text, as the page receives it.
    ASSERT_TRUE(show_received_gpt(page, nlohmann::json::parse(header.dump()), parts, error)) << error;
    page.screen.view = View::model;
    recompute(page);
    EXPECT_EQ(page.model_view.panel, ModelPanel::lens);
    const LensTable &a = s.model_view.lens, &b = page.model_view.lens;
    ASSERT_EQ(b.p0, a.p0);
    ASSERT_EQ(b.count(), a.count());
    ASSERT_EQ(b.lens.rows(), a.lens.rows());
    for (int r = 0; r < a.lens.rows(); ++r)
        for (int pos = a.p0; pos < a.p0 + a.count(); ++pos) {
            ASSERT_EQ(b.top(r, pos)->size(), a.top(r, pos)->size());
            for (size_t i = 0; i < a.top(r, pos)->size(); ++i) {
                EXPECT_EQ((*b.top(r, pos))[i].token, (*a.top(r, pos))[i].token);
                EXPECT_EQ((*b.top(r, pos))[i].prob, (*a.top(r, pos))[i].prob);
                // The page names the token as the teacher does (it has no tokenizer).
                EXPECT_EQ(model_token_label(page, (*b.top(r, pos))[i].token), model_token_label(s, (*a.top(r, pos))[i].token));
            }
            EXPECT_EQ(b.next_prob(r, pos), a.next_prob(r, pos));
        }
    EXPECT_FALSE(lens_busy(page)) << "a page computes nothing";
    const PatchResult &pa = s.patch.result, &pb = page.patch.result;
    EXPECT_EQ(pb.model, shown_model(page)->model);
    EXPECT_TRUE(same_tables(pb.tables.resid, pa.tables.resid));
    EXPECT_TRUE(same_tables(pb.tables.heads, pa.tables.heads));
    EXPECT_EQ(pb.clean_ld, pa.clean_ld);
    EXPECT_EQ(pb.corrupt_ld, pa.corrupt_ld);
    EXPECT_EQ(pb.corrupt, pa.corrupt);
    EXPECT_EQ(pb.answer_text, pa.answer_text);
    EXPECT_FALSE(request_patch_run(page)) << "a page cannot run the teacher's model";
}

// ---- The check view's question 6 on a trained induction model (question 4's, here the
// trained file of tests/data/generate put in its place instead of training one).

TEST(CheckPatch, TheHeadsTableIsTheCoresAndTheInductionHeadsLightUp) {
    EXPECT_EQ(check_questions().size(), size_t(check_question_count));
    EXPECT_EQ(check_questions()[5].choices.size(), 4u);
    AppState s = lesson_state();
    TrainViewState& t = train_view(s);
    Model m;
    std::string error;
    ASSERT_TRUE(load_model(toy_file, m, error)) << error;
    t.ablation_demo.steps = 1; // asked, and already trained
    t.ablation_demo.settings = default_train_settings(Task::induction);
    t.ablation_demo.picture.model = std::make_shared<const Model>(m);
    t.ablation_demo.picture.probe = default_probe(m.config);
    start_patch_demo(s);
    EXPECT_EQ(s.screen.view, View::check);
    recompute(s);
    const PatchDemo& d = s.train->patch_demo;
    ASSERT_TRUE(d.computed);
    ASSERT_TRUE(d.error.empty()) << d.error;
    std::vector<int> clean, corrupt;
    int answer = 0, wrong = 0;
    patch_demo_sequences(m.config, clean, corrupt, answer, wrong);
    EXPECT_EQ(d.clean, clean);
    PatchRuns runs;
    prepare_patch_runs(m, clean, corrupt, answer, wrong, KernelKind::reference, runs);
    EXPECT_TRUE(same_tables(d.heads, patch_tables(runs, false, true).heads));
    // The head that restores most is a layer-1 induction head, and the sentence says its number.
    EXPECT_EQ(d.best_layer, 1);
    EXPECT_GE(d.induction[1][size_t(d.best_head)], induction_threshold);
    char want[16];
    std::snprintf(want, sizeof want, "%.2f", double(d.heads[1][size_t(d.best_head)]));
    EXPECT_NE(d.sentence.find("L1 h" + std::to_string(d.best_head) + "'s output"), std::string::npos) << d.sentence;
    EXPECT_NE(d.sentence.find(want), std::string::npos) << d.sentence;
    // Open in the Patching panel: the same table there.
    open_patch_demo(s);
    ASSERT_TRUE(until(s, [&] { return std::holds_alternative<ToyModel>(s.shown.source) && !patch_running(s) && !s.patch.result.empty(); })) << s.error;
    EXPECT_EQ(s.model_view.panel, ModelPanel::patching);
    EXPECT_TRUE(same_tables(s.patch.result.tables.heads, d.heads));
}
