// bench_frames.cpp: see bench_frames.h.
#include "bench_frames.h"
#include "frame.h"
#include "screenshot.h"
#include <GLFW/glfw3.h>
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {

namespace {

struct FrameSamples {
    std::vector<double> total, recompute, sync, panels, render, uploads, after;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

double p95(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[std::min(v.size() - 1, v.size() * 95 / 100)];
}

// What the loop does after each frame besides swapping (with --serve: the publish).
AfterFrame after_frame;

void untimed_frame(AppWindow& w, AppState& s) {
    frame(w, s);
    if (after_frame) after_frame();
}

// `n` frames; `before` runs ahead of each one (untimed), e.g. to move the slider.
template <class Before>
FrameSamples time_frames(AppWindow& w, AppState& s, int n, Before before) {
    FrameSamples out;
    for (int i = 0; i < n; ++i) {
        before(i);
        FrameMarks m;
        const double t0 = glfwGetTime();
        frame(w, s, &m);
        read_back_buffer(1, 1); // waits for the GPU (llvmpipe draws here), so the frame is really done
        const double drawn = glfwGetTime();
        if (after_frame) after_frame();
        const double total = (glfwGetTime() - t0) * 1e3;
        out.recompute.push_back(m.recompute);
        out.sync.push_back(m.sync - m.recompute);
        out.panels.push_back(m.panels - m.sync);
        out.render.push_back((drawn - t0) * 1e3 - m.panels);
        out.after.push_back(total - (drawn - t0) * 1e3);
        out.uploads.push_back(m.uploads);
        out.total.push_back(total);
    }
    return out;
}

std::string parts_json(const FrameSamples& f) {
    char buf[280];
    std::snprintf(buf, sizeof buf,
                  "{\"recompute\": %.3f, \"sync\": %.3f, \"panels\": %.3f, \"render\": %.3f, \"render_uploads\": %.3f, "
                  "\"after\": %.3f}",
                  median(f.recompute), median(f.sync), median(f.panels), median(f.render), median(f.uploads),
                  median(f.after));
    return buf;
}

// A whole GPT model: n idle frames, then the frame of each of n layer switches (the next
// layer, cycling): the layer recomputed, its ranges, its textures sent and the view drawn.
// No drags: a GPT model's slider replaces a token, a forward of every later row.
void bench_layer_switches(AppWindow& w, AppState& s, int n) {
    for (int i = 0; i < 3; ++i) untimed_frame(w, s); // settle
    const FrameSamples idle = time_frames(w, s, n, [](int) {});
    const int L = shown_model(s)->model->config.n_layer;
    const FrameSamples sw = time_frames(w, s, n, [&](int) { request_layer(s, (s.shown.layer + 1) % L); });
    const double worst = sw.total.empty() ? 0.0 : *std::max_element(sw.total.begin(), sw.total.end());
    std::printf("{\"frames\": %d, \"seq_len\": %d, \"n_embd\": %d, \"n_head\": %d, \"n_layer\": %d, \"kernel\": \"%s\", "
                "\"view\": \"%s\", \"compact\": %s, \"median_idle_ms\": %.3f, \"median_layer_switch_ms\": %.3f, "
                "\"max_layer_switch_ms\": %.3f, \"idle_parts_ms\": %s, \"layer_switch_parts_ms\": %s}\n",
                n, s.config.applied.seq_len, s.config.applied.n_embd, s.config.applied.n_head, L, to_string(s.kernel), to_string(s.screen.view),
                s.model_run.model_base.compact ? "true" : "false", median(idle.total), median(sw.total), worst, parts_json(idle).c_str(),
                parts_json(sw).c_str());
}

} // namespace

void bench_frames(AppWindow& w, AppState& s, int n, AfterFrame after) {
    if (s.screen.view == View::train) return bench_train_frames(w, s, n);
    after_frame = std::move(after);
    untimed_frame(w, s); // the model asked for is shown from the first frame's recompute
    if (shown_model(s) && shown_model(s)->gpt()) return bench_layer_switches(w, s, n);
    for (int i = 0; i < 3; ++i) untimed_frame(w, s); // settle
    const FrameSamples idle = time_frames(w, s, n, [](int) {});
    const int heatmaps = w.gpu.renderer.drawn; // in the idle frame: what the drags redraw too
    // A drag at position p: a few untimed frames first, as moving p itself redoes more
    // (the old row goes back) than a strength step does.
    auto drag_at = [&](int p) {
        request_perturbation(s, p, 1.f);
        for (int i = 0; i < 3; ++i) untimed_frame(w, s);
        return time_frames(w, s, n,
                           [&](int i) { request_perturbation(s, p, float(i % 50 + 1) / 50.f); });
    };
    const int p_view = s.p, p_mid = s.config.applied.seq_len / 2;
    const FrameSamples drag = drag_at(p_view);
    const FrameSamples drag_mid = drag_at(p_mid);
    const double mi = median(idle.total), md = median(drag.total), mm = median(drag_mid.total);
    std::printf("{\"frames\": %d, \"seq_len\": %d, \"n_embd\": %d, \"n_head\": %d, \"kernel\": \"%s\", "
                "\"view\": \"%s\", \"heatmaps_drawn\": %d, \"median_idle_ms\": %.3f, \"p\": %d, \"median_drag_ms\": %.3f, "
                "\"drag_ratio\": %.3f, \"p95_idle_ms\": %.3f, \"p95_drag_ms\": %.3f, \"p_mid\": %d, \"median_drag_mid_ms\": %.3f, \"drag_mid_ratio\": %.3f, "
                "\"idle_parts_ms\": %s, \"drag_parts_ms\": %s, \"drag_mid_parts_ms\": %s}\n",
                n, s.config.applied.seq_len, s.config.applied.n_embd, s.config.applied.n_head, to_string(s.kernel), to_string(s.screen.view), heatmaps, mi,
                p_view, md, mi > 0 ? md / mi : 0.0, p95(idle.total), p95(drag.total), p_mid, mm, mi > 0 ? mm / mi : 0.0, parts_json(idle).c_str(),
                parts_json(drag).c_str(), parts_json(drag_mid).c_str());
}

} // namespace attnviz
