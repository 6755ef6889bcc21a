// train_json.h: the JSON of attnviz train and attnviz heads, as nlohmann's ordered_json (the
// keys in the order written, PyTorch's scripts' order). docs/cli.md documents the keys.
//
//   train   {task, seed, config {V, T, C, H, L, lr, B, steps}, losses, accuracy,
//           head_scores {prev_token, duplicate, induction: [layer][head]}, seconds}
//   heads   {file, task, config {V, T, C, H, L}, accuracy, head_scores, [ablation {heads,
//           mode, before {loss, accuracy}, after {loss, accuracy, head_scores}, delta
//           {loss, accuracy}}]}
//
// The values are the command's, already checked; nothing here parses or prints.
#pragma once
#include "ablation.h"
#include "model.h"
#include "train.h"
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace attnviz {

// {V, T, C, H, L}
nlohmann::ordered_json model_config_json(const ModelConfig& c);
// {prev_token, duplicate, induction}, each [layer][head]
nlohmann::ordered_json head_scores_json(const HeadScores& s);
// {prev, dup, next}: those in `acc`, in PyTorch's order (a std::map would sort dup first)
nlohmann::ordered_json accuracy_json(const std::map<std::string, double>& acc);
// {loss, accuracy} in the metrics' own order
nlohmann::ordered_json task_metrics_json(const TaskMetrics& t);

// What attnviz train ran: the options' values (the task's defaults filled in) and its time.
struct TrainReport {
    Task task = Task::prev;
    int64_t seed = 0;
    ModelConfig config;
    double lr = 0;
    int64_t batch = 0, steps = 0;
    double seconds = 0;
};
// The run's JSON: its losses, and the accuracy and head scores of the trained model.
nlohmann::ordered_json train_json(const TrainReport& r, const TrainRun& run);

// The kernel heads' probes run on: the reference loops, whose numbers PyTorch's are checked against.
constexpr KernelKind heads_kernel = KernelKind::reference;
// heads' JSON for the model read from `file`. `ab` (nullptr or empty: none) are the heads
// to ablate, the mean mode's means computed on the accuracy probe (ablation_probe(m, {}))
// with heads_kernel: adds "ablation" with the task's loss and accuracy before and after, the
// head scores after, and the differences.
nlohmann::ordered_json heads_json(const Model& m, const std::string& file, const Ablation* ab);

} // namespace attnviz
