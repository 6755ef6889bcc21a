// test_gpt_state.cpp: a whole GPT model in the views, through recompute() without a window,
// on the tiny GPT-2 of tests/data/gpt_tiny: the text goes through the tokenizer beside the
// model and labels every position, the layer picker shows each layer's own trace, typed
// text re-tokenizes, bad edits keep the state with one sentence, replacing token p leaves
// every layer's rows before p exactly unchanged, and the Model view's detector and
// predictions are the model's. Each kind answers the layer strip's sentence and its vocabulary.
// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics wherever Eigen's
// products inline them; the values are defined, so the warning is silenced here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "app_state.h"
#include "gpt_model.h"
#include "gpt_test_dir.h"
#include "head_detector.h"
#include "inputs.h"
#include "session_state.h"
#include "state_test_support.h"
#include <cmath>
#include <gtest/gtest.h>

using namespace attnviz;
using namespace attnviz_gui_test;

namespace {

const std::string sentence = "The cat sat on the mat, and the cat saw it.";

std::shared_ptr<const TrainedInput> gpt_input(bool tokenizer, const std::string& text, const std::string& ids = "") {
    std::shared_ptr<const TrainedInput> in;
    std::string error;
    EXPECT_TRUE(read_gpt_input(tiny_gpt_dir(tokenizer), std::nullopt, text, ids, in, error)) << error;
    return in;
}

AppState gpt_state(const std::shared_ptr<const TrainedInput>& in) { return shown_model(in); }

// A fresh forward of the model on `tokens`, every layer whole.
ModelTrace forward_of(const Model& m, const std::vector<int>& tokens) {
    ModelTrace t;
    gpt_forward(m, tokens, KernelKind::reference, false, t);
    return t;
}

} // namespace

TEST(GptState, TextGoesThroughTheTokenizerAndLabelsEveryPosition) {
    const auto in = gpt_input(true, sentence);
    ASSERT_TRUE(in && in->tokenizer);
    const AppState s = gpt_state(in);
    ASSERT_TRUE(s.ready) << s.error;
    EXPECT_TRUE(s.error.empty()) << s.error;
    ASSERT_EQ(shown_model(s), in);
    EXPECT_EQ(in->tokens, in->tokenizer->encode(sentence));
    EXPECT_EQ(s.config.applied.seq_len, int(in->tokens.size()));
    EXPECT_EQ(s.config.applied.n_head, 4);
    ASSERT_EQ(s.shown.words.size(), in->tokens.size());
    // The labels spell the sentence back, each space a visible middle dot.
    std::string joined;
    for (const std::string& w : s.shown.words) joined += w;
    std::string dotted = sentence;
    for (size_t at; (at = dotted.find(' ')) != std::string::npos;) dotted.replace(at, 1, "·");
    EXPECT_EQ(joined, dotted);
    EXPECT_EQ(s.shown.words[1].rfind("·", 0), 0u) << s.shown.words[1];
    EXPECT_EQ(gpt_token_label(in->tokenizer.get(), in->tokenizer->encode("\n")[0]), "\\n");
    EXPECT_EQ(gpt_token_label(nullptr, 464), "#464");
    // Layer 0's x is ln_1 of the embeddings: the forward's own.
    const ModelTrace t = forward_of(*in->model, in->tokens);
    EXPECT_TRUE(same_bits(s.run.trace.x, t.layers[0].x));
    EXPECT_TRUE(same_bits(s.run.trace.y, t.layers[0].y));
}

TEST(GptState, LayerPickerShowsEachLayersOwnTrace) {
    const auto in = gpt_input(true, sentence);
    AppState s = gpt_state(in);
    const ModelTrace t = forward_of(*in->model, in->tokens);
    for (int l : {1, 0, 1}) {
        request_layer(s, l);
        recompute(s);
        ASSERT_EQ(s.shown.layer, l);
        EXPECT_TRUE(same_bits(s.run.trace.x, t.layers[size_t(l)].x)) << l;
        for (int h = 0; h < 4; ++h) EXPECT_TRUE(same_bits(s.run.trace.att[size_t(h)], t.layers[size_t(l)].att[size_t(h)])) << l;
        EXPECT_TRUE(same_bits(s.run.experiment.weights.c_attn.weight, in->model->h[size_t(l)].attn.c_attn.weight)) << l;
    }
    EXPECT_FALSE(same_bits(t.layers[0].att[0], t.layers[1].att[0]));
}

TEST(GptState, TypedTextRetokenizesAndABadEditKeepsTheState) {
    AppState s = gpt_state(gpt_input(true, sentence));
    std::string error;
    ASSERT_TRUE(set_trained_sequence(s, "the dog and the cat", error)) << error;
    recompute(s);
    ASSERT_TRUE(shown_model(s)->tokenizer);
    EXPECT_EQ(shown_model(s)->tokens, shown_model(s)->tokenizer->encode("the dog and the cat"));
    EXPECT_EQ(s.config.applied.seq_len, int(shown_model(s)->tokens.size()));
    EXPECT_EQ(s.fields.sequence_field, "the dog and the cat");
    const std::vector<int> kept = shown_model(s)->tokens;
    std::string long_text;
    for (int i = 0; i < 80; ++i) long_text += " cat";
    EXPECT_FALSE(set_trained_sequence(s, long_text, error));
    EXPECT_NE(error.find("block size of 64"), std::string::npos) << error;
    EXPECT_NE(s.error.find("Kept the sequence"), std::string::npos) << s.error;
    EXPECT_FALSE(set_trained_sequence(s, "", error));
    recompute(s);
    EXPECT_EQ(shown_model(s)->tokens, kept);
    EXPECT_EQ(s.config.applied.seq_len, int(kept.size()));
}

TEST(GptState, WithoutATokenizerIdsAreTyped) {
    const auto in = gpt_input(false, "");
    ASSERT_TRUE(in);
    EXPECT_FALSE(in->tokenizer);
    EXPECT_NE(in->tokenizer_note.find("tokenizer"), std::string::npos) << in->tokenizer_note;
    AppState s = gpt_state(in);
    ASSERT_TRUE(s.ready);
    EXPECT_EQ(s.shown.words[0].rfind("#", 0), 0u);
    std::string error;
    ASSERT_TRUE(set_trained_sequence(s, "1, 500 2 999", error)) << error;
    recompute(s);
    EXPECT_EQ(shown_model(s)->tokens, (std::vector<int>{1, 500, 2, 999}));
    EXPECT_FALSE(set_trained_sequence(s, "the cat", error));
    EXPECT_NE(error.find("not a token id"), std::string::npos) << error;
    EXPECT_FALSE(set_trained_sequence(s, "1, 1000", error));
    EXPECT_NE(error.find("0 to 999"), std::string::npos) << error;
    std::shared_ptr<const TrainedInput> none;
    EXPECT_FALSE(read_gpt_input(tiny_gpt_dir(false), std::nullopt, "the cat", "", none, error));
    EXPECT_NE(error.find("needs its tokenizer"), std::string::npos) << error;
}

TEST(GptState, ReplacingTokenPLeavesEveryLayerBeforePExactlyUnchanged) {
    const auto in = gpt_input(true, sentence);
    AppState s = gpt_state(in);
    const int p = 4, T = s.config.applied.seq_len;
    request_layer(s, 1);
    request_perturbation(s, p, 1.f);
    recompute(s);
    ASSERT_EQ(s.run.applied_p, p);
    const GptCausality& c = s.model_run.causality;
    ASSERT_EQ(c.resid_max_abs.size(), 2u);
    ASSERT_EQ(int(c.logits_max_abs.size()), T);
    const int to = (in->tokens[size_t(p)] + 1) % 1000;
    EXPECT_EQ(c.new_token, to);
    // Independently: a whole forward on the changed tokens.
    std::vector<int> changed = in->tokens;
    changed[size_t(p)] = to;
    const ModelTrace a = forward_of(*in->model, in->tokens), b = forward_of(*in->model, changed);
    for (size_t l = 0; l < 2; ++l) {
        const std::vector<float> want = max_abs_diff_per_position(a.blocks[l].resid_post, b.blocks[l].resid_post);
        ASSERT_EQ(int(c.resid_max_abs[l].size()), T);
        for (int t = 0; t < T; ++t) {
            if (t < p) {
                EXPECT_EQ(c.resid_max_abs[l][size_t(t)], 0.0f) << "layer " << l << " position " << t;
            }
            EXPECT_EQ(c.resid_max_abs[l][size_t(t)], want[size_t(t)]) << "layer " << l << " position " << t;
        }
        EXPECT_GT(c.resid_max_abs[l][size_t(p)], 0.f);
    }
    for (int t = 0; t < p; ++t) EXPECT_EQ(c.logits_max_abs[size_t(t)], 0.0f) << t;
    EXPECT_GT(c.logits_max_abs[size_t(p)], 0.f);
    EXPECT_EQ(s.model_run.resid_summary.zeros_before, p);
    // The shown layer is the changed run's, and its rows before p are the unchanged run's.
    EXPECT_TRUE(same_bits(s.run.trace.y, b.layers[1].y));
    EXPECT_TRUE(same_bits(s.run.base.y, a.layers[1].y));
    // A replacement typed as a word: one token, else refused with a sentence.
    std::string error;
    ASSERT_TRUE(set_replacement_text(s, " the", error)) << error;
    recompute(s);
    EXPECT_EQ(s.model_run.causality.new_token, in->tokenizer->encode(" the")[0]);
    EXPECT_FALSE(set_replacement_text(s, " the cat", error));
    EXPECT_NE(error.find("single token"), std::string::npos) << error;
    recompute(s);
    EXPECT_EQ(s.model_run.causality.new_token, in->tokenizer->encode(" the")[0]);
}

TEST(GptState, ModelViewDetectorAndPredictionsAreTheModels) {
    const auto in = gpt_input(true, sentence);
    AppState s = gpt_state(in);
    s.screen.view = View::model;
    const int T = s.config.applied.seq_len;
    s.model_view.predict_pos = 3;
    recompute(s);
    const ModelTrace t = forward_of(*in->model, in->tokens);
    const HeadScores want = detect_on_text({attention_of(t)});
    EXPECT_EQ(s.model_view.detection.text.prev_token, want.prev_token);
    EXPECT_EQ(s.model_view.detection.text.duplicate.size(), 2u);
    ASSERT_EQ(s.model_view.detection.repeat_induction.size(), 2u);
    ASSERT_EQ(s.model_view.detection.repeat_induction[0].size(), 4u);
    for (const std::vector<float>& row : s.model_view.detection.repeat_induction)
        for (float v : row) EXPECT_TRUE(v >= 0.f && v <= 1.f) << v;
    ASSERT_EQ(int(s.model_view.predictions.size()), T);
    for (int pos : {3, T - 1}) {
        const std::vector<TokenProb>& top = s.model_view.predictions[size_t(pos)];
        ASSERT_EQ(top.size(), 5u) << pos;
        const std::vector<TokenProb> ref = top_k(softmax_logits(t.logits.data() + int64_t(pos) * 1000, 1000), 5);
        for (size_t k = 0; k < 5; ++k) {
            EXPECT_EQ(top[k].token, ref[k].token);
            EXPECT_NEAR(top[k].prob, ref[k].prob, 1e-6);
        }
        EXPECT_EQ(model_token_label(s, top[0].token), gpt_token_label(in->tokenizer.get(), top[0].token));
    }
}

TEST(GptState, AModelOverTheWindowsCapIsRefusedAndTheLessonKept) {
    AppState s = lesson_state();
    s.memory_cap = s.gpt_memory_cap = int64_t(1) << 16;
    const Trace before = s.run.trace;
    request_trained_model(s, gpt_input(true, sentence));
    recompute(s);
    EXPECT_FALSE(shown_model(s));
    EXPECT_NE(s.error.find("over the cap"), std::string::npos) << s.error;
    EXPECT_TRUE(same_bits(s.run.trace.y, before.y));
    std::string error;
    EXPECT_FALSE(open_model_path(s, "/nonexistent/gpt2", error));
    EXPECT_NE(s.error.find("Kept what is shown"), std::string::npos) << s.error;
}

TEST(GptState, TheWeightsFieldOpensAGpt2DirectoryWholeAndOpenModelAFile) {
    AppState s = lesson_state();
    std::string error;
    ASSERT_TRUE(load_weights_file(s, tiny_gpt_dir(true), 0, error)) << error;
    recompute(s);
    ASSERT_TRUE(shown_model(s) && shown_model(s)->gpt()) << s.error;
    EXPECT_EQ(shown_model(s)->model->config.n_layer, 2);
    EXPECT_TRUE(shown_model(s)->tokenizer);
    AppState t = lesson_state();
    ASSERT_TRUE(open_model_path(t, tiny_gpt_dir(false) + "/model.safetensors", error)) << error;
    recompute(t);
    ASSERT_TRUE(shown_model(t) && shown_model(t)->gpt()) << t.error;
    EXPECT_FALSE(shown_model(t)->tokenizer);
}

TEST(GptState, ASessionIsSavedWithoutTheGptModelAndSaysSo) {
    AppState s = gpt_state(gpt_input(true, sentence));
    const std::string path = temp_dir() + "/gpt_session.json";
    save_session_file(s, path);
    EXPECT_NE(s.status.find("without the GPT model"), std::string::npos) << s.status;
    Session ss;
    std::string error;
    ASSERT_TRUE(read_session(path, ss, error)) << error;
    EXPECT_FALSE(ss.model.present);
}

// The source is the model applied, not the one staged, and names what the shown layer's input is.
TEST(GptState, TheModeIsTheShownModelsAndNamesTheLayersInput) {
    AppState s = lesson_state();
    EXPECT_FALSE(shown_model(s));
    EXPECT_STREQ(attention_input_name(s), "x");
    std::shared_ptr<const TrainedInput> toy;
    std::string error;
    ASSERT_TRUE(read_trained_input(ATTNVIZ_TEST_DATA "/train/induction_s1_120.safetensors", "", toy, error)) << error;
    request_trained_model(s, toy);
    EXPECT_FALSE(shown_model(s)); // staged only
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_TRUE(std::holds_alternative<ToyModel>(s.shown.source));
    EXPECT_STREQ(attention_input_name(s), "h");
    request_trained_model(s, gpt_input(true, sentence));
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_TRUE(std::holds_alternative<GptModel>(s.shown.source));
    EXPECT_STREQ(attention_input_name(s), "ln_1(h)");
    request_trained_model(s, nullptr);
    recompute(s);
    EXPECT_FALSE(shown_model(s));
}

TEST(GptState, EachKindAnswersTheLayerStripsSentenceAndItsVocabulary) {
    AppState s = lesson_state();
    EXPECT_EQ(layer_sentence(s), ""); // one layer: no strip
    EXPECT_EQ(vocab_size(s), 0);      // no tokens
    std::shared_ptr<const TrainedInput> toy;
    std::string error;
    ASSERT_TRUE(read_trained_input(ATTNVIZ_TEST_DATA "/train/induction_s1_120.safetensors", "", toy, error)) << error;
    request_trained_model(s, toy);
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(layer_sentence(s), "block 0 of 2: input x = wte[token] + wpe[position], the embeddings; its h + attn(h) is "
                                 "block 1's input.");
    EXPECT_EQ(vocab_size(s), toy->model->config.vocab);
    request_layer(s, 1);
    recompute(s);
    EXPECT_EQ(layer_sentence(s), "block 1 of 2: input x = h + attn(h) of block 0, the residual stream; its h + attn(h) goes "
                                 "to the task heads.");
    request_layer(s, 0); // a new model keeps the layer asked for
    request_trained_model(s, gpt_input(true, sentence));
    recompute(s);
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(layer_sentence(s), "x = ln_1(residual stream) of layer 0, the stream being the embeddings wte + wpe; then + "
                                 "attn, + mlp(ln_2) into layer 1.");
    EXPECT_EQ(vocab_size(s), 1000);
    request_layer(s, 1);
    recompute(s);
    EXPECT_EQ(layer_sentence(s), "x = ln_1(residual stream) of layer 1, the stream being layer 0's resid_post; then + attn, + "
                                 "mlp(ln_2) into ln_f and the logits.");
}
