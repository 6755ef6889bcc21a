// test_gpt_files.cpp: GPT files that are not one consistent model are refused with one
// sentence naming the file and the problem, and the model the caller had is kept.
// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics wherever Eigen's
// products inline them; the values are defined, so the warning is silenced here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "gpt_test_util.h"
#include <fstream>

namespace attnviz::test {
namespace {

class GptFiles : public ::testing::Test {
protected:
    void SetUp() override { good = load_fixture_model(gpt_data("gpt2")); }

    // Loads `path` into a model that already holds `good`; expects a refusal whose sentence
    // contains `needle`, and the model left as it was.
    void expect_refused(const std::string& path, const std::string& needle, std::optional<int> n_head = std::nullopt) {
        Model m = good;
        GptFileInfo info;
        std::string error;
        EXPECT_FALSE(load_gpt(path, n_head, m, info, error)) << path;
        EXPECT_NE(error.find(needle), std::string::npos) << error;
        EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 0) << error;
        EXPECT_EQ(m.wte, good.wte);
        EXPECT_EQ(m.config.n_layer, good.config.n_layer);
    }
    std::string write(GptTensors g, const std::string& name) {
        const std::string path = dir.file(name);
        EXPECT_TRUE(g.write(path));
        return path;
    }
    GptTensors nano() {
        GptTensors g = gpt_tensors(good, false, "transformer.");
        g.meta = {{"n_head", "4"}};
        return g;
    }

    Model good;
    ScratchDir dir;
};

TEST_F(GptFiles, TheWellFormedRewriteLoads) {
    Model m;
    GptFileInfo info;
    std::string error;
    ASSERT_TRUE(load_gpt(write(nano(), "ok.safetensors"), std::nullopt, m, info, error)) << error;
    EXPECT_EQ(info.n_head_from, "__metadata__");
    EXPECT_EQ(info.layout, "nanoGPT");
    EXPECT_EQ(m.h[1].mlp.c_proj.weight, good.h[1].mlp.c_proj.weight);
}

TEST_F(GptFiles, Truncated) {
    const std::string path = write(nano(), "cut.safetensors");
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size() - 100));
    expect_refused(path, "cut.safetensors");
}

TEST_F(GptFiles, MissingTensor) {
    GptTensors g = nano();
    g.t.erase("transformer.h.1.mlp.c_fc.weight");
    expect_refused(write(g, "missing.safetensors"), "transformer.h.1.mlp.c_fc.weight is missing");
}

TEST_F(GptFiles, MissingBiasWhenTheOthersHaveOne) {
    GptTensors g = nano();
    g.t.erase("transformer.h.0.ln_2.bias");
    expect_refused(write(g, "nobias.safetensors"), "transformer.h.0.ln_2.bias is missing");
}

TEST_F(GptFiles, WrongShape) {
    GptTensors g = nano();
    auto& ln = g.t["transformer.h.1.ln_1.weight"];
    ln.first = {63};
    ln.second.resize(63);
    expect_refused(write(g, "shape.safetensors"), "has shape [63] where the model needs [64]");
}

TEST_F(GptFiles, AttentionOfNeitherLayout) {
    GptTensors g = nano();
    auto& w = g.t["transformer.h.0.attn.c_attn.weight"];
    w.first = {64, 64};
    w.second.resize(64 * 64);
    expect_refused(write(g, "layout.safetensors"), "neither Conv1D's");
}

TEST_F(GptFiles, NHeadNotDividingC) {
    GptTensors g = nano();
    g.meta = {{"n_head", "5"}};
    expect_refused(write(g, "heads.safetensors"), "n_head 5 does not divide n_embd 64");
    expect_refused(write(nano(), "heads2.safetensors"), "n_head 7 does not divide", 7);
}

TEST_F(GptFiles, NoNHeadAnywhereAsksForIt) {
    GptTensors g = nano();
    g.meta.clear();
    const std::string path = write(g, "noheads.safetensors");
    expect_refused(path, "give it with --n-head");
    Model m;
    GptFileInfo info;
    std::string error;
    EXPECT_TRUE(load_gpt(path, 8, m, info, error)) << error;
    EXPECT_EQ(m.config.n_head, 8);
}

TEST_F(GptFiles, NonFiniteValue) {
    GptTensors g = nano();
    g.t["transformer.h.0.mlp.c_proj.weight"].second[17] = NAN;
    expect_refused(write(g, "nan.safetensors"), "NaN or infinite value at index 17");
}

TEST_F(GptFiles, ConfigJsonThatDisagrees) {
    const std::string sub = dir.file("hf");
    ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
    GptTensors g = gpt_tensors(good, true, "");
    ASSERT_TRUE(g.write(sub + "/model.safetensors"));
    std::ofstream(sub + "/config.json") << R"({"n_head": 4, "vocab_size": 50257})";
    expect_refused(sub, "vocab_size is 50257 but the weights have 1000 tokens");
    std::ofstream(sub + "/config.json", std::ios::trunc) << "{not json";
    expect_refused(sub, "is not a JSON object");
    std::ofstream(sub + "/config.json", std::ios::trunc) << R"({"n_head": 2})";
    Model m;
    GptFileInfo info;
    std::string error;
    ASSERT_TRUE(load_gpt(sub, std::nullopt, m, info, error)) << error;
    EXPECT_EQ(info.n_head_from, "config.json");
    EXPECT_EQ(m.config.n_head, 2);
    EXPECT_TRUE(info.conv1d);
    EXPECT_EQ(m.h[0].mlp.c_fc.weight, good.h[0].mlp.c_fc.weight); // transposed back from Conv1D
}

TEST_F(GptFiles, DirectoryWithoutModelAndOtherFiles) {
    expect_refused(dir.path, "has no model.safetensors");
    expect_refused(dir.file("absent.safetensors"), "no such file");
    expect_refused(gpt_data("../weights/lesson_c8_h2.safetensors"), "no wte.weight tensor");
    std::ofstream(dir.file("text.safetensors")) << "hello, this is not a weights file at all";
    expect_refused(dir.file("text.safetensors"), "text.safetensors");
}

} // namespace
} // namespace attnviz::test
