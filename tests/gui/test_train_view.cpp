// test_train_view.cpp: the Train view. Key 6 draws it (its heads' patterns in the picture);
// the head labels appear on a trained `both` model and not on an untrained one; a refused
// setting keeps the run and says why; a session with a trained run reopens on the same
// picture; Open in the views stages the shown model on the probe.
#include "gui_test_support.h"
#include "model_io.h"
#include "state_test_support.h"
#include "text_util.h"
#include "train_view_state.h"
#include <fstream>
#include <gtest/gtest.h>
#include <set>

using namespace attnviz_gui_test;
using namespace attnviz;

namespace {

std::vector<nlohmann::json> heads_of(const Shot& s) {
    std::vector<nlohmann::json> out;
    for (const nlohmann::json& it : s.layout.at("items"))
        if (it.at("kind") == "train_head") out.push_back(it);
    return out;
}

// Distinct colours inside a drawn rectangle.
int colours_in(const Image& im, const nlohmann::json& r) {
    std::set<int> seen;
    for (int y = int(r.at("y").get<double>()) + 1; y < int(r.at("y").get<double>() + r.at("h").get<double>()) - 1; ++y)
        for (int x = int(r.at("x").get<double>()) + 1; x < int(r.at("x").get<double>() + r.at("w").get<double>()) - 1; ++x) {
            const Rgb c = im.at(x, y);
            seen.insert(c.r << 16 | c.g << 8 | c.b);
        }
    return int(seen.size());
}

} // namespace

TEST(TrainView, KeySixDrawsTheViewWithEveryHeadsPattern) {
    Shot walk = take_shot("train_walk", {"--size", "1280x720"});
    Shot train = take_shot("train_key6", {"--size", "1280x720", "--keys", "6"});
    ASSERT_EQ(train.result.status, 0) << train.result.err;
    ASSERT_EQ(walk.result.status, 0) << walk.result.err;
    EXPECT_GT(differing_fraction(walk.image, train.image), 0.2);
    const std::vector<nlohmann::json> heads = heads_of(train);
    ASSERT_EQ(heads.size(), 4u) << "both's default H = 4 heads, one layer";
    EXPECT_TRUE(heads_of(walk).empty());
    for (const nlohmann::json& h : heads) {
        // The pattern is drawn: many weight colours, and it lies inside the window.
        EXPECT_GT(colours_in(train.image, h), 8) << h.dump();
        EXPECT_GE(h.at("x").get<double>(), 0);
        EXPECT_LE(h.at("x").get<double>() + h.at("w").get<double>(), 1280);
        EXPECT_LE(h.at("y").get<double>() + h.at("h").get<double>(), 720);
        EXPECT_EQ(h.at("w").get<double>(), h.at("h").get<double>()) << "(T + 1) x (T + 1) square cells";
    }
}

TEST(TrainView, HeadLabelsAppearOnATrainedBothModelOnly) {
    Shot untrained = take_shot("train_both_0", {"--view", "train", "--task", "both", "--train-steps", "0"});
    Shot trained = take_shot("train_both_1000", {"--view", "train", "--task", "both", "--train-steps", "1000"});
    ASSERT_EQ(untrained.result.status, 0) << untrained.result.err;
    ASSERT_EQ(trained.result.status, 0) << trained.result.err;
    for (const nlohmann::json& h : heads_of(untrained)) EXPECT_EQ(h.at("name"), "") << "an untrained head has no role";
    int prev = 0, dup = 0;
    for (const nlohmann::json& h : heads_of(trained)) {
        const std::string name = h.at("name");
        prev += name.rfind("previous-token head (", 0) == 0;
        dup += name.rfind("duplicate-token head (", 0) == 0;
    }
    EXPECT_GE(prev, 1);
    EXPECT_GE(dup, 1);
    EXPECT_GT(differing_fraction(untrained.image, trained.image), 0.02);
}

TEST(TrainView, BadTrainingOptionsAreOneSentence) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--view", "train", "--task", "both", "--n-head", "5"},
          std::vector<std::string>{"--task", "nope"}, std::vector<std::string>{"--task", "prev", "--lr", "-1"},
          std::vector<std::string>{"--task", "prev", "--batch", "0"}}) {
        std::vector<std::string> a = args;
        a.insert(a.end(), {"--screenshot", temp_dir() + "/never.png"});
        RunResult r = run_direct(a, false);
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_EQ(r.err_lines(), 1) << r.err;
    }
}

TEST(TrainView, ARefusedSettingKeepsTheRunAndSaysWhy) {
    AppState s = lesson_state();
    TrainViewState& t = train_view(s);
    t.session->run_to(20);
    t.session->wait_idle();
    const TrainSession* before = t.session.get();
    TrainSettings bad = t.settings;
    bad.model.n_head = 5; // does not divide C = 64
    EXPECT_FALSE(request_train_settings(t, bad));
    EXPECT_EQ(t.session.get(), before);
    EXPECT_EQ(t.session->status().step, 20);
    EXPECT_EQ(t.settings.model.n_head, 4);
    EXPECT_NE(t.error.find("Kept the current run"), std::string::npos) << t.error;
    EXPECT_NE(t.error.find("5"), std::string::npos) << t.error;
    bad = t.settings;
    bad.lr = 0;
    EXPECT_FALSE(request_train_settings(t, bad));
    EXPECT_NE(t.error.find("learning rate"), std::string::npos) << t.error;
    // A good one starts a new run at step 0.
    TrainSettings good = t.settings;
    good.seed = 7;
    EXPECT_TRUE(request_train_settings(t, good));
    EXPECT_TRUE(t.error.empty());
    EXPECT_EQ(t.session->status().step, 0);
}

// What the status line says stays true: "A new run" until the run trains on, then where it is
// (as after --train-steps N); an action's line until the run moves past it; a resume's line.
TEST(TrainView, TheStatusSaysWhatIsTrueNow) {
    AppState s = lesson_state();
    s.screen.view = View::train;
    TrainViewState& t = train_view(s);
    TrainSettings next = t.settings;
    next.seed = 3;
    ASSERT_TRUE(request_train_settings(t, next));
    t.session->wait_idle();
    refresh_train_view(s);
    EXPECT_EQ(t.status, "A new run: both, seed 3.");
    t.session->run_to(40);
    t.session->wait_idle();
    refresh_train_view(s);
    EXPECT_EQ(t.status, "Trained to step 40: both, seed 3.");
    const std::string file = temp_dir() + "/status_40.safetensors";
    save_train_model(t, file);
    refresh_train_view(s);
    EXPECT_EQ(t.status.rfind("Saved step 40's model to ", 0), 0u) << t.status;
    t.session->step(10);
    t.session->wait_idle();
    refresh_train_view(s);
    EXPECT_EQ(t.status, "Trained to step 50: both, seed 3.");
    ASSERT_TRUE(t.session->resume_from(20));
    t.session->wait_idle();
    refresh_train_view(s);
    EXPECT_EQ(t.status, "Resumed from step 20: the 30 later steps were dropped.");
    refresh_train_view(s);
    EXPECT_EQ(t.status, "Resumed from step 20: the 30 later steps were dropped.") << "said once, kept while true";
    load_train_model(t, file);
    refresh_train_view(s);
    EXPECT_EQ(t.status.rfind("Loaded ", 0), 0u) << t.status;
    t.session->run_to(5);
    t.session->wait_idle();
    refresh_train_view(s);
    EXPECT_EQ(t.status, "Trained to step 5 from " + quote_path(file) + "'s weights: both, seed 3.");
}

TEST(TrainView, TheProbeTakesTheVocabularysLettersOnly) {
    AppState s = lesson_state();
    TrainViewState& t = train_view(s);
    const std::vector<int> kept = t.probe;
    std::string error;
    EXPECT_FALSE(set_probe_text(t, "a b 7", error));
    EXPECT_NE(error.find("a, b, c"), std::string::npos) << error;
    EXPECT_EQ(t.probe, kept);
    EXPECT_FALSE(set_probe_text(t, "a b c", error));
    EXPECT_NE(error.find("16"), std::string::npos) << error;
    ASSERT_TRUE(set_probe_text(t, "a b c d a b c d e f g h e f g h", error)) << error;
    EXPECT_EQ(t.probe.front(), t.settings.model.bos());
    EXPECT_EQ(t.probe[1], 0);
    shuffle_probe(t);
    EXPECT_EQ(t.probe.size(), 17u);
}

TEST(TrainView, OpenInTheViewsStagesTheShownModelOnTheProbe) {
    AppState s = lesson_state();
    s.screen.view = View::train;
    TrainViewState& t = train_view(s);
    t.session->run_to(30);
    t.session->wait_idle();
    refresh_train_view(s);
    ASSERT_TRUE(t.picture.model);
    ASSERT_EQ(t.picture.step, 30);
    open_in_views(s);
    ASSERT_TRUE(s.edit_trained);
    EXPECT_EQ(s.edit_trained->source, "Train view, step 30");
    EXPECT_EQ(s.edit_trained->model, t.picture.model);
    EXPECT_EQ(s.edit_trained->tokens, t.probe);
    EXPECT_EQ(s.edit_trained->tokens.front(), 16) << "BOS first";
    EXPECT_EQ(s.screen.view, View::walk);
}

TEST(TrainView, ASessionWithATrainedRunReopensOnTheSamePicture) {
    const std::string dir = temp_dir(), file = dir + "/train_session.json";
    RunResult a = run_headless({"--view", "train", "--task", "prev", "--seed", "2", "--train-steps", "120",
                                "--size", "1280x720", "--screenshot", dir + "/train_sess_a.png", "--save-session", file});
    ASSERT_EQ(a.status, 0) << a.err;
    // The weights beside the session are the run's at step 120.
    Model m;
    std::string error;
    ASSERT_TRUE(load_model(dir + "/train_session.train.safetensors", m, error)) << error;
    EXPECT_EQ(m.config.task, Task::prev);
    RunResult b = run_headless({"--open", file, "--size", "1280x720", "--screenshot", dir + "/train_sess_b.png"});
    ASSERT_EQ(b.status, 0) << b.err;
    const Image ia = load_png(dir + "/train_sess_a.png"), ib = load_png(dir + "/train_sess_b.png");
    ASSERT_GT(ia.w, 0);
    ASSERT_EQ(ia.w, ib.w);
    ASSERT_EQ(ia.h, ib.h);
    // Below the line that says what happened last ("A new run" / "Retrained ..."): the
    // curves, the scrubber and the heads, pixel for pixel.
    size_t differ = 0;
    for (int y = 215; y < ia.h; ++y)
        for (int x = 0; x < ia.w; ++x) {
            const Rgb p = ia.at(x, y), q = ib.at(x, y);
            differ += p.r != q.r || p.g != q.g || p.b != q.b;
        }
    EXPECT_EQ(differ, 0u);
    // And it is not the picture of step 0.
    RunResult c = run_headless({"--view", "train", "--task", "prev", "--seed", "2", "--size", "1280x720",
                                "--screenshot", dir + "/train_sess_c.png"});
    ASSERT_EQ(c.status, 0) << c.err;
    EXPECT_GT(differing_fraction(ia, load_png(dir + "/train_sess_c.png")), 0.01);
}
