// test_gpt_trace.cpp: trace, export and bench with --model on the tiny GPT of
// tests/data/gpt_tiny (scripts/gen_gpt_reference.py), and the refusals around them.
// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics wherever Eigen's
// products inline them; the values are defined, so the warning is silenced here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "cut_tokenizer.h"
#include "run_attnviz.h"
#include "safetensors.h"
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>

using attnviz_test::expect_usage_error;
using attnviz_test::run_attnviz;
using attnviz_test::run_json;
using attnviz_test::TempDir;
using attnviz_test::write_cut_tokenizer;
using nlohmann::json;

namespace {

const std::string data = ATTNVIZ_TEST_DATA "/gpt_tiny/";
const std::string gpt2_dir = data + "gpt2";
const std::string nano_file = data + "nanogpt_nobias.safetensors";
const std::string tokens = "1,500,2,999,42,7,7,300,12,0,64,5";

std::vector<float> fixture(const std::string& file, const std::string& name) {
    attnviz::SafetensorsFile f;
    std::string error;
    std::vector<float> v;
    EXPECT_TRUE(attnviz::read_safetensors_header(file, f, error)) << error;
    const attnviz::TensorInfo* t = f.find(name);
    EXPECT_NE(t, nullptr) << name;
    if (t) {
        EXPECT_TRUE(attnviz::read_tensor(f, *t, v, error)) << error;
    }
    return v;
}

std::string fixture_tokens(const std::string& file) {
    attnviz::SafetensorsFile f;
    std::string error;
    EXPECT_TRUE(attnviz::read_safetensors_header(file, f, error)) << error;
    return *f.meta("tokens");
}

TEST(GptTrace, IntermediatesHaveEveryLayerAndTheLogitsMatchTorch) {
    const std::string ref = data + "gpt2_forward.safetensors";
    const json j = run_json({"trace", "--model", gpt2_dir, "--tokens", fixture_tokens(ref), "--intermediates"});
    ASSERT_TRUE(j.contains("layers"));
    EXPECT_EQ(j["model"]["layout"], "GPT-2 (Hugging Face)");
    EXPECT_EQ(j["model"]["gelu"], "tanh (gelu_new)");
    EXPECT_EQ(j["model"]["n_head_from"], "config.json");
    EXPECT_EQ(j["tokens"].size(), 12u);
    ASSERT_EQ(j["layers"].size(), 2u);
    for (const char* key : {"qkv", "q", "k", "v", "raw_scores", "scaled_scores", "masked_scores", "softmax_probs",
                            "head_outputs", "y_concat_before_proj", "resid_post", "resid_mid"})
        EXPECT_TRUE(j["layers"][1].contains(key)) << key;
    EXPECT_EQ(j["layers"][0]["softmax_probs"][0].size(), 4u);
    EXPECT_EQ(j["layers"][0]["resid_post"][0][11].size(), 64u);
    const std::vector<float> logits = fixture(ref, "logits");
    ASSERT_EQ(j["logits"][0].size(), 12u);
    float worst = 0.f;
    for (int t = 0; t < 12; ++t)
        for (int v = 0; v < 1000; ++v)
            worst = std::max(worst, std::fabs(j["logits"][0][size_t(t)][size_t(v)].get<float>() - logits[size_t(t * 1000 + v)]));
    EXPECT_LE(worst, 1e-4f);
    const std::vector<float> probs = fixture(ref, "layers.1.softmax_probs");
    EXPECT_NEAR(j["layers"][1]["softmax_probs"][0][3][7][2].get<float>(), probs[size_t((3 * 12 + 7) * 12 + 2)], 1e-5);
}

TEST(GptTrace, LayerLimitsTheOutputToOneLayer) {
    const json j = run_json({"trace", "--model", nano_file, "--tokens", tokens, "--intermediates", "--layer", "1"});
    ASSERT_EQ(j["layers"].size(), 1u);
    EXPECT_EQ(j["layers"][0]["layer"], 1);
    EXPECT_EQ(j["model"]["layout"], "nanoGPT");
    EXPECT_EQ(j["model"]["bias"], false);
    EXPECT_EQ(j["model"]["gelu"], "erf (nn.GELU())");
}

TEST(GptTrace, PerturbChangesNothingBeforeP) {
    for (const char* kernel : {"reference", "fast"}) {
        const json j = run_json({"trace", "--model", gpt2_dir, "--tokens", tokens, "--perturb", "4", "--replace", "3",
                                 "--kernel", kernel});
        EXPECT_EQ(j["replacement"], 3);
        const json& d = j["max_abs_diff_per_position"];
        ASSERT_EQ(d.size(), 12u);
        for (int t = 0; t < 4; ++t) EXPECT_EQ(d[size_t(t)].get<float>(), 0.f) << kernel << " " << t;
        EXPECT_GT(d[4].get<float>(), 0.f);
        // L x T: one row of resid_post's max |Δ| per layer.
        ASSERT_TRUE(j.contains("max_abs_diff_per_layer")) << kernel;
        ASSERT_EQ(j["max_abs_diff_per_layer"].size(), 2u);
        for (const json& layer : j["max_abs_diff_per_layer"]) {
            ASSERT_EQ(layer.size(), 12u);
            for (int t = 0; t < 4; ++t) EXPECT_EQ(layer[size_t(t)].get<float>(), 0.f);
            EXPECT_GT(layer[4].get<float>(), 0.f);
        }
    }
    // Without --replace, token P becomes the next id.
    const json j = run_json({"trace", "--model", gpt2_dir, "--tokens", tokens, "--perturb", "3"});
    EXPECT_EQ(j["replacement"], 0); // token 3 is 999: the next id wraps round to 0
}

TEST(GptTrace, ToyModelsGoThroughTheTrainedTrace) {
    const json j = run_json({"trace", "--model", ATTNVIZ_TEST_DATA "/train/prev_s3_60.safetensors", "--text", "a b c"});
    EXPECT_TRUE(j.contains("logits"));
    EXPECT_EQ(j["tokens"].size(), 4u); // BOS, then the three words
}

TEST(GptTrace, Refusals) {
    expect_usage_error({"trace", "--model", gpt2_dir, "--text", "the cat"}, "needs its tokenizer beside it");
    expect_usage_error({"trace", "--model", gpt2_dir}, "give --tokens");
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", "1,1000"}, "'1000' is not a token id");
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", "1,,2"}, "is not a token id");
    std::string long_list = "1";
    for (int i = 0; i < 64; ++i) long_list += ",1";
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", long_list}, "block size of 64");
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", "1,2", "--layer", "2"}, "--layer");
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", "1,2", "--perturb", "2"}, "--perturb");
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", "1,2", "--perturb", "1", "--replace", "1000"}, "--replace");
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", "1,2", "--replace", "5"}, "needs --perturb");
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", "1,2", "--seed", "3"}, "--seed '3' does not apply");
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", "1,2", "--weights", nano_file}, "not both");
    expect_usage_error({"trace", "--model", gpt2_dir, "--tokens", "1,2", "--n-head", "5"}, "does not divide");
    expect_usage_error({"trace", "--model", data + "absent", "--tokens", "1"}, "no such file");
    expect_usage_error({"trace", "--model", data, "--tokens", "1"}, "no model.safetensors");
}

TEST(GptTrace, ExportWritesOneLayersTensor) {
    TempDir dir;
    const std::string out = dir.path + "/probs.npy";
    const attnviz_test::RunResult r = run_attnviz({"export", "--model", gpt2_dir, "--tokens", tokens, "--layer", "1",
                                                   "--tensor", "probs", "--out", out});
    EXPECT_EQ(r.status, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::stat(out.c_str(), &st), 0);
    EXPECT_GT(st.st_size, 4 * 4 * 12 * 12); // (H, T, T) float32 after the .npy header
    expect_usage_error({"export", "--model", gpt2_dir, "--tokens", tokens, "--tensor", "nope", "--out", out}, "nope");
}

TEST(GptTrace, BenchTimesTheForwardAndTheUpdate) {
    const json j = run_json({"bench", "--model", gpt2_dir, "--repeat", "2", "--seq-len", "32"});
    EXPECT_EQ(j["T"], 32);
    EXPECT_EQ(j["perturbed_position"], 16);
    EXPECT_GT(j["forward_ms"].get<float>(), 0.f);
    EXPECT_GT(j["update_ms"].get<float>(), 0.f);
    EXPECT_GT(j["load_ms"].get<float>(), 0.f);
    EXPECT_GT(j["peak_rss_mb"].get<float>(), 0.f);
    expect_usage_error({"bench", "--model", gpt2_dir, "--seq-len", "65"}, "--seq-len");
}

} // namespace

namespace {

// The tiny model's two files copied into `dir`.
void copy_tiny_model(const std::string& dir) {
    namespace fs = std::filesystem;
    for (const char* f : {"model.safetensors", "config.json"}) fs::copy_file(gpt2_dir + "/" + f, dir + "/" + f);
}

} // namespace

TEST(GptTrace, TextGoesThroughTheTokenizerBesideTheModel) {
    TempDir t;
    copy_tiny_model(t.path);
    write_cut_tokenizer(t.path);
    const std::string text = "The cat sat on the mat, and the cat saw it.";
    const json ids = run_json({"tokenize", "--tokenizer", t.path, "--text", text});
    ASSERT_TRUE(ids.contains("ids"));
    ASSERT_GT(ids["ids"].size(), 5u);
    std::string list;
    for (const json& id : ids["ids"]) {
        EXPECT_LT(id.get<int>(), 1000);
        list += (list.empty() ? "" : ",") + std::to_string(id.get<int>());
    }
    const json by_text = run_json({"trace", "--model", t.path, "--text", text});
    const json by_ids = run_json({"trace", "--model", t.path, "--tokens", list});
    EXPECT_EQ(by_text["tokens"], ids["ids"]);
    EXPECT_EQ(by_text["logits"], by_ids["logits"]);
}

TEST(GptTrace, TextRefusesATokenizerThatDoesNotFitTheModel) {
    TempDir t;
    copy_tiny_model(t.path);
    for (const char* f : {"encoder.json", "vocab.bpe"})
        std::filesystem::copy_file(std::string(ATTNVIZ_TEST_DATA "/gpt2_tokenizer/") + f, t.path + "/" + f);
    expect_usage_error({"trace", "--model", t.path, "--text", "the cat"}, "has 50257 entries but wte has 1000 rows");
    TempDir u;
    copy_tiny_model(u.path);
    write_cut_tokenizer(u.path);
    std::string long_text;
    for (int i = 0; i < 80; ++i) long_text += " cat";
    expect_usage_error({"trace", "--model", u.path, "--text", long_text}, "block size of 64");
    expect_usage_error({"trace", "--model", u.path, "--text", ""}, "--text is empty");
}
