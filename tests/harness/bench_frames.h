// bench_frames.h: attnviz_harness --bench-frames N: median frame times of the real window
// (headless, under xvfb-run), idle and while the strength slider moves every frame, as one
// JSON line on stdout. scripts/bench.py runs it for `make bench`.
#pragma once
#include "app_state.h"
#include "window.h"
#include <functional>

namespace attnviz {

// N idle frames, then N frames dragging at the view's p and N at T/2 (update_row, range
// scan, row uploads, panels, drawing), each with where its median frame's time went. The
// keys median_idle_ms and median_drag_ms are the idle frame and the drag at the view's p
// (p95_idle_ms and p95_drag_ms their 95th percentiles).
// A whole GPT model (--model): N idle frames and N layer switches instead of the drags
// (median_layer_switch_ms, max_layer_switch_ms). `after` runs after every frame, inside the
// timed ones (with --serve: the publish to the pages, as the window's loop does).
using AfterFrame = std::function<void()>;
void bench_frames(AppWindow& w, AppState& s, int n, AfterFrame after = {});
// With --view train (bench_train_frames.cpp): N paced frames idle and N while the run trains
// at full speed, and the run's steps per second with the window drawing and alone.
void bench_train_frames(AppWindow& w, AppState& s, int n);

} // namespace attnviz
