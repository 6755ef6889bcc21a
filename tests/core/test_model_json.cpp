// test_model_json.cpp: the core's trace and train writers (model_json.h, trained_json.h,
// train_json.h) on their own, where they decide something the numbers do not: a one-token
// GPT run has no next-token loss and writes null (not NaN, which is no JSON), its
// ablation's delta too, a tokenizer adds the top tokens' text, a toy model's delta is
// after minus before, and the accuracy keys keep PyTorch's order.
#include "ablation.h"
#include "gpt_test_util.h"
#include "json_writer.h"
#include "model_io.h"
#include "model_json.h"
#include "train_json.h"
#include "trained_json.h"
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace attnviz::test {
namespace {

using nlohmann::json;

json summary_json(const GptRunSummary& s) {
    std::ostringstream out;
    {
        JsonWriter w(out);
        write_gpt_run_summary(w, s, nullptr);
    }
    return json::parse(out.str());
}

TEST(ModelJson, SummaryWritesANonFiniteLossAsNull) {
    GptRunSummary s;
    s.loss = std::numeric_limits<double>::quiet_NaN();
    s.top = {{7, 0.5f}, {3, 0.25f}};
    const json j = summary_json(s);
    EXPECT_TRUE(j.at("loss").is_null());
    ASSERT_EQ(j.at("top5").size(), 2u);
    EXPECT_EQ(j["top5"][0]["token"], 7);
    EXPECT_EQ(j["top5"][1]["prob"].get<float>(), 0.25f);
    EXPECT_FALSE(j["top5"][0].contains("text")) << "no tokenizer";
    s.loss = 2.5;
    EXPECT_EQ(summary_json(s).at("loss").get<double>(), 2.5);
}

// A one-token trace of the tiny GPT-2: nothing to predict, so the loss before and after an
// ablation, and their difference, are null; the top 5 and the DLA are still there.
TEST(ModelJson, OneTokenTraceHasNullLossesAndATopFive) {
    Model m;
    GptFileInfo info;
    std::string error;
    ASSERT_TRUE(load_gpt(gpt_data("gpt2"), std::nullopt, m, info, error)) << error;
    ModelTrace tr;
    gpt_forward(m, {7}, KernelKind::reference, true, tr);
    const GptRunSummary s = summarize_gpt_run(tr);
    EXPECT_TRUE(std::isnan(s.loss));
    EXPECT_EQ(s.top.size(), size_t(gpt_summary_top_k));

    Ablation ab;
    ab.heads = {{0, 1}};
    GptTraceRequest r;
    r.path = "tiny";
    r.tokens = {7};
    r.ablation = &ab;
    std::ostringstream out;
    write_gpt_trace_json(out, m, info, r);
    const json j = json::parse(out.str());
    EXPECT_EQ(j.at("model").at("path"), "tiny");
    EXPECT_EQ(j.at("T"), 1);
    EXPECT_FALSE(j.contains("layers")) << "no intermediates asked for";
    const json& a = j.at("ablation");
    EXPECT_EQ(a.at("heads"), json({"0.1"}));
    EXPECT_TRUE(a.at("before").at("loss").is_null());
    EXPECT_TRUE(a.at("after").at("loss").is_null());
    EXPECT_TRUE(a.at("delta").at("loss").is_null());
    EXPECT_EQ(a["after"]["top5"].size(), 5u);
    EXPECT_EQ(j.at("dla").at("pos"), 0);
    EXPECT_EQ(j["dla"]["token"], a["before"]["top5"][0]["token"]) << "the DLA is onto the clean run's top token";
}

// A GPT trace without an ablation or --dla-pos has neither key; --dla-pos alone adds "dla".
TEST(ModelJson, DlaOnlyWhenAskedFor) {
    Model m;
    GptFileInfo info;
    std::string error;
    ASSERT_TRUE(load_gpt(gpt_data("nanogpt_nobias.safetensors"), std::nullopt, m, info, error)) << error;
    GptTraceRequest r;
    r.tokens = {1, 2, 3, 4};
    std::ostringstream plain;
    write_gpt_trace_json(plain, m, info, r);
    const json p = json::parse(plain.str());
    EXPECT_FALSE(p.contains("ablation"));
    EXPECT_FALSE(p.contains("dla"));
    r.dla_pos = 2;
    std::ostringstream with_dla;
    write_gpt_trace_json(with_dla, m, info, r);
    const json d = json::parse(with_dla.str());
    EXPECT_FALSE(d.contains("ablation"));
    EXPECT_EQ(d.at("dla").at("pos"), 2);
    EXPECT_EQ(d.at("logits"), p.at("logits"));
}

// A toy model's ablation: delta is after minus before, key by key.
TEST(TrainedJson, AblationDeltaIsAfterMinusBefore) {
    Model m;
    std::string error;
    ASSERT_TRUE(load_model(std::string(ATTNVIZ_TEST_DATA) + "/ablation/toy_induction_s7.safetensors", m, error)) << error;
    Ablation ab;
    ab.heads = {{1, 0}};
    TrainedTraceRequest r;
    r.path = "toy";
    r.text = "a b";
    r.tokens = {m.config.bos(), token_of(m.config, "a"), token_of(m.config, "b")};
    r.words = {"^", "a", "b"};
    r.ablation = &ab;
    std::ostringstream out;
    write_trained_trace_json(out, m, r);
    const json j = json::parse(out.str());
    const json& a = j.at("ablation");
    EXPECT_EQ(a.at("mode"), "zero");
    EXPECT_NE(a["before"]["loss"], a["after"]["loss"]) << "ablating the induction head changes the loss";
    EXPECT_FLOAT_EQ(a.at("delta").at("loss").get<float>(),
                    float(a["after"]["loss"].get<double>() - a["before"]["loss"].get<double>()));
    for (const auto& [key, value] : a.at("delta").at("accuracy").items())
        EXPECT_NEAR(value.get<double>(), a["after"]["accuracy"][key].get<double>() - a["before"]["accuracy"][key].get<double>(),
                    1e-6)
            << key;
    EXPECT_EQ(j.at("dla").at("pos"), 2) << "with an ablation, the DLA at the last position";
    EXPECT_EQ(j.at("weights").at("file"), "toy");
}

TEST(TrainJson, AccuracyKeysInPyTorchsOrder) {
    const nlohmann::ordered_json j = accuracy_json({{"dup", 0.25}, {"next", 1.0}, {"prev", 0.5}});
    EXPECT_EQ(j.dump(), R"({"prev":0.5,"dup":0.25,"next":1.0})");
    EXPECT_EQ(accuracy_json({{"next", 0.75}}).dump(), R"({"next":0.75})");
}

} // namespace
} // namespace attnviz::test
