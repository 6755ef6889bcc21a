// test_gpt_window.cpp: the window on a whole GPT model (attnviz --model DIR), on the tiny
// GPT-2 of tests/data/gpt_tiny with its cut tokenizer: every view opens (--screenshot) with
// the tokens as text, inside 1280 x 720 at text sizes 1 and 2; --layer shows another layer's
// pixels; the causality table reads exactly 0.0 before p in every layer; bad paths, tokens
// and options are one sentence and exit status 2; GPT-2 small's shapes open on 1024 tokens.
#include "../core/gpt_test_util.h"
#include "gpt_test_dir.h"
#include "gui_test_support.h"
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace attnviz_gui_test;

namespace {

const std::string text = "The cat sat on the mat, and the cat saw it.";


} // namespace

TEST(GptWindow, EveryViewOpensOnTheTokensAsTextAtBothTextSizes) {
    const std::string dir = tiny_gpt_dir(true);
    for (const char* scale : {"1", "2"})
        for (const char* v : {"walk", "qkv", "scores", "causality", "check", "model"}) {
            const std::string what = std::string(v) + " at text size " + scale;
            Shot s = take_shot(std::string("gpt_") + v + "_" + scale,
                               {"--model", dir, "--text", text, "--view", v, "--size", "1280x720", "--font-scale", scale});
            ASSERT_EQ(s.result.status, 0) << what << ": " << s.result.err;
            EXPECT_GT(s.image.distinct_colours(), 100) << what;
            ASSERT_TRUE(s.layout.contains("trained")) << what;
            EXPECT_EQ(s.layout["trained"]["task"], "gpt") << what;
            EXPECT_EQ(s.layout["trained"]["n_layer"], 2) << what;
            const std::vector<std::string> tokens = s.layout["trained"]["tokens"];
            ASSERT_GE(tokens.size(), 10u) << what;
            EXPECT_EQ(tokens[0], "The") << what;
            EXPECT_EQ(tokens[1].rfind("·", 0), 0u) << what << ": " << tokens[1]; // " c" of " cat", its space shown
            EXPECT_EQ(s.layout["config"]["n_embd"], 64) << what;
            EXPECT_EQ(s.layout["config"]["seq_len"], int(tokens.size())) << what;
            expect_inside(s, what);
        }
}

TEST(GptWindow, TheLayerOptionShowsAnotherLayer) {
    const std::string dir = tiny_gpt_dir(true);
    Shot a = take_shot("gpt_layer0", {"--model", dir, "--text", text, "--view", "scores", "--layer", "0"});
    Shot b = take_shot("gpt_layer1", {"--model", dir, "--text", text, "--view", "scores", "--layer", "1"});
    ASSERT_EQ(a.result.status, 0) << a.result.err;
    ASSERT_EQ(b.result.status, 0) << b.result.err;
    EXPECT_EQ(a.layout["trained"]["layer"], 0);
    EXPECT_EQ(b.layout["trained"]["layer"], 1);
    EXPECT_GT(differing_fraction(a.image, b.image), 0.01);
    // The keys , and . pick the layer too.
    Shot k = take_shot("gpt_layer_key", {"--model", dir, "--text", text, "--view", "scores", "--keys", "period"});
    ASSERT_EQ(k.result.status, 0) << k.result.err;
    EXPECT_EQ(k.layout["trained"]["layer"], 1);
}

TEST(GptWindow, CausalityTableIsExactlyZeroBeforePInEveryLayer) {
    const std::string dir = tiny_gpt_dir(true);
    for (const char* scale : {"1", "2"}) {
        Shot s = take_shot(std::string("gpt_causality_") + scale, {"--model", dir, "--text", text, "--view", "causality",
                                                                  "--perturb", "5", "--size", "1280x720", "--font-scale", scale});
        ASSERT_EQ(s.result.status, 0) << s.result.err;
        ASSERT_TRUE(s.layout.contains("causality")) << scale;
        const nlohmann::json& c = s.layout["causality"];
        EXPECT_EQ(c["p"], 5);
        ASSERT_EQ(c["resid_post"].size(), 2u);
        for (const nlohmann::json& row : c["resid_post"]) {
            for (int t = 0; t < 5; ++t) EXPECT_EQ(row[size_t(t)].get<double>(), 0.0) << t;
            EXPECT_GT(row[5].get<double>(), 0.0);
        }
        for (int t = 0; t < 5; ++t) EXPECT_EQ(c["logits"][size_t(t)].get<double>(), 0.0) << t;
        const std::vector<nlohmann::json> table = s.items("table", "causality");
        ASSERT_EQ(table.size(), 1u) << scale;
        EXPECT_EQ(table[0]["rows"], 3); // two layers and the logits
        EXPECT_GE(int(table[0]["ncols"]), 6) << scale;
        expect_inside(s, std::string("causality at text size ") + scale);
    }
}

TEST(GptWindow, IdsWithoutATokenizerAndTheReplacementOption) {
    Shot s = take_shot("gpt_ids", {"--model", tiny_gpt_dir(false), "--tokens", "1,500,2,999,42", "--view", "causality",
                                   "--perturb", "2", "--replace", "7"});
    ASSERT_EQ(s.result.status, 0) << s.result.err;
    EXPECT_EQ(s.layout["trained"]["tokens"], (std::vector<std::string>{"#1", "#500", "#2", "#999", "#42"}));
    EXPECT_EQ(s.layout["causality"]["new_token"], 7);
}

TEST(GptWindow, BadModelsTokensAndOptionsAreOneSentenceAndStatus2) {
    const std::string tok = tiny_gpt_dir(true), bare = tiny_gpt_dir(false);
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--model", "/nonexistent/gpt2"}, "/nonexistent/gpt2"},
        {{"--model", bare, "--text", "the cat"}, "needs its tokenizer"},
        {{"--model", bare, "--tokens", "1,1000"}, "1000"},
        {{"--model", tok, "--text", text, "--tokens", "1,2"}, "not both"},
        {{"--model", tok, "--layer", "2"}, "--layer"},
        {{"--model", tok, "--perturb", "99"}, "--perturb"},
        {{"--model", tok, "--replace", "3"}, "needs --perturb"},
        {{"--model", tok, "--seed", "3"}, "--seed"},
        {{"--tokens", "1,2"}, "needs --model"},
        {{"--model", tok, "--weights", tok + "/model.safetensors"}, "give one of them"},
    };
    for (const auto& [args, words] : cases) {
        const RunResult r = run_direct(args, true);
        std::string all;
        for (const std::string& a : args) all += a + " ";
        EXPECT_EQ(r.status, 2) << all << r.err;
        EXPECT_EQ(r.err_lines(), 1) << all << r.err;
        EXPECT_NE(r.err.find(words), std::string::npos) << all << r.err;
    }
    std::string long_text;
    for (int i = 0; i < 80; ++i) long_text += " cat";
    const RunResult r = run_direct({"--model", tok, "--text", long_text}, true);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("block size of 64"), std::string::npos) << r.err;
}

// GPT-2 small's real shapes (random weights, written here in the Hub's Conv1D layout) on its
// whole context of 1024 tokens: the window opens it (compact, gpt_model.h) in the Model view
// and in the causality view with a token changed, within its cap. docs/models.md has the
// peak RSS and layer switch times of these runs (scripts/bench_gpt.py --window). Left out under
// the sanitizers, where a 1024-token forward through 12 layers takes minutes.
TEST(GptWindow, Gpt2SmallShapesOpenOnTheirWhole1024TokenContext) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "a GPT-2 small forward at T = 1024 takes minutes under the sanitizers";
#endif
    namespace fs = std::filesystem;
    const std::string dir = temp_dir() + "/gpt2_shapes";
    fs::create_directories(dir);
    {
        attnviz::ModelConfig c;
        c.arch = attnviz::Arch::gpt;
        c.n_layer = 12, c.n_head = 12, c.n_embd = 768, c.vocab = 50257, c.seq_len = 1024;
        c.bias = true;
        c.gelu = attnviz::Gelu::tanh;
        attnviz::test::GptTensors g = attnviz::test::gpt_tensors(attnviz::random_gpt(c, 5), true, "");
        g.meta = {{"format", "pt"}};
        ASSERT_TRUE(g.write(dir + "/model.safetensors"));
        std::ofstream(dir + "/config.json") << R"({"model_type": "gpt2", "activation_function": "gelu_new", "n_layer": 12,
            "n_head": 12, "n_embd": 768, "vocab_size": 50257, "n_positions": 1024})";
    }
    std::string ids;
    for (int t = 0; t < 1024; ++t) ids += (t ? "," : "") + std::to_string((int64_t(t) * 7919 + 13) % 50257);
    for (const char* v : {"model", "causality"}) {
        Shot s = take_shot(std::string("gpt2_1024_") + v,
                           {"--model", dir, "--tokens", ids, "--view", v, "--perturb", "600", "--layer", "7"});
        ASSERT_EQ(s.result.status, 0) << v << ": " << s.result.err;
        EXPECT_EQ(s.layout["trained"]["task"], "gpt") << v;
        EXPECT_EQ(s.layout["trained"]["n_layer"], 12) << v;
        EXPECT_EQ(s.layout["trained"]["layer"], 7) << v;
        EXPECT_EQ(s.layout["config"]["seq_len"], 1024) << v;
        EXPECT_GT(s.image.distinct_colours(), 100) << v;
        expect_inside(s, v);
    }
    fs::remove_all(dir);
}
