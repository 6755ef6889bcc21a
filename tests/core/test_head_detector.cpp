// test_head_detector.cpp: the head detector against the training recipe's head_scores on its
// own probe batch, on hand-made attention patterns whose scores are known, and the softmax
// and top-k of the next-token predictions.
#include "gpt_test_util.h"
#include "head_detector.h"
#include "model_io.h"
#include "train_test_util.h"
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace attnviz::test {
namespace {

// What `attnviz train --task T --out tests/data/model_view/T.safetensors` wrote: the task's
// default run (both: 1000 steps, induction: 1500), whose heads have taken their roles.
Model trained(const std::string& file) {
    Model m;
    std::string error;
    if (!load_model(std::string(ATTNVIZ_TEST_DATA) + "/model_view/" + file, m, error)) ADD_FAILURE() << error;
    return m;
}

// The recipe's probe batch (train.h's head_scores): torch.Generator().manual_seed(1234),
// randint(0, V, (256, T)) after BOS for prev and dup, then [BOS, r, r, filler].
struct Probe {
    std::vector<std::vector<int>> uniform, repeated;
};
Probe recipe_probe(const ModelConfig& c) {
    constexpr int B = 256;
    TorchGenerator g(1234);
    Probe p;
    std::vector<int64_t> body(size_t(B) * c.seq_len);
    g.randint(body.data(), int64_t(body.size()), 0, c.vocab);
    for (int b = 0; b < B; ++b) {
        std::vector<int> row{c.bos()};
        for (int t = 0; t < c.seq_len; ++t) row.push_back(int(body[size_t(b) * c.seq_len + t]));
        p.uniform.push_back(row);
    }
    p.repeated = repeated_sequences(c, g, B, c.n_tokens(), c.seq_len / 3);
    return p;
}

std::vector<ModelTrace> run_all(const Model& m, const std::vector<std::vector<int>>& seqs) {
    std::vector<ModelTrace> out(seqs.size());
    for (size_t b = 0; b < seqs.size(); ++b) model_forward(m, seqs[b], KernelKind::reference, out[b]);
    return out;
}

std::vector<SequenceAttention> views(const std::vector<ModelTrace>& t) {
    std::vector<SequenceAttention> out;
    for (const ModelTrace& x : t) out.push_back(attention_of(x));
    return out;
}

void expect_near(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b, const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t l = 0; l < a.size(); ++l) {
        ASSERT_EQ(a[l].size(), b[l].size()) << what;
        for (size_t h = 0; h < a[l].size(); ++h)
            EXPECT_NEAR(a[l][h], b[l][h], 2e-6) << what << " layer " << l << " head " << h;
    }
}

// On the recipe's probes the detector is head_scores: the same definitions, the same
// pooling. The attention comes from model_forward here and from the training forward there,
// which agree to a few ulps, hence the tolerance.
void check_recipe(const std::string& file) {
    const Model m = trained(file);
    const HeadScores ref = head_scores(m);
    const Probe p = recipe_probe(m.config);
    const std::vector<ModelTrace> uni = run_all(m, p.uniform), rep = run_all(m, p.repeated);
    const HeadScores got = detect_on_text(views(uni));
    expect_near(got.prev_token, ref.prev_token, "prev_token");
    expect_near(got.duplicate, ref.duplicate, "duplicate");
    expect_near(detect_induction_on_repeats(views(rep), 1, m.config.seq_len / 3), ref.induction, "induction");
    // And the app's own probe (32 sequences, fresh generator) tells the same heads apart.
    HeadDetection d;
    detect_repeat_induction(m, KernelKind::reference, d);
    ASSERT_EQ(d.repeat_induction.size(), ref.induction.size());
    for (size_t l = 0; l < ref.induction.size(); ++l)
        for (size_t h = 0; h < ref.induction[l].size(); ++h)
            EXPECT_EQ(d.repeat_induction[l][h] >= 0.6f, ref.induction[l][h] >= 0.6f) << "layer " << l << " head " << h;
}

TEST(HeadDetector, EqualsTheRecipeOnItsProbeBoth) { check_recipe("both.safetensors"); }
TEST(HeadDetector, EqualsTheRecipeOnItsProbeInduction) { check_recipe("induction.safetensors"); }

// Hand-made patterns: one layer, four heads on "^ a b a b c".
struct Handmade {
    std::vector<int> tok{4, 0, 1, 0, 1, 2};
    PerHead heads;
    SequenceAttention att() const {
        SequenceAttention s;
        s.tokens = &tok;
        s.layers.push_back(&heads);
        return s;
    }
};
Handmade handmade() {
    Handmade m;
    const int N = int(m.tok.size());
    Mat prev = Mat::Zero(N, N), self = Mat::Zero(N, N), dup = Mat::Zero(N, N), ind = Mat::Zero(N, N);
    prev(0, 0) = 1;
    for (int i = 1; i < N; ++i) prev(i, i - 1) = 1; // all on the previous key
    for (int i = 0; i < N; ++i) self(i, i) = 1;     // all on itself
    // duplicate: queries 3 (a) and 4 (b) on their earlier copy; the rest on themselves
    dup = self;
    dup(3, 3) = 0, dup(3, 1) = 1;
    dup(4, 4) = 0, dup(4, 2) = 1;
    // induction: query 3 (a, first seen at 1) on key 2, query 4 (b, at 2) on key 3
    ind = self;
    ind(3, 3) = 0, ind(3, 2) = 1;
    ind(4, 4) = 0, ind(4, 3) = 1;
    m.heads = {prev, self, dup, ind};
    return m;
}

TEST(HeadDetector, HandMadePatterns) {
    const Handmade m = handmade();
    const HeadScores s = detect_on_text({m.att()});
    ASSERT_EQ(s.prev_token.size(), 1u);
    ASSERT_EQ(s.prev_token[0].size(), 4u);
    EXPECT_FLOAT_EQ(s.prev_token[0][0], 1.0f); // a perfect previous-token head
    EXPECT_FLOAT_EQ(s.prev_token[0][1], 0.0f);
    EXPECT_FLOAT_EQ(s.prev_token[0][2], 0.0f);
    EXPECT_FLOAT_EQ(s.prev_token[0][3], 0.4f); // 2 of its 5 queries look one back (3 → 2, 4 → 3)
    // Queries 3 and 4 have an earlier copy; the duplicate head puts all on it.
    EXPECT_FLOAT_EQ(s.duplicate[0][2], 1.0f);
    EXPECT_FLOAT_EQ(s.duplicate[0][1], 0.0f);
    EXPECT_FLOAT_EQ(s.duplicate[0][0], 0.0f);
    EXPECT_FLOAT_EQ(s.induction[0][3], 1.0f);
    EXPECT_FLOAT_EQ(s.induction[0][2], 0.0f);
    // The previous-token head reads key 2 for query 3 and key 3 for query 4: the induction
    // keys of this text, as a previous-token head on a repeat does.
    EXPECT_FLOAT_EQ(s.induction[0][0], 1.0f);
}

TEST(HeadDetector, NoRepeatedTokenIsNoDuplicateScore) {
    std::vector<int> tok{4, 0, 1, 2};
    PerHead heads{Mat::Identity(4, 4)};
    SequenceAttention a;
    a.tokens = &tok;
    a.layers.push_back(&heads);
    const HeadScores s = detect_on_text({a});
    EXPECT_TRUE(std::isnan(s.duplicate[0][0]));
    EXPECT_TRUE(std::isnan(s.induction[0][0]));
    EXPECT_FLOAT_EQ(s.prev_token[0][0], 0.0f);
}

TEST(HeadDetector, RepeatsFollowTheRecipeLayout) {
    ModelConfig c;
    c.vocab = 16;
    c.seq_len = 16;
    TorchGenerator g(7), h(7);
    const auto seqs = repeated_sequences(c, g, 3, 17, 5);
    ASSERT_EQ(seqs.size(), 3u);
    std::vector<int64_t> r(15), filler(3 * 6);
    h.randint(r.data(), 15, 0, 16);
    h.randint(filler.data(), 18, 0, 16);
    for (int b = 0; b < 3; ++b) {
        ASSERT_EQ(seqs[size_t(b)].size(), 17u);
        EXPECT_EQ(seqs[size_t(b)][0], c.bos());
        for (int t = 0; t < 5; ++t) {
            EXPECT_EQ(seqs[size_t(b)][size_t(1 + t)], r[size_t(b * 5 + t)]);
            EXPECT_EQ(seqs[size_t(b)][size_t(6 + t)], r[size_t(b * 5 + t)]);
        }
        for (int t = 0; t < 6; ++t) EXPECT_EQ(seqs[size_t(b)][size_t(11 + t)], filler[size_t(b * 6 + t)]);
    }
    EXPECT_THROW(repeated_sequences(c, g, 1, 8, 4), std::invalid_argument);
    // A perfect induction head on one such sequence: query i of the second copy on i - R + 1.
    const std::vector<int>& tok = seqs[0];
    Mat a = Mat::Identity(17, 17);
    for (int i = 6; i < 10; ++i) a(i, i) = 0, a(i, i - 4) = 1;
    PerHead heads{a, Mat::Identity(17, 17)};
    SequenceAttention s;
    s.tokens = &tok;
    s.layers.push_back(&heads);
    const auto ind = detect_induction_on_repeats({s}, 1, 5);
    EXPECT_FLOAT_EQ(ind[0][0], 1.0f);
    EXPECT_FLOAT_EQ(ind[0][1], 0.0f);
}

TEST(HeadDetector, LongContextsUseShortCopies) {
    // A context longer than the toy models' (GPT-2 has 1024 positions): copies of at most
    // detector_max_repeat tokens, measured the same way.
    ModelConfig c;
    c.task = Task::induction;
    c.vocab = 20;
    c.seq_len = 64; // the toy models' cap; the positions are then made longer by hand
    c.n_embd = 16;
    c.n_head = 2;
    c.n_layer = 1;
    Model m = init_model(c, 5);
    c.seq_len = 200;
    m.config = c;
    m.wpe = Mat::Random(c.n_tokens(), c.n_embd);
    HeadDetection d;
    detect_repeat_induction(m, KernelKind::reference, d, 3, 9);
    EXPECT_EQ(d.repeat_len, detector_max_repeat);
    EXPECT_EQ(d.repeat_count, 3);
    ASSERT_EQ(d.repeat_induction.size(), 1u);
    TorchGenerator g(9);
    const auto seqs = repeated_sequences(c, g, 3, 1 + 2 * detector_max_repeat, detector_max_repeat);
    std::vector<ModelTrace> t = run_all(m, seqs);
    const auto want = detect_induction_on_repeats(views(t), 1, detector_max_repeat);
    EXPECT_EQ(d.repeat_induction, want);
}

TEST(HeadDetector, RolesPassTheThreshold) {
    HeadDetection d;
    d.text.prev_token = {{0.98f, 0.1f, 0.2f}};
    d.text.duplicate = {{0.1f, 0.7f, NAN}};
    d.text.induction = {{0.9f, 0.1f, 0.1f}};
    d.repeat_induction = {{0.2f, 0.1f, 0.65f}};
    const std::vector<HeadRole> r = head_roles(d);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].head, 0);
    EXPECT_EQ(r[0].kind, 0); // prev 0.98; the text's induction 0.9 yields to the repeat's 0.2
    EXPECT_EQ(r[1].kind, 1);
    EXPECT_EQ(r[2].kind, 2);
    EXPECT_FLOAT_EQ(r[2].score, 0.65f);
    EXPECT_STREQ(role_tag(2), "ind");
}

TEST(NextToken, SoftmaxAndTopK) {
    const std::vector<float> logits{1.f, 3.f, -2.f, 3.f, 0.5f, 2.f, -1.f, 0.f, 4.f, -3.f};
    const std::vector<float> p = softmax_logits(logits.data(), int(logits.size()));
    double sum = 0, ref_sum = 0;
    for (float x : logits) ref_sum += std::exp(double(x) - 4.0);
    for (size_t i = 0; i < p.size(); ++i) {
        sum += p[i];
        EXPECT_NEAR(p[i], std::exp(double(logits[i]) - 4.0) / ref_sum, 1e-7) << i;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
    const std::vector<TokenProb> top = top_k(p, 5);
    ASSERT_EQ(top.size(), 5u);
    EXPECT_EQ(top[0].token, 8);
    EXPECT_EQ(top[1].token, 1); // equal to token 3: the lower id first
    EXPECT_EQ(top[2].token, 3);
    EXPECT_EQ(top[3].token, 5);
    EXPECT_EQ(top[4].token, 0);
    EXPECT_EQ(top_k(p, 50).size(), p.size());
}

// The repeated probe on a GPT against torch (scripts/gen_detector_reference.py, its own
// model code and generator): without a BOS on the nanoGPT file, whose vocabulary of 1000 has
// none, and with one (999 standing in for GPT-2's <|endoftext|>) on the GPT-2 layout.
nlohmann::json detector_reference() {
    std::ifstream in(gpt_data("detector_reference.json"));
    return nlohmann::json::parse(in);
}

void expect_reference_scores(const HeadDetection& d, const nlohmann::json& ref, float tol, const char* what) {
    ASSERT_EQ(d.repeat_induction.size(), ref.at("induction").size()) << what;
    for (size_t l = 0; l < d.repeat_induction.size(); ++l) {
        ASSERT_EQ(d.repeat_induction[l].size(), ref.at("induction")[l].size()) << what;
        for (size_t h = 0; h < d.repeat_induction[l].size(); ++h)
            EXPECT_NEAR(d.repeat_induction[l][h], ref.at("induction")[l][h].get<double>(), tol)
                << what << " layer " << l << " head " << h;
    }
}

TEST(HeadDetectorGpt, RepeatedProbeWithoutBosMatchesTorch) {
    const nlohmann::json ref = detector_reference().at("nanogpt_no_bos");
    const Model m = load_fixture_model(gpt_data(ref.at("file").get<std::string>()));
    EXPECT_EQ(bos_token(m.config), -1);
    EXPECT_FALSE(starts_with_bos(m.config));
    // The sequences are torch's: r, r, filler from position 0.
    TorchGenerator g(detector_repeat_seed);
    const auto seqs = repeated_sequences(m.config, g, detector_repeat_count, m.config.seq_len, m.config.seq_len / 3);
    EXPECT_EQ(seqs[0], ref.at("first_sequence").get<std::vector<int>>());
    for (KernelKind kernel : {KernelKind::reference, KernelKind::fast}) {
        HeadDetection d;
        detect_repeat_induction(m, kernel, d);
        EXPECT_EQ(d.repeat_bos, -1);
        EXPECT_EQ(d.repeat_len, ref.at("repeat").get<int>());
        EXPECT_EQ(d.repeat_count, ref.at("count").get<int>());
        expect_reference_scores(d, ref, 1e-6f, kernel == KernelKind::reference ? "reference" : "fast");
    }
}

TEST(HeadDetectorGpt, RepeatedProbeAfterABosMatchesTorch) {
    const nlohmann::json ref = detector_reference().at("gpt2_bos");
    const Model m = load_fixture_model(gpt_data(ref.at("file").get<std::string>()));
    const int bos = ref.at("bos").get<int>();
    TorchGenerator g(detector_repeat_seed);
    const auto seqs = repeated_sequences(m.config.vocab, bos, g, detector_repeat_count, m.config.seq_len,
                                         m.config.seq_len / 3);
    EXPECT_EQ(seqs[0], ref.at("first_sequence").get<std::vector<int>>());
    HeadDetection d;
    detect_repeat_induction(m, KernelKind::reference, d, detector_repeat_count, detector_repeat_seed, bos);
    EXPECT_EQ(d.repeat_bos, bos);
    expect_reference_scores(d, ref, 1e-6f, "with BOS");
    EXPECT_THROW(detect_repeat_induction(m, KernelKind::reference, d, 2, 1, m.config.vocab), std::invalid_argument);
    EXPECT_THROW(detect_repeat_induction(m, KernelKind::reference, d, 2, 1, -2), std::invalid_argument);
}

TEST(HeadDetectorGpt, Gpt2VocabulariesStartWithEndOfText) {
    ModelConfig c;
    c.arch = Arch::gpt;
    c.seq_len = 1024;
    for (int vocab : {gpt2_vocab_size, nanogpt_gpt2_vocab_size}) {
        c.vocab = vocab;
        EXPECT_EQ(bos_token(c), 50256) << vocab;
        TorchGenerator g(1);
        const auto seqs = repeated_sequences(c, g, 2, 1 + 2 * detector_max_repeat, detector_max_repeat);
        for (const auto& s : seqs) {
            ASSERT_EQ(s.size(), size_t(1 + 2 * detector_max_repeat));
            EXPECT_EQ(s[0], 50256);
            for (int t = 0; t < detector_max_repeat; ++t) EXPECT_EQ(s[size_t(1 + t)], s[size_t(1 + detector_max_repeat + t)]);
        }
    }
    for (int vocab : {65, 1000, 50256, 50258}) {
        c.vocab = vocab;
        EXPECT_EQ(bos_token(c), -1) << vocab;
    }
    ModelConfig toy; // a toy task's BOS is its last id
    EXPECT_EQ(bos_token(toy), toy.vocab);
}

} // namespace
} // namespace attnviz::test
