// test_trained_shots.cpp: the window opens a model attnviz train wrote (--weights), shows it
// on its letters in every view, and the causality chart's bars before p are exactly 0.0 on
// a two-block model, in the picture as in the numbers.
#include "gui_test_support.h"
#include "model_io.h"
#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <gtest/gtest.h>

using namespace attnviz_gui_test;

namespace {

const std::string both_file = ATTNVIZ_TEST_DATA "/train/both_s0_200.safetensors";
const std::string induction_file = ATTNVIZ_TEST_DATA "/train/induction_s1_120.safetensors";

std::vector<nlohmann::json> sorted_bars(const Shot& s, const std::string& name) {
    std::vector<nlohmann::json> b = s.items("bar", name);
    std::sort(b.begin(), b.end(), [](const auto& a, const auto& c) { return int(a["position"]) < int(c["position"]); });
    return b;
}

// Bar-coloured pixels in a bar's column, from 60 px above the baseline to it.
int bar_pixels(const Image& im, const nlohmann::json& bar) {
    const int x = int(double(bar["x"]) + double(bar["w"]) / 2);
    const int baseline = int(double(bar["y"]) + double(bar["h"]));
    int n = 0;
    for (int y = baseline - 60; y < baseline; ++y) n += is_bar_colour(im.at(x, y));
    return n;
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream text;
    text << f.rdbuf();
    return text.str();
}

} // namespace

TEST(TrainedWindow, OpensATrainedFileInEveryViewOnItsLetters) {
    std::vector<Image> images;
    for (const char* v : {"walk", "qkv", "scores", "causality", "check"}) {
        Shot s = take_shot(std::string("trained_") + v, {"--weights", both_file, "--view", v});
        ASSERT_EQ(s.result.status, 0) << v << ": " << s.result.err;
        EXPECT_GT(s.image.distinct_colours(), 300) << v;
        ASSERT_TRUE(s.layout.contains("trained")) << v;
        EXPECT_EQ(s.layout["trained"]["task"], "both");
        // The default sequence: BOS and "a b c d a b c d".
        const std::vector<std::string> letters = {"^", "a", "b", "c", "d", "a", "b", "c", "d"};
        EXPECT_EQ(s.layout["trained"]["tokens"].get<std::vector<std::string>>(), letters) << v;
        EXPECT_EQ(s.layout["config"]["seq_len"], 9) << v;
        EXPECT_EQ(s.layout["config"]["n_embd"], 64) << v;
        images.push_back(s.image);
    }
    // The lesson's walk is another picture.
    Shot lesson = take_shot("lesson_walk", {"--view", "walk"});
    ASSERT_EQ(lesson.result.status, 0) << lesson.result.err;
    EXPECT_GT(differing_fraction(images[0], lesson.image), 0.05);
}

TEST(TrainedWindow, TextAndLayerChooseWhatIsShown) {
    Shot s = take_shot("trained_text", {"--weights", induction_file, "--text", "a b c a b", "--layer", "1", "--view", "scores"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    EXPECT_EQ(s.layout["trained"]["layer"], 1);
    EXPECT_EQ(s.layout["trained"]["n_layer"], 2);
    EXPECT_EQ(s.layout["config"]["seq_len"], 6);
    bool probs = false;
    for (const auto& it : s.items("heatmap", "probs")) probs = probs || int(it["rows"]) == 6;
    EXPECT_TRUE(probs);
}

TEST(TrainedWindow, BarsBeforePAreExactlyZeroThroughBothLayers) {
    for (const char* layer : {"0", "1"}) {
        Shot s = take_shot(std::string("trained_causality_") + layer,
                           {"--weights", induction_file, "--text", "a b c a b c", "--layer", layer, "--view", "causality",
                            "--perturb", "3", "--strength", "1"});
        ASSERT_EQ(s.result.status, 0) << s.result.err;
        EXPECT_EQ(s.layout["perturb"]["p"], 3);
        for (const char* name : {"dy", "dy_out"}) {
            const std::vector<nlohmann::json> b = sorted_bars(s, name);
            ASSERT_EQ(b.size(), 7u) << name;
            for (int t = 0; t < 3; ++t) {
                EXPECT_EQ(double(b[size_t(t)]["value"]), 0.0) << name << " t " << t;
                EXPECT_EQ(double(b[size_t(t)]["h"]), 0.0) << name << " t " << t;
                EXPECT_EQ(bar_pixels(s.image, b[size_t(t)]), 0) << name << " t " << t;
            }
            // From p on the outputs move: the tallest bar is drawn, and every value is above 0.
            size_t top = 3;
            for (size_t t = 3; t < b.size(); ++t) {
                EXPECT_GT(double(b[t]["value"]), 0.0) << name << " t " << t;
                if (double(b[t]["h"]) > double(b[top]["h"])) top = t;
            }
            EXPECT_GT(bar_pixels(s.image, b[top]), 10) << name;
        }
    }
}

TEST(TrainedWindow, TheKeyLGoesBackToTheLesson) {
    Shot s = take_shot("trained_key_l", {"--weights", both_file, "--keys", "l"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    EXPECT_FALSE(s.layout.contains("trained"));
    EXPECT_EQ(s.layout["config"]["n_embd"], 8);
    EXPECT_EQ(s.layout["config"]["seq_len"], 4);
}

TEST(TrainedWindow, BadOptionsForATrainedFileAreOneSentence) {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"--weights", both_file, "--text", "a b Z"}, "'Z' is not a letter of the model's vocabulary (a, b, c ... p)"},
        {{"--weights", both_file, "--perturb", "0"}, "--perturb 0 is BOS"},
        {{"--weights", both_file, "--text", " "}, "--text has no letters"},
        {{"--weights", both_file, "--perturb", "9"}, "--perturb"},
        {{"--weights", induction_file, "--layer", "2"}, "--layer"},
        {{"--weights", both_file, "--n-head", "2"}, "--n-head 2 does not apply"},
        {{"--weights", both_file, "--mask", "none"}, "--mask none does not apply"},
    };
    for (const Case& c : cases) {
        RunResult r = run_direct(c.args, true);
        EXPECT_EQ(r.status, 2) << c.says;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
        EXPECT_EQ(r.err_lines(), 1) << r.err;
    }
}

// --save-weights writes the model the window holds: the Train view's run after --train-steps
// (bit for bit what attnviz train writes), and a trained model in the views (the file it came
// from, byte for byte); a name that is not .safetensors is one sentence before any window.
TEST(TrainedWindow, SaveWeightsWritesTheModelTheWindowHolds) {
    const std::string dir = temp_dir();
    const std::string shot = dir + "/save-weights.png", run_file = dir + "/window-run.safetensors",
                      cli_file = dir + "/cli-run.safetensors", views_file = dir + "/views.safetensors";
    RunResult r = run_headless({"--view", "train", "--task", "prev", "--seed", "2", "--train-steps", "30", "--screenshot", shot,
                                "--save-weights", run_file});
    ASSERT_EQ(r.status, 0) << r.err;
    r = run({ATTNVIZ_BIN, "train", "--task", "prev", "--seed", "2", "--steps", "30", "--out", cli_file});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string a = read_file(run_file), b = read_file(cli_file);
    ASSERT_FALSE(a.empty());
    EXPECT_TRUE(a == b) << "the window's run after 30 steps differs from attnviz train's";

    r = run_headless({"--weights", both_file, "--view", "scores", "--screenshot", shot, "--save-weights", views_file});
    ASSERT_EQ(r.status, 0) << r.err;
    attnviz::Model saved, given;
    std::string error;
    ASSERT_TRUE(attnviz::load_model(views_file, saved, error)) << error;
    ASSERT_TRUE(attnviz::load_model(both_file, given, error)) << error;
    auto ps = attnviz::parameters(saved), pg = attnviz::parameters(given);
    ASSERT_EQ(ps.size(), pg.size());
    for (size_t i = 0; i < ps.size(); ++i) {
        ASSERT_EQ(ps[i].value->size(), pg[i].value->size()) << ps[i].name;
        EXPECT_EQ(0, std::memcmp(ps[i].value->data(), pg[i].value->data(), size_t(ps[i].value->size()) * sizeof(float)))
            << ps[i].name;
    }

    r = run_direct({"--save-weights", dir + "/model.bin"}, true);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("does not end in .safetensors"), std::string::npos) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
}
