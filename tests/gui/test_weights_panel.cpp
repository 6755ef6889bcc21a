// test_weights_panel.cpp: weights from a file in the window (load_weights_file, the side
// panel's "Load weights…"): the file's matrices replace the seeded ones while x still comes
// from the seed; a bad file keeps the current weights and says why; sessions reopen the file.
#include "app_state.h"
#include "state_test_support.h"
#include "gui_test_support.h"
#include "inputs.h"
#include "session_state.h"
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

const std::string fixtures = ATTNVIZ_TEST_DATA "/weights/";
const std::string gpt2_file = fixtures + "gpt2_hf_c12.safetensors";             // h.0, h.1; C 12, no n_head
const std::string nanogpt_model_file = fixtures + "nanogpt_model_bf16.safetensors"; // n_head 4 in metadata


} // namespace

TEST(WeightsPanel, LoadReplacesTheWeightsAndKeepsXFromTheSeed) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(load_weights_file(s, gpt2_file, 1, error)) << error;
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    ASSERT_TRUE(s.weights.applied);
    EXPECT_EQ(s.weights.applied->path, gpt2_file);
    EXPECT_EQ(s.weights.applied->layer, 1);
    EXPECT_EQ(s.config.applied.n_embd, 12);
    EXPECT_EQ(s.config.applied.n_head, 2); // the file does not say; the current H divides 12
    LoadedWeights want;
    ASSERT_TRUE(load_weights(gpt2_file, 2, 1, want, error)) << error;
    EXPECT_TRUE(same_bits(s.run.experiment.weights.c_attn.weight, want.weights.c_attn.weight));
    EXPECT_TRUE(same_bits(s.run.experiment.weights.c_proj.weight, want.weights.c_proj.weight));
    // x is what the seed gives without the file.
    EXPECT_TRUE(same_bits(s.run.experiment.x, make_experiment(s.config.applied).x));
    Trace fresh;
    forward(s.config.applied, want.weights, s.run.experiment.x, KernelKind::reference, fresh);
    EXPECT_TRUE(same_bits(s.run.trace.y, fresh.y));
    // The panel says which file, names and layer.
    const std::string summary = weights_summary(*s.weights.applied);
    EXPECT_NE(summary.find(gpt2_file), std::string::npos) << summary;
    EXPECT_NE(summary.find("h.1.attn.c_attn.weight"), std::string::npos) << summary;
    EXPECT_NE(summary.find("layer 1"), std::string::npos) << summary;
    EXPECT_NE(s.status.find(gpt2_file), std::string::npos) << s.status;
}

TEST(WeightsPanel, TheFilesNHeadWins) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(load_weights_file(s, nanogpt_model_file, 0, error)) << error;
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(s.config.applied.n_head, 4);
}

TEST(WeightsPanel, BadFilesKeepTheCurrentWeightsAndSayWhy) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(load_weights_file(s, gpt2_file, 0, error)) << error;
    recompute(s);
    const Mat y = s.run.trace.y;
    const std::string dir = temp_dir();
    const std::string text = dir + "/notes.safetensors", empty = dir + "/empty.safetensors";
    std::ofstream(text) << "these are not weights\n";
    std::ofstream(empty).flush();
    const std::vector<std::pair<std::string, int>> bad = {
        {dir + "/missing.safetensors", 0}, {text, 0}, {empty, 0}, {dir, 0}, {gpt2_file, 7}};
    for (const auto& [path, layer] : bad) {
        error.clear();
        EXPECT_FALSE(load_weights_file(s, path, layer, error)) << path;
        EXPECT_FALSE(error.empty()) << path;
        EXPECT_EQ(error.find('\n'), std::string::npos) << error;
        EXPECT_NE(error.find(path), std::string::npos) << error;
        EXPECT_EQ(s.status.rfind("Kept the current weights", 0), 0u) << s.status;
        recompute(s);
        ASSERT_TRUE(s.weights.applied);
        EXPECT_EQ(s.weights.applied->path, gpt2_file);
        EXPECT_EQ(s.weights.applied->layer, 0);
        EXPECT_TRUE(same_bits(s.run.trace.y, y)) << path;
    }
    EXPECT_FALSE(load_weights_file(s, "", 0, error));
}

TEST(WeightsPanel, CIsTheFilesUntilUnloaded) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(load_weights_file(s, gpt2_file, 0, error)) << error;
    recompute(s);
    Config c = s.config.applied;
    c.n_embd = 8;
    request_config(s, c, KernelChoice::reference);
    recompute(s);
    EXPECT_EQ(s.config.applied.n_embd, 12);
    EXPECT_NE(s.error.find("fixes C = 12"), std::string::npos) << s.error;
    ASSERT_TRUE(s.weights.applied);
    // H may change: the same matrices, split into other heads.
    c = s.config.applied;
    c.n_head = 3;
    request_config(s, c, KernelChoice::reference);
    recompute(s);
    EXPECT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(s.config.applied.n_head, 3);
    // Unload: the seeded weights of the same config.
    unload_weights(s);
    recompute(s);
    EXPECT_FALSE(s.weights.applied);
    EXPECT_TRUE(same_bits(s.run.experiment.weights.c_attn.weight, make_experiment(s.config.applied).weights.c_attn.weight));
}

TEST(WeightsPanel, SessionsReopenTheFileAndRefuseAMissingOne) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(load_weights_file(s, gpt2_file, 1, error)) << error;
    recompute(s);
    Session ss = to_session(s);
    EXPECT_EQ(ss.weights_path, gpt2_file);
    EXPECT_EQ(ss.layer, 1);
    AppState t = lesson_state();
    ASSERT_TRUE(apply_session(t, ss, error)) << error;
    recompute(t);
    ASSERT_TRUE(t.weights.applied);
    EXPECT_TRUE(same_bits(t.run.trace.y, s.run.trace.y));
    // A file that has gone: one sentence naming it, the state untouched.
    AppState u = lesson_state();
    ss.weights_path = temp_dir() + "/gone.safetensors";
    EXPECT_FALSE(apply_session(u, ss, error));
    EXPECT_NE(error.find(ss.weights_path), std::string::npos) << error;
    EXPECT_FALSE(u.config_dirty);
    EXPECT_EQ(u.config.applied.n_embd, 8);
    EXPECT_FALSE(u.weights.edit);
}

// A model opened after a weights file replaces the lesson's module: its session records the
// model, not the file, and reopens (it recorded both before, with the model's C, and a file
// of another C then refused the whole session).
TEST(WeightsPanel, AModelShownAfterAWeightsFileSavesASessionThatReopens) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(load_weights_file(s, gpt2_file, 1, error)) << error;
    recompute(s);
    ASSERT_TRUE(open_model_path(s, std::string(ATTNVIZ_TEST_DATA) + "/model_view/both.safetensors", error)) << error;
    recompute(s);
    ASSERT_TRUE(std::holds_alternative<ToyModel>(s.shown.source));
    Session ss = to_session(s);
    EXPECT_EQ(ss.weights_path, "");
    ASSERT_TRUE(ss.model.present);
    // As a session file does: the model's weights beside it.
    ss.model.weights_path = std::string(ATTNVIZ_TEST_DATA) + "/model_view/both.safetensors";
    AppState t = lesson_state();
    ASSERT_TRUE(apply_session(t, ss, error)) << error;
    recompute(t);
    EXPECT_TRUE(std::holds_alternative<ToyModel>(t.shown.source));
    EXPECT_TRUE(same_bits(t.run.trace.y, s.run.trace.y));
}

TEST(WeightsWindow, WeightsOptionAndItsSessionGiveTheSamePicture) {
    const std::string dir = temp_dir(), file = dir + "/weights.json";
    RunResult a = run_headless({"--weights", gpt2_file, "--layer", "1", "--n-head", "3", "--view", "scores",
                                "--screenshot", dir + "/weights_a.png", "--save-session", file});
    ASSERT_EQ(a.status, 0) << a.err;
    RunResult b = run_headless({"--open", file, "--screenshot", dir + "/weights_b.png"});
    ASSERT_EQ(b.status, 0) << b.err;
    const Image ia = load_png(dir + "/weights_a.png"), ib = load_png(dir + "/weights_b.png");
    ASSERT_GT(ia.w, 0);
    ASSERT_EQ(ia.w, ib.w);
    ASSERT_EQ(ia.h, ib.h);
    EXPECT_EQ(ia.rgba, ib.rgba);
    // The seeded weights of the same sizes give another picture.
    RunResult c = run_headless({"--n-embd", "12", "--n-head", "3", "--view", "scores", "--screenshot",
                                dir + "/weights_c.png"});
    ASSERT_EQ(c.status, 0) << c.err;
    EXPECT_GT(differing_fraction(ia, load_png(dir + "/weights_c.png")), 0.01);

    // The session's file removed: --open is one sentence naming it.
    const std::string copy = dir + "/copy.safetensors", moved = dir + "/moved.json";
    std::filesystem::copy_file(gpt2_file, copy, std::filesystem::copy_options::overwrite_existing);
    RunResult d = run_headless({"--weights", copy, "--n-head", "2", "--screenshot", dir + "/weights_d.png", "--save-session", moved});
    ASSERT_EQ(d.status, 0) << d.err;
    std::filesystem::remove(copy);
    RunResult e = run_direct({"--open", moved, "--screenshot", dir + "/never.png"}, false);
    EXPECT_EQ(e.status, 2) << e.err;
    EXPECT_EQ(e.err_lines(), 1) << e.err;
    EXPECT_NE(e.err.find(copy), std::string::npos) << e.err;
}

// Every screen field a session records comes back from to_session and apply_session as
// it was: the view, the walk's step, the perturbation, the theme, the text size and the
// palette, each set away from its default so that a field read from the wrong place shows.
TEST(SessionState, KeepsTheScreenItRecords) {
    AppState s = lesson_state();
    s.screen.view = View::qkv;
    s.screen.step = 5;
    request_perturbation(s, 1, 0.25f);
    s.screen.theme = Theme::high_contrast;
    s.screen.font_scale = 2.5f;
    s.screen.palette = PaletteKind::cb;
    recompute(s);
    const Session ss = to_session(s);
    EXPECT_EQ(ss.step, 5);
    AppState t = lesson_state();
    std::string error;
    ASSERT_TRUE(apply_session(t, ss, error)) << error;
    recompute(t);
    EXPECT_EQ(t.screen.view, View::qkv);
    EXPECT_EQ(t.screen.step, 5);
    EXPECT_EQ(t.p, 1);
    EXPECT_EQ(t.strength, 0.25f);
    EXPECT_EQ(t.screen.theme, Theme::high_contrast);
    EXPECT_EQ(t.screen.font_scale, 2.5f);
    EXPECT_EQ(t.screen.palette, PaletteKind::cb);
}
