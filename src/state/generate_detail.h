// generate_detail.h: what the Generate view's state files share (generate_state.cpp, the
// steps; generate_work.cpp, the worker's full recomputes and the demonstration). Not an API.
#pragma once
#include "app_state.h"
#include "either_model.h" // forward_either: every layer's softmax weights, as the views' forward makes them
#include <chrono>

namespace attnviz::generate_detail {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The generator the lesson's new rows come from, where the recipe leaves it: after the
// weights' 4C² draws, x = torch.randn(1, T, C) and the replacement row torch.randn(C).
TorchGenerator lesson_generator(const Config& c);
// Head by head, row t of the softmax weights up to the diagonal: (H, t + 1).
Mat head_rows(const Trace& tr, int t);
// max |a - b| over two equal-length float arrays.
double max_abs(const float* a, const float* b, int64_t n);
// Small enough to compare every earlier row each step (generate_rows_check_cap).
bool rows_checked(const ModelConfig& c, int64_t T);
// The full recompute's multiply-adds at T positions, against generate_worker_min_macs.
double full_macs(const ModelConfig& c, int64_t T);
// The full recompute's softmax rows 0 .. T-2 of the kept layer against `rows`, split by
// whether a row was summed the way the recompute sums it (see GenerateStep).
void earlier_rows_diff(const Trace& full, const std::vector<Mat>& rows, const std::vector<int>& row_made_at, int T,
                       GenerateStep& st);

// ---- generate_work.cpp

// The check view's fifth demonstration: at once for a small input, else on a worker.
void start_demo(AppState& s);
// The last step's full recompute (step_model's, for a model over worker_min_macs) on a worker.
void start_check(AppState& s, const std::shared_ptr<const Model>& m, const Vec& cached_logits);
// Takes what a worker finished into the state; true while one still runs.
bool poll_work(AppState& s);

} // namespace attnviz::generate_detail
