// Trained-model files (model_io.h): the recipe's layout written and read back bit for bit,
// torch's files (tests/data/train, written by the recipe's save_safetensors through
// scripts/gen_train_files.py) read as the recipe's config and written again to the same
// bytes, and every inconsistent file refused with one sentence naming the file.
#include "model_io.h"
#include "test_safetensors_util.h"
#include "train.h"
#include <gtest/gtest.h>
#include <filesystem>
#include <random>

using namespace attnviz;
using namespace st_test;

namespace {

std::string train_file(const std::string& name) { return std::string(ATTNVIZ_TEST_DATA) + "/train/" + name; }

nlohmann::json recipe_runs() {
    std::ifstream f(train_file("recipe_runs.json"));
    return nlohmann::json::parse(f);
}

// A model of config c with every tensor filled from a seeded generator, including the
// values a careless writer would spoil: -0, subnormals, the largest float.
Model random_model(const ModelConfig& c, uint32_t seed) {
    Model m;
    m.config = c;
    m.h.resize(size_t(c.n_layer));
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.f, 1.f);
    const float specials[] = {-0.f, 1e-40f, -3e-39f, 3.4028235e38f, 1.f};
    for (const ModelTensor& t : model_layout(c)) {
        Mat& v = *t.member(m, t.layer);
        v.resize(t.rows, t.cols);
        for (Eigen::Index i = 0; i < v.size(); ++i) v.data()[i] = dist(gen);
        for (size_t i = 0; i < 5 && Eigen::Index(i) < v.size(); ++i) v.data()[i * 7 % v.size()] = specials[i];
    }
    return m;
}

ModelConfig small(Task t, int L = 1) {
    ModelConfig c;
    c.task = t;
    c.vocab = 5;
    c.seq_len = 9;
    c.n_embd = 8;
    c.n_head = 2;
    c.n_layer = L;
    return c;
}

void expect_same_model(const Model& a, const Model& b) {
    EXPECT_EQ(a.config.task, b.config.task);
    EXPECT_EQ(a.config.vocab, b.config.vocab);
    EXPECT_EQ(a.config.seq_len, b.config.seq_len);
    EXPECT_EQ(a.config.n_embd, b.config.n_embd);
    EXPECT_EQ(a.config.n_head, b.config.n_head);
    EXPECT_EQ(a.config.n_layer, b.config.n_layer);
    ASSERT_EQ(a.h.size(), b.h.size());
    Model& ma = const_cast<Model&>(a);
    Model& mb = const_cast<Model&>(b);
    for (const ModelTensor& t : model_layout(a.config)) {
        const Mat& x = *t.member(ma, t.layer);
        const Mat& y = *t.member(mb, t.layer);
        ASSERT_EQ(x.rows(), y.rows()) << t.name;
        ASSERT_EQ(x.cols(), y.cols()) << t.name;
        EXPECT_EQ(std::memcmp(x.data(), y.data(), size_t(x.size()) * 4), 0) << t.name << " differs in its bits";
    }
}

} // namespace

TEST(ModelIo, RoundTripIsBitExactForEveryTask) {
    TempDir dir;
    int n = 0;
    for (Task t : {Task::prev, Task::dup, Task::both, Task::induction}) {
        const Model m = random_model(small(t, t == Task::induction ? 3 : 1), uint32_t(11 + n));
        const std::string path = dir.file("m" + std::to_string(n++) + ".safetensors");
        std::string error;
        ASSERT_TRUE(save_model(path, m, error)) << error;
        Model back;
        ASSERT_TRUE(load_model(path, back, error)) << error;
        expect_same_model(m, back);
        // A second write of what was read gives the same bytes.
        const std::string again = path + ".again.safetensors";
        ASSERT_TRUE(save_model(again, back, error)) << error;
        EXPECT_EQ(read_bytes(path), read_bytes(again));
    }
}

TEST(ModelIo, LayoutIsTheRecipes) {
    TempDir dir;
    const Model m = random_model(small(Task::both), 3);
    std::string error;
    const std::string path = dir.file("b.safetensors");
    ASSERT_TRUE(save_model(path, m, error)) << error;
    const std::string b = read_bytes(path);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(b[size_t(i)]);
    EXPECT_EQ(n % 8, 0u);
    const std::string header = b.substr(8, n);
    EXPECT_EQ(header.rfind("{\"__metadata__\":{\"attnviz_task\":\"both\",\"n_head\":\"2\",\"n_layer\":\"1\","
                           "\"vocab_size\":\"5\"},\"head_dup.weight\":{\"dtype\":\"F32\",\"shape\":[2,8],"
                           "\"data_offsets\":[0,64]},\"head_prev.weight\"",
                           0),
              0u)
        << header;
    std::vector<std::string> order;
    for (const auto& [name, t] : raw_tensors(path)) order.push_back(name);
    EXPECT_EQ(order, (std::vector<std::string>{"head_dup.weight", "head_prev.weight", "transformer.h.0.attn.c_attn.weight",
                                               "transformer.h.0.attn.c_proj.weight", "transformer.wpe.weight",
                                               "transformer.wte.weight"}));
    // Data in name order: head_dup's 16 floats first.
    EXPECT_EQ(b.substr(8 + n, 64), f32_bytes(std::vector<float>(m.head_dup.data(), m.head_dup.data() + 16)));
}

TEST(ModelIo, LayoutNamesAreTheEnginesParameters) {
    for (Task t : {Task::prev, Task::dup, Task::both, Task::induction}) {
        Model m = init_model(small(t, 2), 0);
        std::vector<std::string> ours, engine;
        for (const ModelTensor& x : model_layout(m.config)) ours.push_back(x.name);
        for (const Param& p : parameters(m)) engine.push_back(p.name);
        EXPECT_EQ(ours, engine) << to_string(t);
    }
}

TEST(ModelIo, TorchFilesLoadAsTheRecipesConfigAndWriteBackTheSameBytes) {
    const nlohmann::json runs = recipe_runs().at("runs");
    ASSERT_GE(runs.size(), 3u);
    TempDir dir;
    for (auto it = runs.begin(); it != runs.end(); ++it) {
        const std::string path = train_file(it.key() + ".safetensors");
        const nlohmann::json& cfg = it.value().at("config");
        Model m;
        std::string error;
        ASSERT_TRUE(load_model(path, m, error)) << error;
        EXPECT_EQ(to_string(m.config.task), it.value().at("task").get<std::string>());
        EXPECT_EQ(m.config.vocab, cfg.at("V").get<int>());
        EXPECT_EQ(m.config.seq_len, cfg.at("T").get<int>());
        EXPECT_EQ(m.config.n_embd, cfg.at("C").get<int>());
        EXPECT_EQ(m.config.n_head, cfg.at("H").get<int>());
        EXPECT_EQ(m.config.n_layer, cfg.at("L").get<int>());
        const std::string again = dir.file(it.key() + ".safetensors");
        ASSERT_TRUE(save_model(again, m, error)) << error;
        EXPECT_EQ(read_bytes(again), read_bytes(path)) << it.key() << ": our writer differs from the recipe's";
    }
}

TEST(ModelIo, TrainedFilesAreToldFromAttentionLayerFiles) {
    EXPECT_TRUE(is_trained_model_file(train_file("both_s0_200.safetensors")));
    EXPECT_FALSE(is_trained_model_file(fixture("lesson_c8_h2.safetensors")));
    EXPECT_FALSE(is_trained_model_file(fixture("nanogpt_model_bf16.safetensors")));
    EXPECT_FALSE(is_trained_model_file(train_file("no such file.safetensors")));
    // load_weights refuses a trained model rather than reading block 0 on a seeded x ...
    LoadedWeights w;
    std::string error;
    EXPECT_FALSE(load_weights(train_file("both_s0_200.safetensors"), std::nullopt, 0, w, error));
    EXPECT_NE(error.find("is a model trained by attnviz train (task 'both')"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos);
    // ... and load_model refuses an attention-layer file.
    Model m;
    EXPECT_FALSE(load_model(fixture("nanogpt_model_bf16.safetensors"), m, error));
    EXPECT_NE(error.find("is not a model trained by attnviz train"), std::string::npos) << error;
}

namespace {

// A trained model's file with one thing changed: tensors by name (nullptr data = zeros),
// metadata as given.
struct Edit {
    std::vector<std::pair<std::string, std::vector<uint64_t>>> tensors;
    std::vector<std::pair<std::string, std::string>> meta;
};

Edit good_both() {
    const uint64_t V = 5, T = 9, C = 8;
    Edit e;
    e.tensors = {{"transformer.wte.weight", {V + 1, C}},
                 {"transformer.wpe.weight", {T + 1, C}},
                 {"transformer.h.0.attn.c_attn.weight", {3 * C, C}},
                 {"transformer.h.0.attn.c_proj.weight", {C, C}},
                 {"head_prev.weight", {V + 1, C}},
                 {"head_dup.weight", {2, C}}};
    e.meta = {{"attnviz_task", "both"}, {"n_head", "2"}, {"n_layer", "1"}, {"vocab_size", "5"}};
    return e;
}

std::string load_error(const Edit& e, float fill = 0.5f) {
    TempDir dir;
    const std::string path = dir.file("edit.safetensors");
    std::vector<std::vector<float>> data;
    std::vector<TensorOut> out;
    for (const auto& [name, shape] : e.tensors) {
        uint64_t n = 1;
        for (uint64_t d : shape) n *= d;
        data.emplace_back(size_t(n), fill);
    }
    for (size_t i = 0; i < e.tensors.size(); ++i) out.push_back({e.tensors[i].first, e.tensors[i].second, data[i].data()});
    std::string error;
    if (!write_safetensors(path, out, e.meta, error)) return "could not write: " + error;
    Model m;
    if (load_model(path, m, error)) return "";
    EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    return error;
}

} // namespace

TEST(ModelIo, InconsistentFilesAreRefusedWithOneSentence) {
    EXPECT_EQ(load_error(good_both()), ""); // the base case loads
    auto with = [](auto change) {
        Edit e = good_both();
        change(e);
        return load_error(e);
    };
    auto has = [](const std::string& error, const std::string& part) {
        EXPECT_NE(error.find(part), std::string::npos) << "expected '" << part << "' in: " << error;
    };
    has(with([](Edit& e) { e.meta[0].second = "copy"; }), "copy");
    has(with([](Edit& e) { e.meta[3].second = "6"; }), "vocab_size 6 in __metadata__ does not match");
    has(with([](Edit& e) { e.meta[2].second = "2"; }), "n_layer 2 in __metadata__ does not match the 1 blocks");
    has(with([](Edit& e) { e.meta.erase(e.meta.begin() + 1); }), "no n_head");
    has(with([](Edit& e) { e.meta[1].second = "3"; }), "3");
    has(with([](Edit& e) { e.tensors.erase(e.tensors.begin()); }), "has no transformer.wte.weight");
    has(with([](Edit& e) { e.tensors[1].second = {10, 7}; }), "transformer.wpe.weight has shape [10, 7]");
    has(with([](Edit& e) { e.tensors[3].second = {8, 9}; }), "'transformer.h.0.attn.c_proj.weight' has shape [8, 9]");
    has(with([](Edit& e) { e.tensors.pop_back(); }), "'head_dup.weight' is missing");
    has(with([](Edit& e) { e.tensors.push_back({"lm_head.weight", {5, 8}}); }), "is a head that task both does not have");
    has(with([](Edit& e) { e.tensors.push_back({"optimizer.m", {2}}); }), "'optimizer.m' is not part of a trained model");
    has(with([](Edit& e) {
            e.tensors.push_back({"transformer.h.2.attn.c_attn.weight", {24, 8}});
            e.tensors.push_back({"transformer.h.2.attn.c_proj.weight", {8, 8}});
            e.meta[2].second = "3";
        }),
        "block 1 is missing");
    has(with([](Edit& e) { e.tensors.erase(e.tensors.begin() + 2); }), "'transformer.h.0.attn.c_attn.weight' is missing");
    has(load_error(good_both(), NAN), "holds a non-finite value");
}

TEST(ModelIo, SaveNeverWritesNaNAndKeepsTheOldFile) {
    TempDir dir;
    const std::string path = dir.file("keep.safetensors");
    write_bytes(path, "the user's file");
    Model m = random_model(small(Task::induction, 2), 5);
    m.h[1].attn.c_proj.weight(3, 4) = NAN;
    std::string error;
    EXPECT_FALSE(save_model(path, m, error));
    EXPECT_NE(error.find("transformer.h.1.attn.c_proj.weight holds a non-finite value"), std::string::npos) << error;
    EXPECT_EQ(read_bytes(path), "the user's file");
    m.h[1].attn.c_proj.weight(3, 4) = 1.f;
    ASSERT_TRUE(save_model(path, m, error)) << error; // replaces it whole
    Model back;
    ASSERT_TRUE(load_model(path, back, error)) << error;
    expect_same_model(m, back);
    std::vector<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(dir.path)) left.push_back(e.path().filename());
    EXPECT_EQ(left, std::vector<std::string>{"keep.safetensors"}); // no temporary file stays
}

TEST(ModelIo, VocabularyNames) {
    ModelConfig c = small(Task::prev);
    EXPECT_EQ(token_name(c, 0), "a");
    EXPECT_EQ(token_name(c, 4), "e");
    EXPECT_EQ(token_name(c, 5), "^");
    EXPECT_EQ(token_of(c, "c"), 2);
    EXPECT_EQ(token_of(c, "f"), -1);
    EXPECT_EQ(token_of(c, "^"), 5);
    EXPECT_EQ(vocabulary_text(c), "a, b, c, d, e");
    c.vocab = 16;
    EXPECT_EQ(vocabulary_text(c), "a, b, c ... p");
}
