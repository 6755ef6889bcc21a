// test_kv_cache.cpp: generation with the KV cache (kv_cache.h). A cached step must give the
// full forward's last row over the whole sequence: bit for bit on the reference kernel,
// within 1e-5 on the fast one, for GPT models, the toy models with a next-token head and the
// lesson's module.
// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics wherever Eigen's
// products inline them; the values are defined, so the warning is silenced here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "experiment.h"
#include "gpt_io.h"
#include "gpt_model.h"
#include "kv_cache.h"
#include "model_io.h"
#include "rng.h"
#include "sampling.h"
#include "train.h"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace attnviz {
namespace {

bool same_bits(const float* a, const float* b, int64_t n) { return std::memcmp(a, b, size_t(n) * sizeof(float)) == 0; }

float max_abs_diff(const Mat& a, const Mat& b) {
    EXPECT_EQ(a.rows(), b.rows());
    EXPECT_EQ(a.cols(), b.cols());
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    return (a - b).cwiseAbs().maxCoeff();
}

// `steps` tokens after `prompt`, each step cached against the full forward over the whole
// sequence. The next token is drawn from a generator (not the argmax), so that the sequence
// also visits tokens a greedy run would not. Returns the largest difference seen (logits
// and softmax rows); with `bitwise`, every row must have the same bits.
float cached_against_full(const Model& m, std::vector<int> tokens, int steps, KernelKind kernel, bool bitwise) {
    KvCache cache;
    KvStepRow row, full;
    kv_prefill(m, tokens, kernel, cache, row);
    full_last_row(m, tokens, kernel, full);
    EXPECT_EQ(row.logits, full.logits);
    TorchGenerator g(99);
    const int V = m.config.vocab;
    float worst = 0.f;
    for (int s = 0; s < steps; ++s) {
        const int token = int(g.randint(0, V));
        tokens.push_back(token);
        kv_step(m, token, kernel, cache, row);
        full_last_row(m, tokens, kernel, full);
        EXPECT_EQ(row.pos, int(tokens.size()) - 1);
        EXPECT_EQ(cache.T, int(tokens.size()));
        EXPECT_EQ(full.pos, row.pos);
        if (bitwise) {
            EXPECT_TRUE(same_bits(row.logits.data(), full.logits.data(), V)) << "step " << s;
        }
        worst = std::max(worst, max_abs_diff(row.logits, full.logits));
        EXPECT_EQ(row.att.size(), m.h.size());
        for (size_t l = 0; l < m.h.size(); ++l) {
            EXPECT_EQ(row.att[l].cols(), row.pos + 1);
            if (bitwise) {
                EXPECT_TRUE(same_bits(row.att[l].data(), full.att[l].data(), row.att[l].size()))
                    << "step " << s << " layer " << l;
            }
            worst = std::max(worst, max_abs_diff(row.att[l], full.att[l]));
        }
        if (::testing::Test::HasFailure()) break;
    }
    return worst;
}

ModelConfig gpt_config(int L, int H, int C, int V, int block, bool bias, Gelu gelu) {
    ModelConfig c;
    c.arch = Arch::gpt;
    c.n_layer = L;
    c.n_head = H;
    c.n_embd = C;
    c.vocab = V;
    c.seq_len = block;
    c.bias = bias;
    c.gelu = gelu;
    return c;
}

TEST(KvCache, GptCachedStepIsTheFullForwardsLastRowBitForBit) {
    // head_dim 8 (below the 16 att v keeps in registers), 20 (a partial block) and 32
    for (const ModelConfig& c : {gpt_config(2, 3, 24, 61, 128, true, Gelu::tanh),
                                 gpt_config(2, 2, 40, 50, 128, false, Gelu::erf),
                                 gpt_config(1, 2, 64, 70, 128, true, Gelu::tanh)}) {
        const Model m = random_gpt(c, 5);
        EXPECT_EQ(cached_against_full(m, {3, 1, 4, 1, 5}, 100, KernelKind::reference, true), 0.f);
    }
}

TEST(KvCache, GptCachedStepIsWithinToleranceOnTheFastKernel) {
    const Model m = random_gpt(gpt_config(2, 4, 64, 97, 128, true, Gelu::tanh), 6);
    const float d = cached_against_full(m, {7, 8, 9}, 100, KernelKind::fast, false);
    EXPECT_LE(d, 1e-5f);
}

Model toy_induction(uint64_t seed) {
    const TrainDefaults d = task_defaults(Task::induction);
    return init_model(d.model, seed);
}

TEST(KvCache, ToyCachedStepIsTheFullForwardsLastRow) {
    const Model m = toy_induction(3);
    const int bos = m.config.bos();
    const int steps = generation_block_size(m) - 3;
    EXPECT_EQ(cached_against_full(m, {bos, 2, 5}, steps, KernelKind::reference, true), 0.f);
    EXPECT_LE(cached_against_full(m, {bos, 2, 5}, steps, KernelKind::fast, false), 1e-5f);
}

TEST(KvCache, PrefillAloneEqualsFullLastRow) {
    const Model m = random_gpt(gpt_config(2, 2, 32, 40, 64, true, Gelu::tanh), 1);
    KvCache cache;
    KvStepRow row, full;
    const std::vector<int> tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    kv_prefill(m, tokens, KernelKind::reference, cache, row);
    full_last_row(m, tokens, KernelKind::reference, full);
    EXPECT_EQ(cache.T, 10);
    EXPECT_EQ(row.pos, 9);
    EXPECT_TRUE(same_bits(row.logits.data(), full.logits.data(), m.config.vocab));
    // bytes: 2 (k and v) * L * T * C * 4
    EXPECT_EQ(cache.bytes(), int64_t(2) * 2 * 10 * 32 * 4);
}

// full_last_row (and the prefill) run gpt_forward_last, whose head makes the last row alone:
// that row must be the whole forward's, so that "the full forward" above is gpt_forward's.
TEST(KvCache, LastRowForwardIsTheWholeForwardsLastRow) {
    const Model m = random_gpt(gpt_config(2, 4, 64, 97, 128, true, Gelu::erf), 8);
    std::vector<int> tokens;
    for (int t = 0; t < 37; ++t) tokens.push_back((t * 13 + 5) % 97);
    for (KernelKind kernel : {KernelKind::reference, KernelKind::fast}) {
        ModelTrace whole, last;
        gpt_forward(m, tokens, kernel, true, whole);
        gpt_forward_last(m, tokens, kernel, last);
        const Vec a = whole.logits.row(36), b = last.logits.row(36);
        if (kernel == KernelKind::reference) {
            EXPECT_TRUE(same_bits(a.data(), b.data(), m.config.vocab));
        }
        EXPECT_LE((a - b).cwiseAbs().maxCoeff(), 1e-5f) << to_string(kernel);
        for (size_t l = 0; l < whole.layers.size(); ++l) {
            for (int h = 0; h < 4; ++h) {
                EXPECT_TRUE(same_bits(whole.layers[l].att[size_t(h)].data(), last.layers[l].att[size_t(h)].data(),
                                      37 * 37));
            }
        }
    }
}

TEST(KvCache, TruncateThenTheSameStepGivesTheSameRow) {
    const Model m = random_gpt(gpt_config(2, 2, 32, 40, 200, true, Gelu::tanh), 2);
    for (KernelKind kernel : {KernelKind::reference, KernelKind::fast}) {
        KvCache cache;
        KvStepRow row;
        kv_prefill(m, {4, 5}, kernel, cache, row);
        std::vector<KvStepRow> first;
        // past the 64 rows first reserved, so the cache also grows on the way
        for (int s = 0; s < 90; ++s) {
            kv_step(m, (s * 7) % 40, kernel, cache, row);
            first.push_back(row);
        }
        EXPECT_EQ(cache.bytes(), int64_t(2) * 2 * 92 * 32 * 4);
        // back below 8 positions, where the reference forward sums its softmax rows the other
        // way (the next steps cross 8 again), then back to 30
        for (int back : {5, 30}) {
            kv_truncate(cache, back);
            EXPECT_EQ(cache.T, back);
            EXPECT_EQ(cache.tokens.size(), size_t(back));
            EXPECT_EQ(cache.bytes(), int64_t(2) * 2 * back * 32 * 4);
            for (int s = back - 2; s < 90; ++s) {
                kv_step(m, (s * 7) % 40, kernel, cache, row);
                const KvStepRow& want = first[size_t(s)];
                EXPECT_EQ(row.pos, want.pos);
                EXPECT_TRUE(same_bits(row.logits.data(), want.logits.data(), m.config.vocab)) << "step " << s;
                for (size_t l = 0; l < m.h.size(); ++l)
                    EXPECT_TRUE(same_bits(row.att[l].data(), want.att[l].data(), row.att[l].size())) << "step " << s;
            }
        }
    }
}

TEST(KvCache, LessonStepIsTheForwardsRowBitForBit) {
    struct Case { int C, H; };
    // head_dim 4, 20 (not a multiple of 16), 16 and 5
    for (const Case k : {Case{8, 2}, Case{40, 2}, Case{48, 3}, Case{15, 3}, Case{64, 2}, Case{24, 3}}) {
        Config c;
        c.n_embd = k.C;
        c.n_head = k.H;
        c.seq_len = 3;
        c.seed = 7;
        const Experiment e = make_experiment(c);
        Trace tr;
        forward(c, e.weights, e.x, KernelKind::reference, tr);
        LayerKv kv;
        int T = -1;
        attention_cache_from(tr, kv, T);
        EXPECT_EQ(T, 3);
        TorchGenerator g(11);
        Mat x = e.x;
        // T from 3 to 20: crosses 8, where the softmax's sum switches to 8 lanes
        for (int step = 0; step < 17; ++step) {
            Vec row(k.C);
            g.randn(row.data(), k.C);
            AttentionStepRow out;
            attention_step(c, e.weights, row.data(), KernelKind::reference, kv, T, out);
            x.conservativeResize(x.rows() + 1, Eigen::NoChange);
            x.row(x.rows() - 1) = row;
            Config cn = c;
            cn.seq_len = int(x.rows());
            Trace full;
            forward(cn, e.weights, x, KernelKind::reference, full);
            const int t = cn.seq_len - 1;
            EXPECT_EQ(out.pos, t);
            EXPECT_EQ(T, t + 1);
            EXPECT_TRUE(same_bits(out.qkv.data(), full.qkv.row(t).data(), 3 * k.C));
            EXPECT_TRUE(same_bits(out.y.data(), full.y.row(t).data(), k.C)) << "C " << k.C << " T " << t;
            for (int h = 0; h < k.H; ++h) {
                EXPECT_TRUE(same_bits(out.raw_scores.row(h).data(), full.raw_scores[size_t(h)].row(t).data(), t + 1));
                EXPECT_TRUE(same_bits(out.att.row(h).data(), full.att[size_t(h)].row(t).data(), t + 1));
                EXPECT_TRUE(same_bits(out.heads.row(h).data(), full.heads[size_t(h)].row(t).data(), c.head_dim()));
            }
            // the fast kernel's step on the same cache is within 1e-5 of the fast forward
            LayerKv kv_fast = kv;
            int T_fast = t;
            AttentionStepRow fast;
            attention_step(c, e.weights, row.data(), KernelKind::fast, kv_fast, T_fast, fast);
            Trace full_fast;
            forward(cn, e.weights, x, KernelKind::fast, full_fast);
            EXPECT_LE((fast.y - full_fast.y.row(t)).cwiseAbs().maxCoeff(), 1e-5f);
            if (::testing::Test::HasFailure()) return;
        }
    }
}

TEST(KvCache, BadInputThrowsOneSentence) {
    const Model m = random_gpt(gpt_config(1, 2, 16, 20, 8, true, Gelu::tanh), 3);
    KvCache cache;
    KvStepRow row;
    kv_prefill(m, {1, 2, 3}, KernelKind::reference, cache, row);
    auto message = [](auto f) {
        try {
            f();
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(message([&] { kv_step(m, 20, KernelKind::reference, cache, row); }).find("token 20 is outside"),
              std::string::npos);
    EXPECT_NE(message([&] { kv_step(m, -1, KernelKind::reference, cache, row); }).find("token -1"), std::string::npos);
    EXPECT_EQ(cache.T, 3); // a refused step leaves the cache as it was
    for (int t = 3; t < 8; ++t) kv_step(m, 0, KernelKind::reference, cache, row);
    EXPECT_EQ(cache.T, 8);
    EXPECT_NE(message([&] { kv_step(m, 0, KernelKind::reference, cache, row); }).find("block size"), std::string::npos);
    EXPECT_NE(message([&] { kv_prefill(m, std::vector<int>(9, 0), KernelKind::reference, cache, row); }), "");
    EXPECT_NE(message([&] { kv_truncate(cache, 9); }), "");

    // a toy model without a next-token head cannot write on
    ModelConfig dup = task_defaults(Task::dup).model;
    const Model toy = init_model(dup, 1);
    const std::string why = generation_support(toy);
    EXPECT_NE(why.find("dup"), std::string::npos);
    EXPECT_EQ(message([&] { kv_prefill(toy, {16, 1}, KernelKind::reference, cache, row); }), why);
    EXPECT_EQ(generation_support(toy_induction(1)), "");
    EXPECT_EQ(generation_support(m), "");
    EXPECT_EQ(generation_block_size(m), 8);
    EXPECT_EQ(generation_block_size(toy_induction(1)), 25);

    // the lesson's module caches only under the causal mask
    Config c;
    c.mask = MaskMode::none;
    const Experiment e = make_experiment(c);
    Trace tr;
    forward(c, e.weights, e.x, KernelKind::reference, tr);
    LayerKv kv;
    int T = 0;
    EXPECT_NE(message([&] { attention_cache_from(tr, kv, T); }).find("causal"), std::string::npos);
    EXPECT_NE(message([&] {
                  AttentionStepRow out;
                  attention_step(c, e.weights, e.x.data(), KernelKind::reference, kv, T, out);
              }).find("causal"),
              std::string::npos);
}


// ---- Against torch: greedy generation by nanoGPT's loop, a full forward per step
// (scripts/gen_generate_reference.py, tests/data/generate/reference.json).

Model load_any(const std::string& rel) {
    const std::string path = std::string(ATTNVIZ_TEST_DATA) + "/" + rel;
    Model m;
    std::string error;
    if (looks_like_gpt(path)) {
        GptFileInfo info;
        if (!load_gpt(path, std::nullopt, m, info, error)) throw std::runtime_error(error);
    } else if (!load_model(path, m, error)) {
        throw std::runtime_error(error);
    }
    return m;
}

TEST(KvCache, GreedyGenerationEqualsTorchTokenForToken) {
    std::ifstream f(std::string(ATTNVIZ_TEST_DATA) + "/generate/reference.json");
    const nlohmann::json ref = nlohmann::json::parse(f);
    ASSERT_EQ(ref["models"].size(), 3u);
    for (const auto& [name, r] : ref["models"].items()) {
        const Model m = load_any(r["path"].get<std::string>());
        const std::vector<int> prompt = r["prompt"].get<std::vector<int>>();
        const std::vector<int> want = r["tokens"].get<std::vector<int>>();
        ASSERT_EQ(r["steps"].size(), want.size());
        for (KernelKind kernel : {KernelKind::reference, KernelKind::fast}) {
            SCOPED_TRACE(name + " on the " + to_string(kernel) + " kernel");
            KvCache cache;
            KvStepRow row;
            kv_prefill(m, prompt, kernel, cache, row);
            std::vector<int> got;
            for (size_t s = 0; s < want.size(); ++s) {
                // every step's five largest raw logits, within 1e-4 relative
                for (const auto& tv : r["steps"][s]["top5"]) {
                    const int token = tv[0].get<int>();
                    const double value = tv[1].get<double>();
                    EXPECT_NEAR(row.logits[token], value, 1e-4 * std::max(1.0, std::fabs(value)))
                        << "step " << s << " token " << token;
                }
                got.push_back(argmax_token(row.logits.data(), int(row.logits.size())));
                if (cache.T < generation_block_size(m)) kv_step(m, got.back(), kernel, cache, row);
            }
            EXPECT_EQ(got, want);
            // torch's loop ran to the block size, and so did the cache
            EXPECT_EQ(cache.T, generation_block_size(m));
            EXPECT_EQ(int(prompt.size() + want.size()), generation_block_size(m));
        }
    }
}

// ---- The trained induction model writes on: BOS, a random segment, the first token of its
// repeat, and greedy decoding with the cache continues the repeat. The model is trained here
// by the recipe attnviz train --task induction runs (its defaults: 1500 steps, seed 0), which
// takes a few seconds in a Release build.
TEST(KvCache, TrainedInductionModelContinuesARepeat) {
    const TrainDefaults d = task_defaults(Task::induction);
    TrainRun run = start_training(d.model, 0, d.lr, d.batch);
    for (int s = 0; s < d.steps; ++s) ASSERT_TRUE(std::isfinite(train_step(run))) << "step " << s;
    const Model& m = run.model;
    const int V = m.config.vocab, T = m.config.seq_len;
    TorchGenerator g(2024);
    int right = 0, total = 0;
    KvCache cache;
    KvStepRow row;
    for (int seq = 0; seq < 40; ++seq) {
        // segments of 3 to T / 2 - 1 tokens, as the task's batches repeat (docs/training.md)
        const int len = int(g.randint(3, T / 2));
        // distinct tokens, so that the continuation is never ambiguous: after a token that
        // occurs twice in the segment, either of its successors would be a copy
        std::vector<int> segment;
        while (int(segment.size()) < len) {
            const int t = int(g.randint(0, V));
            if (std::find(segment.begin(), segment.end(), t) == segment.end()) segment.push_back(t);
        }
        std::vector<int> prompt = {m.config.bos()};
        prompt.insert(prompt.end(), segment.begin(), segment.end());
        prompt.push_back(segment[0]);
        kv_prefill(m, prompt, KernelKind::fast, cache, row);
        for (int k = 1; k < len; ++k) {
            const int next = argmax_token(row.logits.data(), V);
            right += next == segment[size_t(k)];
            ++total;
            kv_step(m, next, KernelKind::fast, cache, row);
        }
    }
    EXPECT_GE(double(right) / total, 0.9) << right << " of " << total << " tokens continue the repeat";
}

} // namespace
} // namespace attnviz
