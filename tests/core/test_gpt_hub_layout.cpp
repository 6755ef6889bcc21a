// test_gpt_hub_layout.cpp: a model.safetensors laid out as the Hub's official GPT-2 file is:
// no "transformer." prefix, float32 Conv1D weights, wpe of 1024 positions, and each block's
// causal-mask buffer h.N.attn.bias of shape (1, 1, 1024, 1024), beside a config.json with the
// Hub's extra fields. Made here from the tiny GPT-2 fixture (its float16 weights widen to
// float32 exactly, and the positions past its 64 are zero), it must open and give the
// fixture's numbers bit for bit, which match PyTorch's (test_gpt_forward.cpp).
#include "gpt_test_util.h"
#include <fstream>

using namespace attnviz;
using namespace attnviz::test;

namespace {

const char* hub_config = R"({
  "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"],
  "attn_pdrop": 0.1,
  "bos_token_id": 999,
  "embd_pdrop": 0.1,
  "eos_token_id": 999,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 64,
  "n_head": 4,
  "n_layer": 2,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "summary_activation": null,
  "summary_first_dropout": 0.1,
  "summary_proj_to_labels": true,
  "summary_type": "cls_index",
  "summary_use_proj": true,
  "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}},
  "vocab_size": 1000
})";

} // namespace

TEST(GptHubLayout, TheOfficialFilesLayoutOpensAndGivesTheFixturesNumbers) {
    const Model tiny = load_fixture_model(gpt_data("gpt2"));
    ScratchDir dir;
    GptTensors g = gpt_tensors(tiny, true, "");
    // wpe of 1024 positions: the fixture's 64, then zeros.
    Mat wpe = Mat::Zero(1024, tiny.wpe.cols());
    wpe.topRows(tiny.wpe.rows()) = tiny.wpe;
    g.put_mat("wpe.weight", wpe, false);
    // The mask buffers, float32 (1, 1, 1024, 1024), lower triangle of ones.
    std::vector<float> mask(size_t(1024) * 1024, 0.f);
    for (size_t i = 0; i < 1024; ++i)
        for (size_t j = 0; j <= i; ++j) mask[i * 1024 + j] = 1.f;
    for (int l = 0; l < tiny.config.n_layer; ++l) g.put("h." + std::to_string(l) + ".attn.bias", mask.data(), {1, 1, 1024, 1024});
    g.meta = {{"format", "pt"}};
    ASSERT_TRUE(g.write(dir.file("model.safetensors")));
    std::ofstream(dir.file("config.json")) << hub_config;

    Model m;
    GptFileInfo info;
    std::string error;
    ASSERT_TRUE(load_gpt(dir.path, std::nullopt, m, info, error)) << error;
    EXPECT_TRUE(info.conv1d);
    EXPECT_EQ(info.prefix, "");
    EXPECT_EQ(info.n_head_from, "config.json");
    EXPECT_EQ(m.config.seq_len, 1024);
    EXPECT_EQ(m.config.n_layer, 2);
    EXPECT_EQ(m.config.n_head, 4);
    EXPECT_EQ(m.config.gelu, Gelu::tanh);

    const std::vector<int> tokens = fixture_tokens(gpt_data("gpt2_forward.safetensors"));
    for (KernelKind k : {KernelKind::reference, KernelKind::fast}) {
        ModelTrace a, b;
        gpt_forward(tiny, tokens, k, false, a);
        gpt_forward(m, tokens, k, false, b);
        ASSERT_EQ(a.logits.rows(), b.logits.rows());
        ASSERT_EQ(a.logits.cols(), b.logits.cols());
        EXPECT_EQ(std::memcmp(a.logits.data(), b.logits.data(), sizeof(float) * size_t(a.logits.size())), 0)
            << to_string(k) << ": the official layout gives other logits than the fixture";
    }
}
