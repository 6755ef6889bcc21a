// bench_train_frames.cpp: the frame benchmark of the Train view (see bench_frames.h). The
// window draws at a display's 60 Hz while its run trains on the worker as fast as it goes:
// the median frame time against an idle (paused) frame, and the steps per second the worker
// makes while the window draws against the same run training with no window frames.
#include "bench_frames.h"
#include "frame.h"
#include "screenshot.h"
#include "train_view_state.h"
#include <GLFW/glfw3.h>
#include <string>
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <thread>
#include <vector>

namespace attnviz {

namespace {

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// Where a frame's time goes: the run's copy and the heads on the probe (refresh), building
// the panels (ImGui), and drawing them (llvmpipe renders during the read-back).
struct Parts {
    std::vector<double> total, refresh, panels, render;
    std::string json() const {
        char b[160];
        std::snprintf(b, sizeof b, "{\"refresh\": %.3f, \"panels\": %.3f, \"render\": %.3f}", median_of(refresh),
                      median_of(panels), median_of(render));
        return b;
    }
};

// n frames paced at 60 per second, each frame's own time in ms and its parts.
Parts paced_frames(AppWindow& w, AppState& s, int n) {
    Parts out;
    for (int i = 0; i < n; ++i) {
        const double t0 = glfwGetTime();
        FrameMarks marks;
        frame(w, s, &marks);
        read_back_buffer(1, 1); // the GPU's part too (llvmpipe draws here)
        const double ms = (glfwGetTime() - t0) * 1e3;
        out.total.push_back(ms);
        out.refresh.push_back(marks.recompute);
        out.panels.push_back(marks.panels - marks.sync);
        out.render.push_back(ms - marks.panels);
        if (ms < 1000.0 / 60) std::this_thread::sleep_for(std::chrono::microseconds(int64_t((1000.0 / 60 - ms) * 1e3)));
    }
    return out;
}

// Steps per second of the run over `seconds`, from its status (worker time only).
double steps_per_second(TrainSession& ses, double seconds, const std::function<void()>& meanwhile) {
    const int64_t s0 = ses.status().step;
    const auto t0 = std::chrono::steady_clock::now();
    meanwhile();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return double(ses.status().step - s0) / dt;
}

} // namespace

void bench_train_frames(AppWindow& w, AppState& s, int n) {
    TrainViewState& t = train_view(s);
    TrainSession& ses = *t.session;
    ses.set_speed(0);
    for (int i = 0; i < 3; ++i) frame(w, s); // settle
    const Parts idle = paced_frames(w, s, n);
    // Training while the window draws: the frames' own time and the worker's rate.
    const int64_t s0 = ses.status().step;
    const double w0 = glfwGetTime();
    ses.run();
    const Parts busy = paced_frames(w, s, n);
    const double with_window = double(ses.status().step - s0) / (glfwGetTime() - w0);
    // The same run alone, no frames, for as long.
    const double alone = steps_per_second(ses, std::max(2.0, double(n) / 60.0), [] {});
    ses.pause();
    ses.wait_idle();
    const double mi = median_of(idle.total), mb = median_of(busy.total);
    const TrainSettings& ts = ses.settings();
    std::printf("{\"frames\": %d, \"view\": \"train\", \"task\": \"%s\", \"C\": %d, \"H\": %d, \"L\": %d, \"batch\": %d, "
                "\"median_idle_ms\": %.3f, \"median_training_ms\": %.3f, \"training_ratio\": %.3f, "
                "\"steps_per_s_with_window\": %.1f, \"steps_per_s_alone\": %.1f, \"steps_ratio\": %.3f, \"steps_done\": %lld, "
                "\"idle_parts_ms\": %s, \"training_parts_ms\": %s}\n",
                n, to_string(ts.model.task), ts.model.n_embd, ts.model.n_head, ts.model.n_layer, ts.batch, mi, mb,
                mi > 0 ? mb / mi : 0.0, with_window, alone, alone > 0 ? with_window / alone : 0.0,
                (long long)ses.status().step, idle.json().c_str(), busy.json().c_str());
}

} // namespace attnviz
