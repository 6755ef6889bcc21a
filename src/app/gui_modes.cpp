// gui_modes.cpp: see gui_modes.h.
#include "gui_modes.h"
#include "frame.h"
#include "model_io.h"
#include "screenshot.h"
#include "session_state.h"
#include "train_session.h"
#include "train_view_state.h"
#include "weights_io.h"
#ifndef __EMSCRIPTEN__
#include "serve_link.h"
#endif
#include <GLFW/glfw3.h>
#include <cstdio>

namespace attnviz {

namespace {

// One frame, shown.
void frame_and_swap(GuiRun& r) {
    frame(r.window, r.state);
    glfwSwapBuffers(r.window.glfw());
#ifndef __EMSCRIPTEN__
    serve_after_frame(r.state); // --serve: the state the frame showed, to every page
#endif
}

// --save-session: the state now; false with a line on stderr when it cannot be written.
bool save_session_option(GuiRun& r) {
    std::string error;
    if (r.options.save_session.empty() || write_session_files(r.options.save_session, r.state, error)) return true;
    std::fprintf(stderr, "attnviz: %s\n", error.c_str());
    return false;
}

// --save-weights: the model the window holds. In the Train view (or with no trained model
// in the views) the Train view's run, waited for; else the trained model in the views; else
// the lesson's weights in the lesson's layout.
bool save_weights_option(GuiRun& r) {
    const std::string& path = r.options.save_weights;
    if (path.empty()) return true;
    AppState& s = r.state;
    std::string error;
    bool ok = false;
    if (s.train && s.train->session && (s.screen.view == View::train || !shown_model(s))) {
        s.train->session->wait_idle();
        ok = save_model(path, *s.train->session->latest(), error);
    } else if (shown_model(s)) {
        ok = save_model(path, *shown_model(s)->model, error);
    } else {
        ok = save_weights(path, s.run.experiment.weights, s.config.applied.n_head, error);
    }
    if (ok) return true;
    std::fprintf(stderr, "attnviz: %s\n", error.c_str());
    return false;
}

// Where the window was before F11 made it full screen.
struct WindowedPlace {
    int x = 0, y = 0, w = 1280, h = 800;
};

void toggle_fullscreen(GLFWwindow* window, WindowedPlace& place) {
    if (glfwGetWindowMonitor(window)) {
        glfwSetWindowMonitor(window, nullptr, place.x, place.y, place.w, place.h, GLFW_DONT_CARE);
        return;
    }
    GLFWmonitor* monitor = glfwGetPrimaryMonitor();
    const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
    if (!mode) return;
    glfwGetWindowPos(window, &place.x, &place.y);
    glfwGetWindowSize(window, &place.w, &place.h);
    glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
}

} // namespace

int run_screenshot(GuiRun& r, const Probes& probes) {
    frame_and_swap(r);
    for (Probe* p : probes) p->before_picture(r, [&] { frame_and_swap(r); }); // a test's input (probe.h)
    r.settings.save_if_changed(r.state);
    poll_model_load(r.state, true); // a model the input asked for, read before the picture
    finish_training(r.state); // --train-steps, or a session's run: trained before the picture
    finish_generate(r.state); // the Generate view's steps the input asked for, checked on its worker
    // Three frames: the first computes and uploads, the next ones let the layout settle;
    // the last is read back before it is swapped.
    frame_and_swap(r);
    frame_and_swap(r);
    frame(r.window, r.state);
    int fw = 0, fh = 0;
    glfwGetFramebufferSize(r.window.glfw(), &fw, &fh);
    std::string error;
    bool ok = write_screenshot_png(r.options.screenshot, fw, fh, error);
    for (Probe* p : probes) ok = ok && p->after_picture(r, fw, fh, error);
    if (!ok) {
        std::fprintf(stderr, "attnviz: %s\n", error.c_str());
        return 2;
    }
    return save_session_option(r) && save_weights_option(r) ? 0 : 2;
}

int run_interactive(GuiRun& r) {
    AppState& s = r.state;
    GLFWwindow* window = r.window.glfw();
    WindowedPlace windowed;
    double last = glfwGetTime();
    while (!glfwWindowShouldClose(window)) {
        // Idle: sleep until an event (or a tenth of a second) instead of spinning the CPU.
        if (s.config_dirty || s.perturb_dirty || s.ablation.dirty || s.fonts_dirty || train_busy(s) || generate_busy(s)) glfwPollEvents();
        else glfwWaitEventsTimeout(0.1);
        frame_and_swap(r);
        if (s.screen.fullscreen_toggle) toggle_fullscreen(window, windowed);
        r.settings.save_if_changed(s);
        s.screen.fullscreen_toggle = false;
        const double now = glfwGetTime();
        s.screen.frame_ms = float((now - last) * 1e3);
        last = now;
    }
    r.settings.save_if_changed(s);
    return save_session_option(r) && save_weights_option(r) ? 0 : 2;
}

} // namespace attnviz
