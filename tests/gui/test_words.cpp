// test_words.cpp: words as input in the window - T follows the words, a repeated word
// repeats its row of x (in the numbers and on screen), too many words are refused with the
// count and the limit, clearing the text goes back to random x, and a session keeps the words.
#include "app_state.h"
#include "state_test_support.h"
#include "gui_test_support.h"
#include "inputs.h"
#include "text_input.h"
#include <cstring>
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

TEST(Words, TextSetsTAndRepeatsTheRowOfARepeatedWord) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(set_text(s, "the cat  saw\tthe cat", error)) << error;
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(s.config.applied.seq_len, 5);
    ASSERT_EQ(s.tokens.applied, (std::vector<std::string>{"the", "cat", "saw", "the", "cat"}));
    ASSERT_EQ(s.run.trace.x.rows(), 5);
    EXPECT_TRUE(s.run.trace.x.row(0) == s.run.trace.x.row(3)); // "the"
    EXPECT_TRUE(s.run.trace.x.row(1) == s.run.trace.x.row(4)); // "cat"
    EXPECT_FALSE(s.run.trace.x.row(0) == s.run.trace.x.row(1));
    EXPECT_FALSE(s.run.trace.x.row(1) == s.run.trace.x.row(2));
    // The same x as the core's recipe for words (what trace --text computes).
    Experiment e;
    ASSERT_TRUE(make_text_experiment(s.config.applied, s.tokens.applied, nullptr, e, error)) << error;
    EXPECT_TRUE(same_bits(s.run.experiment.x, e.x));
    EXPECT_NE(s.status.find("5 words"), std::string::npos) << s.status;
}

TEST(Words, TooManyWordsAreRefusedWithTheCountAndTheLimit) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(set_text(s, "a b c", error));
    recompute(s);
    const int limit = max_words(s);
    ASSERT_GT(limit, 3);
    ASSERT_LT(limit, max_seq_len + 1);
    std::string many;
    for (int i = 0; i <= limit; ++i) many += "w" + std::to_string(i % 7) + " ";
    EXPECT_FALSE(set_text(s, many, error));
    EXPECT_NE(error.find(std::to_string(limit + 1) + " words"), std::string::npos) << error;
    EXPECT_NE(error.find(std::to_string(limit)), std::string::npos) << error;
    EXPECT_NE(s.error.find("Kept"), std::string::npos) << s.error;
    recompute(s);
    EXPECT_EQ(s.config.applied.seq_len, 3);
    EXPECT_EQ(s.tokens.applied.size(), 3u);
    // Exactly the limit is taken.
    many.clear();
    for (int i = 0; i < limit; ++i) many += "w" + std::to_string(i % 7) + " ";
    EXPECT_TRUE(set_text(s, many, error)) << error;
}

TEST(Words, ClearingTheTextGoesBackToRandomXAtTheSameT) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(set_text(s, "one two three four five six", error));
    recompute(s);
    ASSERT_EQ(s.config.applied.seq_len, 6);
    ASSERT_TRUE(set_text(s, "   ", error));
    recompute(s);
    EXPECT_TRUE(s.tokens.applied.empty());
    EXPECT_EQ(s.config.applied.seq_len, 6);
    EXPECT_TRUE(same_bits(s.run.experiment.x, make_experiment(s.config.applied).x));
}

TEST(Words, TIsFixedByTheWordsUntilTheTextIsCleared) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(set_text(s, "the cat saw", error));
    recompute(s);
    Config c = s.config.applied;
    c.seq_len = 7;
    request_config(s, c, KernelChoice::reference);
    recompute(s);
    EXPECT_EQ(s.config.applied.seq_len, 3);
    EXPECT_NE(s.error.find("T follows the text"), std::string::npos) << s.error;
    EXPECT_EQ(s.tokens.applied.size(), 3u);
    // Other edits keep the words.
    c = s.config.applied;
    c.seed = 5;
    request_config(s, c, KernelChoice::reference);
    recompute(s);
    EXPECT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(s.tokens.applied.size(), 3u);
    EXPECT_EQ(s.config.applied.seed, 5u);
}

TEST(Words, LabelsSayTheWord) {
    const std::vector<std::string> w{"the", "extraordinarily", "cat"};
    EXPECT_EQ(position_label(w, 0), "0 the");
    EXPECT_EQ(position_label({}, 2), "2");
    EXPECT_EQ(position_word(w, 1, 6), "extra…");
    EXPECT_EQ(position_label(w, 1, 6), "1 extra…");
    EXPECT_EQ(position_word(w, 5), "");
}

TEST(WordsWindow, TextChangesThePictureAndRepeatedWordsLookTheSame) {
    Shot plain = take_shot("words_plain", {"--view", "scores"});
    Shot words = take_shot("words_text", {"--text", "the cat saw the cat", "--view", "scores"});
    ASSERT_EQ(plain.result.status, 0) << plain.result.err;
    ASSERT_EQ(words.result.status, 0) << words.result.err;
    EXPECT_GT(differing_fraction(plain.image, words.image), 0.02);
    auto probs = words.items("heatmap", "probs", 0);
    ASSERT_EQ(probs.size(), 1u);
    EXPECT_EQ(probs[0]["rows"], 5);
    EXPECT_EQ(probs[0]["cols"], 5);

    // The shape walk's first step shows x: rows of the same word have the same colours.
    Shot x = take_shot("words_x", {"--text", "the cat saw the cat", "--step", "0"});
    ASSERT_EQ(x.result.status, 0) << x.result.err;
    auto hm = x.items("heatmap", "x");
    ASSERT_EQ(hm.size(), 1u);
    ASSERT_EQ(hm[0]["rows"], 5);
    int differ_12 = 0;
    for (int c = 0; c < 8; ++c) {
        int x1 = 0, y1 = 0, x4 = 0, y4 = 0, x2 = 0, y2 = 0;
        ASSERT_TRUE(cell_point(hm[0], 1, c, 0.15, 0.15, x1, y1));
        ASSERT_TRUE(cell_point(hm[0], 4, c, 0.15, 0.15, x4, y4));
        ASSERT_TRUE(cell_point(hm[0], 2, c, 0.15, 0.15, x2, y2));
        const Rgb a = x.image.at(x1, y1), b = x.image.at(x4, y4), d = x.image.at(x2, y2);
        EXPECT_TRUE(a.r == b.r && a.g == b.g && a.b == b.b) << "channel " << c;
        differ_12 += !(a.r == d.r && a.g == d.g && a.b == d.b);
    }
    EXPECT_GT(differ_12, 0);
}

TEST(WordsWindow, SessionWithWordsGivesTheSamePicture) {
    const std::string dir = temp_dir(), file = dir + "/words.json";
    RunResult a = run_headless({"--text", "the cat saw the cat", "--view", "causality", "--perturb", "2", "--seed", "4",
                                "--screenshot", dir + "/words_a.png", "--save-session", file});
    ASSERT_EQ(a.status, 0) << a.err;
    RunResult b = run_headless({"--open", file, "--screenshot", dir + "/words_b.png"});
    ASSERT_EQ(b.status, 0) << b.err;
    const Image ia = load_png(dir + "/words_a.png"), ib = load_png(dir + "/words_b.png");
    ASSERT_GT(ia.w, 0);
    ASSERT_EQ(ia.w, ib.w);
    ASSERT_EQ(ia.h, ib.h);
    EXPECT_EQ(ia.rgba, ib.rgba);
    // Not the same picture as the same state without words.
    RunResult c = run_headless({"--seq-len", "5", "--view", "causality", "--perturb", "2", "--seed", "4", "--screenshot",
                                dir + "/words_c.png"});
    ASSERT_EQ(c.status, 0) << c.err;
    EXPECT_GT(differing_fraction(ia, load_png(dir + "/words_c.png")), 0.01);
}

TEST(WordsWindow, TooManyWordsOnTheCommandLineIsOneSentence) {
    // One word more than the window holds at the lesson's C and H.
    AppState s;
    s.config.edit = lesson_config();
    const int limit = max_words(s);
    ASSERT_LT(limit, max_seq_len);
    std::string many;
    for (int i = 0; i <= limit; ++i) many += "w ";
    RunResult r = run_direct({"--text", many, "--screenshot", temp_dir() + "/never.png"}, false);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(std::to_string(limit + 1) + " words"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(std::to_string(limit) + " positions"), std::string::npos) << r.err;
}
