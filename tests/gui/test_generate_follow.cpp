// test_generate_follow.cpp: the Generate view's generation beyond one window, in the state
// layer: a session keeps it and reopening writes the same tokens again (an older session opens
// at the prompt); a page that follows a teacher's GPT model shows the teacher's tokens, bars
// and rows from the message (follow_generate.h) and refuses an edit; a lesson or toy page
// writes the same tokens from the session; a large step's full recompute and the check
// question's demonstration run on a worker while the frame goes on.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" // GCC 12 inside Eigen's AVX-512 products
#endif
#include "app_state.h"
#include "follow_generate.h"
#include "follow_gpt.h"
#include "gpt_test_dir.h"
#include "gui_test_support.h"
#include "session.h"
#include "session_state.h"
#include "state_test_support.h"
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

std::shared_ptr<const TrainedInput> tiny_gpt() { return tiny_gpt_input("The cat sat on the mat, and the cat"); }

void steps(AppState& s, int n) {
    for (int i = 0; i < n; ++i) {
        request_generate_step(s);
        recompute(s);
    }
}

SamplingOptions sampled(uint64_t seed) {
    SamplingOptions o;
    o.greedy = false;
    o.temperature = 1.3;
    o.top_k = 40;
    o.top_p = 0.95;
    o.seed = seed;
    return o;
}

// The teacher's state through a session file's text into a fresh window, recomputed.
AppState reopened(const AppState& teacher) {
    Session ss;
    std::string error;
    EXPECT_TRUE(parse_session(session_to_json(to_session(teacher)), "gen.json", ss, error)) << error;
    AppState page = lesson_state();
    EXPECT_TRUE(apply_session(page, ss, error)) << error;
    recompute(page);
    return page;
}

// recompute() until the worker's result is in (a generous deadline, no timing asserted).
bool wait_for_worker(AppState& s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (generate_working(s) && std::chrono::steady_clock::now() < deadline) recompute(s);
    return !generate_working(s);
}

} // namespace

TEST(GenerateSession, ALessonGenerationComesBackWithItsRows) {
    AppState s = generating(nullptr);
    steps(s, 3);
    ASSERT_EQ(s.generate.steps.size(), 3u);
    AppState back = reopened(s);
    const GenerateState &a = s.generate, &b = back.generate;
    ASSERT_TRUE(b.why_not.empty()) << b.why_not;
    ASSERT_EQ(b.rows.size(), a.rows.size());
    for (size_t t = 0; t < a.rows.size(); ++t) EXPECT_TRUE(same_bits(a.rows[t], b.rows[t])) << t;
    EXPECT_TRUE(same_bits(a.lesson_x, b.lesson_x));
}

TEST(GenerateSession, AToyGenerationComesBackAndTheSamplerGoesOn) {
    std::shared_ptr<const TrainedInput> in;
    std::string error;
    ASSERT_TRUE(read_trained_input(ATTNVIZ_TEST_DATA "/model_view/induction.safetensors", "a b c d a b", in, error)) << error;
    // A session keeps a toy model beside it: the page's copy is the same file's.
    const std::string dir = ::testing::TempDir() + "attnviz_gen_session";
    std::filesystem::create_directories(dir);
    AppState s = generating(in);
    ASSERT_TRUE(request_sampling(s, sampled(11)));
    steps(s, 4);
    ASSERT_EQ(s.generate.draws, 4);
    const std::string path = dir + "/gen.json";
    ASSERT_TRUE(write_session_files(path, s, error)) << error;
    Session ss;
    ASSERT_TRUE(read_session(path, ss, error)) << error;
    ASSERT_TRUE(ss.generate.present);
    AppState back = lesson_state();
    ASSERT_TRUE(apply_session(back, ss, error)) << error;
    recompute(back);
    const GenerateState &a = s.generate, &b = back.generate;
    ASSERT_TRUE(b.why_not.empty()) << b.why_not;
    EXPECT_EQ(b.tokens, a.tokens);
    EXPECT_EQ(b.draws, a.draws);
    EXPECT_EQ(b.options.seed, 11u);
    EXPECT_EQ(b.options.top_k, 40);
    ASSERT_EQ(b.steps.size(), a.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i) EXPECT_EQ(b.steps[i].prob, a.steps[i].prob) << i;
    ASSERT_EQ(b.rows.size(), a.rows.size());
    EXPECT_TRUE(same_bits(b.rows.back(), a.rows.back()));
    // The sampler goes on from the same draw: both write the same next token.
    steps(s, 2);
    steps(back, 2);
    EXPECT_EQ(back.generate.tokens, s.generate.tokens);
    std::filesystem::remove_all(dir);
}

TEST(GenerateSession, AnOlderSessionOpensAtThePrompt) {
    AppState s = generating(nullptr);
    steps(s, 2);
    Session ss;
    std::string error;
    ASSERT_TRUE(parse_session(R"({"attnviz_session": 1, "view": "generate"})", "old.json", ss, error)) << error;
    ASSERT_TRUE(apply_session(s, ss, error)) << error;
    recompute(s);
    EXPECT_TRUE(s.generate.why_not.empty()) << s.generate.why_not;
    EXPECT_TRUE(s.generate.steps.empty());
    EXPECT_EQ(int(s.generate.rows.size()), s.generate.prompt_len);
    EXPECT_FALSE(to_session(s).generate.present);
}

TEST(GenerateFollow, APageShowsTheTeachersGptGenerationAndRefusesAnEdit) {
    AppState teacher = generating(tiny_gpt());
    ASSERT_TRUE(request_sampling(teacher, sampled(3)));
    steps(teacher, 25); // past the picture's 32 rows: the page has the last ones
    const GenerateState& a = teacher.generate;
    ASSERT_EQ(a.steps.size(), 25u);
    ASSERT_GT(int(a.rows.size()), generate_follow_rows);
    const nlohmann::json header = nlohmann::json::parse(gpt_follow_header(teacher).dump()); // as sent
    std::string layer, none, error;
    ASSERT_TRUE(gpt_part_bytes(teacher, GptPart::layer, layer, error)) << error;
    const std::string* parts[gpt_part_count] = {&layer, &none, &none};
    AppState page = lesson_state();
    ASSERT_TRUE(show_received_gpt(page, header, parts, error)) << error;
    ASSERT_TRUE(page.generate.received) << header.contains("generate");
    page.screen.view = View::generate;
    recompute(page);
    const GenerateState& b = page.generate;
    ASSERT_TRUE(b.received);
    ASSERT_TRUE(b.why_not.empty()) << b.why_not;
    EXPECT_EQ(b.tokens, a.tokens);
    EXPECT_EQ(b.prompt_len, a.prompt_len);
    EXPECT_EQ(b.draws, 25);
    EXPECT_EQ(b.rows_from, int(a.rows.size()) - generate_follow_rows);
    EXPECT_EQ(b.options.seed, 3u);
    EXPECT_EQ(b.options.top_p, 0.95);
    EXPECT_FALSE(generate_new_text(page).empty());
    for (int t : a.tokens) EXPECT_EQ(generate_token_label(page, t), generate_token_label(teacher, t));
    ASSERT_EQ(b.top.size(), a.top.size());
    for (size_t i = 0; i < a.top.size(); ++i) {
        EXPECT_EQ(b.top[i].token, a.top[i].token);
        EXPECT_EQ(b.top[i].prob, a.top[i].prob);
        EXPECT_EQ(b.top[i].logit, a.top[i].logit);
    }
    // The rows the picture draws, bit for bit; the newest whole.
    const int T = int(a.rows.size());
    ASSERT_EQ(int(b.rows.size()), T);
    for (int t = b.rows_from; t < T; ++t)
        for (int h = 0; h < a.rows[size_t(t)].rows(); ++h)
            for (int k = t + 1 == T ? 0 : b.rows_from; k <= t; ++k)
                ASSERT_EQ(std::memcmp(&b.rows[size_t(t)](h, k), &a.rows[size_t(t)](h, k), 4), 0) << t << " " << h << " " << k;
    const CacheSizes za = generate_cache_sizes(teacher), zb = generate_cache_sizes(page);
    EXPECT_EQ(zb.layers, za.layers);
    EXPECT_EQ(zb.T, za.T);
    EXPECT_EQ(zb.C, za.C);
    EXPECT_EQ(b.steps.back().cached_ms, a.steps.back().cached_ms);
    EXPECT_EQ(b.steps.back().logits_max_abs, a.steps.back().logits_max_abs);
    // An edit the page cannot compute: refused, the teacher's generation kept.
    request_generate_step(page);
    recompute(page);
    EXPECT_EQ(page.generate.tokens, a.tokens);
    EXPECT_NE(page.error.find(gpt_lives_on_teacher), std::string::npos) << page.error;
    EXPECT_FALSE(request_sampling(page, SamplingOptions{}));
    EXPECT_NE(page.generate.error.find(gpt_lives_on_teacher), std::string::npos);
    // Another view on the teacher's side sends no generation.
    teacher.screen.view = View::walk;
    EXPECT_TRUE(gpt_follow_header(teacher)["generate"].is_null());
}

TEST(GenerateFollow, ALessonPageWritesTheTeachersRowsFromTheSession) {
    AppState teacher = generating(nullptr);
    steps(teacher, 4);
    AppState page = reopened(teacher);
    ASSERT_EQ(page.generate.rows.size(), teacher.generate.rows.size());
    EXPECT_TRUE(same_bits(page.generate.rows.back(), teacher.generate.rows.back()));
    // The teacher takes one back: so does the page, with the next message.
    request_generate_back(teacher);
    recompute(teacher);
    AppState again = reopened(teacher);
    EXPECT_EQ(again.generate.rows.size(), teacher.generate.rows.size());
}

TEST(GenerateWorker, AStepsFullRecomputeRunsWhileTheFrameGoesOn) {
    AppState s = generating(tiny_gpt());
    s.generate.worker_min_macs = 0; // every step's full recompute on the worker
    std::promise<void> release;
    std::shared_future<void> go = release.get_future().share();
    s.generate.worker_started = [go] { go.wait(); };
    request_generate_step(s);
    recompute(s); // returns with the worker held
    ASSERT_TRUE(generate_working(s));
    ASSERT_EQ(s.generate.steps.size(), 1u);
    EXPECT_TRUE(s.generate.steps.back().checking);
    EXPECT_GE(s.generate.steps.back().cached_ms, 0);
    request_generate_step(s); // waits for the worker
    recompute(s);
    recompute(s);
    EXPECT_EQ(s.generate.steps.size(), 1u);
    EXPECT_TRUE(generate_working(s));
    release.set_value();
    ASSERT_TRUE(wait_for_worker(s));
    recompute(s); // the waiting step
    ASSERT_TRUE(wait_for_worker(s));
    ASSERT_EQ(s.generate.steps.size(), 2u);
    for (const GenerateStep& st : s.generate.steps) {
        EXPECT_FALSE(st.checking);
        EXPECT_GE(st.full_ms, 0);
        EXPECT_EQ(st.logits_max_abs, 0.0); // the reference kernel: the cached step is the full row, bit for bit
        EXPECT_EQ(st.rows_max_abs, 0.0);
    }
}

TEST(GenerateWorker, TheCheckQuestionsDemonstrationRunsOnTheWorker) {
    AppState s = generating(tiny_gpt());
    s.generate.worker_min_macs = 0;
    std::promise<void> release;
    std::shared_future<void> go = release.get_future().share();
    s.generate.worker_started = [go] { go.wait(); };
    request_generate_demo(s);
    recompute(s);
    ASSERT_TRUE(generate_working(s));
    EXPECT_FALSE(s.generate.demo.computed);
    EXPECT_TRUE(s.generate.demo.working);
    release.set_value();
    ASSERT_TRUE(wait_for_worker(s));
    const GenerateDemo& d = s.generate.demo;
    ASSERT_TRUE(d.computed);
    ASSERT_TRUE(d.why_not.empty()) << d.why_not;
    EXPECT_GT(d.steps, 0);
    EXPECT_EQ(d.cached_tokens, d.full_tokens);
    EXPECT_EQ(d.max_abs_logits, 0.0);
    EXPECT_FALSE(d.sentence.empty());
}

TEST(GenerateSession, OpenWritesTheSavedGenerationInTheWindow) {
    const std::string file = temp_dir() + "/generated.json";
    Shot a = take_shot("generate_saved", {"--view", "generate", "--keys", "right,right,right", "--save-session", file});
    ASSERT_EQ(a.result.status, 0) << a.result.err;
    Shot b = take_shot("generate_opened", {"--open", file});
    ASSERT_EQ(b.result.status, 0) << b.result.err;
    const auto pa = a.items("generate_attention", "att"), pb = b.items("generate_attention", "att");
    ASSERT_EQ(pa.size(), 1u);
    ASSERT_EQ(pb.size(), 1u);
    EXPECT_EQ(pb[0]["value"], pa[0]["value"]); // T: the prompt's 4 rows and the 3 written
    EXPECT_EQ(pb[0]["value"].get<double>(), 7.0);
}
