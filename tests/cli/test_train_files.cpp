// test_train_files.cpp: trained models that torch wrote (tests/data/train, from the training
// recipe's --save through scripts/gen_train_files.py) in attnviz heads and attnviz trace,
// against what the recipe computed for the same files; and trained files where only
// attention-layer files are taken (the window, bench, export), refused with one sentence.
#include "run_attnviz.h"
#include "safetensors.h"
#include <cmath>
#include <gtest/gtest.h>

using attnviz_test::load_json;
using attnviz_test::expect_usage_error;
using attnviz_test::run_attnviz;
using attnviz_test::run_json;
using attnviz_test::RunResult;
using attnviz_test::same_float32;
using nlohmann::json;

namespace {

const std::string train_dir = ATTNVIZ_TEST_DATA "/train/";
const std::string both_file = train_dir + "both_s0_200.safetensors";
const std::string induction_file = train_dir + "induction_s1_120.safetensors";

json runs() { return load_json(train_dir + "recipe_runs.json").at("runs"); }

void expect_within(const json& ours, const json& ref, double tol, const std::string& where) {
    ASSERT_EQ(ours.is_array(), ref.is_array()) << where;
    if (ref.is_array()) {
        ASSERT_EQ(ours.size(), ref.size()) << where;
        for (size_t i = 0; i < ref.size(); ++i) expect_within(ours[i], ref[i], tol, where + "[" + std::to_string(i) + "]");
        return;
    }
    EXPECT_NEAR(ours.get<double>(), ref.get<double>(), tol) << where;
}

} // namespace

TEST(TrainFiles, HeadsOfTorchFilesAreTheRecipes) {
    const json all = runs();
    ASSERT_GE(all.size(), 3u);
    for (auto it = all.begin(); it != all.end(); ++it) {
        const std::string file = train_dir + it.key() + ".safetensors";
        json j = run_json({"heads", "--weights", file});
        const json& ref = it.value();
        EXPECT_EQ(j.at("task"), ref.at("task"));
        EXPECT_EQ(j.at("file"), file);
        for (const char* k : {"V", "T", "C", "H", "L"}) EXPECT_EQ(j.at("config").at(k), ref.at("config").at(k)) << k;
        for (const char* k : {"prev_token", "duplicate", "induction"}) {
            const json& s = ref.at("head_scores").at(k);
            ASSERT_EQ(s.size(), size_t(ref.at("config").at("L").get<int>())) << k;
            expect_within(j.at("head_scores").at(k), s, 1e-4, it.key() + "." + k);
        }
        // The same probe batch through a bit-exact forward: the same argmax everywhere.
        EXPECT_EQ(j.at("accuracy").size(), ref.at("accuracy").size());
        for (auto a = ref.at("accuracy").begin(); a != ref.at("accuracy").end(); ++a)
            expect_within(j.at("accuracy").at(a.key()), a.value(), 1e-6, it.key() + ".accuracy." + a.key());
    }
}

TEST(TrainFiles, TraceBlocksAreTorchsForwardBitForBit) {
    const json all = runs();
    for (auto it = all.begin(); it != all.end(); ++it) {
        const json& probe = it.value().at("probe");
        const std::string file = train_dir + it.key() + ".safetensors";
        json j = run_json({"trace", "--weights", file, "--text", probe.at("text"), "--intermediates"});
        EXPECT_EQ(j.at("token_ids"), probe.at("tokens"));
        EXPECT_EQ(j.at("tokens").at(0), "^");
        EXPECT_EQ(j.at("T").get<int>(), int(probe.at("tokens").size()));
        EXPECT_EQ(j.at("kernel"), "reference");
        EXPECT_EQ(j.at("weights").at("scheme"), "trained model");
        const json& layers = probe.at("layers");
        ASSERT_EQ(j.at("layers").size(), layers.size()) << it.key();
        std::string where;
        for (size_t l = 0; l < layers.size(); ++l) {
            const json& ours = j.at("layers")[l];
            EXPECT_EQ(ours.at("layer").get<size_t>(), l);
            EXPECT_TRUE(same_float32(ours.at("x")[0], layers[l].at("x"), "x", where)) << it.key() << " layer " << l << " " << where;
            EXPECT_TRUE(same_float32(ours.at("softmax_probs")[0], layers[l].at("att"), "att", where))
                << it.key() << " layer " << l << " " << where;
            EXPECT_TRUE(same_float32(ours.at("y")[0], layers[l].at("y"), "y", where)) << it.key() << " layer " << l << " " << where;
        }
        EXPECT_TRUE(same_float32(j.at("y1")[0], probe.at("h_out"), "h_out", where)) << it.key() << " " << where;
        for (auto lg = probe.at("logits").begin(); lg != probe.at("logits").end(); ++lg)
            EXPECT_TRUE(same_float32(j.at("logits").at(lg.key())[0], lg.value(), lg.key(), where)) << it.key() << " " << where;
        EXPECT_EQ(j.at("logits").size(), probe.at("logits").size());
    }
}

TEST(TrainFiles, PerturbChangesOnlyWhatComesAfter) {
    // "^ a b c a b d": position 3 holds c, which becomes d.
    json j = run_json({"trace", "--weights", induction_file, "--text", "a b c a b d", "--perturb", "3"});
    EXPECT_EQ(j.at("perturbed_position"), 3);
    EXPECT_EQ(j.at("perturbed_token").at("from"), "c");
    EXPECT_EQ(j.at("perturbed_token").at("to"), "d");
    const json& d = j.at("max_abs_diff_per_position");
    ASSERT_EQ(d.size(), 7u);
    for (int t = 0; t < 3; ++t) EXPECT_EQ(d[size_t(t)].get<double>(), 0.0) << t;
    for (int t = 3; t < 7; ++t) EXPECT_GT(d[size_t(t)].get<double>(), 0.0) << t;
    const json& per_layer = j.at("max_abs_diff_per_position_per_layer");
    ASSERT_EQ(per_layer.size(), 2u);
    for (const json& layer : per_layer) {
        ASSERT_EQ(layer.size(), 7u);
        for (int t = 0; t < 3; ++t) EXPECT_EQ(layer[size_t(t)].get<double>(), 0.0) << t;
        EXPECT_GT(layer[3].get<double>(), 0.0);
    }
    // The last token wraps to the first: p is the 16th letter, "p" -> "a".
    json w = run_json({"trace", "--weights", both_file, "--text", "a p", "--perturb", "2"});
    EXPECT_EQ(w.at("perturbed_token").at("to"), "a");
    // The unperturbed run is the same with or without --perturb.
    json plain = run_json({"trace", "--weights", induction_file, "--text", "a b c a b d"});
    EXPECT_EQ(plain.at("y1"), j.at("y1"));
    EXPECT_FALSE(plain.contains("layers"));
}

TEST(TrainFiles, FastKernelAgreesWithTheReference) {
    json r = run_json({"trace", "--weights", induction_file, "--text", "a b c a b d", "--intermediates"});
    json f = run_json({"trace", "--weights", induction_file, "--text", "a b c a b d", "--intermediates", "--kernel", "fast"});
    EXPECT_EQ(f.at("kernel"), "fast");
    for (size_t l = 0; l < 2; ++l) {
        const json &a = r.at("layers")[l].at("y")[0], &b = f.at("layers")[l].at("y")[0];
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i)
            for (size_t c = 0; c < a[i].size(); ++c)
                EXPECT_NEAR(b[i][c].get<double>(), a[i][c].get<double>(), 1e-4 * std::max(1.0, std::fabs(a[i][c].get<double>())));
    }
}

TEST(TrainFiles, TraceRefusesWhatTheModelCannotRead) {
    expect_usage_error({"trace", "--weights", both_file, "--text", "a b z"},
                       "word 'z' is not in the vocabulary of " + both_file + " (a, b, c ... p)");
    expect_usage_error({"trace", "--weights", both_file, "--text", "a ^ b"}, "BOS (^) is put first");
    expect_usage_error({"trace", "--weights", both_file}, "give --text with words of its vocabulary (a, b, c ... p)");
    expect_usage_error({"trace", "--weights", both_file, "--text", "a b c d e f g h i j k l m n o p a"},
                       "--text has 17 words but " + both_file + " knows 16 positions after BOS");
    expect_usage_error({"trace", "--weights", both_file, "--text", "a b c", "--perturb", "0"}, "--perturb 0 is BOS (^)");
    expect_usage_error({"trace", "--weights", both_file, "--text", "a b c", "--perturb", "4"}, "--perturb");
    expect_usage_error({"trace", "--weights", both_file, "--text", "a b", "--mask", "none"}, "--mask none does not apply");
    expect_usage_error({"trace", "--weights", both_file, "--text", "a b", "--seq-len", "3"}, "--seq-len 3 does not apply");
    expect_usage_error({"trace", "--weights", both_file, "--text", "a b", "--layer", "1"}, "--layer 1 does not apply");
    expect_usage_error({"trace", "--weights", both_file, "--text", "a b", "--n-head", "2"},
                       "--n-head 2 does not match " + both_file + ", whose n_head is 4");
    expect_usage_error({"trace", "--weights", both_file, "--text", "a b", "--kernel", "quick"}, "quick");
}

TEST(TrainFiles, HeadsRefusesFilesThatAreNotTrainedModels) {
    expect_usage_error({"heads", "--weights", ATTNVIZ_TEST_DATA "/weights/lesson_c8_h2.safetensors"},
                       "is not a model trained by attnviz train");
    expect_usage_error({"heads", "--weights", train_dir + "missing.safetensors"}, "no such file");
    expect_usage_error({"heads"}, "--weights");
}

TEST(TrainFiles, CommandsOfOneAttentionLayerRefuseTrainedModels) {
    const std::string says = "is a model trained by attnviz train (task 'both'), not an attention layer";
    expect_usage_error({"bench", "--weights", both_file, "--repeat", "1"}, says);
    expect_usage_error({"export", "--weights", both_file, "--tensor", "y", "--out", "/tmp/never-written.npy"}, says);
    expect_usage_error({"save-weights", "/tmp/never-written.safetensors", "--weights", both_file}, says);
    // The window opens it whole; the lesson's options that would change its sizes are refused
    // before it opens (no display is needed to see the sentence).
    expect_usage_error({"--weights", both_file, "--seed", "3"}, "--seed 3 does not apply");
    expect_usage_error({"--weights", both_file, "--text", "a z"}, "'z' is not a letter of the model's vocabulary");
}

TEST(TrainFiles, AFileThatIsNeitherALayerNorATrainedModelIsOneSentence) {
    attnviz_test::TempDir dir;
    const std::string path = dir.path + "/other.safetensors";
    const std::vector<float> v(6, 1.f);
    std::string error;
    ASSERT_TRUE(attnviz::write_safetensors(path, {{"encoder.embed.weight", {2, 3}, v.data()}}, {}, error)) << error;
    expect_usage_error({"trace", "--weights", path}, "or a model from attnviz train");
    expect_usage_error({"heads", "--weights", path}, "is not a model trained by attnviz train");
    // attnviz_task without the rest of a model: the model reader's sentence, not a crash.
    ASSERT_TRUE(attnviz::write_safetensors(path, {{"encoder.embed.weight", {2, 3}, v.data()}}, {{"attnviz_task", "both"}},
                                           error))
        << error;
    expect_usage_error({"trace", "--weights", path, "--text", "a"}, "a trained model needs transformer.wte.weight");
    expect_usage_error({"heads", "--weights", path}, "a trained model needs transformer.wte.weight");
    expect_usage_error({"--weights", path}, "a trained model needs transformer.wte.weight");
}
