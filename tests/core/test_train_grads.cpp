// test_train_grads.cpp: the hand-written backward pass against torch autograd. For every
// task, at its default sizes and at one other configuration (other V, T, C, H, L and a
// batch that does not split evenly into chunks), the step-0 loss and the gradient of
// every parameter, each within 1e-5 of that tensor's largest |gradient|.
#include "train_test_util.h"

namespace attnviz::test {
namespace {

class TrainGrads : public ::testing::TestWithParam<const char*> {};

TEST_P(TrainGrads, MatchTorchAutograd) {
    const std::string task = GetParam();
    const json ref = load_json("train/grads_" + task + ".json");
    for (const json& c : ref.at("cases")) {
        const ModelConfig mc = model_config(task, c.at("config"));
        const uint64_t seed = c.at("seed");
        const int B = c.at("config").at("B");
        SCOPED_TRACE(task + " C " + std::to_string(mc.n_embd) + " L " + std::to_string(mc.n_layer));
        TrainRun run = start_training(mc, seed, 1e-3, B);
        Batch b;
        make_batch(mc, run.batch_gen, B, b);
        ModelGrads model_grads;
        const float loss = loss_and_grads(run.model, b, model_grads);
        const auto grads = model_grads.in_parameters_order(mc);
        const double want = c.at("loss");
        EXPECT_NEAR(loss, want, 1e-5 * std::fabs(want)) << "loss";
        std::vector<Param> params = parameters(run.model);
        ASSERT_EQ(grads.size(), params.size());
        for (size_t i = 0; i < params.size(); ++i) {
            const std::vector<float> expected = tensor(c.at("grads").at(params[i].name));
            ASSERT_EQ(int64_t(expected.size()), grads[i]->size()) << params[i].name;
            const double rel = relative_to_max(flat(*grads[i]), expected);
            EXPECT_LE(rel, 1e-5) << params[i].name << ": largest difference over largest |gradient|";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Train, TrainGrads, ::testing::Values("prev", "dup", "both", "induction"),
                         [](const auto& info) { return std::string(info.param); });

} // namespace
} // namespace attnviz::test
