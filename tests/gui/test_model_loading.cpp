// test_model_loading.cpp: the side panel's "Open model" and "Load weights…" read a whole model
// on a worker (model_loading.cpp). The request returns with the shown model untouched and a
// progress line; recompute() stages the model once it is in, exactly as the synchronous
// open_model_path does; a refused read keeps the state and says why; a second request while
// one is reading is refused with one sentence.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "app_state.h"
#include "gpt_test_dir.h"
#include "inputs.h"
#include "state_test_support.h"
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

const std::string train_dir = ATTNVIZ_TEST_DATA "/train/";

// Recompute until the read is staged, as the frame loop does (bounded: a read never hangs).
void frames_until_read(AppState& s) {
    for (int i = 0; i < 100000 && model_loading(s); ++i) recompute(s);
    poll_model_load(s, true);
    recompute(s);
}

} // namespace

TEST(ModelLoading, OpenModelReadsOnAWorkerAndStagesWhatOpenModelPathStages) {
    AppState s = lesson_state();
    const Trace before = s.run.trace;
    std::string error;
    ASSERT_TRUE(request_model_path(s, tiny_gpt_dir(true), error)) << error;
    // The request returned before staging anything: the lesson is still what is shown.
    EXPECT_TRUE(model_loading(s));
    EXPECT_FALSE(s.edit_trained);
    EXPECT_FALSE(shown_model(s));
    EXPECT_EQ(s.status.rfind("Reading ", 0), 0u) << s.status;
    EXPECT_NE(s.status.find("MB"), std::string::npos) << s.status;
    EXPECT_TRUE(same_bits(s.run.trace.y, before.y));
    frames_until_read(s);
    EXPECT_FALSE(model_loading(s));
    ASSERT_TRUE(shown_model(s) && shown_model(s)->gpt()) << s.error;

    AppState t = lesson_state();
    ASSERT_TRUE(open_model_path(t, tiny_gpt_dir(true), error)) << error;
    recompute(t);
    ASSERT_TRUE(shown_model(t));
    EXPECT_EQ(shown_model(s)->tokens, shown_model(t)->tokens);
    EXPECT_EQ(shown_model(s)->model->config.n_layer, shown_model(t)->model->config.n_layer);
    EXPECT_EQ(s.shown.layer, t.shown.layer);
    EXPECT_TRUE(same_bits(s.run.trace.y, t.run.trace.y));
}

TEST(ModelLoading, ARefusedReadKeepsTheShownModelAndSaysWhy) {
    AppState s = lesson_state();
    const Trace before = s.run.trace;
    std::string error;
    ASSERT_TRUE(request_model_path(s, "/nonexistent/gpt2", error)) << error;
    frames_until_read(s);
    EXPECT_FALSE(shown_model(s));
    EXPECT_NE(s.error.find("Kept what is shown"), std::string::npos) << s.error;
    EXPECT_NE(s.error.find("/nonexistent/gpt2"), std::string::npos) << s.error;
    EXPECT_TRUE(same_bits(s.run.trace.y, before.y));
    // An empty path is refused at once, nothing started.
    EXPECT_FALSE(request_model_path(s, "", error));
    EXPECT_FALSE(model_loading(s));
    EXPECT_NE(error.find("no model given"), std::string::npos) << error;
}

TEST(ModelLoading, ASecondRequestWhileReadingIsOneSentenceAndTheFirstLands) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(request_model_path(s, tiny_gpt_dir(true), error)) << error;
    EXPECT_FALSE(request_model_path(s, train_dir + "induction_s1_120.safetensors", error));
    EXPECT_NE(error.find("still reading"), std::string::npos) << error;
    EXPECT_NE(s.error.find("Kept what is shown"), std::string::npos) << s.error;
    frames_until_read(s);
    ASSERT_TRUE(shown_model(s) && shown_model(s)->gpt()) << s.error;
}

TEST(ModelLoading, LoadWeightsReadsAWholeModelOnAWorkerAndABlockAtOnce) {
    // A trained model on layer 1, as load_weights_file shows it.
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(request_weights_file(s, train_dir + "induction_s1_120.safetensors", 1, error)) << error;
    EXPECT_TRUE(model_loading(s));
    frames_until_read(s);
    ASSERT_TRUE(shown_model(s)) << s.error;
    EXPECT_FALSE(shown_model(s)->gpt());
    EXPECT_EQ(s.shown.layer, 1);
    // A negative layer is load_weights_file's refusal, at once.
    AppState t = lesson_state();
    EXPECT_FALSE(request_weights_file(t, train_dir + "induction_s1_120.safetensors", -1, error));
    EXPECT_FALSE(model_loading(t));
    EXPECT_NE(error.find("-1"), std::string::npos) << error;
    // A GPT-2 directory is a whole model too.
    AppState g = lesson_state();
    ASSERT_TRUE(request_weights_file(g, tiny_gpt_dir(false), 0, error)) << error;
    EXPECT_TRUE(model_loading(g));
    frames_until_read(g);
    ASSERT_TRUE(shown_model(g) && shown_model(g)->gpt()) << g.error;
    EXPECT_FALSE(shown_model(g)->tokenizer);
}
