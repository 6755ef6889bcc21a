// attnviz patch and trace --logit-lens on the tiny GPT of tests/data/gpt_tiny: the JSON's
// shape, the text output, --text through a tokenizer beside the model, the warning on a small
// gap, and every bad input.
#include "cut_tokenizer.h"
#include "run_attnviz.h"
#include <filesystem>
#include <fstream>

using attnviz_test::expect_usage_error;
using attnviz_test::run_attnviz;
using attnviz_test::run_json;
using attnviz_test::TempDir;
using json = nlohmann::json;

namespace {

const std::string gpt2_dir = ATTNVIZ_TEST_DATA "/gpt_tiny/gpt2";
const std::string clean_ids = "906,663,449,769,22,381,95,144,335,287";
const std::string corrupt_ids = "906,663,21,769,22,381,95,144,335,287"; // position 2 differs

std::vector<std::string> patch_args(std::vector<std::string> more) {
    std::vector<std::string> a{"patch", "--model", gpt2_dir, "--clean-tokens", clean_ids, "--corrupt-tokens",
                               corrupt_ids, "--answer-token", "708", "--wrong-token", "9"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

// The tiny model's files and GPT-2's tokenizer cut to its 1000 entries (cut_tokenizer.h).
void tiny_model_with_tokenizer(const std::string& dir) {
    for (const char* f : {"model.safetensors", "config.json"})
        std::filesystem::copy_file(gpt2_dir + "/" + f, dir + "/" + f);
    attnviz_test::write_cut_tokenizer(dir);
}

void expect_table(const json& t, size_t rows, size_t cols) {
    ASSERT_TRUE(t.is_array());
    ASSERT_EQ(t.size(), rows);
    for (const json& r : t) {
        ASSERT_EQ(r.size(), cols);
        for (const json& v : r) EXPECT_TRUE(v.is_number());
    }
}

} // namespace

TEST(Patch, JsonHoldsBothTablesAndTheLogitDifferences) {
    const json j = run_json(patch_args({"--json"}));
    ASSERT_TRUE(j.is_object());
    EXPECT_TRUE(j["clean_ld"].is_number());
    EXPECT_TRUE(j["corrupt_ld"].is_number());
    EXPECT_NE(j["clean_ld"].get<double>(), j["corrupt_ld"].get<double>());
    EXPECT_GE(j["patch_ms"].get<double>(), 0.0);
    expect_table(j["resid"], 2, 10); // L x T
    expect_table(j["heads"], 2, 4);  // L x H
    // Layer 0's input differs at position 2 alone: that patch is the clean run, the others
    // change nothing.
    for (int t = 0; t < 10; ++t) {
        if (t == 2) {
            EXPECT_NEAR(j["resid"][0][t].get<double>(), 1.0, 1e-6);
        } else {
            EXPECT_EQ(j["resid"][0][t].get<double>(), 0.0) << "position " << t;
        }
    }
    EXPECT_EQ(j.size(), 5u);
}

TEST(Patch, WhatLeavesOutTheOtherTable) {
    const json resid = run_json(patch_args({"--json", "--what", "resid"}));
    EXPECT_TRUE(resid.contains("resid"));
    EXPECT_FALSE(resid.contains("heads"));
    const json heads = run_json(patch_args({"--json", "--what", "heads", "--kernel", "fast"}));
    EXPECT_FALSE(heads.contains("resid"));
    expect_table(heads["heads"], 2, 4);
}

TEST(Patch, TextOutputIsATable) {
    const attnviz_test::RunResult r = run_attnviz(patch_args({}));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("clean logit difference"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("corrupted logit difference"), std::string::npos);
    EXPECT_NE(r.out.find("     pos 9"), std::string::npos);
    EXPECT_NE(r.out.find("    head 3"), std::string::npos);
    EXPECT_NE(r.out.find("28 patches"), std::string::npos); // 2 x 10 + 2 x 4
}

TEST(Patch, TextPromptsAndAnswersGoThroughTheTokenizer) {
    TempDir d;
    tiny_model_with_tokenizer(d.path);
    // 28 tokens each with the cut vocabulary; " M" and " J" are one token each (337, 449).
    const std::string clean = "When Mary and John went to the store, John gave a drink to";
    const std::string corrupt = "When John and Mary went to the store, John gave a drink to";
    // The tiny random model hardly tells them apart: the tables are computed, with a warning.
    auto run_warned = [](const std::vector<std::string>& args) {
        const attnviz_test::RunResult r = run_attnviz(args);
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.err_lines(), 1);
        EXPECT_NE(r.err.find("attnviz: warning: the clean and corrupted logit differences are only 9.23e-05 apart"),
                  std::string::npos) << r.err;
        return json::parse(r.out);
    };
    const json by_text = run_warned({"patch", "--model", d.path, "--clean", clean, "--corrupt", corrupt, "--answer", " M",
                                     "--wrong", " J", "--json"});
    const json ids = run_json({"tokenize", "--tokenizer", d.path, "--text", clean});
    const json ids2 = run_json({"tokenize", "--tokenizer", d.path, "--text", corrupt});
    std::string a, b;
    for (const json& i : ids["ids"]) a += (a.empty() ? "" : ",") + std::to_string(i.get<int>());
    for (const json& i : ids2["ids"]) b += (b.empty() ? "" : ",") + std::to_string(i.get<int>());
    const json by_ids = run_warned({"patch", "--model", d.path, "--clean-tokens", a, "--corrupt-tokens", b,
                                    "--answer-token", "337", "--wrong-token", "449", "--json"});
    EXPECT_EQ(by_text["clean_ld"], by_ids["clean_ld"]);
    EXPECT_EQ(by_text["resid"], by_ids["resid"]);
    EXPECT_EQ(by_text["heads"], by_ids["heads"]);
    expect_table(by_text["resid"], 2, 28);
}

TEST(Patch, RefusesBadInput) {
    TempDir d;
    tiny_model_with_tokenizer(d.path);
    const std::vector<std::string> ids{"--answer-token", "708", "--wrong-token", "9"};
    auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    // prompts of different lengths, by ids and by text
    expect_usage_error(with({"patch", "--model", gpt2_dir, "--clean-tokens", "1,2,3", "--corrupt-tokens", "1,2"}, ids),
                       "the clean prompt is 3 tokens and the corrupted one 2");
    expect_usage_error({"patch", "--model", d.path, "--clean", "When Mary left", "--corrupt", "When John left",
                        "--answer", " M", "--wrong", " J"},
                       "the clean prompt is 6 tokens and the corrupted one 8");
    // an answer that is not one token, or not in the vocabulary
    expect_usage_error({"patch", "--model", d.path, "--clean-tokens", clean_ids, "--corrupt-tokens", corrupt_ids,
                        "--answer", " Mary", "--wrong", " J"},
                       "--answer ' Mary' is 2 tokens, not one");
    expect_usage_error(patch_args({"--answer-token", "1000"}), "--answer-token '1000' is not a token id in the vocabulary");
    expect_usage_error(patch_args({"--wrong-token", "-1"}), "--wrong-token '-1'");
    // answer equal to wrong
    expect_usage_error(patch_args({"--wrong-token", "708"}), "both token 708");
    // clean and corrupted logit differences exactly equal: the same prompt twice
    expect_usage_error(with({"patch", "--model", gpt2_dir, "--clean-tokens", clean_ids, "--corrupt-tokens", clean_ids}, ids),
                       "logit differences are both");
    // --what
    expect_usage_error(patch_args({"--what", "mlp"}), "--what 'mlp' is not a table; use resid, heads or both");
    // the rest of the options
    expect_usage_error(patch_args({"--kernel", "slow"}), "--kernel 'slow'");
    expect_usage_error(patch_args({"--clean", "a"}), "not both");
    expect_usage_error({"patch", "--model", gpt2_dir, "--clean-tokens", clean_ids, "--answer-token", "1", "--wrong-token", "2"},
                       "give both prompts");
    expect_usage_error(with({"patch", "--model", gpt2_dir}, ids), "patch needs --clean and --corrupt");
    expect_usage_error(patch_args({"--clean-tokens", "1,x"}), "--clean-tokens '1,x'");
    expect_usage_error(with({"patch", "--model", ATTNVIZ_TEST_DATA "/ablation/toy_induction_s7.safetensors",
                             "--clean-tokens", "1", "--corrupt-tokens", "2"}, ids),
                       "is a toy model");
}

// The window's options for the Model view's panels: refused before any window opens (so
// without a display too), one sentence, exit 2.
TEST(Patch, WindowOptionsRefuseBadInputBeforeAWindowOpens) {
    expect_usage_error({"--model", gpt2_dir, "--model-panel", "mlp"},
                       "--model-panel mlp is not a panel; use heads, lens or patching");
    expect_usage_error({"--model", gpt2_dir, "--patch-answer", "708"},
                       "--patch-answer and --patch-wrong need --patch-corrupt");
    expect_usage_error({"--model", gpt2_dir, "--patch-wrong", "9"}, "--patch-answer and --patch-wrong need --patch-corrupt");
    expect_usage_error({"--patch-corrupt", "When John left"}, "--patch-corrupt needs a model to patch");
    expect_usage_error({"--model", gpt2_dir, "--model-panel"}, "--model-panel");
}

TEST(LogitLens, TraceAddsEveryLayersTopTokens) {
    const json j = run_json({"trace", "--model", gpt2_dir, "--tokens", "5,6,7,8", "--logit-lens"});
    const json& lens = j["logit_lens"];
    EXPECT_EQ(lens["rows"], json({"embed", "0", "1"}));
    ASSERT_EQ(lens["top"].size(), 3u);
    ASSERT_EQ(lens["next_prob"].size(), 3u);
    for (size_t r = 0; r < 3; ++r) {
        ASSERT_EQ(lens["top"][r].size(), 4u);
        for (const json& pos : lens["top"][r]) {
            ASSERT_EQ(pos.size(), 5u);
            for (size_t i = 0; i < 5; ++i) {
                EXPECT_EQ(pos[i].size(), 2u) << pos[i]; // token and prob: no tokenizer, no text
                EXPECT_GT(pos[i]["prob"].get<double>(), 0.0);
                if (i > 0) {
                    EXPECT_LE(pos[i]["prob"].get<double>(), pos[i - 1]["prob"].get<double>());
                }
            }
        }
        ASSERT_EQ(lens["next_prob"][r].size(), 4u);
        EXPECT_TRUE(lens["next_prob"][r][3].is_null());
        EXPECT_GT(lens["next_prob"][r][0].get<double>(), 0.0);
    }
    // The last layer's lens is the model's own prediction.
    EXPECT_FALSE(run_json({"trace", "--model", gpt2_dir, "--tokens", "5,6,7,8"}).contains("logit_lens"));
}

TEST(LogitLens, TextWithATokenizerAndRefusals) {
    TempDir d;
    tiny_model_with_tokenizer(d.path);
    const json j = run_json({"trace", "--model", d.path, "--text", "the cat", "--logit-lens"});
    EXPECT_TRUE(j["logit_lens"]["top"][0][0][0]["text"].is_string());
    expect_usage_error({"trace", "--model", ATTNVIZ_TEST_DATA "/ablation/toy_induction_s7.safetensors", "--tokens", "1,2",
                        "--logit-lens"},
                       "--logit-lens reads a GPT model");
    expect_usage_error({"trace", "--logit-lens"}, "the lesson's module");
}

TEST(LogitLens, BenchTimesItBesideTheForward) {
    const json j = run_json({"bench", "--model", gpt2_dir, "--seq-len", "8", "--repeat", "2", "--logit-lens"});
    EXPECT_GT(j["logit_lens_ms"].get<double>(), 0.0);
    EXPECT_EQ(j["logit_lens_window_positions"].get<int>(), 8); // all 8 of --seq-len 8 (14 at most)
    EXPECT_GT(j["logit_lens_window_ms"].get<double>(), 0.0);
    EXPECT_GT(j["logit_lens_over_forward"].get<double>(), 0.0);
    EXPECT_FALSE(run_json({"bench", "--model", gpt2_dir, "--seq-len", "8", "--repeat", "1"}).contains("logit_lens_ms"));
    expect_usage_error({"bench", "--logit-lens"}, "--logit-lens times a GPT model's logit lens");
}
