// soak.h: attnviz_harness --soak N [--soak-seed S]: a scripted, headless run of N frames that
// drives every control of the window through random and boundary values, and checks that
// nothing leaks, no GL error is raised and every invalid edit is refused.
//
// Edits go through AppState exactly as the panels make them (a field plus a dirty flag, or
// request_config / request_perturbation); the frame callback then runs the real frame:
// recompute, texture uploads, the ImGui panels, the heatmap shader, the swap.
#pragma once
#include "app_state.h"
#include "gl_debug.h"
#include <cstdint>
#include <functional>
#include <string>

namespace attnviz {

// A deliberate fault, so that tests can prove each check fails when it should.
enum class SoakFault { none, gl_error, leak };
// On failure sets `error` to one sentence naming the value and the allowed names.
bool parse_soak_fault(const std::string& s, SoakFault& out, std::string& error);

struct SoakPlan {
    int frames = 0;
    uint64_t seed = 1;
    SoakFault fault = SoakFault::none;
};

// Frames before the first RSS reading: a tenth of the run, at most 1000.
int soak_warmup_frames(int frames);

// Runs the plan on a state that init_app_state() has prepared, calling `draw_frame` for
// every frame and polling `gl` after it: N frames, or 37 (the boundary tour and the two
// RSS checkpoints) when N is smaller. Prints one JSON line on stdout (frames, gl_errors,
// RSS after warm-up and at the end, growth, refused edits, ...). Returns 0 when there was
// no GL error, RSS grew by at most 5 MB after warm-up and every edit had the expected
// outcome; otherwise prints one line why on stderr and returns 1.
int run_soak(AppState& s, const SoakPlan& plan, GlErrorCounter& gl, const std::function<void()>& draw_frame);

} // namespace attnviz
