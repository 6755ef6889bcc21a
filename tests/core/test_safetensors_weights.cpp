// Naming schemes (lesson, nanoGPT block, Hugging Face GPT-2, full nanoGPT model) from the
// committed fixtures, checked against a naive second reading of the same bytes, against
// the PyTorch dump of the lesson's weights, and the save -> load round trip.
#include "safetensors.h"
#include "test_safetensors_util.h"
#include "weights_io.h"
#include <gtest/gtest.h>
#include <random>

using namespace attnviz;
using namespace st_test;
using nlohmann::json;

// Expects m (rows x cols, row-major) to equal want bit for bit.
static void expect_bits(const float* got, const std::vector<float>& want, const std::string& what) {
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(bits_of(got[i]), bits_of(want[i])) << what << " element " << i;
}

// [rows][cols] -> [cols][rows]
static std::vector<float> transposed(const std::vector<float>& v, size_t rows, size_t cols) {
    std::vector<float> t(v.size());
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
    return t;
}

static std::vector<float> halves(const RawTensor& t) {
    std::vector<float> v;
    for (uint16_t h : raw_u16(t)) v.push_back(half_ref(h));
    return v;
}

static std::vector<float> bfloats(const RawTensor& t) {
    std::vector<float> v;
    for (uint16_t h : raw_u16(t)) v.push_back(bf16_ref(h));
    return v;
}

TEST(SafetensorsWeights, LessonFileHoldsTheLessonsWeights) {
    const std::string path = fixture("lesson_c8_h2.safetensors");
    LoadedWeights w;
    std::string error;
    ASSERT_TRUE(load_weights(path, std::nullopt, 0, w, error)) << error;
    EXPECT_EQ(w.scheme, WeightScheme::lesson);
    EXPECT_EQ(w.n_embd, 8);
    EXPECT_EQ(w.n_head, 2);
    EXPECT_TRUE(w.n_head_from_file);
    EXPECT_FALSE(w.conv1d);
    EXPECT_FALSE(w.weights.has_bias());
    EXPECT_EQ(w.layers, std::vector<int>{0});
    EXPECT_EQ(w.tensor_names.size(), 2u);
    EXPECT_NE(w.description.find(path), std::string::npos);
    EXPECT_EQ(w.weights.source, w.description);
    ASSERT_EQ(w.weights.c_attn.weight.rows(), 24);
    ASSERT_EQ(w.weights.c_attn.weight.cols(), 8);
    ASSERT_EQ(w.weights.c_proj.weight.rows(), 8);
    ASSERT_EQ(w.weights.c_proj.weight.cols(), 8);

    // the PyTorch dump of torch.manual_seed(0); SelfAttention(8, 2), printed round-trip exact
    std::ifstream f(std::string(ATTNVIZ_TEST_DATA) + "/lesson_example.json");
    json ref = json::parse(f);
    for (int r = 0; r < 24; ++r)
        for (int c = 0; c < 8; ++c) ASSERT_EQ(w.weights.c_attn.weight(r, c), float(ref["qkv_weight"][r][c].get<double>())) << r << "," << c;
    for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) ASSERT_EQ(w.weights.c_proj.weight(r, c), float(ref["proj_weight"][r][c].get<double>())) << r << "," << c;
    // n_head given by the caller wins over the file's
    ASSERT_TRUE(load_weights(path, 4, 0, w, error)) << error;
    EXPECT_EQ(w.n_head, 4);
    EXPECT_FALSE(w.n_head_from_file);
}

TEST(SafetensorsWeights, NanoGptBlockWithBiases) {
    const std::string path = fixture("nanogpt_block_c12.safetensors");
    LoadedWeights w;
    std::string error;
    ASSERT_TRUE(load_weights(path, 3, 0, w, error)) << error;
    EXPECT_EQ(w.scheme, WeightScheme::nanogpt_block);
    EXPECT_EQ(w.n_embd, 12);
    EXPECT_EQ(w.n_head, 3);
    EXPECT_FALSE(w.conv1d);
    auto raw = raw_tensors(path);
    ASSERT_EQ(w.weights.c_attn.bias.size(), 36);
    ASSERT_EQ(w.weights.c_proj.bias.size(), 12);
    expect_bits(w.weights.c_attn.weight.data(), raw_f32(raw["c_attn.weight"]), "c_attn.weight");
    expect_bits(w.weights.c_proj.weight.data(), raw_f32(raw["c_proj.weight"]), "c_proj.weight");
    expect_bits(w.weights.c_attn.bias.data(), raw_f32(raw["c_attn.bias"]), "c_attn.bias");
    expect_bits(w.weights.c_proj.bias.data(), raw_f32(raw["c_proj.bias"]), "c_proj.bias");
    EXPECT_EQ(w.qkv_bias_name, "c_attn.bias");
    EXPECT_NE(w.description.find("with biases"), std::string::npos);
}

TEST(SafetensorsWeights, HuggingFaceGpt2IsTransposedFromConv1D) {
    const std::string path = fixture("gpt2_hf_c12.safetensors");
    auto raw = raw_tensors(path);
    for (int layer : {0, 1}) {
        LoadedWeights w;
        std::string error;
        ASSERT_TRUE(load_weights(path, 4, layer, w, error)) << error;
        EXPECT_EQ(w.scheme, WeightScheme::layered);
        EXPECT_TRUE(w.conv1d);
        EXPECT_EQ(w.prefix, "");
        EXPECT_EQ(w.layer, layer);
        EXPECT_EQ(w.layers, (std::vector<int>{0, 1}));
        EXPECT_EQ(w.n_embd, 12);
        const std::string h = "h." + std::to_string(layer) + ".attn.";
        EXPECT_EQ(w.qkv_name, h + "c_attn.weight");
        ASSERT_EQ(raw[h + "c_attn.weight"].shape, (std::vector<uint64_t>{12, 36})); // Conv1D [in][out]
        expect_bits(w.weights.c_attn.weight.data(), transposed(raw_f32(raw[h + "c_attn.weight"]), 12, 36), h + "c_attn.weight");
        expect_bits(w.weights.c_proj.weight.data(), transposed(raw_f32(raw[h + "c_proj.weight"]), 12, 12), h + "c_proj.weight");
        expect_bits(w.weights.c_attn.bias.data(), raw_f32(raw[h + "c_attn.bias"]), h + "c_attn.bias");
        expect_bits(w.weights.c_proj.bias.data(), raw_f32(raw[h + "c_proj.bias"]), h + "c_proj.bias");
        EXPECT_NE(w.description.find("transposed"), std::string::npos);
    }
    // the two layers really differ, so picking the wrong one would be noticed
    LoadedWeights a, b;
    std::string error;
    ASSERT_TRUE(load_weights(path, 4, 0, a, error));
    ASSERT_TRUE(load_weights(path, 4, 1, b, error));
    EXPECT_NE(a.weights.c_attn.weight, b.weights.c_attn.weight);
}

TEST(SafetensorsWeights, PrefixedGpt2InHalfPrecision) {
    const std::string path = fixture("gpt2_hf_prefixed_f16.safetensors");
    auto raw = raw_tensors(path);
    LoadedWeights w;
    std::string error;
    ASSERT_TRUE(load_weights(path, 2, 2, w, error)) << error;
    EXPECT_EQ(w.prefix, "transformer.");
    EXPECT_TRUE(w.conv1d);
    EXPECT_EQ(w.layers, (std::vector<int>{0, 1, 2}));
    const std::string h = "transformer.h.2.attn.";
    ASSERT_EQ(raw[h + "c_attn.weight"].dtype, "F16");
    expect_bits(w.weights.c_attn.weight.data(), transposed(halves(raw[h + "c_attn.weight"]), 12, 36), h + "c_attn.weight");
    expect_bits(w.weights.c_proj.weight.data(), transposed(halves(raw[h + "c_proj.weight"]), 12, 12), h + "c_proj.weight");
    expect_bits(w.weights.c_attn.bias.data(), halves(raw[h + "c_attn.bias"]), h + "c_attn.bias");
    expect_bits(w.weights.c_proj.bias.data(), halves(raw[h + "c_proj.bias"]), h + "c_proj.bias");
}

TEST(SafetensorsWeights, FullNanoGptModelInBFloat16) {
    const std::string path = fixture("nanogpt_model_bf16.safetensors");
    auto raw = raw_tensors(path);
    LoadedWeights w;
    std::string error;
    ASSERT_TRUE(load_weights(path, std::nullopt, 1, w, error)) << error;
    EXPECT_EQ(w.scheme, WeightScheme::layered);
    EXPECT_FALSE(w.conv1d); // [3C][C]: nn.Linear layout, kept as it is
    EXPECT_EQ(w.prefix, "_orig_mod.transformer.");
    EXPECT_EQ(w.n_embd, 8);
    EXPECT_EQ(w.n_head, 4); // from __metadata__
    EXPECT_FALSE(w.weights.has_bias());
    const std::string h = "_orig_mod.transformer.h.1.attn.";
    ASSERT_EQ(raw[h + "c_attn.weight"].shape, (std::vector<uint64_t>{24, 8}));
    expect_bits(w.weights.c_attn.weight.data(), bfloats(raw[h + "c_attn.weight"]), h + "c_attn.weight");
    expect_bits(w.weights.c_proj.weight.data(), bfloats(raw[h + "c_proj.weight"]), h + "c_proj.weight");
    EXPECT_NE(w.description.find("nanoGPT model"), std::string::npos);
}

// A checkpoint holding the model twice (say "ema." + a copy): the shortest prefix, the
// model itself, is read, and the description says which tensors were used.
TEST(SafetensorsWeights, SeveralPrefixesPickTheShortest) {
    TempDir dir;
    const int C = 4;
    json h = json::object();
    std::string data;
    auto add = [&](const std::string& name, std::vector<uint64_t> shape, float value) {
        size_t n = 1;
        for (uint64_t d : shape) n *= d;
        h[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {data.size(), data.size() + 4 * n}}};
        data += f32_bytes(std::vector<float>(n, value));
    };
    add("ema.h.0.attn.c_attn.weight", {3 * C, C}, 2.f);
    add("ema.h.0.attn.c_proj.weight", {C, C}, 2.f);
    add("h.0.attn.c_attn.weight", {3 * C, C}, 1.f);
    add("h.0.attn.c_proj.weight", {C, C}, 1.f);
    add("h.01.attn.c_attn.weight", {3 * C, C}, 3.f); // not a layer number: ignored
    add("xh.1.attn.c_attn.weight", {3 * C, C}, 3.f); // not "h.N": ignored
    const std::string path = dir.file("two.safetensors");
    write_bytes(path, make_file(h.dump(), data));
    LoadedWeights w;
    std::string error;
    ASSERT_TRUE(load_weights(path, 2, 0, w, error)) << error;
    EXPECT_EQ(w.prefix, "");
    EXPECT_EQ(w.layers, std::vector<int>{0});
    EXPECT_EQ(w.weights.c_attn.weight(0, 0), 1.f);
    EXPECT_NE(w.description.find("(h.0.attn.c_attn.weight)"), std::string::npos) << w.description;
}

TEST(SafetensorsWeights, FileAndMemoryLoadersAgree) {
    const std::pair<const char*, int> cases[] = {
        {"lesson_c8_h2.safetensors", 0}, {"gpt2_hf_prefixed_f16.safetensors", 1}, {"nanogpt_model_bf16.safetensors", 1}};
    for (const auto& [name, layer] : cases) {
        const std::string path = fixture(name), bytes = read_bytes(path);
        LoadedWeights a, b;
        std::string error;
        ASSERT_TRUE(load_weights(path, 4, layer, a, error)) << error;
        ASSERT_TRUE(load_weights_from_memory((const uint8_t*)bytes.data(), bytes.size(), path, 4, layer, b, error))
            << error;
        EXPECT_EQ(a.weights.c_attn.weight, b.weights.c_attn.weight) << name;
        EXPECT_EQ(a.weights.c_proj.weight, b.weights.c_proj.weight) << name;
        EXPECT_EQ(a.description, b.description) << name;
    }
}

// ---------------------------------------------------------------------------------------
// Saving
// ---------------------------------------------------------------------------------------

static Weights random_weights(int C, bool biases, uint32_t seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal(0.f, 1.f);
    Weights w;
    w.c_attn.weight.resize(3 * C, C);
    w.c_proj.weight.resize(C, C);
    for (Eigen::Index i = 0; i < w.c_attn.weight.size(); ++i) w.c_attn.weight.data()[i] = normal(gen);
    for (Eigen::Index i = 0; i < w.c_proj.weight.size(); ++i) w.c_proj.weight.data()[i] = normal(gen);
    if (biases) {
        w.c_attn.bias.resize(3 * C);
        w.c_proj.bias.resize(C);
        for (Eigen::Index i = 0; i < w.c_attn.bias.size(); ++i) w.c_attn.bias[i] = normal(gen);
        for (Eigen::Index i = 0; i < w.c_proj.bias.size(); ++i) w.c_proj.bias[i] = normal(gen);
    }
    // values whose bits a careless writer would lose
    w.c_attn.weight(0, 0) = -0.f;
    w.c_attn.weight(1, 0) = std::numeric_limits<float>::denorm_min();
    w.c_attn.weight(2, 0) = std::numeric_limits<float>::max();
    w.c_proj.weight(0, 0) = -std::numeric_limits<float>::min();
    return w;
}

static void expect_same_weights(const Weights& a, const Weights& b) {
    ASSERT_EQ(a.c_attn.weight.rows(), b.c_attn.weight.rows());
    ASSERT_EQ(a.c_attn.weight.cols(), b.c_attn.weight.cols());
    ASSERT_EQ(a.c_proj.weight.rows(), b.c_proj.weight.rows());
    ASSERT_EQ(a.c_attn.bias.size(), b.c_attn.bias.size());
    ASSERT_EQ(a.c_proj.bias.size(), b.c_proj.bias.size());
    EXPECT_EQ(0, std::memcmp(a.c_attn.weight.data(), b.c_attn.weight.data(), 4 * a.c_attn.weight.size()));
    EXPECT_EQ(0, std::memcmp(a.c_proj.weight.data(), b.c_proj.weight.data(), 4 * a.c_proj.weight.size()));
    if (a.c_attn.bias.size()) {
        EXPECT_EQ(0, std::memcmp(a.c_attn.bias.data(), b.c_attn.bias.data(), 4 * a.c_attn.bias.size()));
    }
    if (a.c_proj.bias.size()) {
        EXPECT_EQ(0, std::memcmp(a.c_proj.bias.data(), b.c_proj.bias.data(), 4 * a.c_proj.bias.size()));
    }
}

TEST(SafetensorsSave, RoundTripIsBitExact) {
    TempDir dir;
    for (bool biases : {false, true}) {
        for (int C : {1, 8, 12, 48}) {
            const int H = C == 1 ? 1 : 4;
            Weights w = random_weights(C, biases, uint32_t(C * 2 + biases));
            const std::string path = dir.file("w" + std::to_string(C) + (biases ? "b" : "") + ".safetensors");
            std::string error;
            ASSERT_TRUE(save_weights(path, w, H, error)) << error;
            LoadedWeights back;
            ASSERT_TRUE(load_weights(path, std::nullopt, 0, back, error)) << error;
            EXPECT_EQ(back.n_head, H);
            EXPECT_EQ(back.scheme, WeightScheme::lesson);
            expect_same_weights(w, back.weights);

            // the naive reading agrees, so the file is right and not just self-consistent
            auto raw = raw_tensors(path);
            EXPECT_EQ(raw.size(), biases ? 4u : 2u);
            EXPECT_EQ(raw["qkv.weight"].shape, (std::vector<uint64_t>{uint64_t(3 * C), uint64_t(C)}));
            EXPECT_EQ(raw["qkv.weight"].dtype, "F32");
            expect_bits(w.c_attn.weight.data(), raw_f32(raw["qkv.weight"]), "qkv.weight");
            if (biases) {
                expect_bits(w.c_proj.bias.data(), raw_f32(raw["proj.bias"]), "proj.bias");
            }
        }
    }
    // nothing but the files themselves is left behind
    size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path)) {
        EXPECT_EQ(e.path().extension(), ".safetensors") << e.path();
        ++files;
    }
    EXPECT_EQ(files, 8u);
}

TEST(SafetensorsSave, LayoutIsTheSafetensorsOne) {
    TempDir dir;
    const std::string path = dir.file("w.safetensors");
    std::string error;
    ASSERT_TRUE(save_weights(path, random_weights(8, true, 7), 2, error)) << error;
    const std::string b = read_bytes(path);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(b[i]);
    EXPECT_EQ(n % 8, 0u);                    // 8-byte aligned data
    const std::string header = b.substr(8, n);
    EXPECT_EQ(header.find_last_not_of(' ') + 1 + (8 - (header.find_last_not_of(' ') + 1) % 8) % 8, n); // space padding only
    json h = json::parse(header);
    EXPECT_EQ(h["__metadata__"], (json{{"format", "pt"}, {"n_head", "2"}}));
    EXPECT_EQ(h.size(), 5u);
    // the data is packed in header order with no gaps, up to the end of the file
    uint64_t at = 0;
    for (const char* name : {"proj.bias", "proj.weight", "qkv.bias", "qkv.weight"}) {
        EXPECT_EQ(h[name]["data_offsets"][0].get<uint64_t>(), at) << name;
        at = h[name]["data_offsets"][1].get<uint64_t>();
    }
    EXPECT_EQ(8 + n + at, b.size());
}

// The writer produces, byte for byte, what the Python fixture script wrote for the
// lesson's weights in safetensors' own layout.
TEST(SafetensorsSave, SameBytesAsTheFixtureScript) {
    TempDir dir;
    LoadedWeights w;
    std::string error;
    ASSERT_TRUE(load_weights(fixture("lesson_c8_h2.safetensors"), std::nullopt, 0, w, error)) << error;
    const std::string path = dir.file("again.safetensors");
    ASSERT_TRUE(save_weights(path, w.weights, w.n_head, error)) << error;
    const std::string ours = read_bytes(path), theirs = read_bytes(fixture("lesson_c8_h2.safetensors"));
    EXPECT_TRUE(ours == theirs) << "header written: " << ours.substr(8, 184) << "\nfixture's:      " << theirs.substr(8, 184);
}

TEST(SafetensorsSave, ReplacesAnExistingFile) {
    TempDir dir;
    const std::string path = dir.file("w.safetensors");
    write_bytes(path, std::string(5000, 'x'));
    std::string error;
    Weights w = random_weights(8, false, 3);
    ASSERT_TRUE(save_weights(path, w, 2, error)) << error;
    LoadedWeights back;
    ASSERT_TRUE(load_weights(path, std::nullopt, 0, back, error)) << error;
    expect_same_weights(w, back.weights);
}

TEST(SafetensorsSave, RefusesWhatCannotBeLoadedAgain) {
    TempDir dir;
    const std::string path = dir.file("w.safetensors");
    auto refused = [&](const Weights& w, int H, const std::string& p, const std::string& expect) {
        std::string error;
        EXPECT_FALSE(save_weights(p, w, H, error));
        EXPECT_EQ(error.rfind(p + ": ", 0), 0u) << error;
        EXPECT_NE(error.find(expect), std::string::npos) << error;
        EXPECT_FALSE(std::filesystem::exists(path));
    };
    Weights w = random_weights(8, true, 1);
    refused(w, 3, path, "n_embd 8 is not divisible by n_head 3; n_head can be 1, 2, 4 or 8");
    refused(w, 0, path, "n_head 0");
    Weights bad = w;
    bad.c_attn.weight(4, 2) = NAN;
    refused(bad, 2, path, "qkv.weight has a non-finite value at flat index 34");
    bad = w;
    bad.c_attn.weight.resize(23, 8);
    refused(bad, 2, path, "qkv.weight is 23 x 8 but must be 24 x 8");
    bad = w;
    bad.c_proj.bias.resize(7);
    refused(bad, 2, path, "proj.bias has 7 values");
    refused(Weights{}, 1, path, "n_embd 0");
    refused(w, 2, dir.file("no/such/dir/w.safetensors"), "does not exist");
    refused(w, 2, dir.path, "directory");
}
