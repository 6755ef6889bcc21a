// test_generate.cpp: the Generate view's state (generate_state.h) through recompute() without a
// window, and the view itself headless. Step adds a token, a row and a cache position whose
// numbers are the full recompute's; Back puts the state back bit for bit and the sampler gives
// the same token again; Reset returns to the prompt; Play stops at the block size; a refused
// sampling edit keeps the options and says why; the lesson's module appends rows of x from the
// recipe's generator and keeps its earlier rows; a toy model without a next-token head says
// why it cannot write on; the check view's fifth question compares the cache with recomputes.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" // GCC 12 inside Eigen's AVX-512 products
#endif
#include "app_state.h"
#include "experiment.h"
#include "gpt_model.h"
#include "gpt_test_dir.h"
#include "kv_cache.h"
#include "model.h"
#include "session.h"
#include "session_state.h"
#include "state_test_support.h"
#include "views.h"
#include <cstring>
#include <set>
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

std::shared_ptr<const TrainedInput> tiny_gpt(const std::string& text = "The cat sat on the mat, and the cat") {
    return tiny_gpt_input(text);
}

std::shared_ptr<const TrainedInput> toy(const std::string& file, const std::string& text = "") {
    return trained_input(ATTNVIZ_TEST_DATA "/model_view/" + file, text);
}

bool same_rows(const std::vector<Mat>& a, const std::vector<Mat>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!same_bits(a[i], b[i])) return false;
    return true;
}

} // namespace

TEST(Generate, StepAddsATokenARowAndACachePositionEqualToTheFullForward) {
    AppState s = generating(tiny_gpt());
    const GenerateState& g = s.generate;
    ASSERT_TRUE(g.why_not.empty()) << g.why_not;
    ASSERT_EQ(s.kernel, KernelKind::reference);
    const int P = int(shown_model(s)->tokens.size());
    EXPECT_EQ(g.prompt_len, P);
    EXPECT_EQ(int(g.rows.size()), P);
    EXPECT_EQ(g.cache.T, P);
    const Vec before = g.logits;
    request_generate_step(s);
    recompute(s);
    ASSERT_EQ(int(g.tokens.size()), P + 1);
    EXPECT_EQ(int(g.rows.size()), P + 1);
    EXPECT_EQ(g.cache.T, P + 1);
    ASSERT_EQ(g.steps.size(), 1u);
    // Greedy: the argmax of the prompt's last logits.
    EXPECT_EQ(g.tokens.back(), argmax_token(before.data(), int(before.size())));
    // The new row and logits are the full forward's on the longer sequence, bit for bit.
    ModelTrace full;
    gpt_forward(*shown_model(s)->model, g.tokens, KernelKind::reference, false, full);
    Mat want(full.layers[0].H, P + 1);
    for (int h = 0; h < want.rows(); ++h) want.row(h) = full.layers[0].att[size_t(h)].row(P);
    EXPECT_TRUE(same_bits(g.rows.back(), want));
    ASSERT_EQ(g.logits.size(), full.logits.cols());
    EXPECT_EQ(std::memcmp(g.logits.data(), full.logits.row(P).data(), sizeof(float) * size_t(g.logits.size())), 0);
    EXPECT_EQ(g.steps[0].rows_max_abs, 0.0);
    EXPECT_EQ(g.steps[0].logits_max_abs, 0.0);
    EXPECT_EQ(g.cache.bytes(), int64_t(2) * 2 * (P + 1) * 64 * 4);
}

TEST(Generate, BackRestoresThePreviousStateExactlyAndTheSamplerRepeatsItself) {
    AppState s = generating(tiny_gpt());
    GenerateState& g = s.generate;
    SamplingOptions o;
    o.greedy = false;
    o.temperature = 1.5;
    o.seed = 7;
    ASSERT_TRUE(request_sampling(s, o));
    request_generate_step(s);
    recompute(s);
    const std::vector<int> tokens = g.tokens;
    const std::vector<Mat> rows = g.rows;
    const Vec logits = g.logits;
    const std::vector<float> probs = g.probs;
    const int T = g.cache.T, draws = g.draws;
    request_generate_step(s);
    recompute(s);
    const int second = g.tokens.back();
    ASSERT_EQ(g.cache.T, T + 1);
    request_generate_back(s);
    recompute(s);
    EXPECT_EQ(g.tokens, tokens);
    EXPECT_EQ(g.cache.T, T);
    EXPECT_EQ(g.draws, draws);
    EXPECT_TRUE(same_rows(g.rows, rows));
    ASSERT_EQ(g.logits.size(), logits.size());
    EXPECT_EQ(std::memcmp(g.logits.data(), logits.data(), sizeof(float) * size_t(logits.size())), 0);
    EXPECT_EQ(g.probs, probs);
    // The same draw again: the same token.
    request_generate_step(s);
    recompute(s);
    EXPECT_EQ(g.tokens.back(), second);
    // And the cache held after Back is what a fresh prefill of those tokens holds.
    request_generate_back(s);
    recompute(s);
    KvCache fresh;
    KvStepRow last;
    kv_prefill(*shown_model(s)->model, g.tokens, KernelKind::reference, fresh, last);
    for (size_t l = 0; l < fresh.layers.size(); ++l)
        for (size_t h = 0; h < fresh.layers[l].k.size(); ++h) {
            EXPECT_TRUE(same_bits(Mat(g.cache.layers[l].k[h].topRows(T)), Mat(fresh.layers[l].k[h].topRows(T))));
            EXPECT_TRUE(same_bits(Mat(g.cache.layers[l].v[h].topRows(T)), Mat(fresh.layers[l].v[h].topRows(T))));
        }
}

TEST(Generate, ResetReturnsToThePrompt) {
    AppState s = generating(tiny_gpt());
    GenerateState& g = s.generate;
    const std::vector<Mat> rows = g.rows;
    const std::vector<int> prompt = g.tokens;
    for (int i = 0; i < 3; ++i) request_generate_step(s);
    recompute(s);
    ASSERT_EQ(g.tokens.size(), prompt.size() + 3);
    request_generate_reset(s);
    recompute(s);
    EXPECT_EQ(g.tokens, prompt);
    EXPECT_EQ(g.cache.T, int(prompt.size()));
    EXPECT_TRUE(g.steps.empty());
    EXPECT_TRUE(same_rows(g.rows, rows));
    EXPECT_EQ(generate_new_text(s), "");
}

TEST(Generate, PlayStopsAtTheBlockSize) {
    AppState s = generating(toy("induction.safetensors", "a b c d a b"));
    GenerateState& g = s.generate;
    ASSERT_TRUE(g.why_not.empty()) << g.why_not;
    const int block = generation_block_size(*shown_model(s)->model);
    ASSERT_EQ(g.block, block);
    g.play_interval_ms = 0; // a step every frame
    request_generate_play(s, true);
    // Each frame's recompute takes at most one step: bounded by frames, never by time.
    int frames = 0;
    while (g.playing && frames < 4 * block) {
        recompute(s);
        ++frames;
    }
    EXPECT_FALSE(g.playing);
    EXPECT_EQ(int(g.rows.size()), block);
    EXPECT_EQ(int(g.tokens.size()), block);
    EXPECT_NE(g.status.find("block size"), std::string::npos) << g.status;
    // A Step at the block size does nothing and says why.
    request_generate_step(s);
    recompute(s);
    EXPECT_EQ(int(g.tokens.size()), block);
    EXPECT_NE(g.status.find("block size"), std::string::npos) << g.status;
    // The induction model continues the repeated segment: "a b c d a b" -> "c d a b c d ...".
    const std::vector<int>& t = g.tokens;
    int right = 0, n = 0;
    for (int i = g.prompt_len; i < int(t.size()); ++i, ++n) right += t[size_t(i)] == t[size_t(i - 4)] ? 1 : 0;
    EXPECT_GE(right, n * 9 / 10) << generate_new_text(s);
}

TEST(Generate, ARefusedSamplingEditKeepsThePreviousOptionsAndSaysWhy) {
    AppState s = generating(tiny_gpt());
    GenerateState& g = s.generate;
    SamplingOptions o;
    o.greedy = false;
    o.temperature = 0.7;
    o.top_k = 5;
    ASSERT_TRUE(request_sampling(s, o));
    const std::vector<float> probs = g.probs;
    int kept = 0;
    for (float p : probs) kept += p > 0 ? 1 : 0;
    EXPECT_EQ(kept, 5); // top-k 5 reshaped the distribution
    SamplingOptions bad = o;
    bad.temperature = 0;
    EXPECT_FALSE(request_sampling(s, bad));
    EXPECT_EQ(g.options.temperature, 0.7);
    EXPECT_EQ(g.options.top_k, 5);
    EXPECT_EQ(g.probs, probs);
    EXPECT_NE(g.error.find("greedy"), std::string::npos) << g.error;
    // A good edit clears the sentence.
    o.top_k = 0;
    EXPECT_TRUE(request_sampling(s, o));
    EXPECT_TRUE(g.error.empty());
}

TEST(Generate, TheLessonsStepAppendsTheRecipesNextRowAndKeepsEarlierRows) {
    AppState s = lesson_state();
    Config c = lesson_config();
    c.seq_len = 9; // past 8 positions, where every softmax row is summed in 8 lanes
    request_config(s, c, KernelChoice::reference);
    s.screen.view = View::generate;
    recompute(s);
    GenerateState& g = s.generate;
    ASSERT_TRUE(g.why_not.empty()) << g.why_not;
    const std::vector<Mat> rows = g.rows;
    request_generate_step(s);
    request_generate_step(s);
    recompute(s);
    ASSERT_EQ(int(g.rows.size()), 11);
    for (size_t t = 0; t < rows.size(); ++t) EXPECT_TRUE(same_bits(g.rows[t], rows[t])) << t;
    // The new rows are the recipe's generator's next two torch.randn(C) after the replacement row.
    TorchGenerator gen(c.seed);
    gen.skip_draws(4 * uint64_t(c.n_embd) * uint64_t(c.n_embd));
    std::vector<float> skip(size_t(c.seq_len * c.n_embd + c.n_embd));
    gen.randn(skip.data(), c.seq_len * c.n_embd);
    gen.randn(skip.data(), c.n_embd);
    const Experiment e = make_experiment(c);
    Mat x = e.x;
    for (int k = 0; k < 2; ++k) {
        std::vector<float> r = gen.randn(c.n_embd);
        x.conservativeResize(x.rows() + 1, c.n_embd);
        for (int i = 0; i < c.n_embd; ++i) x(x.rows() - 1, i) = r[size_t(i)];
    }
    EXPECT_TRUE(same_bits(g.lesson_x, x));
    // Every kept row is the full forward's on the 11 rows.
    Config all = c;
    all.seq_len = 11;
    Trace tr;
    forward(all, e.weights, x, KernelKind::reference, tr);
    for (int t = 0; t < 11; ++t)
        for (int h = 0; h < tr.H; ++h)
            for (int j = 0; j <= t; ++j) EXPECT_EQ(g.rows[size_t(t)](h, j), tr.att[size_t(h)](t, j)) << t << "," << h << "," << j;
    EXPECT_EQ(g.steps.back().rows_max_abs, 0.0);
    EXPECT_EQ(g.steps.back().rows_max_abs_short, -1.0);
    EXPECT_EQ(g.steps.back().logits_max_abs, 0.0);
    // Back: the row and the generator go back, and the next Step draws the same row again.
    const Mat last = g.rows.back();
    request_generate_back(s);
    recompute(s);
    EXPECT_EQ(int(g.rows.size()), 10);
    EXPECT_EQ(g.lesson_T, 10);
    request_generate_step(s);
    recompute(s);
    EXPECT_TRUE(same_bits(g.rows.back(), last));
    EXPECT_TRUE(same_bits(g.lesson_x, x));
}

TEST(Generate, ALessonWithoutTheCausalMaskAndAToyWithoutANextTokenHeadSayWhy) {
    AppState s = lesson_state();
    Config c = lesson_config();
    c.mask = MaskMode::none;
    request_config(s, c, KernelChoice::reference);
    s.screen.view = View::generate;
    recompute(s);
    EXPECT_NE(s.generate.why_not.find("causal mask"), std::string::npos) << s.generate.why_not;
    request_generate_step(s);
    recompute(s);
    EXPECT_TRUE(s.generate.steps.empty());

    const auto in = toy("both.safetensors");
    AppState t = generating(in);
    EXPECT_EQ(t.generate.why_not, generation_support(*in->model));
    EXPECT_FALSE(t.generate.why_not.empty());
}

TEST(Generate, TheCheckQuestionsDemonstrationGivesTheSameTokensAndEqualLogits) {
    AppState s = lesson_state();
    request_trained_model(s, tiny_gpt());
    s.screen.view = View::check;
    recompute(s);
    show_me(s, 5);
    recompute(s);
    const GenerateDemo& d = s.generate.demo;
    ASSERT_TRUE(d.computed);
    ASSERT_TRUE(d.why_not.empty()) << d.why_not;
    EXPECT_EQ(d.steps, 8);
    EXPECT_EQ(d.cached_tokens, d.full_tokens);
    EXPECT_EQ(d.max_abs_logits, 0.0);
    EXPECT_GT(d.full_ms, 0.0);
    EXPECT_NE(d.sentence.find("the same tokens"), std::string::npos) << d.sentence;
    // The tokens are greedy generation's: the full forward's argmax, one after another.
    std::vector<int> tokens = shown_model(s)->tokens;
    for (int k = 0; k < d.steps; ++k) {
        KvStepRow full;
        full_last_row(*shown_model(s)->model, tokens, KernelKind::reference, full);
        tokens.push_back(argmax_token(full.logits.data(), int(full.logits.size())));
        EXPECT_EQ(d.cached_tokens[size_t(k)], tokens.back()) << k;
    }
}

TEST(GenerateView, RendersInEveryModeAndKeyEightShowsIt) {
    Shot lesson = take_shot("generate_lesson", {"--view", "generate", "--keys", "right,right"});
    ASSERT_EQ(lesson.result.status, 0) << lesson.result.err;
    EXPECT_EQ(lesson.layout["view"], "generate");
    Shot by_key = take_shot("generate_by_key", {"--view", "walk", "--keys", "8,right,right"});
    ASSERT_EQ(by_key.result.status, 0) << by_key.result.err;
    EXPECT_EQ(by_key.layout["view"], "generate");
    EXPECT_LT(differing_fraction(lesson.image, by_key.image), 0.01);
    Shot walk = take_shot("generate_vs_walk", {"--view", "walk"});
    EXPECT_GT(differing_fraction(lesson.image, walk.image), 0.05);
    // Two steps: the picture holds 6 rows, the cache 6 positions, and the earlier rows' line is drawn.
    int pictures = 0, caches = 0, diffs = 0;
    for (const auto& it : lesson.layout["items"]) {
        const std::string kind = it["kind"];
        if (kind == "generate_attention") {
            ++pictures;
            EXPECT_EQ(it["rows"], 6);
        }
        if (kind == "generate_cache") {
            ++caches;
            EXPECT_EQ(it["rows"], 6);
        }
        if (kind == "generate_rows_diff") {
            ++diffs;
            EXPECT_EQ(it["value"], 0.0);
        }
    }
    EXPECT_EQ(pictures, 1);
    EXPECT_EQ(caches, 2);
    EXPECT_EQ(diffs, 1);

    Shot gpt = take_shot("generate_gpt", {"--model", tiny_gpt_dir(true), "--view", "generate", "--keys", "right,right,right"});
    ASSERT_EQ(gpt.result.status, 0) << gpt.result.err;
    int bars = 0;
    for (const auto& it : gpt.layout["items"]) {
        const std::string kind = it["kind"];
        if (kind == "generate_bar") ++bars;
        if (kind == "generate_text") {
            EXPECT_EQ(it["value"], 3.0);
        }
    }
    EXPECT_EQ(bars, 10);
    expect_inside(gpt, "generate (GPT)");
    expect_inside(lesson, "generate (lesson)");
}

// At a projector's size, text size 1 and 2, in every mode: the view's pieces stay inside the
// window and none overlaps another (the view scrolls rather than cuts; what is out of sight
// is not recorded).
TEST(GenerateView, NothingOverlapsOrLeavesTheWindowAt1280x720) {
    const std::vector<std::vector<std::string>> modes = {
        {},
        {"--model", ATTNVIZ_TEST_DATA "/model_view/induction.safetensors"},
        {"--model", tiny_gpt_dir(true)}};
    for (const char* scale : {"1", "2"})
        for (size_t m = 0; m < modes.size(); ++m) {
            std::vector<std::string> args = modes[m];
            args.insert(args.end(), {"--view", "generate", "--keys", "right,right,right", "--size", "1280x720", "--font-scale", scale});
            const std::string what = "mode " + std::to_string(m) + " at text size " + scale;
            Shot s = take_shot("generate_read_" + std::to_string(m) + "_" + scale, args);
            ASSERT_EQ(s.result.status, 0) << what << ": " << s.result.err;
            expect_inside(s, what);
            std::vector<nlohmann::json> items;
            for (const auto& it : s.layout["items"])
                if (it["kind"].get<std::string>().rfind("generate_", 0) == 0) items.push_back(it);
            // At text size 1 the text, the bars (not the lesson's), the picture and the cache are in
            // sight; at 2 the view scrolls, and the times and the check come first.
            std::set<std::string> kinds;
            for (const auto& it : items) kinds.insert(it["kind"].get<std::string>());
            EXPECT_TRUE(kinds.count("generate_rows_diff")) << what;
            if (std::string(scale) == "1") {
                EXPECT_TRUE(kinds.count("generate_attention")) << what;
                EXPECT_TRUE(kinds.count("generate_cache")) << what;
                if (m > 0) {
                    EXPECT_TRUE(kinds.count("generate_bar") && kinds.count("generate_text")) << what;
                }
            }
            for (size_t i = 0; i < items.size(); ++i)
                for (size_t j = i + 1; j < items.size(); ++j) {
                    const double ax = items[i]["x"], ay = items[i]["y"], aw = items[i]["w"], ah = items[i]["h"];
                    const double bx = items[j]["x"], by = items[j]["y"], bw = items[j]["w"], bh = items[j]["h"];
                    const bool overlap = ax < bx + bw - 0.5 && bx < ax + aw - 0.5 && ay < by + bh - 0.5 && by < ay + ah - 0.5;
                    EXPECT_FALSE(overlap) << what << ": " << items[i]["kind"] << " " << items[i]["name"] << " and "
                                          << items[j]["kind"] << " " << items[j]["name"];
                }
        }
}

// A session saved in the Generate view opens in it again (and a page following the teacher
// there is sent that view): the view's name goes through the session file.
TEST(Generate, ASessionKeepsTheGenerateView) {
    AppState s = generating(nullptr);
    const std::string text = session_to_json(to_session(s));
    Session ss;
    std::string error;
    ASSERT_TRUE(parse_session(text, "generate.json", ss, error)) << error;
    EXPECT_EQ(ss.view, "generate");
    AppState t = lesson_state();
    ASSERT_TRUE(apply_session(t, ss, error)) << error;
    EXPECT_EQ(t.screen.view, View::generate);
}

// A session keeps the lesson's generation (and a toy model's) but not a GPT model's, which
// opens again from its own files (source.cpp's session_keeps_generation).
TEST(Generate, ASessionKeepsTheLessonsGenerationButNotAGptModels) {
    AppState gpt = generating(tiny_gpt());
    request_generate_step(gpt);
    recompute(gpt);
    ASSERT_EQ(gpt.generate.steps.size(), 1u);
    EXPECT_FALSE(to_session(gpt).generate.present);
    AppState lesson = generating(nullptr);
    request_generate_step(lesson);
    recompute(lesson);
    ASSERT_EQ(lesson.generate.steps.size(), 1u);
    const Session ss = to_session(lesson);
    EXPECT_TRUE(ss.generate.present);
    EXPECT_EQ(ss.generate.tokens, std::vector<int>{-1}); // one new row of x
}
