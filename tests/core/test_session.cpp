// Session files: a round trip keeps every field; bad files are rejected with a sentence
// that names the file, and leave the caller's session untouched.
#include "session.h"
#include <gtest/gtest.h>
#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace attnviz;

namespace {

std::string temp_path(const char* name) {
    return std::string(::testing::TempDir()) + "/attnviz_session_" + std::to_string(getpid()) + "_" + name;
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

Session sample() {
    Session s;
    s.config.seed = 4294967373ull; // above 2^32: must survive as a 64-bit integer
    s.config.n_embd = 12;
    s.config.n_head = 3;
    s.config.mask = MaskMode::off_by_one;
    s.config.scale = ScaleMode::n_embd;
    s.tokens = {"the", "cat", "saw", "the", "cat"};
    s.config.seq_len = 5;
    s.kernel = "fast";
    s.view = "causality";
    s.step = 7;
    s.perturb = 3;
    s.strength = 0.375;
    s.theme = "high-contrast";
    s.font_scale = 2.0;
    s.answers_shown = {0, 3};
    return s;
}

} // namespace

TEST(Session, RoundTripKeepsEveryField) {
    std::string path = temp_path("round.json"), error;
    Session a = sample();
    ASSERT_TRUE(write_session(path, a, error)) << error;
    Session b;
    ASSERT_TRUE(read_session(path, b, error)) << error;
    EXPECT_EQ(b.config.seed, a.config.seed);
    EXPECT_EQ(b.config.n_embd, 12);
    EXPECT_EQ(b.config.n_head, 3);
    EXPECT_EQ(b.config.seq_len, 5);
    EXPECT_EQ(b.config.mask, MaskMode::off_by_one);
    EXPECT_EQ(b.config.scale, ScaleMode::n_embd);
    EXPECT_EQ(b.tokens, a.tokens);
    EXPECT_EQ(b.kernel, "fast");
    EXPECT_EQ(b.view, "causality");
    EXPECT_EQ(b.step, 7);
    EXPECT_EQ(b.perturb, 3);
    EXPECT_EQ(b.strength, 0.375);
    EXPECT_EQ(b.theme, "high-contrast");
    EXPECT_EQ(b.font_scale, 2.0);
    EXPECT_EQ(b.answers_shown, (std::vector<int>{0, 3}));
    EXPECT_EQ(session_to_json(a), session_to_json(b));
    std::remove(path.c_str());
}

// A session saved before answers_shown, and one with no answer shown, show none; such a
// session's file has no answers_shown at all (older attnviz reads it the same).
TEST(Session, AnswersShownIsOptional) {
    Session s;
    std::string error;
    ASSERT_TRUE(parse_session(R"({"attnviz_session": 1})", "old.json", s, error)) << error;
    EXPECT_TRUE(s.answers_shown.empty());
    EXPECT_EQ(session_to_json(s).find("answers_shown"), std::string::npos);
}

TEST(Session, TokensSetTheSequenceLength) {
    Session s;
    std::string error;
    ASSERT_TRUE(parse_session(R"({"attnviz_session": 1, "seq_len": 9, "tokens": ["a", "b", "a"]})", "t.json", s, error))
        << error;
    EXPECT_EQ(s.config.seq_len, 3);
}

// --seed takes every value from 0 to 2^64 - 1; a session must bring back the largest unchanged.
TEST(Session, LargestSeedSurvivesARoundTrip) {
    std::string path = temp_path("seed.json"), error;
    Session a = sample();
    a.config.seed = UINT64_MAX;
    ASSERT_TRUE(write_session(path, a, error)) << error;
    Session b;
    ASSERT_TRUE(read_session(path, b, error)) << error;
    EXPECT_EQ(b.config.seed, UINT64_MAX);
    std::remove(path.c_str());
}

TEST(Session, BadFilesAreRejectedWithTheFileNameAndLeaveStateAlone) {
    struct Case {
        const char* text;
        const char* expect; // a piece of the sentence
    } cases[] = {
        {"", "not valid JSON"},
        {"hello, world", "not valid JSON"},
        {"[1, 2, 3]", "no \"attnviz_session\""},
        {R"({"n_embd": 8})", "no \"attnviz_session\""},
        {R"({"attnviz_session": 2})", "newer attnviz"},
        {R"({"attnviz_session": "1"})", "whole version number"},
        {R"({"attnviz_session": 1, "n_embd": 10, "n_head": 3})", "not divisible by n_head 3"},
        {R"({"attnviz_session": 1, "n_embd": -4})", "\"n_embd\" is -4"},
        {R"({"attnviz_session": 1, "n_embd": "eight"})", "must be a whole number"},
        {R"({"attnviz_session": 1, "seed": -1})", "\"seed\" is -1"},
        {R"({"attnviz_session": 1, "seed": 1.5})", "\"seed\" must be a whole number"},
        {R"({"attnviz_session": 1, "mask": "diagonal"})", "mask 'diagonal' is not known"},
        {R"({"attnviz_session": 1, "view": "movie"})", "view \"movie\" is not known"},
        {R"({"attnviz_session": 1, "theme": "pink"})", "theme \"pink\" is not known"},
        {R"({"attnviz_session": 1, "strength": 1.5})", "\"strength\" is 1.5"},
        {R"({"attnviz_session": 1, "font_scale": 0})", "\"font_scale\" is 0"},
        {R"({"attnviz_session": 1, "perturb": 4})", "perturb 4 is outside 0..3"},
        {R"({"attnviz_session": 1, "tokens": [1, 2]})", "non-empty strings"},
        {R"({"attnviz_session": 1, "kernel": "gpu"})", "kernel 'gpu' is not known"},
        {R"({"attnviz_session": 1, "answers_shown": [0, -1]})", "\"answers_shown\" must be a list"},
        {R"({"attnviz_session": 1, "answers_shown": 2})", "\"answers_shown\" must be a list"},
        {R"({"attnviz_session": 1, "answers_shown": ["1"]})", "\"answers_shown\" must be a list"},
    };
    for (const Case& c : cases) {
        Session s = sample();
        std::string before = session_to_json(s), error;
        EXPECT_FALSE(parse_session(c.text, "bad.json", s, error)) << c.text;
        EXPECT_NE(error.find("bad.json"), std::string::npos) << error;
        EXPECT_NE(error.find(c.expect), std::string::npos) << "for " << c.text << " got: " << error;
        EXPECT_EQ(error.find('\n'), std::string::npos) << error;
        EXPECT_EQ(session_to_json(s), before) << "state changed by a rejected file: " << c.text;
    }
}

TEST(Session, MissingPathsDirectoriesAndHugeFiles) {
    Session s;
    std::string error;
    EXPECT_FALSE(read_session(temp_path("does-not-exist.json"), s, error));
    EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
    EXPECT_FALSE(read_session(::testing::TempDir(), s, error));
    EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
    std::string big = temp_path("big.json");
    write_text(big, std::string(2 << 20, ' '));
    EXPECT_FALSE(read_session(big, s, error));
    EXPECT_NE(error.find("too large"), std::string::npos) << error;
    std::remove(big.c_str());
}

TEST(Session, FailedWriteLeavesNoHalfFile) {
    std::string error;
    std::string dir_as_file = ::testing::TempDir(); // a directory cannot be replaced by a file
    EXPECT_FALSE(write_session(dir_as_file, sample(), error));
    EXPECT_FALSE(error.empty());
    std::string nowhere = temp_path("no/such/folder/s.json");
    EXPECT_FALSE(write_session(nowhere, sample(), error));
    EXPECT_NE(error.find("folder"), std::string::npos) << error;
}

// The Generate view's generation: its tokens, what each took of the sampler and the options
// come back exactly; a session without it (saved before it) has none; bad ones are refused.
TEST(Session, GenerationRoundTripsAndIsOptional) {
    Session a = sample();
    a.generate.present = true;
    a.generate.options.greedy = false;
    a.generate.options.temperature = 0.7;
    a.generate.options.top_k = 5;
    a.generate.options.top_p = 0.9;
    a.generate.options.seed = 18446744073709551615ull;
    a.generate.tokens = {12, 0, 49999};
    a.generate.sampled = {true, false, true};
    a.generate.probs = {0.25f, 1.f / 3.f, 1e-7f};
    Session b;
    std::string error;
    ASSERT_TRUE(parse_session(session_to_json(a), "gen.json", b, error)) << error;
    ASSERT_TRUE(b.generate.present);
    EXPECT_FALSE(b.generate.options.greedy);
    EXPECT_EQ(b.generate.options.temperature, 0.7);
    EXPECT_EQ(b.generate.options.top_k, 5);
    EXPECT_EQ(b.generate.options.top_p, 0.9);
    EXPECT_EQ(b.generate.options.seed, a.generate.options.seed);
    EXPECT_EQ(b.generate.tokens, a.generate.tokens);
    EXPECT_EQ(b.generate.sampled, a.generate.sampled);
    EXPECT_EQ(b.generate.probs, a.generate.probs); // floats through JSON, bit for bit
    EXPECT_EQ(b.generate.draws(), 2);
    EXPECT_EQ(session_to_json(a), session_to_json(b));

    Session old;
    ASSERT_TRUE(parse_session(R"({"attnviz_session": 1, "view": "generate"})", "old.json", old, error)) << error;
    EXPECT_FALSE(old.generate.present);
    EXPECT_EQ(session_to_json(old).find("\"generate\":"), std::string::npos);

    const char* bad[][2] = {
        {R"({"attnviz_session": 1, "generate": 3})", "\"generate\" must be an object"},
        {R"({"attnviz_session": 1, "generate": {"greedy": false, "temperature": 0}})", "temperature"},
        {R"({"attnviz_session": 1, "generate": {"greedy": false, "top_p": 1.5}})", "top-p"},
        {R"({"attnviz_session": 1, "generate": {"tokens": [1, 2], "sampled": [true], "probs": [0.5, 0.5]}})", "one each"},
        {R"({"attnviz_session": 1, "generate": {"tokens": [-2], "sampled": [true], "probs": [0.5]}})", "one each"},
        {R"({"attnviz_session": 1, "generate": {"draws": 2, "tokens": [1], "sampled": [true], "probs": [0.5]}})",
         "must agree"},
    };
    for (const auto& c : bad) {
        Session s = sample();
        EXPECT_FALSE(parse_session(c[0], "bad.json", s, error)) << c[0];
        EXPECT_NE(error.find(c[1]), std::string::npos) << "for " << c[0] << " got: " << error;
        EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    }
}
