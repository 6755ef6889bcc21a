// test_trained_views.cpp: a trained model in every view, through recompute() without a
// window: each block's trace is model_forward's, the causality slider leaves every earlier
// position exactly unchanged through every block, a refused model keeps what was shown,
// and "Back to the lesson" gives the lesson back.
#include "app_state.h"
#include "inputs.h"
#include "gui_test_support.h"
#include "model_io.h"
#include "session_state.h"
#include "state_test_support.h"
#include "train.h"
#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

const std::string train_dir = ATTNVIZ_TEST_DATA "/train/";

std::shared_ptr<const TrainedInput> trained(const std::string& file, const std::string& text) {
    return trained_input(train_dir + file, text);
}

// The lesson's state, then the model on `text`, on the reference kernel.
AppState state_with(const std::shared_ptr<const TrainedInput>& in) { return shown_model(in); }

void expect_same_trace(const Trace& a, const Trace& b, const std::string& what) {
    EXPECT_TRUE(same_bits(a.x, b.x)) << what << ": x";
    EXPECT_TRUE(same_bits(a.qkv, b.qkv)) << what << ": qkv";
    ASSERT_EQ(a.H, b.H) << what;
    for (int h = 0; h < a.H; ++h) {
        EXPECT_TRUE(same_bits(a.raw_scores[size_t(h)], b.raw_scores[size_t(h)])) << what << ": scores h" << h;
        EXPECT_TRUE(same_bits(a.att[size_t(h)], b.att[size_t(h)])) << what << ": probs h" << h;
    }
    EXPECT_TRUE(same_bits(a.concat, b.concat)) << what << ": concat";
    EXPECT_TRUE(same_bits(a.y, b.y)) << what << ": y";
}

} // namespace

TEST(TrainedViews, EachLayersTraceIsModelForwards) {
    auto in = trained("induction_s1_120.safetensors", "a b c d e a b c d e");
    AppState s = state_with(in);
    ASSERT_EQ(shown_model(s), in) << s.error;
    ModelTrace want;
    model_forward(*in->model, in->tokens, KernelKind::reference, want);
    ASSERT_EQ(want.layers.size(), 2u);
    for (int l : {0, 1, 0}) {
        request_layer(s, l);
        recompute(s);
        ASSERT_EQ(s.shown.layer, l);
        expect_same_trace(s.run.trace, want.layers[size_t(l)], "layer " + std::to_string(l));
        // The config the views draw with: T = the tokens, the model's C and H, causal, ÷ √head_dim.
        EXPECT_EQ(s.config.applied.seq_len, 11);
        EXPECT_EQ(s.config.applied.n_embd, 64);
        EXPECT_EQ(s.config.applied.n_head, 2);
        EXPECT_EQ(s.config.applied.mask, MaskMode::causal);
        EXPECT_EQ(s.config.applied.scale, ScaleMode::head_dim);
        EXPECT_TRUE(same_bits(s.run.experiment.weights.c_attn.weight, in->model->h[size_t(l)].attn.c_attn.weight));
    }
    // Block 0's input is the embeddings; block 1's is h + attn(h) of block 0.
    EXPECT_TRUE(same_bits(s.model_run.model_base.layers[0].x, want.h0));
    EXPECT_TRUE(same_bits(s.model_run.model_base.h_out, want.h_out));
    // The position labels are the letters, BOS first.
    const std::vector<std::string> words = {"^", "a", "b", "c", "d", "e", "a", "b", "c", "d", "e"};
    EXPECT_EQ(position_words(s), words);
}

TEST(TrainedViews, PerturbingPLeavesEveryEarlierOutputExactlyUnchangedThroughBothLayers) {
    auto in = trained("induction_s1_120.safetensors", "a b c a b c d");
    AppState s = state_with(in);
    ASSERT_EQ(shown_model(s), in) << s.error;
    const int N = int(in->tokens.size());
    for (int l : {0, 1})
        for (int p = 1; p < N; ++p)
            for (float a : {0.25f, 1.f}) {
                request_layer(s, l);
                request_perturbation(s, p, a);
                recompute(s);
                ASSERT_EQ(s.run.applied_p, p);
                const std::string at = "layer " + std::to_string(l) + ", p " + std::to_string(p);
                for (int t = 0; t < p; ++t) {
                    EXPECT_EQ(s.run.dy[size_t(t)], 0.f) << at << ", t " << t;
                    EXPECT_EQ(s.model_run.dy_out[size_t(t)], 0.f) << at << ", t " << t;
                }
                EXPECT_GT(s.model_run.dy_out[size_t(p)], 0.f) << at;
                EXPECT_EQ(s.run.dy_summary.zeros_before, p) << at;
                EXPECT_EQ(s.model_run.dy_out_summary.zeros_before, p) << at;
                EXPECT_EQ(s.model_run.dy_out_summary.before, 0.f) << at;
            }
}

TEST(TrainedViews, StrengthOneIsTheModelOnTheChosenLetter) {
    auto in = trained("induction_s1_120.safetensors", "a b c a b c d");
    AppState s = state_with(in);
    const int p = 3;
    for (int letter : {-1, 7}) {
        request_replacement(s, letter);
        request_perturbation(s, p, 1.f);
        recompute(s);
        std::vector<int> tokens = in->tokens;
        // Default: the next letter, as attnviz trace --perturb replaces it.
        tokens[size_t(p)] = letter < 0 ? (tokens[size_t(p)] + 1) % in->model->config.vocab : letter;
        EXPECT_EQ(s.model_run.applied_replace_token, tokens[size_t(p)]);
        ModelTrace want;
        model_forward(*in->model, tokens, KernelKind::reference, want);
        for (int l : {0, 1}) {
            request_layer(s, l);
            recompute(s);
            expect_same_trace(s.run.trace, want.layers[size_t(l)], "letter " + std::to_string(letter) + ", layer " + std::to_string(l));
        }
        EXPECT_TRUE(same_bits(s.model_run.model_perturbed.h_out, want.h_out));
        // Back to strength 0: the unperturbed trace, bit for bit.
        request_perturbation(s, p, 0.f);
        recompute(s);
        expect_same_trace(s.run.trace, s.model_run.model_base.layers[size_t(s.shown.layer)], "strength 0");
        EXPECT_EQ(s.run.applied_p, -1);
    }
}

// Position 0 of a toy model is BOS, which every sequence starts with: asking to perturb it
// perturbs position 1, the first letter (the source's first_replaceable), and BOS's row of
// every trace stays the unperturbed one.
TEST(TrainedViews, BosIsNeverPerturbed) {
    auto in = trained("induction_s1_120.safetensors", "a b c a b c d");
    AppState s = state_with(in);
    EXPECT_EQ(first_replaceable(s), 1);
    request_perturbation(s, 0, 1.f);
    recompute(s);
    EXPECT_EQ(s.p, 1);
    EXPECT_EQ(s.run.applied_p, 1);
    EXPECT_TRUE(same_bits(Mat(s.run.trace.x.row(0)), Mat(s.model_run.model_base.layers[0].x.row(0))));
}

TEST(TrainedViews, ARefusedModelKeepsThePreviousState) {
    AppState s = lesson_state();
    const Trace before = s.run.trace;
    s.memory_cap = 1 << 16; // the lesson fits, the model does not
    request_trained_model(s, trained("both_s0_200.safetensors", ""));
    recompute(s);
    EXPECT_EQ(shown_model(s), nullptr);
    EXPECT_EQ(s.edit_trained, nullptr);
    EXPECT_NE(s.error.find("over the cap"), std::string::npos) << s.error;
    expect_same_trace(s.run.trace, before, "lesson kept");
    EXPECT_EQ(s.config.applied.n_embd, 8);

    // A model on tokens it cannot read, while another model is shown: that one stays.
    s.memory_cap = gui_memory_cap;
    auto good = trained("both_s0_200.safetensors", "a b c");
    request_trained_model(s, good);
    recompute(s);
    ASSERT_EQ(shown_model(s), good) << s.error;
    const Trace shown = s.run.trace;
    auto bad = std::make_shared<TrainedInput>(*good);
    bad->tokens = {good->model->config.bos(), 0, 99};
    request_trained_model(s, bad);
    recompute(s);
    EXPECT_EQ(shown_model(s), good);
    EXPECT_NE(s.error.find("not a letter of the vocabulary"), std::string::npos) << s.error;
    expect_same_trace(s.run.trace, shown, "model kept");
}

TEST(TrainedViews, BackToTheLessonRestoresIt) {
    const AppState lesson = lesson_state();
    AppState s = state_with(trained("induction_s1_120.safetensors", ""));
    ASSERT_NE(shown_model(s), nullptr) << s.error;
    request_layer(s, 1);
    request_perturbation(s, 4, 0.5f);
    recompute(s);
    reset_to_lesson(s); // the side panel's "Back to the lesson" and the key L
    recompute(s);
    EXPECT_EQ(shown_model(s), nullptr);
    EXPECT_TRUE(s.shown.words.empty());
    EXPECT_EQ(s.config.applied.n_embd, 8);
    EXPECT_EQ(s.config.applied.seq_len, 4);
    EXPECT_EQ(s.shown.layer, 0);
    expect_same_trace(s.run.trace, lesson.run.trace, "lesson");
    EXPECT_TRUE(position_words(s).empty());
}

TEST(TrainedViews, ALessonStateOpenedOverAModelShowsTheLesson) {
    // What opening a lesson session does: init_app_state on its config.
    AppState s = state_with(trained("both_s0_200.safetensors", "a b a"));
    ASSERT_NE(shown_model(s), nullptr);
    Config c = lesson_config();
    c.seq_len = 6;
    init_app_state(s, c, KernelChoice::reference);
    recompute(s);
    EXPECT_EQ(shown_model(s), nullptr) << s.error;
    EXPECT_EQ(s.config.applied.seq_len, 6);
    EXPECT_EQ(s.config.applied.n_embd, 8);
}

TEST(TrainedViews, TheLessonsSettingsAreRefusedWhileAModelIsShown) {
    AppState s = state_with(trained("both_s0_200.safetensors", "a b a"));
    const Trace shown = s.run.trace;
    Config e = s.config.applied;
    e.mask = MaskMode::none;
    request_config(s, e, KernelChoice::reference);
    recompute(s);
    EXPECT_EQ(s.config.applied.mask, MaskMode::causal);
    EXPECT_EQ(s.config.edit.mask, MaskMode::causal);
    EXPECT_NE(s.error.find("Kept the trained model's settings"), std::string::npos) << s.error;
    expect_same_trace(s.run.trace, shown, "kept");
}

TEST(TrainedViews, TheSequenceIsLettersOfTheVocabulary) {
    AppState s = state_with(trained("both_s0_200.safetensors", ""));
    ASSERT_NE(shown_model(s), nullptr);
    // The default: the first letters, repeated, so an induction head has something to copy.
    EXPECT_EQ(s.fields.sequence_field, "a b c d a b c d");
    std::string error;
    EXPECT_FALSE(set_trained_sequence(s, "a b z", error));
    EXPECT_NE(error.find("'z' is not a letter of the model's vocabulary (a, b, c ... p)"), std::string::npos) << error;
    EXPECT_NE(s.error.find("Kept the sequence"), std::string::npos);
    EXPECT_FALSE(set_trained_sequence(s, "a b c d e f g h i j k l m n o p a", error));
    EXPECT_NE(error.find("17 letters but the model knows 16 positions"), std::string::npos) << error;
    EXPECT_FALSE(set_trained_sequence(s, "  ", error));
    EXPECT_NE(error.find("no letters"), std::string::npos) << error;
    // Letters typed without spaces are one position each; a leading ^ is BOS, put first anyway.
    ASSERT_TRUE(set_trained_sequence(s, "^ abca", error)) << error;
    recompute(s);
    const std::vector<int> want = {16, 0, 1, 2, 0};
    EXPECT_EQ(shown_model(s)->tokens, want);
    EXPECT_EQ(s.config.applied.seq_len, 5);
    EXPECT_EQ(s.fields.sequence_field, "a b c a");
}

TEST(TrainedViews, TheWeightsFieldOpensATrainedFile) {
    AppState s = lesson_state();
    std::string error;
    // The side panel's field and its layer: the file's block 1.
    ASSERT_TRUE(load_weights_file(s, train_dir + "induction_s1_120.safetensors", 1, error)) << error;
    recompute(s);
    ASSERT_NE(shown_model(s), nullptr) << s.error;
    EXPECT_EQ(s.shown.layer, 1);
    EXPECT_EQ(shown_model(s)->tokens, default_trained_tokens(shown_model(s)->model->config));
    // A file that is neither is refused with the reader's sentence, and the model stays.
    EXPECT_FALSE(load_weights_file(s, train_dir + "missing.safetensors", 0, error));
    EXPECT_FALSE(error.empty());
    recompute(s);
    EXPECT_NE(shown_model(s), nullptr);
}

TEST(TrainedViews, AFreshlyTrainedThreeBlockModelOnTheFastKernelKeepsTheZeros) {
    // A tiny model trained here for a few steps, three blocks deep, shown on the fast kernel.
    ModelConfig c;
    c.task = Task::induction;
    c.vocab = 6;
    c.seq_len = 12;
    c.n_embd = 16;
    c.n_head = 2;
    c.n_layer = 3;
    TrainRun run = start_training(c, 5, 3e-3, 8);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(std::isfinite(train_step(run, 1)));
    auto in = std::make_shared<TrainedInput>();
    in->model = std::make_shared<Model>(run.model);
    in->source = "a test run, step 3";
    std::string error;
    ASSERT_TRUE(parse_trained_sequence(c, "a b c d e f a b c d e f", in->tokens, error)) << error;
    AppState s = lesson_state();
    s.kernel_choice.edit = KernelChoice::fast;
    request_trained_model(s, in);
    recompute(s);
    ASSERT_EQ(shown_model(s), in) << s.error;
    ASSERT_EQ(s.kernel, KernelKind::fast);
    ModelTrace want;
    model_forward(*in->model, in->tokens, KernelKind::fast, want);
    for (int l = 0; l < 3; ++l) {
        request_layer(s, l);
        request_perturbation(s, 0, 0.f);
        recompute(s);
        expect_same_trace(s.run.trace, want.layers[size_t(l)], "fast, layer " + std::to_string(l));
        for (int p : {1, 5, 12}) {
            request_perturbation(s, p, 0.7f);
            recompute(s);
            for (int t = 0; t < p; ++t) {
                EXPECT_EQ(s.run.dy[size_t(t)], 0.f) << "layer " << l << ", p " << p << ", t " << t;
                EXPECT_EQ(s.model_run.dy_out[size_t(t)], 0.f) << "layer " << l << ", p " << p << ", t " << t;
            }
            EXPECT_GT(s.model_run.dy_out_summary.after, 0.f);
        }
    }
}

// A session saved while a trained model is in the views reopens on the same model, letters,
// block and perturbation (its weights beside the session), and a session whose model file
// has gone is refused with the state kept.
TEST(TrainedViews, ASessionKeepsTheModelInTheViews) {
    auto in = trained("induction_s1_120.safetensors", "a b c a b c d");
    AppState s = state_with(in);
    request_layer(s, 1);
    request_replacement(s, 4); // "e"
    request_perturbation(s, 3, 0.75f);
    recompute(s);
    ASSERT_EQ(s.shown.layer, 1);
    const std::string dir = attnviz_gui_test::temp_dir();
    const std::string path = dir + "/trained-session.json";
    save_session_file(s, path);
    ASSERT_EQ(s.status.rfind("Saved", 0), 0u) << s.status;

    AppState t = lesson_state();
    open_session_file(t, path);
    ASSERT_EQ(t.status.rfind("Opened", 0), 0u) << t.status;
    recompute(t);
    ASSERT_TRUE(shown_model(t));
    EXPECT_EQ(shown_model(t)->tokens, shown_model(s)->tokens);
    EXPECT_EQ(t.shown.layer, 1);
    EXPECT_EQ(t.shown.replace_token, 4);
    EXPECT_EQ(t.run.applied_p, 3);
    expect_same_trace(t.run.trace, s.run.trace, "reopened");
    EXPECT_EQ(t.run.dy, s.run.dy);

    std::remove((dir + "/trained-session.model.safetensors").c_str());
    AppState u = lesson_state();
    const Mat y = u.run.trace.y;
    open_session_file(u, path);
    EXPECT_EQ(u.status.rfind("Kept the current state: the session's model", 0), 0u) << u.status;
    recompute(u);
    EXPECT_FALSE(shown_model(u));
    EXPECT_TRUE(same_bits(u.run.trace.y, y));
}
