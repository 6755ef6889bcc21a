// train_json.cpp: see train_json.h.
#include "train_json.h"
#include "ablation_scores.h"

namespace attnviz {

using ojson = nlohmann::ordered_json;

ojson model_config_json(const ModelConfig& c) {
    ojson j = ojson::object();
    j["V"] = c.vocab;
    j["T"] = c.seq_len;
    j["C"] = c.n_embd;
    j["H"] = c.n_head;
    j["L"] = c.n_layer;
    return j;
}

ojson head_scores_json(const HeadScores& s) {
    ojson j = ojson::object();
    j["prev_token"] = s.prev_token;
    j["duplicate"] = s.duplicate;
    j["induction"] = s.induction;
    return j;
}

ojson accuracy_json(const std::map<std::string, double>& acc) {
    ojson j = ojson::object();
    for (const char* k : {"prev", "dup", "next"})
        if (auto it = acc.find(k); it != acc.end()) j[k] = it->second;
    return j;
}

ojson task_metrics_json(const TaskMetrics& t) {
    ojson j = ojson::object();
    j["loss"] = t.loss;
    ojson acc = ojson::object();
    for (const auto& [key, value] : t.accuracy) acc[key] = value;
    j["accuracy"] = acc;
    return j;
}

ojson train_json(const TrainReport& r, const TrainRun& run) {
    ojson out = ojson::object();
    out["task"] = to_string(r.task);
    out["seed"] = r.seed;
    ojson cfg = model_config_json(r.config);
    cfg["lr"] = r.lr;
    cfg["B"] = r.batch;
    cfg["steps"] = r.steps;
    out["config"] = cfg;
    out["losses"] = ojson::array();
    for (float l : run.losses) out["losses"].push_back(double(l));
    out["accuracy"] = accuracy_json(accuracy(run.model));
    out["head_scores"] = head_scores_json(head_scores(run.model));
    out["seconds"] = r.seconds;
    return out;
}

// Before and after ablating `ab`'s heads: the task's loss and accuracy, the head scores
// after, and the differences.
static ojson heads_ablation_json(const Model& m, const Ablation& ab) {
    const KernelKind kernel = heads_kernel;
    const TaskMetrics before = task_metrics(m, kernel), after = task_metrics(m, kernel, &ab);
    ojson j = ojson::object();
    j["heads"] = ojson::array();
    for (const HeadRef& h : ab.heads) j["heads"].push_back(to_string(h));
    j["mode"] = to_string(ab.mode);
    j["before"] = task_metrics_json(before);
    j["after"] = task_metrics_json(after);
    j["after"]["head_scores"] = head_scores_json(ablated_head_scores(m, kernel, &ab));
    ojson delta = ojson::object();
    delta["loss"] = after.loss - before.loss;
    ojson acc = ojson::object();
    for (size_t i = 0; i < after.accuracy.size() && i < before.accuracy.size(); ++i)
        acc[after.accuracy[i].first] = after.accuracy[i].second - before.accuracy[i].second;
    delta["accuracy"] = acc;
    j["delta"] = delta;
    return j;
}

ojson heads_json(const Model& m, const std::string& file, const Ablation* ab) {
    ojson out = ojson::object();
    out["file"] = file;
    out["task"] = to_string(m.config.task);
    out["config"] = model_config_json(m.config);
    out["accuracy"] = accuracy_json(accuracy(m));
    out["head_scores"] = head_scores_json(head_scores(m));
    if (ab && !ab->empty()) out["ablation"] = heads_ablation_json(m, *ab);
    return out;
}

} // namespace attnviz
