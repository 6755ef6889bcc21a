// Words as input: the embedding table matches PyTorch's recipe (tests/data/text_examples.json,
// made by scripts/gen_text_reference.py), and a repeated word gives an identical input row.
#include "attention.h"
#include "text_input.h"
#include <gtest/gtest.h>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace attnviz;

static uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

TEST(TextInput, TokenizeSplitsOnAnyWhitespace) {
    EXPECT_EQ(tokenize("  the cat\tsaw\n\nthe  cat "), (std::vector<std::string>{"the", "cat", "saw", "the", "cat"}));
    EXPECT_TRUE(tokenize(" \t\n").empty());
    std::vector<std::string> vocab;
    std::vector<int> ids;
    build_vocab(tokenize("b a b c a"), vocab, ids);
    EXPECT_EQ(vocab, (std::vector<std::string>{"b", "a", "c"}));
    EXPECT_EQ(ids, (std::vector<int>{0, 1, 0, 2, 1}));
}

TEST(TextInput, MatchesPyTorchBitForBit) {
    std::ifstream f(std::string(ATTNVIZ_TEST_DATA) + "/text_examples.json");
    ASSERT_TRUE(f) << "missing tests/data/text_examples.json";
    nlohmann::json j = nlohmann::json::parse(f);
    ASSERT_GE(j["cases"].size(), 3u);
    for (const auto& c : j["cases"]) {
        Config cfg;
        cfg.seed = c["seed"].get<uint64_t>();
        cfg.n_embd = c["n_embd"].get<int>();
        cfg.n_head = c["n_head"].get<int>();
        std::vector<std::string> tokens = tokenize(c["text"].get<std::string>());
        ASSERT_EQ(tokens, c["tokens"].get<std::vector<std::string>>());
        Experiment e;
        std::string error;
        ASSERT_TRUE(make_text_experiment(cfg, tokens, nullptr, e, error)) << error;
        ASSERT_EQ(e.config.seq_len, int(tokens.size()));
        const auto& x = c["x"];
        ASSERT_EQ(x.size(), size_t(e.x.size()));
        for (size_t i = 0; i < x.size(); ++i)
            ASSERT_EQ(bits(e.x.data()[i]), bits(std::strtof(x[i].get<std::string>().c_str(), nullptr)))
                << c["text"] << " x[" << i << "]";
        const auto& row = c["perturbed_row"];
        for (size_t i = 0; i < row.size(); ++i)
            ASSERT_EQ(bits(e.replacement[Eigen::Index(i)]), bits(std::strtof(row[i].get<std::string>().c_str(), nullptr)))
                << c["text"] << " perturbed_row[" << i << "]";
    }
}

TEST(TextInput, RepeatedWordGivesIdenticalRowsAndAttention) {
    Config cfg;
    Experiment e;
    std::string error;
    ASSERT_TRUE(make_text_experiment(cfg, tokenize("the cat saw the cat"), nullptr, e, error)) << error;
    for (int c = 0; c < cfg.n_embd; ++c) {
        EXPECT_EQ(bits(e.x(0, c)), bits(e.x(3, c))) << "the";
        EXPECT_EQ(bits(e.x(1, c)), bits(e.x(4, c))) << "cat";
    }
    EXPECT_NE(e.x.row(0), e.x.row(1));
    // Same word, same q, k and v rows in every head.
    Trace tr;
    forward(e.config, e.weights, e.x, KernelKind::reference, tr);
    for (int c = 0; c < 3 * cfg.n_embd; ++c) EXPECT_EQ(bits(tr.qkv(0, c)), bits(tr.qkv(3, c)));
}

TEST(TextInput, SameSeedSameWeightsAsTheLesson) {
    Config cfg;
    Experiment words, lesson = make_experiment(cfg);
    std::string error;
    ASSERT_TRUE(make_text_experiment(cfg, tokenize("a b c"), nullptr, words, error)) << error;
    EXPECT_EQ(words.weights.c_attn.weight, lesson.weights.c_attn.weight);
    EXPECT_EQ(words.weights.c_proj.weight, lesson.weights.c_proj.weight);
}

TEST(TextInput, BadTextGetsOneSentence) {
    Config cfg;
    Experiment e;
    std::string error;
    EXPECT_FALSE(make_text_experiment(cfg, {}, nullptr, e, error));
    EXPECT_NE(error.find("no words"), std::string::npos) << error;
    std::vector<std::string> many(size_t(max_seq_len) + 1, "w");
    EXPECT_FALSE(make_text_experiment(cfg, many, nullptr, e, error));
    EXPECT_NE(error.find(std::to_string(max_seq_len + 1) + " words"), std::string::npos) << error;
    cfg.n_head = 3;
    EXPECT_FALSE(make_text_experiment(cfg, {"a"}, nullptr, e, error));
    EXPECT_NE(error.find("not divisible"), std::string::npos) << error;
}
