// harness_main.cpp: attnviz_harness, the window driven by a script instead of a user, for
// the tests and `make bench`. It takes attnviz's window options and runs the same window,
// state and frame (attnviz_app), but is not part of the shipped attnviz.
//
//   attnviz_harness [window options] --bench-frames N
//   attnviz_harness [window options] --soak N [--soak-seed S] [--soak-fault none|gl-error|leak]
#include "bench_frames.h"
#include "frame.h"
#include "gl_debug.h"
#include "gui_main.h"
#include "soak.h"
#include <CLI/CLI.hpp>
#include <GLFW/glfw3.h>
#include <cstdint>
#include <malloc.h>
#include <string>

namespace {

using namespace attnviz;

struct HarnessOptions {
    std::string bench_frames;
    std::string soak, soak_seed, soak_fault;
};

struct HarnessPlan {
    int bench_frames = 0;
    SoakPlan soak; // soak.frames > 0: the soak run
};

// --soak N [--soak-seed S] [--soak-fault F]: not with --screenshot or --bench-frames.
bool make_soak_plan(const GuiOptions& g, const HarnessOptions& o, HarnessPlan& plan, std::string& error) {
    if (o.soak.empty()) {
        if (!o.soak_seed.empty() || !o.soak_fault.empty()) {
            error = std::string(o.soak_seed.empty() ? "--soak-fault" : "--soak-seed") + " needs --soak N: it belongs to the soak run";
            return false;
        }
        return true;
    }
    if (!g.screenshot.empty() || !o.bench_frames.empty()) {
        error = "--soak cannot be combined with --screenshot or --bench-frames; run them one at a time";
        return false;
    }
    int64_t v = 0;
    if (!parse_int(o.soak, "--soak", 1, 10000000, v, error)) return false;
    plan.soak.frames = int(v);
    if (!o.soak_seed.empty()) {
        if (!parse_int(o.soak_seed, "--soak-seed", 0, INT64_MAX, v, error)) return false;
        plan.soak.seed = uint64_t(v);
    }
    return o.soak_fault.empty() || parse_soak_fault(o.soak_fault, plan.soak.fault, error);
}

// After make_plan: the mode, and what it changes in the window's plan.
bool make_harness_plan(const GuiOptions& g, const HarnessOptions& o, GuiPlan& gui, HarnessPlan& plan,
                       std::string& error) {
    if (!o.bench_frames.empty()) {
        if (!g.screenshot.empty()) {
            error = "--bench-frames and --screenshot cannot be combined; run them one at a time";
            return false;
        }
        int64_t v = 0;
        if (!parse_int(o.bench_frames, "--bench-frames", 1, 100000, v, error)) return false;
        plan.bench_frames = int(v);
        // The benchmark's size is (T, C, H) = (512, 512, 8) unless a size option changed the
        // lesson's, and it drags the slider in the causality view unless --view says otherwise.
        const ConfigOptions lesson;
        if (g.config.seq_len == lesson.seq_len && g.config.n_embd == lesson.n_embd && g.config.n_head == lesson.n_head &&
            !g.config.text && !g.config.weights && g.open.empty()) {
            gui.config.seq_len = 512;
            gui.config.n_embd = 512;
            gui.config.n_head = 8;
            if (!gui.perturb) gui.perturb = 2;
        }
        if (g.view.empty()) gui.view = View::causality;
    }
    if (!make_soak_plan(g, o, plan, error)) return false;
    if (plan.bench_frames == 0 && plan.soak.frames == 0) {
        error = "attnviz_harness needs --bench-frames N or --soak N";
        return false;
    }
    gui.headless = true;
    gui.debug_context = plan.soak.frames > 0;
    return true;
}

// Soak: the real frame and swap, GL errors counted after each (soak.h).
int soak_mode(GuiRun& r, const SoakPlan& plan) {
    GlErrorCounter gl;
    install_gl_debug(gl);
    const int status = run_soak(r.state, plan, gl, [&] {
        glfwPollEvents();
        frame(r.window, r.state);
        glfwSwapBuffers(r.window.glfw());
    });
    remove_gl_debug(gl);
    return status;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"attnviz_harness: attnviz's window driven by a script, for the tests and make bench.", "attnviz_harness"};
    GuiOptions gui;
    add_gui_options(app, gui);
    HarnessOptions o;
    app.add_option("--bench-frames", o.bench_frames, "time N idle and N slider-drag frames, print JSON")->type_name("N");
    app.add_option("--soak", o.soak, "drive every control for N frames, check GL errors and memory, print JSON")->type_name("N");
    app.add_option("--soak-seed", o.soak_seed, "with --soak: the random script's seed (default 1)")->type_name("S");
    app.add_option("--soak-fault", o.soak_fault, "with --soak: none, gl-error or leak (tests of the checks)")->type_name("F");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return usage_error(describe_parse_error(app, e));
    }
#if !defined(__SANITIZE_ADDRESS__)
    // The soak reads RSS after malloc_trim, to count what the run keeps, not what malloc caches.
    // That only holds with one malloc arena: a Train view worker started after a reopened
    // session gets an arena of its own, and glibc's malloc_trim never hands back the free top
    // of a thread arena's heap (about 8 MB each, up to one per arena: +25 MB over 3000 frames
    // with the same bytes in use). glibc fixes its arena limit when a second thread first needs
    // one, so the limit is set here, before the window or Mesa start any thread.
    if (!o.soak.empty()) mallopt(M_ARENA_MAX, 1);
#endif

    GuiPlan plan;
    HarnessPlan harness;
    std::string error;
    if (!make_plan(gui, plan, error) || !make_harness_plan(gui, o, plan, harness, error)) return usage_error(error);
    return run_window(gui, plan, [&](GuiRun& r) {
        if (harness.soak.frames > 0) return soak_mode(r, harness.soak);
        bench_frames(r.window, r.state, harness.bench_frames);
        return 0;
    });
}
