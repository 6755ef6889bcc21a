// test_train_model.cpp: the toy models against the training recipe's PyTorch: randint and
// make_batch draw for draw, the initial weights and a trained model's forward (reference
// kernel) bit for bit; the task names, defaults and size checks.
#include "train_test_util.h"

namespace attnviz::test {
namespace {

TEST(TrainRandom, RandintMatchesTorch) {
    const json ref = load_json("train/random.json");
    TorchGenerator g(ref.at("randint_seed").get<uint64_t>());
    for (const json& d : ref.at("randint")) {
        const int64_t low = d.at("low"), high = d.at("high");
        for (const json& v : d.at("values")) EXPECT_EQ(g.randint(low, high), v.get<int64_t>()) << low << ".." << high;
    }
}

TEST(TrainRandom, MakeBatchMatchesTorch) {
    const json ref = load_json("train/random.json");
    for (const json& c : ref.at("make_batch")) {
        ModelConfig mc;
        mc.task = task_of(c.at("task"));
        mc.vocab = c.at("V");
        mc.seq_len = c.at("T");
        const int B = c.at("B");
        SCOPED_TRACE(c.at("task").get<std::string>() + " V " + std::to_string(mc.vocab) + " T " +
                     std::to_string(mc.seq_len));
        TorchGenerator g(c.at("seed").get<uint64_t>());
        for (const json& expected : c.at("batches")) {
            Batch b;
            make_batch(mc, g, B, b);
            ASSERT_EQ(b.B, B);
            ASSERT_EQ(b.N, mc.seq_len + 1);
            auto rows = [&](const json& j) {
                std::vector<int> v;
                for (const json& row : j)
                    for (const json& x : row) v.push_back(x.is_boolean() ? int(x.get<bool>()) : x.get<int>());
                return v;
            };
            EXPECT_EQ(b.tok, rows(expected.at("tok")));
            if (mc.has_prev_head()) {
                EXPECT_EQ(b.prev, rows(expected.at("prev")));
            }
            if (mc.has_dup_head()) {
                EXPECT_EQ(b.dup, rows(expected.at("dup")));
            }
            if (mc.has_lm_head()) {
                std::vector<int> where(b.where.begin(), b.where.end());
                EXPECT_EQ(where, rows(expected.at("where")));
            }
        }
    }
}

TEST(TrainModel, InitialWeightsAreTorchsBitForBit) {
    for (const char* task : {"prev", "dup", "both", "induction"}) {
        const json ref = load_json(std::string("train/grads_") + task + ".json");
        for (const json& c : ref.at("cases")) {
            if (!c.contains("init")) continue;
            SCOPED_TRACE(task);
            Model m = init_model(model_config(task, c.at("config")), c.at("seed").get<uint64_t>());
            std::vector<std::string> names;
            for (Param& p : parameters(m)) {
                names.push_back(p.name);
                EXPECT_TRUE(same(*p.value, tensor(c.at("init").at(p.name)))) << p.name;
            }
            EXPECT_EQ(names, c.at("params").get<std::vector<std::string>>()) << "parameters() order";
        }
    }
}

TEST(TrainModel, ReferenceForwardOfTrainedModelsIsTorchsBitForBit) {
    const json ref = load_json("train/trained.json");
    for (const json& t : ref.at("models")) {
        const std::string task = t.at("task");
        SCOPED_TRACE(task);
        Model m = init_model(model_config(task, t.at("config")), 0);
        load_weights(t.at("weights"), m);
        const json& f = t.at("forward");
        ModelTrace tr;
        model_forward(m, f.at("tokens").get<std::vector<int>>(), KernelKind::reference, tr);
        ASSERT_EQ(tr.layers.size(), f.at("layers").size());
        for (size_t l = 0; l < tr.layers.size(); ++l) {
            const json& L = f.at("layers")[l];
            const Trace& a = tr.layers[l];
            EXPECT_TRUE(same(a.x, tensor(L.at("x")))) << "layer " << l << " x";
            EXPECT_TRUE(same(a.qkv, tensor(L.at("qkv")))) << "layer " << l << " qkv";
            EXPECT_TRUE(same(a.att, tensor(L.at("probs")))) << "layer " << l << " probs";
            EXPECT_TRUE(same(a.y, tensor(L.at("y")))) << "layer " << l << " y";
        }
        EXPECT_TRUE(same(tr.h_out, tensor(f.at("h_out")))) << "h_out";
        if (m.config.has_prev_head()) {
            EXPECT_TRUE(same(tr.logits_prev, tensor(f.at("head_prev")))) << "head_prev";
        }
        if (m.config.has_dup_head()) {
            EXPECT_TRUE(same(tr.logits_dup, tensor(f.at("head_dup")))) << "head_dup";
        }
        if (m.config.has_lm_head()) {
            EXPECT_TRUE(same(tr.logits_next, tensor(f.at("lm_head")))) << "lm_head";
        }

        // The fast kernel agrees closely (it is not required to be bit-exact).
        ModelTrace fast;
        model_forward(m, f.at("tokens").get<std::vector<int>>(), KernelKind::fast, fast);
        EXPECT_TRUE(same(fast.h_out, tr.h_out, 1e-4f)) << "fast h_out";
    }
}

TEST(TrainModel, ForwardRefusesTokensTheModelCannotRead) {
    ModelConfig c = task_defaults(Task::prev).model;
    c.vocab = 5;
    c.seq_len = 6;
    const Model m = init_model(c, 0);
    ModelTrace tr;
    EXPECT_THROW(model_forward(m, {5, 0, 6}, KernelKind::reference, tr), std::invalid_argument);   // 6 > BOS
    EXPECT_THROW(model_forward(m, {5, 0, -1}, KernelKind::reference, tr), std::invalid_argument);
    EXPECT_THROW(model_forward(m, std::vector<int>(8, 1), KernelKind::reference, tr), std::invalid_argument); // N > T + 1
    EXPECT_THROW(model_forward(m, {}, KernelKind::reference, tr), std::invalid_argument);
    // A shorter sequence is the first positions of the longer one (causality, wpe rows 0..N-1).
    ModelTrace whole, part;
    model_forward(m, {5, 1, 2, 3, 4, 0, 1}, KernelKind::reference, whole);
    model_forward(m, {5, 1, 2}, KernelKind::reference, part);
    EXPECT_TRUE(same(part.h_out, Mat(whole.h_out.topRows(3))));
    EXPECT_EQ(part.logits_prev.rows(), 3);
    EXPECT_EQ(part.logits_prev.cols(), 6);
    EXPECT_EQ(part.logits_dup.size(), 0);
}

TEST(TrainModel, TaskNamesAndDefaults) {
    for (Task t : {Task::prev, Task::dup, Task::both, Task::induction}) {
        Task back{};
        std::string error;
        ASSERT_TRUE(parse_task(to_string(t), back, error));
        EXPECT_EQ(back, t);
        EXPECT_EQ(validate(task_defaults(t).model), "") << to_string(t);
    }
    Task out{};
    std::string error;
    EXPECT_FALSE(parse_task("copy", out, error));
    EXPECT_NE(error.find("'copy'"), std::string::npos) << error;
    EXPECT_NE(error.find("induction"), std::string::npos) << error;

    // The recipe's TASKS table.
    const TrainDefaults both = task_defaults(Task::both), ind = task_defaults(Task::induction);
    EXPECT_EQ(both.model.n_head, 4);
    EXPECT_EQ(both.steps, 1000);
    EXPECT_EQ(ind.model.seq_len, 24);
    EXPECT_EQ(ind.model.n_layer, 2);
    EXPECT_DOUBLE_EQ(ind.lr, 3e-3);
    EXPECT_EQ(ind.steps, 1500);
    EXPECT_EQ(task_defaults(Task::prev).steps, 300);
    EXPECT_EQ(task_defaults(Task::dup).model.n_head, 2);
}

TEST(TrainModel, ValidateNamesTheBadValue) {
    auto error_for = [](auto change) {
        ModelConfig c = task_defaults(Task::both).model;
        change(c);
        return validate(c);
    };
    const std::string v = error_for([](ModelConfig& c) { c.vocab = 1; });
    EXPECT_NE(v.find("vocab 1"), std::string::npos) << v;
    const std::string h = error_for([](ModelConfig& c) { c.n_head = 3; });
    EXPECT_NE(h.find("n_embd 64 is not divisible by n_head 3"), std::string::npos) << h;
    const std::string t = error_for([](ModelConfig& c) {
        c.task = Task::induction;
        c.seq_len = 7;
    });
    EXPECT_NE(t.find("seq_len 7 is too short for induction"), std::string::npos) << t;
    EXPECT_EQ(error_for([](ModelConfig& c) {
                  c.task = Task::induction;
                  c.seq_len = 8;
              }),
              "");
    const std::string l = error_for([](ModelConfig& c) { c.n_layer = 0; });
    EXPECT_NE(l.find("n_layer 0"), std::string::npos) << l;
    const std::string big = error_for([](ModelConfig& c) { c.n_embd = 4096; });
    EXPECT_NE(big.find("n_embd 4096"), std::string::npos) << big;
    EXPECT_THROW(init_model(ModelConfig{Task::prev, 1, 16, 64, 2, 1}, 0), std::invalid_argument);
    EXPECT_THROW(start_training(task_defaults(Task::prev).model, 0, 0.0, 64), std::invalid_argument);
    EXPECT_THROW(start_training(task_defaults(Task::prev).model, 0, -1e-3, 64), std::invalid_argument);
    EXPECT_THROW(start_training(task_defaults(Task::prev).model, 0, 1e-3, 0), std::invalid_argument);
    EXPECT_THROW(start_training(task_defaults(Task::prev).model, 0, 1e-3, max_train_batch + 1), std::invalid_argument);
    EXPECT_NO_THROW(start_training(task_defaults(Task::prev).model, 0, 1e-3, max_train_batch));
}

} // namespace
} // namespace attnviz::test
