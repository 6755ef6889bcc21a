// test_follow_state.cpp: what a page that follows the teacher does with the teacher's
// sessions, in the state layer: the Train view's run goes on from where the page's copy is
// instead of starting again each time the teacher's run moves.
#include "session_state.h"
#include "state_test_support.h"
#include "train_view_state.h"
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

TEST(FollowState, TheSameRunGoesOnInsteadOfStartingAgain) {
    // The teacher's window: a run at step 30, then at step 60.
    AppState teacher = lesson_state();
    TrainViewState& t = train_view(teacher);
    t.session->run_to(30);
    t.session->wait_idle();
    const Session at30 = to_session(teacher);
    ASSERT_TRUE(at30.train.present);
    ASSERT_EQ(at30.train.step, 30);
    t.session->run_to(60);
    t.session->wait_idle();
    const Session at60 = to_session(teacher);

    AppState page = lesson_state();
    std::string error;
    ASSERT_TRUE(apply_session(page, at30, error)) << error;
    finish_training(page);
    const TrainSession* run = page.train->session.get();
    ASSERT_EQ(run->status().step, 30);
    // The teacher's run moved: the page's run goes on from 30 (the same object), to 60.
    ASSERT_TRUE(apply_session(page, at60, error)) << error;
    EXPECT_EQ(page.train->session.get(), run);
    finish_training(page);
    EXPECT_EQ(page.train->session->status().step, 60);
    // And has the teacher's weights at that step, bit for bit.
    const Model& a = *teacher.train->session->latest();
    const Model& b = *page.train->session->latest();
    EXPECT_TRUE(same_bits(a.wte, b.wte));
    EXPECT_TRUE(same_bits(a.h[0].attn.c_attn.weight, b.h[0].attn.c_attn.weight));

    // Another run (another seed), or the teacher's run behind the page's: a run of its own.
    Session other = at60;
    other.train.seed = 7;
    ASSERT_TRUE(apply_session(page, other, error)) << error;
    EXPECT_NE(page.train->session.get(), run);
    run = page.train->session.get();
    finish_training(page);
    ASSERT_TRUE(apply_session(page, at30, error)) << error;
    EXPECT_NE(page.train->session.get(), run);
    finish_training(page);
    EXPECT_EQ(page.train->session->status().step, 30);
    EXPECT_EQ(page.train->session->settings().seed, 0u);
}
