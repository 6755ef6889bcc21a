// test_ablation.cpp: --ablate, --ablate-mode and --dla-pos on heads, trace --model (GPT and
// toy), trace --weights (toy) and bench --model: the JSON against the core's own numbers
// and torch's (tests/data/ablation, scripts/gen_ablation_reference.py), the keys that were
// there before unchanged, and every bad input as one sentence with exit status 2.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" // GCC 12 inside Eigen's AVX-512 products
#endif
#include "ablation.h"
#include "ablation_scores.h"
#include "gpt_io.h"
#include "gpt_model.h"
#include "head_detector.h"
#include "model_io.h"
#include "cut_tokenizer.h"
#include "run_attnviz.h"
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using attnviz_test::expect_usage_error;
using attnviz_test::run_json;
using attnviz_test::TempDir;
using attnviz_test::write_cut_tokenizer;
using nlohmann::json;

namespace {

const std::string data = ATTNVIZ_TEST_DATA "/ablation/";
const std::string induction_file = data + "toy_induction_s7.safetensors";
const std::string both_file = data + "toy_both_s11.safetensors";
const std::string gpt2_dir = ATTNVIZ_TEST_DATA "/gpt_tiny/gpt2";
const std::string nano_file = ATTNVIZ_TEST_DATA "/gpt_tiny/nanogpt_nobias.safetensors";

const json& toy_reference() {
    static const json j = attnviz_test::load_json(data + "toy_reference.json");
    return j;
}
const json& gpt_reference() {
    static const json j = attnviz_test::load_json(data + "gpt_reference.json");
    return j;
}

// The reference case of `model` whose heads and mode these are.
const json& reference_case(const json& model, const std::string& heads, const std::string& mode) {
    for (const json& c : model.at("ablations")) {
        std::string h;
        for (const json& x : c.at("heads")) h += (h.empty() ? "" : ",") + x.get<std::string>();
        if (h == heads && c.at("mode") == mode) return c;
    }
    throw std::runtime_error("no reference case " + heads + " " + mode);
}

attnviz::Model toy(const std::string& path) {
    attnviz::Model m;
    std::string error;
    if (!attnviz::load_model(path, m, error)) throw std::runtime_error(error);
    return m;
}

attnviz::Model gpt(const std::string& path) {
    attnviz::Model m;
    attnviz::GptFileInfo info;
    std::string error;
    if (!attnviz::load_gpt(path, std::nullopt, m, info, error)) throw std::runtime_error(error);
    return m;
}

attnviz::Ablation ablation(const attnviz::Model& m, const std::string& heads, attnviz::AblationMode mode,
                           const std::vector<std::vector<int>>& probe) {
    attnviz::Ablation ab;
    std::string error;
    EXPECT_TRUE(attnviz::parse_heads(heads, m.config, ab.heads, error)) << error;
    ab.mode = mode;
    if (mode == attnviz::AblationMode::mean)
        attnviz::compute_ablation_means(m, probe, attnviz::KernelKind::reference, ab);
    return ab;
}

std::string ids(const std::vector<int>& v) {
    std::string s;
    for (int t : v) s += (s.empty() ? "" : ",") + std::to_string(t);
    return s;
}

void expect_relative(double actual, double expected, double tol, const std::string& what) {
    EXPECT_LE(std::fabs(actual - expected), tol * std::fabs(expected)) << what << ": " << actual << " vs " << expected;
}

// %.9g floats read back as the same float32.
float f32(const json& j) { return j.get<float>(); }

} // namespace

// ---------------------------------------------------------------------------------------
// heads

TEST(AblationCli, HeadsKeepTheirKeysAndAddTheAblation) {
    const json plain = run_json({"heads", "--weights", induction_file});
    const json j = run_json({"heads", "--weights", induction_file, "--ablate", "1.2,0.0"});
    for (const char* key : {"file", "task", "config", "accuracy", "head_scores"}) EXPECT_EQ(j[key], plain[key]) << key;
    EXPECT_FALSE(plain.contains("ablation"));
    ASSERT_TRUE(j.contains("ablation"));
    const json& a = j["ablation"];
    EXPECT_EQ(a["heads"], json({"0.0", "1.2"}));
    EXPECT_EQ(a["mode"], "zero");

    // The core's numbers, exactly (the JSON's doubles round-trip).
    const attnviz::Model m = toy(induction_file);
    const attnviz::Ablation ab = ablation(m, "0.0,1.2", attnviz::AblationMode::zero, {});
    const attnviz::TaskMetrics before = attnviz::task_metrics(m, attnviz::KernelKind::reference);
    const attnviz::TaskMetrics after = attnviz::task_metrics(m, attnviz::KernelKind::reference, &ab);
    EXPECT_EQ(a["before"]["loss"].get<double>(), before.loss);
    EXPECT_EQ(a["after"]["loss"].get<double>(), after.loss);
    EXPECT_EQ(a["delta"]["loss"].get<double>(), after.loss - before.loss);
    ASSERT_EQ(after.accuracy.size(), 1u);
    EXPECT_EQ(a["before"]["accuracy"]["next"].get<double>(), before.accuracy[0].second);
    EXPECT_EQ(a["after"]["accuracy"]["next"].get<double>(), after.accuracy[0].second);
    EXPECT_EQ(a["delta"]["accuracy"]["next"].get<double>(), after.accuracy[0].second - before.accuracy[0].second);
    EXPECT_EQ(a["before"]["accuracy"]["next"], plain["accuracy"]["next"]);
    const attnviz::HeadScores s = attnviz::ablated_head_scores(m, attnviz::KernelKind::reference, &ab);
    EXPECT_EQ(a["after"]["head_scores"]["prev_token"].get<std::vector<std::vector<float>>>(), s.prev_token);
    EXPECT_EQ(a["after"]["head_scores"]["duplicate"].get<std::vector<std::vector<float>>>(), s.duplicate);
    EXPECT_EQ(a["after"]["head_scores"]["induction"].get<std::vector<std::vector<float>>>(), s.induction);

    // And torch's.
    const json& model = toy_reference().at("models")[0];
    const json& ref = reference_case(model, "0.0,1.2", "zero");
    expect_relative(a["before"]["loss"].get<double>(), model["before"]["loss"].get<double>(), 1e-5, "loss before");
    expect_relative(a["after"]["loss"].get<double>(), ref["after"]["loss"].get<double>(), 1e-5, "loss after");
    EXPECT_EQ(a["after"]["accuracy"]["next"].get<float>(), ref["after"]["accuracy"]["next"].get<float>());
    for (size_t l = 0; l < 2; ++l)
        for (size_t h = 0; h < 4; ++h)
            EXPECT_NEAR(a["after"]["head_scores"]["induction"][l][h].get<double>(),
                        ref["head_scores"]["induction"][l][h].get<double>(), 2e-6);
}

TEST(AblationCli, HeadsMeanModeMatchesTorch) {
    const json j = run_json({"heads", "--weights", both_file, "--ablate", "0.0", "--ablate-mode", "mean"});
    const json& a = j.at("ablation");
    EXPECT_EQ(a["mode"], "mean");
    const json& model = toy_reference().at("models")[1];
    const json& ref = reference_case(model, "0.0", "mean");
    expect_relative(a["after"]["loss"].get<double>(), ref["after"]["loss"].get<double>(), 1e-5, "loss after");
    for (const char* k : {"prev", "dup"}) {
        EXPECT_EQ(a["after"]["accuracy"][k].get<float>(), ref["after"]["accuracy"][k].get<float>()) << k;
        EXPECT_EQ(a["before"]["accuracy"][k].get<float>(), model["before"]["accuracy"][k].get<float>()) << k;
    }
}

TEST(AblationCli, HeadsRefuseBadAblations) {
    expect_usage_error({"heads", "--weights", induction_file, "--ablate", "2.0"}, "--ablate '2.0'");
    expect_usage_error({"heads", "--weights", induction_file, "--ablate", "0.4"}, "0..3");
    expect_usage_error({"heads", "--weights", induction_file, "--ablate", "0.1,x"}, "'x' is not a head");
    expect_usage_error({"heads", "--weights", induction_file, "--ablate", "zero"}, "--ablate 'zero'");
    expect_usage_error({"heads", "--weights", induction_file, "--ablate", ""}, "--ablate");
    expect_usage_error({"heads", "--weights", induction_file, "--ablate", "0.1", "--ablate-mode", "resample"},
                       "--ablate-mode 'resample'");
    expect_usage_error({"heads", "--weights", induction_file, "--ablate-mode", "mean"}, "needs --ablate");
}

// ---------------------------------------------------------------------------------------
// trace --model GPT

TEST(AblationCli, GptTraceIsTheAblatedRunAndMatchesTorch) {
    for (const json& model : gpt_reference().at("models")) {
        const std::string path = ATTNVIZ_TEST_DATA "/gpt_tiny/" + model.at("file").get<std::string>();
        SCOPED_TRACE(path);
        const std::vector<int> seq = model.at("sequence").get<std::vector<int>>();
        for (const char* mode : {"zero", "mean"}) {
            SCOPED_TRACE(mode);
            const json ref = reference_case(model, "0.1", mode);
            const json j = run_json({"trace", "--model", path, "--tokens", ids(seq), "--ablate", "0.1", "--ablate-mode",
                                     mode, "--intermediates"});
            EXPECT_EQ(j["kernel"], "reference");
            const json& a = j.at("ablation");
            EXPECT_EQ(a["heads"], json({"0.1"}));
            EXPECT_EQ(a["mode"], mode);
            expect_relative(a["before"]["loss"].get<double>(), model["before"]["loss"].get<double>(), 1e-5, "before");
            expect_relative(a["after"]["loss"].get<double>(), ref["after"]["loss"].get<double>(), 1e-5, "after");
            EXPECT_NEAR(f32(a["delta"]["loss"]), f32(a["after"]["loss"]) - f32(a["before"]["loss"]), 1e-6);
            ASSERT_EQ(a["after"]["top5"].size(), 5u);
            for (size_t i = 0; i < 5; ++i) {
                EXPECT_EQ(a["before"]["top5"][i]["token"], model["before"]["top5"][i]);
                EXPECT_EQ(a["after"]["top5"][i]["token"], ref["after"]["top5"][i]);
                EXPECT_NEAR(f32(a["after"]["top5"][i]["prob"]), ref["after"]["top5_probs"][i].get<float>(), 1e-6);
                EXPECT_FALSE(a["after"]["top5"][i].contains("text")) << "no tokenizer beside this model";
            }
            // The traced tensors are the ablated run's: the core's, bit for bit.
            const attnviz::Model m = gpt(path);
            const attnviz::Ablation ab = ablation(m, "0.1", std::string(mode) == "mean" ? attnviz::AblationMode::mean
                                                                                         : attnviz::AblationMode::zero,
                                                  {seq});
            attnviz::ModelTrace tr;
            attnviz::gpt_forward(m, seq, attnviz::KernelKind::reference, true, tr, &ab);
            const int T = int(seq.size()), V = m.config.vocab;
            for (int t = 0; t < T; t += 7)
                for (int v = 0; v < V; v += 37) ASSERT_EQ(f32(j["logits"][0][size_t(t)][size_t(v)]), tr.logits(t, v));
            const json& layer0 = j["layers"][0];
            const int hd = m.config.head_dim();
            bool replaced = true;
            for (int t = 0; t < T; ++t)
                for (int c = hd; c < 2 * hd; ++c) {
                    const float want = std::string(mode) == "zero" ? 0.f : ab.means[0](c - hd);
                    replaced = replaced && f32(layer0["y_concat_before_proj"][0][size_t(t)][size_t(c)]) == want;
                }
            EXPECT_TRUE(replaced) << "head 1's columns of layer 0's concat are the replacement";
            for (int l = 0; l < 2; ++l)
                EXPECT_NEAR(f32(j["layers"][size_t(l)]["softmax_probs"][0][3][T - 1][5]),
                            tr.layers[size_t(l)].att[3](T - 1, 5), 1e-7);
            // The DLA at the last position onto the clean top-1: torch's terms.
            const json& d = j.at("dla");
            const json& want = ref.at("dla");
            EXPECT_EQ(d["pos"], T - 1);
            EXPECT_EQ(d["token"], want["token"]);
            EXPECT_NEAR(f32(d["logit"]), want["logit"].get<float>(), 1e-4);
            EXPECT_NEAR(f32(d["sum"]), f32(d["logit"]), 1e-4);
            EXPECT_NEAR(f32(d["embed"]), want["embed"].get<float>(), 1e-4);
            EXPECT_NEAR(f32(d["pos_embed"]), want["pos_embed"].get<float>(), 1e-4);
            EXPECT_NEAR(f32(d["ln_bias"]), want["ln_bias"].get<float>(), 1e-4);
            for (size_t l = 0; l < 2; ++l) {
                EXPECT_NEAR(f32(d["mlp"][l]), want["mlp"][l].get<float>(), 1e-4);
                for (size_t h = 0; h < 4; ++h) EXPECT_NEAR(f32(d["heads"][l][h]), want["heads"][l][h].get<float>(), 1e-4);
            }
            EXPECT_EQ(d["attn_bias"].size(), want["attn_bias"].size());
        }
    }
}

TEST(AblationCli, GptTraceKeepsItsKeysAndDlaPosAlone) {
    const std::vector<int> seq = gpt_reference().at("models")[0].at("sequence").get<std::vector<int>>();
    const json plain = run_json({"trace", "--model", nano_file, "--tokens", ids(seq)});
    EXPECT_FALSE(plain.contains("ablation"));
    EXPECT_FALSE(plain.contains("dla"));
    // --dla-pos alone: the clean run's DLA, nothing else changed.
    const json j = run_json({"trace", "--model", nano_file, "--tokens", ids(seq), "--dla-pos", "4"});
    EXPECT_FALSE(j.contains("ablation"));
    EXPECT_EQ(j["logits"], plain["logits"]);
    const attnviz::Model m = gpt(nano_file);
    attnviz::ModelTrace tr;
    attnviz::gpt_forward(m, seq, attnviz::KernelKind::reference, true, tr);
    const std::vector<attnviz::TokenProb> top =
        attnviz::top_k(attnviz::softmax_logits(tr.logits.data() + 4 * tr.logits.cols(), int(tr.logits.cols())), 1);
    const attnviz::LogitAttribution want = attnviz::logit_attribution(m, tr, 4, top[0].token);
    EXPECT_EQ(j["dla"]["pos"], 4);
    EXPECT_EQ(j["dla"]["token"], top[0].token);
    EXPECT_EQ(f32(j["dla"]["logit"]), want.logit);
    EXPECT_EQ(f32(j["dla"]["heads"][1][2]), want.heads[1][2]);
    EXPECT_EQ(j["dla"]["attn_bias"].size(), 0u) << "nanoGPT without biases";
    // With --perturb too: the update runs on the ablated model.
    const json p = run_json({"trace", "--model", nano_file, "--tokens", ids(seq), "--ablate", "1.0", "--perturb", "9"});
    const json q = run_json({"trace", "--model", nano_file, "--tokens", ids(seq), "--ablate", "1.0"});
    EXPECT_EQ(p["logits"], q["logits"]);
    ASSERT_EQ(p["max_abs_diff_per_position"].size(), seq.size());
    EXPECT_EQ(p["max_abs_diff_per_position"][8].get<float>(), 0.f);
}

TEST(AblationCli, GptTraceNamesTheTopTokensWithATokenizer) {
    TempDir t;
    for (const char* f : {"model.safetensors", "config.json"})
        std::filesystem::copy_file(gpt2_dir + "/" + f, t.path + "/" + f);
    write_cut_tokenizer(t.path);
    const json j = run_json({"trace", "--model", t.path, "--text", "the cat sat on the mat", "--ablate", "0.2,1.1"});
    const json& top = j.at("ablation").at("after").at("top5");
    ASSERT_EQ(top.size(), 5u);
    for (const json& e : top) {
        ASSERT_TRUE(e.contains("text"));
        EXPECT_TRUE(e["text"].is_string());
    }
    EXPECT_TRUE(j.at("dla").contains("text"));
    EXPECT_EQ(j["dla"]["token"], j["ablation"]["before"]["top5"][0]["token"]);
}

TEST(AblationCli, GptTraceRefusesBadAblations) {
    const std::string tokens = "1,2,3,4,5";
    expect_usage_error({"trace", "--model", nano_file, "--tokens", tokens, "--ablate", "2.0"}, "--ablate '2.0'");
    expect_usage_error({"trace", "--model", nano_file, "--tokens", tokens, "--ablate", "0.4"}, "0..3");
    expect_usage_error({"trace", "--model", nano_file, "--tokens", tokens, "--ablate", "0.1;1.0"}, "--ablate");
    expect_usage_error({"trace", "--model", nano_file, "--tokens", tokens, "--ablate", "1", "--ablate-mode", "zero"},
                       "--ablate '1'");
    expect_usage_error({"trace", "--model", nano_file, "--tokens", tokens, "--ablate", "0.1", "--ablate-mode", "Mean"},
                       "--ablate-mode 'Mean'");
    expect_usage_error({"trace", "--model", nano_file, "--tokens", tokens, "--ablate-mode", "mean"}, "needs --ablate");
    expect_usage_error({"trace", "--model", nano_file, "--tokens", tokens, "--dla-pos", "5"}, "--dla-pos");
    expect_usage_error({"trace", "--model", nano_file, "--tokens", tokens, "--dla-pos", "-1"}, "--dla-pos");
    expect_usage_error({"trace", "--model", nano_file, "--tokens", tokens, "--ablate", "0.0", "--dla-pos", "x"},
                       "--dla-pos");
    // The lesson's single module has no heads to ablate in a model.
    expect_usage_error({"trace", "--ablate", "0.1"}, "needs a whole model");
    expect_usage_error({"trace", "--dla-pos", "1"}, "needs a whole model");
    expect_usage_error({"bench", "--ablate", "0.1"}, "give --model");
}

// ---------------------------------------------------------------------------------------
// trace with a toy model

TEST(AblationCli, ToyTraceAblatesAndAttributes) {
    const json& model = toy_reference().at("models")[0];
    const std::vector<int> seq = model.at("sequence").get<std::vector<int>>();
    std::string text;
    for (size_t i = 1; i < seq.size(); ++i) text += (i > 1 ? " " : "") + std::string(1, char('a' + seq[i]));
    const json& ref = reference_case(model, "0.1", "zero");
    const int pos = model.at("dla_before").at("pos").get<int>();
    for (const char* option : {"--weights", "--model"}) {
        SCOPED_TRACE(option);
        const json plain = run_json({"trace", option, induction_file, "--text", text});
        const json j = run_json({"trace", option, induction_file, "--text", text, "--ablate", "0.1", "--dla-pos",
                                 std::to_string(pos), "--intermediates"});
        for (const char* key : {"n_embd", "n_head", "n_layer", "T", "tokens", "token_ids", "weights", "x"})
            EXPECT_EQ(j[key], plain[key]) << key;
        EXPECT_NE(j["y1"], plain["y1"]);
        const json& a = j.at("ablation");
        expect_relative(f32(a["before"]["loss"]), model["before"]["loss"].get<double>(), 1e-5, "before");
        expect_relative(f32(a["after"]["loss"]), ref["after"]["loss"].get<double>(), 1e-5, "after");
        EXPECT_EQ(f32(a["after"]["accuracy"]["next"]), ref["after"]["accuracy"]["next"].get<float>());
        // Patterns: torch's ablated run on this sequence.
        const std::vector<float> probs1 = [&] {
            std::vector<float> v;
            for (const json& h : j["layers"][1]["softmax_probs"][0])
                for (const json& row : h)
                    for (const json& x : row) v.push_back(x.get<float>());
            return v;
        }();
        ASSERT_EQ(probs1.size(), size_t(4 * seq.size() * seq.size()));
        // The reference pattern is base64; its first row of head 0 is 1 (BOS attends to itself).
        EXPECT_EQ(probs1[0], 1.f);
        const json& d = j.at("dla");
        const json& want = ref.at("dla");
        EXPECT_EQ(d["pos"], pos);
        EXPECT_EQ(d["token"], want["token"]);
        EXPECT_NEAR(f32(d["logit"]), want["logit"].get<float>(), 1e-4);
        EXPECT_NEAR(f32(d["sum"]), f32(d["logit"]), 1e-4);
        EXPECT_EQ(f32(d["heads"][0][1]), 0.f) << "the zeroed head adds nothing";
        for (size_t l = 0; l < 2; ++l)
            for (size_t h = 0; h < 4; ++h) EXPECT_NEAR(f32(d["heads"][l][h]), want["heads"][l][h].get<float>(), 1e-4);
        EXPECT_FALSE(d.contains("mlp"));
    }
    expect_usage_error({"trace", "--weights", induction_file, "--text", text, "--ablate", "2.0"}, "--ablate '2.0'");
    expect_usage_error({"trace", "--weights", induction_file, "--text", text, "--dla-pos", "99"}, "--dla-pos");
    expect_usage_error({"trace", "--weights", induction_file, "--text", text, "--ablate-mode", "zero"}, "needs --ablate");
}

// ---------------------------------------------------------------------------------------
// bench --model

TEST(AblationCli, BenchTimesTheAblation) {
    const json j = run_json({"bench", "--model", gpt2_dir, "--seq-len", "24", "--repeat", "2", "--ablate", "0.0"});
    ASSERT_TRUE(j.contains("ablation"));
    const json& a = j["ablation"];
    EXPECT_EQ(a["heads"], json({"0.0"}));
    EXPECT_EQ(a["first_layer"], 0);
    for (const char* k : {"forward_ms", "restore_ms", "rerun_ms", "rerun_ms_min", "rerun_over_forward", "detector_ms",
                          "with_detector_ms", "with_detector_over_forward"}) {
        ASSERT_TRUE(a.contains(k)) << k;
        EXPECT_GE(a[k].get<double>(), 0.0) << k;
    }
    for (const char* k : {"layers", "loss", "top5", "dla"}) EXPECT_GE(a["rerun_parts_ms"][k].get<double>(), 0.0) << k;
    EXPECT_GE(a["detector_sequences"].get<int>(), 2);
    EXPECT_EQ(a["detector_length"], 2 * (64 / 3)) << "the tiny vocabulary has no BOS";
    EXPECT_FALSE(run_json({"bench", "--model", gpt2_dir, "--seq-len", "8", "--repeat", "1"}).contains("ablation"));
    expect_usage_error({"bench", "--model", gpt2_dir, "--ablate", "5.0"}, "--ablate '5.0'");
}
