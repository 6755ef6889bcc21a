// test_weights.cpp: your own weights through the command line (--weights, --layer,
// save-weights). Files come from tests/data/weights (written by PyTorch, see
// scripts/make_weight_fixtures.py) or are built here in a temporary directory.
#include "run_attnviz.h"
#include "weights_io.h"
#include <cmath>
#include <cstdint>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>

using attnviz_test::load_json;
using attnviz_test::read_file;
using attnviz_test::expect_usage_error;
using attnviz_test::run_attnviz;
using attnviz_test::run_json;
using attnviz_test::RunResult;
using attnviz_test::same_float32;
using attnviz_test::TempDir;
using nlohmann::json;

namespace {

const std::string fixtures = ATTNVIZ_TEST_DATA "/weights/";
const std::string lesson_file = fixtures + "lesson_c8_h2.safetensors";    // SelfAttention(8, 2), seed 0
const std::string nanogpt_file = fixtures + "nanogpt_block_c12.safetensors"; // c_attn/c_proj + biases, no n_head
const std::string gpt2_file = fixtures + "gpt2_hf_c12.safetensors";       // h.0, h.1; Conv1D, biases, no n_head
const std::string gpt2_f16_file = fixtures + "gpt2_hf_prefixed_f16.safetensors";
const std::string nanogpt_model_file = fixtures + "nanogpt_model_bf16.safetensors"; // n_head 4 in metadata

RunResult run(const std::vector<std::string>& args) { return run_attnviz(args); }

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), std::streamsize(bytes.size()));
}

// A safetensors file by hand: 8-byte little-endian header length, the header, the data.
std::string safetensors_bytes(const std::string& header, const std::string& data) {
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
    return out + header + data;
}

std::string floats_bytes(const std::vector<float>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// Every number of a JSON tree is finite (null stands for NaN or infinity).
bool all_finite(const json& j) {
    if (j.is_array()) {
        for (const json& e : j)
            if (!all_finite(e)) return false;
        return true;
    }
    return j.is_number() && std::isfinite(j.get<double>());
}

} // namespace

// =======================================================================================
// Loading through trace

TEST(Weights, LessonFileReproducesPyTorchsLessonBitForBit) {
    // The fixture is the lesson's SelfAttention(8, 2) after torch.manual_seed(0), and x still
    // comes from --seed 0: the whole reference run, intermediates included, must match.
    json ref = load_json(ATTNVIZ_TEST_DATA "/lesson_example.json");
    json j = run_json({"trace", "--weights", lesson_file, "--perturb", "2", "--kernel", "reference",
                       "--intermediates"});
    for (const char* key : {"n_embd", "n_head", "T", "param_count", "qkv_weight", "proj_weight", "x",
                            "perturbed_row", "x2", "y1", "y2", "max_abs_diff_per_position"}) {
        std::string where;
        EXPECT_TRUE(same_float32(j[key], ref[key], key, where)) << where;
    }
    std::string where;
    EXPECT_TRUE(same_float32(j["intermediates_for_x"], ref["intermediates_for_x"], "intermediates_for_x", where))
        << where;
    const json& w = j["weights"];
    EXPECT_EQ(w["file"], lesson_file);
    EXPECT_EQ(w["scheme"], "lesson");
    EXPECT_EQ(w["names"]["qkv"], "qkv.weight");
    EXPECT_EQ(w["names"]["proj"], "proj.weight");
    EXPECT_TRUE(w["names"]["qkv_bias"].is_null());
    EXPECT_TRUE(w["names"]["proj_bias"].is_null());
    EXPECT_EQ(w["layer"], 0);
    EXPECT_EQ(w["has_bias"], false);
    EXPECT_EQ(w["n_head_from_file"], true);
    EXPECT_EQ(w["transposed"], false);
}

TEST(Weights, SeededTraceHasNoWeightsObject) {
    json j = run_json({"trace"});
    EXPECT_FALSE(j.contains("weights"));
    EXPECT_FALSE(j.contains("qkv_bias"));
}

TEST(Weights, InputStillComesFromTheSeed) {
    // The generator skips the 4C^2 weight draws: x is the one the seeded run draws.
    json seeded = run_json({"trace", "--seed", "5", "--n-embd", "12", "--n-head", "3", "--seq-len", "6"});
    json loaded = run_json({"trace", "--seed", "5", "--weights", nanogpt_file, "--n-head", "3", "--seq-len", "6"});
    EXPECT_EQ(loaded["x"], seeded["x"]);
    EXPECT_NE(loaded["qkv_weight"], seeded["qkv_weight"]);
    EXPECT_NE(loaded["y1"], seeded["y1"]);
    // The same with words: x equals PyTorch's embedding rows for the text (text_examples case 0).
    json text = run_json({"trace", "--text", "the cat saw the cat", "--weights", lesson_file});
    json words = run_json({"trace", "--text", "the cat saw the cat"});
    EXPECT_EQ(text["x"], words["x"]);
    EXPECT_EQ(text["y1"], words["y1"]); // lesson_file is the seeded SelfAttention(8, 2)
    EXPECT_EQ(text["tokens"], words["tokens"]);
}

TEST(Weights, NanoGptBlockWithBiases) {
    json j = run_json({"trace", "--weights", nanogpt_file, "--n-head", "3", "--seq-len", "5", "--perturb", "1"});
    EXPECT_EQ(j["n_embd"], 12);
    EXPECT_EQ(j["n_head"], 3);
    EXPECT_EQ(j["head_dim"], 4);
    EXPECT_EQ(j["param_count"], 4 * 12 * 12 + 3 * 12 + 12);
    const json& w = j["weights"];
    EXPECT_EQ(w["scheme"], "nanoGPT attention block");
    EXPECT_EQ(w["names"]["qkv"], "c_attn.weight");
    EXPECT_EQ(w["names"]["qkv_bias"], "c_attn.bias");
    EXPECT_EQ(w["names"]["proj_bias"], "c_proj.bias");
    EXPECT_EQ(w["has_bias"], true);
    EXPECT_EQ(w["n_head_from_file"], false);
    ASSERT_EQ(j["qkv_bias"].size(), 36u);
    ASSERT_EQ(j["proj_bias"].size(), 12u);
    EXPECT_TRUE(all_finite(j["y1"]));
    EXPECT_TRUE(all_finite(j["y2"]));
    EXPECT_EQ(j["max_abs_diff_per_position"][0].get<double>(), 0.0); // causal, biases or not
}

TEST(Weights, Gpt2LayerIsTransposedFromConv1D) {
    json l0 = run_json({"trace", "--weights", gpt2_file, "--n-head", "3"});
    json l1 = run_json({"trace", "--weights", gpt2_file, "--n-head", "3", "--layer", "1"});
    EXPECT_EQ(l1["weights"]["scheme"], "GPT-2 (Hugging Face)");
    EXPECT_EQ(l1["weights"]["names"]["qkv"], "h.1.attn.c_attn.weight");
    EXPECT_EQ(l1["weights"]["layer"], 1);
    EXPECT_EQ(l1["weights"]["layers"], (json{0, 1}));
    EXPECT_EQ(l1["weights"]["transposed"], true);
    EXPECT_EQ(l0["weights"]["layer"], 0);
    EXPECT_EQ(l1["n_embd"], 12);
    EXPECT_NE(l0["qkv_weight"], l1["qkv_weight"]);
    EXPECT_TRUE(all_finite(l1["y1"]));
    // Stored [C][3C] = [in][out]: row o of the loaded (3C, C) matrix is column o of the file's.
    attnviz::SafetensorsFile file;
    std::string error;
    ASSERT_TRUE(attnviz::read_safetensors_header(gpt2_file, file, error)) << error;
    const attnviz::TensorInfo* t = file.find("h.1.attn.c_attn.weight");
    ASSERT_NE(t, nullptr);
    std::vector<float> stored;
    ASSERT_TRUE(attnviz::read_tensor(file, *t, stored, error)) << error;
    for (int o = 0; o < 36; ++o)
        for (int i = 0; i < 12; ++i)
            ASSERT_EQ(float(l1["qkv_weight"][o][i].get<double>()), stored[size_t(i) * 36 + o]) << o << ", " << i;
    // Half-precision and a "transformer." prefix, and a full nanoGPT model in bfloat16 whose
    // metadata gives n_head.
    json f16 = run_json({"trace", "--weights", gpt2_f16_file, "--n-head", "2", "--layer", "2"});
    EXPECT_EQ(f16["weights"]["names"]["qkv"], "transformer.h.2.attn.c_attn.weight");
    EXPECT_TRUE(all_finite(f16["y1"]));
    json bf16 = run_json({"trace", "--weights", nanogpt_model_file, "--layer", "1"});
    EXPECT_EQ(bf16["n_head"], 4);
    EXPECT_EQ(bf16["weights"]["n_head_from_file"], true);
    EXPECT_EQ(bf16["weights"]["scheme"], "nanoGPT model");
    EXPECT_TRUE(all_finite(bf16["y1"]));
}

// The forward adds the biases as nn.Linear does: qkv = x W^T + b, y = concat Wp^T + bp,
// recomputed here in double from the numbers the trace prints.
TEST(Weights, BiasesAreAddedAsNnLinearAddsThem) {
    json j = run_json({"trace", "--weights", nanogpt_file, "--n-head", "3", "--seq-len", "4", "--intermediates"});
    const int T = 4, C = 12;
    const json &x = j["x"][0], &W = j["qkv_weight"], &b = j["qkv_bias"];
    const json &qkv = j["intermediates_for_x"]["qkv"][0], &concat = j["intermediates_for_x"]["y_concat_before_proj"][0];
    const json &Wp = j["proj_weight"], &bp = j["proj_bias"], &y = j["y1"][0];
    for (int t = 0; t < T; ++t) {
        for (int o = 0; o < 3 * C; ++o) {
            double s = b[o].get<double>();
            for (int i = 0; i < C; ++i) s += x[t][i].get<double>() * W[o][i].get<double>();
            EXPECT_NEAR(qkv[t][o].get<double>(), s, 1e-5) << "qkv " << t << ", " << o;
        }
        for (int o = 0; o < C; ++o) {
            double s = bp[o].get<double>();
            for (int i = 0; i < C; ++i) s += concat[t][i].get<double>() * Wp[o][i].get<double>();
            EXPECT_NEAR(y[t][o].get<double>(), s, 1e-5) << "y " << t << ", " << o;
        }
    }
}

TEST(Weights, TheSameWeightsWithoutBiasesGiveADifferentY) {
    TempDir dir;
    attnviz::LoadedWeights lw;
    std::string error;
    ASSERT_TRUE(attnviz::load_weights(nanogpt_file, 3, 0, lw, error)) << error;
    ASSERT_TRUE(lw.weights.has_bias());
    attnviz::Weights no_bias = lw.weights;
    no_bias.c_attn.bias.resize(0);
    no_bias.c_proj.bias.resize(0);
    const std::string path = dir.path + "/no_bias.safetensors";
    ASSERT_TRUE(attnviz::save_weights(path, no_bias, 3, error)) << error;

    json with = run_json({"trace", "--weights", nanogpt_file, "--n-head", "3"});
    json without = run_json({"trace", "--weights", path});
    EXPECT_EQ(without["weights"]["has_bias"], false);
    EXPECT_EQ(with["qkv_weight"], without["qkv_weight"]);
    EXPECT_EQ(with["x"], without["x"]);
    double largest = 0;
    for (int t = 0; t < 4; ++t)
        for (int c = 0; c < 12; ++c)
            largest = std::max(largest, std::abs(with["y1"][0][t][c].get<double>() - without["y1"][0][t][c].get<double>()));
    EXPECT_GT(largest, 1e-3);
}

TEST(Weights, ExportAndBenchTakeWeightsToo) {
    TempDir dir;
    const std::string out = dir.path + "/y.npy";
    RunResult r = run({"export", "--weights", gpt2_file, "--n-head", "4", "--layer", "1", "--tensor", "y", "--out", out});
    ASSERT_EQ(r.status, 0) << r.err;
    std::string npy = read_file(out);
    EXPECT_NE(npy.find("'shape': (4, 12)"), std::string::npos);
    json b = run_json({"bench", "--weights", nanogpt_file, "--n-head", "6", "--repeat", "3"});
    EXPECT_EQ(b["n_embd"], 12);
    EXPECT_EQ(b["n_head"], 6);
    EXPECT_EQ(b["has_bias"], true);
    EXPECT_NE(b["weights"].get<std::string>().find("nanogpt_block_c12.safetensors"), std::string::npos);
}

// =======================================================================================
// Options that contradict the file, and malformed files

TEST(Weights, OptionsThatContradictTheFileAreOneSentence) {
    expect_usage_error({"trace", "--weights", lesson_file, "--n-embd", "16"}, "--n-embd 16 does not match");
    expect_usage_error({"trace", "--weights", lesson_file, "--n-head", "3"}, "not divisible by n_head 3");
    expect_usage_error({"trace", "--weights", gpt2_file}, "give --n-head");
    expect_usage_error({"trace", "--weights", gpt2_file, "--n-head", "3", "--layer", "2"}, "layer 2 does not exist");
    expect_usage_error({"trace", "--weights", lesson_file, "--layer", "1"}, "layer 1 does not exist");
    expect_usage_error({"trace", "--weights", lesson_file, "--layer", "-1"}, "--layer");
    expect_usage_error({"trace", "--layer", "1"}, "--layer 1 needs --weights");
    // --n-embd equal to the file's is fine.
    EXPECT_EQ(run_json({"trace", "--weights", lesson_file, "--n-embd", "8"})["n_embd"], 8);
}

TEST(Weights, MalformedFilesGetTheLoadersSentence) {
    TempDir dir;
    const std::string lesson = read_file(lesson_file);
    ASSERT_GT(lesson.size(), 200u);
    struct Bad {
        std::string name, bytes, must_contain;
    };
    const std::string valid_header =
        R"({"__metadata__":{"n_head":"1"},"qkv.weight":{"dtype":"F32","shape":[3,1],"data_offsets":[0,12]},"proj.weight":{"dtype":"F32","shape":[1,1],"data_offsets":[12,16]}})";
    const std::vector<Bad> bad = {
        {"empty.safetensors", "", "the file is empty"},
        {"text.safetensors", "qkv.weight = [[1, 2], [3, 4]]\nproj.weight = [[1]]\n", "text.safetensors"},
        {"short.safetensors", "hello", "too short"},
        {"truncated_header.safetensors", lesson.substr(0, 100), "truncated"},
        {"truncated_data.safetensors", lesson.substr(0, lesson.size() - 20), "truncated_data.safetensors"},
        {"not_json.safetensors", safetensors_bytes("{not json at all}       ", ""), "not_json.safetensors"},
        {"no_attention.safetensors",
         safetensors_bytes(R"({"wte.weight":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", floats_bytes({1.f})),
         "no attention weights found"},
        {"nan.safetensors", safetensors_bytes(valid_header, floats_bytes({1.f, NAN, 2.f, 3.f})), "non-finite"},
    };
    for (const Bad& b : bad) {
        const std::string path = dir.path + "/" + b.name;
        write_bytes(path, b.bytes);
        expect_usage_error({"trace", "--weights", path}, b.must_contain);
    }
    // A missing path and a directory.
    expect_usage_error({"trace", "--weights", dir.path + "/missing.safetensors"}, "missing.safetensors");
    expect_usage_error({"trace", "--weights", dir.path}, "directory");
    expect_usage_error({"trace", "--weights", ""}, "no file name");
    // The same sentences from the other commands.
    expect_usage_error({"bench", "--weights", dir.path + "/empty.safetensors"}, "the file is empty");
    expect_usage_error({"export", "--weights", dir.path + "/truncated_header.safetensors", "--tensor", "y", "--out",
                        dir.path + "/y.npy"},
                       "truncated");
    expect_usage_error({"save-weights", dir.path + "/out.safetensors", "--weights", dir.path}, "directory");
}

// =======================================================================================
// save-weights

TEST(SaveWeights, SeededWeightsReadBackGiveTheSameRunBitForBit) {
    TempDir dir;
    const std::string path = dir.path + "/attn.safetensors";
    RunResult r = run({"save-weights", path, "--seed", "4", "--n-embd", "12", "--n-head", "3"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("wrote " + path), std::string::npos) << r.out;
    json seeded = run_json({"trace", "--seed", "4", "--n-embd", "12", "--n-head", "3", "--seq-len", "6", "--perturb", "3"});
    json loaded = run_json({"trace", "--seed", "4", "--weights", path, "--seq-len", "6", "--perturb", "3"});
    EXPECT_EQ(loaded["n_head"], 3); // from the file's metadata
    EXPECT_EQ(loaded["weights"]["n_head_from_file"], true);
    for (const char* key : {"qkv_weight", "proj_weight", "x", "y1", "y2", "max_abs_diff_per_position"})
        EXPECT_EQ(loaded[key], seeded[key]) << key;

    // The file itself: the lesson's names, F32, n_head in the metadata, no biases.
    attnviz::SafetensorsFile file;
    std::string error;
    ASSERT_TRUE(attnviz::read_safetensors_header(path, file, error)) << error;
    ASSERT_EQ(file.tensors.size(), 2u);
    for (const attnviz::TensorInfo& t : file.tensors) EXPECT_EQ(t.dtype, "F32") << t.name;
    ASSERT_NE(file.find("qkv.weight"), nullptr);
    EXPECT_EQ(file.find("qkv.weight")->shape, (std::vector<uint64_t>{36, 12}));
    ASSERT_NE(file.find("proj.weight"), nullptr);
    EXPECT_EQ(file.find("proj.weight")->shape, (std::vector<uint64_t>{12, 12}));
    ASSERT_NE(file.meta("n_head"), nullptr);
    EXPECT_EQ(*file.meta("n_head"), "3");
}

TEST(SaveWeights, TheLessonsWeightsAreTheBytesPyTorchWrote) {
    // tests/data/weights/lesson_c8_h2.safetensors is SelfAttention(8, 2)'s state_dict after
    // torch.manual_seed(0), written as safetensors.torch.save_file writes it.
    TempDir dir;
    const std::string path = dir.path + "/lesson.safetensors";
    RunResult r = run({"save-weights", path});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(path), read_file(lesson_file));
}

TEST(SaveWeights, ALoadedLayerIsSavedWithItsBiasesUnderTheLessonsNames) {
    TempDir dir;
    const std::string path = dir.path + "/layer1.safetensors";
    RunResult r = run({"save-weights", path, "--weights", gpt2_file, "--n-head", "3", "--layer", "1"});
    ASSERT_EQ(r.status, 0) << r.err;
    json original = run_json({"trace", "--weights", gpt2_file, "--n-head", "3", "--layer", "1"});
    json saved = run_json({"trace", "--weights", path});
    EXPECT_EQ(saved["weights"]["scheme"], "lesson");
    EXPECT_EQ(saved["weights"]["names"]["qkv_bias"], "qkv.bias");
    EXPECT_EQ(saved["weights"]["names"]["proj_bias"], "proj.bias");
    EXPECT_EQ(saved["n_head"], 3);
    for (const char* key : {"qkv_weight", "proj_weight", "qkv_bias", "proj_bias", "x", "y1"})
        EXPECT_EQ(saved[key], original[key]) << key;
}

TEST(SaveWeights, BadTargetsAndOptionsAreOneSentence) {
    TempDir dir;
    expect_usage_error({"save-weights", dir.path + "/attn.bin"}, "does not end in .safetensors");
    expect_usage_error({"save-weights", dir.path + "/no/such/dir/attn.safetensors"}, "does not exist");
    const std::string taken = dir.path + "/taken.safetensors";
    ASSERT_EQ(mkdir(taken.c_str(), 0755), 0);
    expect_usage_error({"save-weights", taken}, "directory");
    expect_usage_error({"save-weights", dir.path + "/a.safetensors", "--n-embd", "10", "--n-head", "3"},
                       "n_embd 10 is not divisible by n_head 3");
    expect_usage_error({"save-weights", dir.path + "/a.safetensors", "--seq-len", "4"}, "--seq-len");
    expect_usage_error({"save-weights", dir.path + "/a.safetensors", "--text", "a b"}, "--text");
    // Nothing but the directory made above was left behind.
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken.safetensors"});
}
