// test_ablation.cpp: head ablation and direct logit attribution (ablation.h) against torch's
// numbers in tests/data/ablation (scripts/gen_ablation_reference.py: a pre-hook on proj's
// input that zeroes a head's columns, or sets them to their mean over the probe), on toy
// models trained by the recipe on seeds and sizes no other test uses and on the tiny GPTs;
// and the invariants an ablation must keep: nothing before the ablated layer moves, the
// ablated head's own pattern stays, an empty ablation is the plain forward, and the rerun
// and the token update equal a fresh forward with the ablation.
#include "ablation.h"
#include "ablation_scores.h"
#include "gpt_test_util.h"
#include "head_detector.h"
#include "model_io.h"
#include "train_test_util.h"
#include <climits>
#include <cmath>

namespace attnviz::test {
namespace {

const json& toy_reference() {
    static const json j = load_json("ablation/toy_reference.json");
    return j;
}
const json& gpt_reference() {
    static const json j = load_json("ablation/gpt_reference.json");
    return j;
}

std::string ablation_data(const std::string& name) { return std::string(ATTNVIZ_TEST_DATA) + "/ablation/" + name; }

Model load_toy(const std::string& file) {
    Model m;
    std::string error;
    if (!load_model(ablation_data(file), m, error)) throw std::runtime_error(error);
    return m;
}

std::string joined(const json& heads) {
    std::string s;
    for (const json& h : heads) s += (s.empty() ? "" : ",") + h.get<std::string>();
    return s;
}

// The reference case's ablation, its means (mean mode) from our own clean forward on `probe`.
Ablation ablation_of(const json& c, const Model& m, const std::vector<std::vector<int>>& probe) {
    Ablation ab;
    std::string error;
    EXPECT_TRUE(parse_heads(joined(c.at("heads")), m.config, ab.heads, error)) << error;
    EXPECT_TRUE(parse_ablation_mode(c.at("mode").get<std::string>(), ab.mode, error)) << error;
    if (ab.mode == AblationMode::mean) compute_ablation_means(m, probe, KernelKind::reference, ab);
    return ab;
}

// The means against torch's: float32 sums over thousands of rows, in another order.
void expect_means(const Ablation& ab, const json& c) {
    if (ab.mode != AblationMode::mean) return;
    ASSERT_EQ(ab.means.size(), ab.heads.size());
    for (size_t i = 0; i < ab.heads.size(); ++i)
        EXPECT_TRUE(same(ab.means[i], tensor(c.at("means").at(to_string(ab.heads[i]))), 1e-6f)) << to_string(ab.heads[i]);
}

void expect_relative(double actual, double expected, double tol, const std::string& what) {
    EXPECT_LE(std::fabs(actual - expected), tol * std::fabs(expected)) << what << ": " << actual << " vs torch "
                                                                        << expected;
}

void expect_accuracy(const TaskMetrics& got, const json& want, const std::string& what) {
    ASSERT_EQ(got.accuracy.size(), want.size()) << what;
    for (const auto& [key, value] : got.accuracy) {
        ASSERT_TRUE(want.contains(key)) << what << " " << key;
        // The same count over the same total: the same float.
        EXPECT_EQ(float(value), want.at(key).get<float>()) << what << " accuracy " << key;
    }
}

void expect_patterns(const ModelTrace& tr, const json& patterns, float tol, const std::string& what) {
    ASSERT_EQ(tr.layers.size(), patterns.size()) << what;
    for (size_t l = 0; l < tr.layers.size(); ++l)
        EXPECT_TRUE(same(tr.layers[l].att, tensor(patterns[l]), tol)) << what << " layer " << l;
}

void expect_scores(const std::vector<std::vector<float>>& got, const json& want, float tol, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t l = 0; l < got.size(); ++l) {
        ASSERT_EQ(got[l].size(), want[l].size()) << what;
        for (size_t h = 0; h < got[l].size(); ++h)
            EXPECT_NEAR(got[l][h], want[l][h].get<float>(), tol) << what << " layer " << l << " head " << h;
    }
}

// Every term within 1e-4 of torch's, and all of them added up within 1e-4 of the logit.
void expect_dla(const LogitAttribution& a, const json& want, const std::string& what) {
    SCOPED_TRACE(what);
    constexpr float tol = 1e-4f;
    EXPECT_EQ(a.pos, want.at("pos").get<int>());
    EXPECT_EQ(a.token, want.at("token").get<int>());
    EXPECT_NEAR(a.logit, want.at("logit").get<float>(), tol * std::max(1.f, std::fabs(a.logit)));
    EXPECT_NEAR(a.embed, want.at("embed").get<float>(), tol);
    EXPECT_NEAR(a.pos_embed, want.at("pos_embed").get<float>(), tol);
    expect_scores(a.heads, want.at("heads"), tol, "heads");
    if (want.contains("scale")) {
        EXPECT_NEAR(a.scale, want.at("scale").get<float>(), 1e-5f * a.scale);
    }
    if (want.contains("mlp")) {
        const std::vector<float> mlp = want.at("mlp").get<std::vector<float>>();
        EXPECT_TRUE(same(a.mlp, mlp, tol)) << "mlp";
        const std::vector<float> bias = want.at("attn_bias").get<std::vector<float>>();
        EXPECT_TRUE(same(a.attn_bias, bias, tol)) << "attn_bias";
        EXPECT_NEAR(a.ln_bias, want.at("ln_bias").get<float>(), tol);
    }
    EXPECT_NEAR(a.sum(), a.logit, tol * std::max(1.f, std::fabs(a.logit)));
}

// ---------------------------------------------------------------------------------------
// Toy models against torch

TEST(AblationToy, LossAccuracyPatternsScoresAndDlaMatchTorch) {
    for (const json& model : toy_reference().at("models")) {
        const std::string name = model.at("name").get<std::string>();
        SCOPED_TRACE(name);
        const Model m = load_toy(model.at("file").get<std::string>());
        const std::vector<int> seq = model.at("sequence").get<std::vector<int>>();
        const json& dla0 = model.at("dla_before");
        const int pos = dla0.at("pos").get<int>(), token = dla0.at("token").get<int>();

        const TaskMetrics before = task_metrics(m, KernelKind::reference);
        expect_relative(before.loss, model.at("before").at("loss").get<double>(), 1e-5, "loss before");
        expect_accuracy(before, model.at("before").at("accuracy"), "before");
        ModelTrace clean;
        model_forward(m, seq, KernelKind::reference, clean);
        expect_patterns(clean, model.at("patterns_before"), 1e-6f, "clean");
        expect_dla(logit_attribution(m, clean, pos, token), dla0, "clean DLA");

        const std::vector<std::vector<int>> probe = ablation_probe(m, {});
        ASSERT_EQ(probe.size(), 256u);
        for (const json& c : model.at("ablations")) {
            const std::string what = joined(c.at("heads")) + " " + c.at("mode").get<std::string>();
            SCOPED_TRACE(what);
            const Ablation ab = ablation_of(c, m, probe);
            expect_means(ab, c);
            const TaskMetrics after = task_metrics(m, KernelKind::reference, &ab);
            expect_relative(after.loss, c.at("after").at("loss").get<double>(), 1e-5, "loss after");
            expect_accuracy(after, c.at("after").at("accuracy"), "after");
            ModelTrace tr;
            model_forward(m, seq, KernelKind::reference, tr, &ab);
            expect_patterns(tr, c.at("patterns"), 1e-6f, "ablated");
            const HeadScores s = ablated_head_scores(m, KernelKind::reference, &ab);
            const json& want = c.at("head_scores");
            expect_scores(s.prev_token, want.at("prev_token"), 2e-6f, "prev_token");
            expect_scores(s.duplicate, want.at("duplicate"), 2e-6f, "duplicate");
            expect_scores(s.induction, want.at("induction"), 2e-6f, "induction");
            expect_dla(logit_attribution(m, tr, pos, token, &ab), c.at("dla"), "ablated DLA");
        }
    }
}

TEST(AblationToy, CleanScoresAreTheRecipes) {
    const json& model = toy_reference().at("models")[0];
    const Model m = load_toy(model.at("file").get<std::string>());
    const HeadScores s = ablated_head_scores(m, KernelKind::reference, nullptr);
    const json& want = model.at("head_scores_before");
    expect_scores(s.prev_token, want.at("prev_token"), 2e-6f, "prev_token");
    expect_scores(s.duplicate, want.at("duplicate"), 2e-6f, "duplicate");
    expect_scores(s.induction, want.at("induction"), 2e-6f, "induction");
    Ablation empty;
    const HeadScores e = ablated_head_scores(m, KernelKind::reference, &empty);
    EXPECT_EQ(e.prev_token, s.prev_token);
    EXPECT_EQ(e.induction, s.induction);
}

// ---------------------------------------------------------------------------------------
// GPT models against torch

TEST(AblationGpt, LossTopFivePatternsDlaAndDetectorMatchTorch) {
    for (const json& model : gpt_reference().at("models")) {
        const std::string name = model.at("name").get<std::string>();
        SCOPED_TRACE(name);
        const Model m = load_fixture_model(gpt_data(model.at("file").get<std::string>()));
        const std::vector<int> seq = model.at("sequence").get<std::vector<int>>();
        const int bos = model.at("bos").is_null() ? -1 : model.at("bos").get<int>();
        const json& dla0 = model.at("dla_before");
        const int pos = dla0.at("pos").get<int>(), token = dla0.at("token").get<int>();
        auto check_run = [&](const ModelTrace& tr, const json& want, const std::string& what) {
            SCOPED_TRACE(what);
            expect_relative(next_token_loss(tr), want.at("loss").get<double>(), 1e-5, "loss");
            const int T = int(tr.tokens.size());
            const std::vector<TokenProb> top =
                top_k(softmax_logits(tr.logits.data() + int64_t(T - 1) * tr.logits.cols(), int(tr.logits.cols())), 5);
            ASSERT_EQ(top.size(), 5u);
            for (size_t i = 0; i < 5; ++i) {
                EXPECT_EQ(top[i].token, want.at("top5")[i].get<int>()) << "top " << i;
                EXPECT_NEAR(top[i].prob, want.at("top5_probs")[i].get<float>(), 1e-6f) << "top " << i;
            }
        };
        for (bool lean : {false, true}) {
            ModelTrace clean;
            gpt_forward(m, seq, KernelKind::reference, lean, clean);
            check_run(clean, model.at("before"), lean ? "clean, lean" : "clean");
            expect_patterns(clean, model.at("patterns_before"), 1e-6f, "clean");
            expect_dla(logit_attribution(m, clean, pos, token), dla0, lean ? "clean DLA, lean" : "clean DLA");
        }
        for (const json& c : model.at("ablations")) {
            const std::string what = joined(c.at("heads")) + " " + c.at("mode").get<std::string>();
            SCOPED_TRACE(what);
            const Ablation ab = ablation_of(c, m, ablation_probe(m, seq));
            expect_means(ab, c);
            for (bool lean : {false, true}) {
                ModelTrace tr;
                gpt_forward(m, seq, KernelKind::reference, lean, tr, &ab);
                check_run(tr, c.at("after"), lean ? "lean" : "full");
                expect_patterns(tr, c.at("patterns"), 1e-6f, "ablated");
                expect_dla(logit_attribution(m, tr, pos, token, &ab), c.at("dla"), lean ? "DLA, lean" : "DLA");
            }
            HeadDetection d;
            detect_repeat_induction(m, KernelKind::reference, d, detector_repeat_count, detector_repeat_seed, bos, &ab);
            expect_scores(d.repeat_induction, c.at("repeat_induction"), 1e-6f, "repeat induction");
        }
    }
}

TEST(AblationGpt, FastKernelIsCloseToTorch) {
    const json& model = gpt_reference().at("models")[1];
    const Model m = load_fixture_model(gpt_data(model.at("file").get<std::string>()));
    const std::vector<int> seq = model.at("sequence").get<std::vector<int>>();
    for (const json& c : model.at("ablations")) {
        const Ablation ab = ablation_of(c, m, ablation_probe(m, seq));
        ModelTrace tr;
        gpt_forward(m, seq, KernelKind::fast, true, tr, &ab);
        expect_relative(next_token_loss(tr), c.at("after").at("loss").get<double>(), 1e-5, "fast loss");
        expect_patterns(tr, c.at("patterns"), 1e-5f, "fast");
    }
}

// ---------------------------------------------------------------------------------------
// Invariants

Ablation zero_of(std::vector<HeadRef> heads) {
    Ablation ab;
    ab.heads = std::move(heads);
    return ab;
}

void expect_same_model_trace(const ModelTrace& a, const ModelTrace& b, const std::string& what) {
    SCOPED_TRACE(what);
    ASSERT_EQ(a.layers.size(), b.layers.size());
    EXPECT_TRUE(same(a.h0, b.h0)) << "h0";
    for (size_t l = 0; l < a.layers.size(); ++l) {
        SCOPED_TRACE("layer " + std::to_string(l));
        EXPECT_TRUE(same(a.layers[l].att, b.layers[l].att)) << "probs";
        EXPECT_TRUE(same(a.layers[l].k, b.layers[l].k)) << "k";
        EXPECT_TRUE(same(a.layers[l].v, b.layers[l].v)) << "v";
        if (!a.lean) {
            EXPECT_TRUE(same(a.layers[l].concat, b.layers[l].concat)) << "concat";
            EXPECT_TRUE(same(a.layers[l].y, b.layers[l].y)) << "y";
        }
        if (!a.blocks.empty()) {
            EXPECT_TRUE(same(a.blocks[l].resid_post, b.blocks[l].resid_post)) << "resid_post";
        }
    }
    EXPECT_TRUE(same(a.h_out, b.h_out)) << "h_out";
    EXPECT_TRUE(same(a.logits, b.logits)) << "logits";
    EXPECT_TRUE(same(a.logits_prev, b.logits_prev)) << "logits_prev";
    EXPECT_TRUE(same(a.logits_dup, b.logits_dup)) << "logits_dup";
    EXPECT_TRUE(same(a.logits_next, b.logits_next)) << "logits_next";
}

TEST(AblationInvariants, EmptyAblationIsThePlainForward) {
    const Model toy = load_toy("toy_induction_s7.safetensors");
    const std::vector<int> seq = toy_reference().at("models")[0].at("sequence").get<std::vector<int>>();
    const Ablation empty;
    for (KernelKind kernel : all_kernels) {
        ModelTrace a, b;
        model_forward(toy, seq, kernel, a);
        model_forward(toy, seq, kernel, b, &empty);
        expect_same_model_trace(a, b, "toy");
    }
    const Model gpt = load_fixture_model(gpt_data("gpt2"));
    const std::vector<int> gseq = gpt_reference().at("models")[1].at("sequence").get<std::vector<int>>();
    for (KernelKind kernel : all_kernels)
        for (bool lean : {false, true}) {
            ModelTrace a, b;
            gpt_forward(gpt, gseq, kernel, lean, a);
            gpt_forward(gpt, gseq, kernel, lean, b, &empty);
            expect_same_model_trace(a, b, lean ? "gpt lean" : "gpt");
        }
}

// Zeroing head h of layer l: layers 0..l-1 are the clean run's bit for bit, layer l's
// attention (q, k, v, probs, the head's own output) too; only its concat columns (zero) and
// what reads them change.
void check_zero_leaves_earlier_layers(const ModelTrace& clean, const ModelTrace& ab, int layer, int head, int hd,
                                      const std::string& what) {
    SCOPED_TRACE(what);
    for (int l = 0; l < layer; ++l) {
        EXPECT_TRUE(same(ab.layers[size_t(l)].att, clean.layers[size_t(l)].att)) << "layer " << l;
        EXPECT_TRUE(same(ab.layers[size_t(l)].y, clean.layers[size_t(l)].y)) << "layer " << l;
        if (!clean.blocks.empty()) {
            EXPECT_TRUE(same(ab.blocks[size_t(l)].resid_post, clean.blocks[size_t(l)].resid_post)) << "layer " << l;
        }
    }
    const Trace& a = ab.layers[size_t(layer)];
    const Trace& c = clean.layers[size_t(layer)];
    EXPECT_TRUE(same(a.x, c.x)) << "x of the ablated layer";
    EXPECT_TRUE(same(a.att, c.att)) << "the ablated layer's patterns";
    EXPECT_TRUE(same(a.heads[size_t(head)], c.heads[size_t(head)])) << "the ablated head's own output";
    bool zero = true, others = true;
    for (int t = 0; t < a.concat.rows(); ++t)
        for (int j = 0; j < a.concat.cols(); ++j) {
            if (j / hd == head) zero = zero && a.concat(t, j) == 0.f;
            else others = others && a.concat(t, j) == c.concat(t, j);
        }
    EXPECT_TRUE(zero) << "the ablated head's columns of concat are zero";
    EXPECT_TRUE(others) << "the other heads' columns of concat are unchanged";
    EXPECT_FALSE(same(a.y, c.y)) << "y reads the zeroed columns";
}

TEST(AblationInvariants, ZeroAblationLeavesEarlierLayersAndItsOwnPattern) {
    const Model toy = load_toy("toy_dup_s13.safetensors");
    const std::vector<int> seq = toy_reference().at("models")[2].at("sequence").get<std::vector<int>>();
    ModelTrace clean;
    model_forward(toy, seq, KernelKind::reference, clean);
    for (int l = 0; l < toy.config.n_layer; ++l)
        for (int h = 0; h < toy.config.n_head; ++h) {
            const Ablation ab = zero_of({{l, h}});
            ModelTrace tr;
            model_forward(toy, seq, KernelKind::reference, tr, &ab);
            check_zero_leaves_earlier_layers(clean, tr, l, h, toy.config.head_dim(), "toy " + to_string(HeadRef{l, h}));
        }
    const Model gpt = load_fixture_model(gpt_data("nanogpt_nobias.safetensors"));
    const std::vector<int> gseq = gpt_reference().at("models")[0].at("sequence").get<std::vector<int>>();
    ModelTrace gclean;
    gpt_forward(gpt, gseq, KernelKind::reference, false, gclean);
    for (int l = 0; l < gpt.config.n_layer; ++l)
        for (int h = 0; h < gpt.config.n_head; h += 3) {
            const Ablation ab = zero_of({{l, h}});
            ModelTrace tr;
            gpt_forward(gpt, gseq, KernelKind::reference, false, tr, &ab);
            check_zero_leaves_earlier_layers(gclean, tr, l, h, gpt.config.head_dim(), "gpt " + to_string(HeadRef{l, h}));
        }
}

TEST(AblationInvariants, RerunFromEqualsAFreshForward) {
    const Model gpt = load_fixture_model(gpt_data("gpt2"));
    const std::vector<int> seq = gpt_reference().at("models")[1].at("sequence").get<std::vector<int>>();
    Ablation mean;
    mean.mode = AblationMode::mean;
    mean.heads = {{1, 1}, {1, 2}};
    compute_ablation_means(gpt, ablation_probe(gpt, seq), KernelKind::reference, mean);
    const Ablation cases[] = {zero_of({{0, 3}}), zero_of({{1, 0}}), zero_of({{0, 1}, {1, 2}}), mean, Ablation{}};
    for (bool lean : {false, true})
        for (const Ablation& ab : cases) {
            const std::string what = std::string(lean ? "lean " : "") + (ab.empty() ? "none" : to_string(ab.heads[0]));
            ModelTrace fresh;
            gpt_forward(gpt, seq, KernelKind::reference, lean, fresh, &ab);
            // From the clean run, from the first layer the ablation changes (and from layer 0).
            const int first = ab.empty() ? 0 : ab.first_layer();
            for (int l0 : {0, first}) {
                ModelTrace tr;
                gpt_forward(gpt, seq, KernelKind::reference, lean, tr);
                gpt_rerun_from(gpt, l0, KernelKind::reference, &ab, tr);
                expect_same_model_trace(tr, fresh, what + " from layer " + std::to_string(l0));
            }
            // And back: an ablated run rerun clean from where they differ is the clean run.
            ModelTrace back = fresh, clean;
            gpt_forward(gpt, seq, KernelKind::reference, lean, clean);
            gpt_rerun_from(gpt, ab.empty() ? 0 : first_difference(ab, Ablation{}), KernelKind::reference, nullptr, back);
            expect_same_model_trace(back, clean, what + " undone");
        }
}

TEST(AblationInvariants, UpdateWithAnAblationEqualsTheForwardOnTheNewTokens) {
    const Model gpt = load_fixture_model(gpt_data("nanogpt_nobias.safetensors"));
    const std::vector<int> seq = gpt_reference().at("models")[0].at("sequence").get<std::vector<int>>();
    Ablation mean;
    mean.mode = AblationMode::mean;
    mean.heads = {{0, 2}};
    compute_ablation_means(gpt, ablation_probe(gpt, seq), KernelKind::reference, mean);
    for (const Ablation& ab : {zero_of({{0, 1}, {1, 3}}), mean})
        for (bool lean : {false, true})
            for (int p : {0, 7, int(seq.size()) - 1}) {
                ModelTrace tr;
                gpt_forward(gpt, seq, KernelKind::reference, lean, tr, &ab);
                std::vector<int> changed = seq;
                changed[size_t(p)] = (seq[size_t(p)] + 17) % gpt.config.vocab;
                gpt_update(gpt, p, changed[size_t(p)], KernelKind::reference, tr, &ab);
                ModelTrace fresh;
                gpt_forward(gpt, changed, KernelKind::reference, lean, fresh, &ab);
                expect_same_model_trace(tr, fresh, "p " + std::to_string(p) + (lean ? " lean" : ""));
            }
}

TEST(AblationInvariants, DlaAddsUpToTheLogitEverywhere) {
    const Model gpt = load_fixture_model(gpt_data("gpt2"));
    const std::vector<int> seq = gpt_reference().at("models")[1].at("sequence").get<std::vector<int>>();
    const Ablation ab = zero_of({{0, 0}, {1, 3}});
    ModelTrace tr;
    gpt_forward(gpt, seq, KernelKind::reference, true, tr, &ab);
    for (int pos = 0; pos < int(seq.size()); pos += 5)
        for (int token : {0, 17, 999}) {
            const LogitAttribution a = logit_attribution(gpt, tr, pos, token, &ab);
            EXPECT_NEAR(a.logit, tr.logits(pos, token), 1e-6f);
            EXPECT_NEAR(a.sum(), a.logit, 1e-4f) << pos << " " << token;
            EXPECT_EQ(a.heads[0][0], 0.f) << "a zeroed head adds nothing";
        }
    EXPECT_THROW(logit_attribution(gpt, tr, int(seq.size()), 0, &ab), std::invalid_argument);
    EXPECT_THROW(logit_attribution(gpt, tr, 0, gpt.config.vocab, &ab), std::invalid_argument);
    EXPECT_THROW(logit_attribution(gpt, tr, -1, 0, &ab), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Parsing

TEST(AblationParse, HeadListsAndModes) {
    ModelConfig c;
    c.n_layer = 2;
    c.n_head = 4;
    std::vector<HeadRef> heads;
    std::string error;
    ASSERT_TRUE(parse_heads("1.0 0.1", c, heads, error)) << error;
    EXPECT_EQ(heads, (std::vector<HeadRef>{{0, 1}, {1, 0}}));
    ASSERT_TRUE(parse_heads("0.3,0.3, 1.2", c, heads, error)) << error;
    EXPECT_EQ(heads, (std::vector<HeadRef>{{0, 3}, {1, 2}}));
    ASSERT_TRUE(parse_heads("1.3", c, heads, error)) << error;
    EXPECT_EQ(to_string(heads[0]), "1.3");

    for (const char* bad : {"", "0", "0.", ".1", "a.b", "2.0", "0.4", "-1.0", "0.-1", "0.1,x", "0.1.2", "0.1x",
                            "1,2", "99999999999999999999.0", "0.1;1.0", "0.1,,1.0", "0.1, ,1.0", ",0.1", "0.1,",
                            ","}) {
        SCOPED_TRACE(std::string("'") + bad + "'");
        error.clear();
        EXPECT_FALSE(parse_heads(bad, c, heads, error));
        EXPECT_FALSE(error.empty());
        EXPECT_EQ(error.find('\n'), std::string::npos) << error;
        // One sentence naming the allowed range.
        EXPECT_NE(error.find("0..1"), std::string::npos) << error;
        EXPECT_NE(error.find("0..3"), std::string::npos) << error;
    }

    AblationMode mode = AblationMode::zero;
    ASSERT_TRUE(parse_ablation_mode("mean", mode, error));
    EXPECT_EQ(mode, AblationMode::mean);
    EXPECT_STREQ(to_string(mode), "mean");
    ASSERT_TRUE(parse_ablation_mode("zero", mode, error));
    EXPECT_EQ(mode, AblationMode::zero);
    for (const char* bad : {"", "Zero", "resample", "mean "}) {
        error.clear();
        EXPECT_FALSE(parse_ablation_mode(bad, mode, error)) << bad;
        EXPECT_NE(error.find("zero"), std::string::npos) << error;
        EXPECT_NE(error.find("mean"), std::string::npos) << error;
        EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    }
}

TEST(AblationParse, QueriesAndFirstDifference) {
    const Ablation ab = zero_of({{0, 2}, {1, 0}, {1, 3}});
    EXPECT_TRUE(ab.has(1, 3));
    EXPECT_FALSE(ab.has(0, 3));
    EXPECT_TRUE(ab.in_layer(0));
    EXPECT_FALSE(ab.in_layer(2));
    EXPECT_EQ(ab.first_layer(), 0);
    EXPECT_EQ(Ablation{}.first_layer(), INT32_MAX);
    const Vec* r = ab.replacement(1, 0, 16);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->size(), 16);
    for (int i = 0; i < r->size(); ++i) EXPECT_EQ((*r)[i], 0.f) << i;
    EXPECT_EQ(ab.replacement(1, 1, 16), nullptr);
    EXPECT_EQ(first_difference(ab, ab), INT32_MAX);
    EXPECT_EQ(first_difference(ab, zero_of({{0, 2}, {1, 0}})), 1);
    EXPECT_EQ(first_difference(ab, Ablation{}), 0);
    Ablation mean = ab;
    mean.mode = AblationMode::mean;
    EXPECT_EQ(first_difference(ab, mean), 0);
}

} // namespace
} // namespace attnviz::test
