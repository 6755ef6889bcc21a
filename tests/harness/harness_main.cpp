// harness_main.cpp: attnviz_harness, the window driven by a script instead of a user, for
// the tests and `make bench`. It takes attnviz's window options and runs the same window,
// state and frame (attnviz_app), but is not part of the shipped attnviz.
//
//   attnviz_harness [window options] --screenshot FILE.png [--keys K,...] [--layout-out FILE.json]
//       attnviz's --screenshot with the test probes (screenshot_probes.h): key presses
//       before the picture, and its drawn rectangles as JSON
//   attnviz_harness [window options] --bench-frames N
//   attnviz_harness --serve [serve options] [window options] --bench-frames N [--bench-pages K]
//       the same frames, each followed by the publish to the pages as the window's loop does
//       (timed with the frame). With --bench-pages K it first frames until K pages follow
//       (at most a minute), and afterwards prints "published MS P STRENGTH" for each frame
//       that handed a state to the server (MS as below), then "bench-done", and keeps serving
//       until stdin ends (at most a minute): scripts/bench_serve.py's 60 pages.
//   attnviz_harness [window options] --soak N [--soak-seed S] [--soak-fault none|gl-error|leak]
//   attnviz_harness --serve [serve options] [window options] --follow-stdin
//       the teacher's window for the browser test of Follow the teacher (tests/web): it
//       serves, and takes edits as lines on stdin ("view causality", "strength 0.5", "quit"),
//       printing "published MS LINE" once the frame after the edit was handed to the server
//       (MS: the wall clock's milliseconds since 1970, as JavaScript's Date.now()). "clear Q"
//       clears question Q's answers as the check view's button does; "answers" prints the
//       class's answers at once, "answers 2,0,0,0 0,1,0 ...": each question's count per choice;
//       "screenshot PATH" writes the next frame to PATH and its layout to PATH.json;
//       "hide-address" hides the large address over the view, as its Hide button; "open
//       PATH" opens a model in the views; "fingerprint" prints the numbers shown as a hash;
//       "reveal Q" shows question Q's answer, as the check view's Show the answer; "weights
//       LAYER PATH" loads a weights file's block, as the side panel's Load weights; "train N"
//       trains the Train view's run to step N; "train-fingerprint" prints its weights' hash;
//       "generate N" takes N steps in the Generate view, as its Step button (published once
//       they are taken); "generate-fingerprint" prints its generation's hash.
#include "bench_frames.h"
#include "frame.h"
#include "gl_debug.h"
#include "gui_main.h"
#include "gui_modes.h"
#include "inputs.h"
#include "layout_record.h"
#include "screenshot_probes.h"
#include "screenshot.h"
#include "serve_link.h"
#include "session_state.h"
#include "soak.h"
#include "train_view_state.h"
#include <CLI/CLI.hpp>
#include <chrono>
#include <GLFW/glfw3.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>
#include <string>
#include <vector>

namespace {

using namespace attnviz;

struct HarnessOptions {
    bool follow_stdin = false;
    std::string bench_frames, bench_pages;
    std::string soak, soak_seed, soak_fault;
};

struct HarnessPlan {
    bool screenshot = false; // attnviz's --screenshot, with the probes
    bool follow_stdin = false;
    int bench_frames = 0;
    int bench_pages = 0; // with --serve: the pages to wait for before the benchmark
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
    if (!o.bench_pages.empty()) {
        if (o.bench_frames.empty() || !g.serve) {
            error = "--bench-pages needs --serve and --bench-frames N: it is the served benchmark's class";
            return false;
        }
        int64_t v = 0;
        if (!parse_int(o.bench_pages, "--bench-pages", 1, 1000, v, error)) return false;
        plan.bench_pages = int(v);
    }
    if (!make_soak_plan(g, o, plan, error)) return false;
    plan.follow_stdin = o.follow_stdin;
    if (plan.follow_stdin && !g.serve) {
        error = "--follow-stdin needs --serve: it is the teacher's window";
        return false;
    }
    plan.screenshot = !g.screenshot.empty() && !plan.follow_stdin;
    if (plan.bench_frames == 0 && plan.soak.frames == 0 && !plan.follow_stdin && !plan.screenshot) {
        error = "attnviz_harness needs --screenshot FILE, --bench-frames N, --soak N or --serve --follow-stdin";
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

double wall_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One served frame outside the benchmark: the frame, its swap and the publish.
void served_frame(GuiRun& r) {
    glfwPollEvents();
    frame(r.window, r.state);
    glfwSwapBuffers(r.window.glfw());
    serve_after_frame(r.state);
}

// --serve --bench-frames: each frame's publish timed with it; with --bench-pages K, the class
// first (frames until K pages follow), and after the benchmark when each state was handed
// to the server, then frames until stdin ends, for the pages to take the last state.
int served_bench_mode(GuiRun& r, const HarnessPlan& plan) {
    AppState& s = r.state;
    served_frame(r);
    s.follow.show_large = false; // the large address hidden, as the teacher does to teach
    const double deadline = wall_ms() + 60000;
    while (plan.bench_pages > 0 && s.follow.clients < plan.bench_pages) {
        if (wall_ms() > deadline) {
            std::fprintf(stderr, "attnviz_harness: %d of %d pages followed within a minute\n", s.follow.clients, plan.bench_pages);
            return 1;
        }
        served_frame(r);
        ::usleep(10000);
    }
    struct Published {
        double ms;
        int p;
        float strength;
    };
    std::vector<Published> published;
    published.reserve(size_t(plan.bench_frames) * 4 + 16);
    std::string last;
    bench_frames(r.window, s, plan.bench_frames, [&] {
        // The time before the publish: a page may have the state before serve_after_frame returns.
        const double ms = wall_ms();
        serve_after_frame(s);
        const std::string key = std::to_string(s.p) + ' ' + std::to_string(s.strength);
        if (key != last) published.push_back({ms, s.p, s.strength}), last = key;
    });
    if (plan.bench_pages == 0) return 0;
    for (const Published& p : published) std::printf("published %.3f %d %.6f\n", p.ms, p.p, double(p.strength));
    std::printf("bench-done\n");
    std::fflush(stdout);
    ::fcntl(0, F_SETFL, ::fcntl(0, F_GETFL) | O_NONBLOCK);
    for (const double end = wall_ms() + 60000; wall_ms() < end;) {
        char buf[256];
        if (::read(0, buf, sizeof buf) == 0) break;
        served_frame(r);
        ::usleep(10000);
    }
    return 0;
}

// The teacher's window for the browser test: frames until stdin ends or says quit, each
// line an edit applied as the side panel would, then published (serve_link.h).
int follow_mode(GuiRun& r) {
    AppState& s = r.state;
    ::fcntl(0, F_SETFL, ::fcntl(0, F_GETFL) | O_NONBLOCK);
    std::string in;
    std::string pending; // the line applied, announced after the next published frame
    for (;;) {
        glfwPollEvents();
        frame(r.window, s);
        glfwSwapBuffers(r.window.glfw());
        serve_after_frame(s);
        if (!pending.empty() && !s.config_dirty && !s.perturb_dirty && s.generate.step_requests == 0 &&
            !generate_working(s)) {
            const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
            std::printf("published %lld %s\n", ms, pending.c_str());
            std::fflush(stdout);
            pending.clear();
        }
        char buf[512];
        const ssize_t n = ::read(0, buf, sizeof buf);
        if (n == 0) return 0;
        if (n > 0) in.append(buf, size_t(n));
        size_t nl;
        while (pending.empty() && (nl = in.find('\n')) != std::string::npos) {
            const std::string line = in.substr(0, nl);
            in.erase(0, nl + 1);
            std::string error;
            if (line == "quit") return 0;
            if (line.rfind("view ", 0) == 0) {
                View v;
                if (!parse_view(line.substr(5), v, error)) return usage_error(error);
                s.screen.view = v;
            } else if (line.rfind("strength ", 0) == 0) {
                request_perturbation(s, s.p, std::strtof(line.c_str() + 9, nullptr));
            } else if (line == "answers") {
                // The class's answers as the check view shows them: "answers 2,0,0,0 0,1,0 ..."
                std::string out = "answers";
                for (const std::vector<int>& q : s.follow.answers.counts()) {
                    out += ' ';
                    for (size_t c = 0; c < q.size(); ++c) out += (c ? "," : "") + std::to_string(q[c]);
                }
                std::printf("%s\n", out.c_str());
                std::fflush(stdout);
                continue;
            } else if (line.rfind("screenshot ", 0) == 0) {
                // This frame into PATH (and its layout into PATH.json), then "shot PATH".
                const std::string path = line.substr(11);
                frame(r.window, s);
                int fw = 0, fh = 0;
                glfwGetFramebufferSize(r.window.glfw(), &fw, &fh);
                if (!write_screenshot_png(path, fw, fh, error) || !write_layout_json(path + ".json", s, fw, fh, error))
                    return usage_error(error);
                glfwSwapBuffers(r.window.glfw());
                std::printf("shot %s\n", path.c_str());
                std::fflush(stdout);
                continue;
            } else if (line == "fingerprint") {
                // The numbers on screen (session_state.h), to compare with a page's.
                std::printf("fingerprint %s\n", shown_fingerprint(s).c_str());
                std::fflush(stdout);
                continue;
            } else if (line.rfind("open ", 0) == 0) {
                // A model file in the views, as the side panel's Open model.
                if (!open_model_path(s, line.substr(5), error)) return usage_error(error);
            } else if (line.rfind("layer ", 0) == 0) {
                request_layer(s, std::atoi(line.c_str() + 6)); // a model's layer, as the side panel's slider
            } else if (line.rfind("replace ", 0) == 0) {
                // A GPT model's token p replaced, as the causality view's field ("replace  dog").
                if (!set_replacement_text(s, line.substr(8), error)) return usage_error(error);
            } else if (line == "grid-fingerprint") {
                // The Model view's grid (session_state.h), to compare with a page's.
                std::printf("grid-fingerprint %s\n", grid_fingerprint(s).c_str());
                std::fflush(stdout);
                continue;
            } else if (line == "train-fingerprint") {
                std::printf("train-fingerprint %s\n", train_fingerprint(s).c_str());
                std::fflush(stdout);
                continue;
            } else if (line == "generate-fingerprint") {
                std::printf("generate-fingerprint %s\n", generate_fingerprint(s).c_str());
                std::fflush(stdout);
                continue;
            } else if (line.rfind("generate ", 0) == 0) {
                // "generate N": N presses of the Generate view's Step.
                for (int i = std::atoi(line.c_str() + 9); i > 0; --i) request_generate_step(s);
            } else if (line.rfind("train ", 0) == 0) {
                // "train N": the Train view's run to step N, as its Train button with a target.
                train_view(s).session->run_to(std::atoll(line.c_str() + 6));
            } else if (line.rfind("weights ", 0) == 0) {
                // "weights LAYER PATH": a weights file's block, as the side panel's Load weights.
                char* end = nullptr;
                const long layer = std::strtol(line.c_str() + 8, &end, 10);
                if (!end || *end != ' ' || !load_weights_file(s, end + 1, int(layer), error)) return usage_error(error);
            } else if (line.rfind("reveal ", 0) == 0) {
                const int q = std::atoi(line.c_str() + 7); // the check view's Show the answer
                if (q < 0 || q >= check_question_count) return usage_error("--follow-stdin: no question " + line.substr(7));
                s.screen.answer_shown[q] = true;
            } else if (line.rfind("hub-get ", 0) == 0) {
                // Get GPT-2's choice I, as its button (the environment's HF_ENDPOINT, a mock Hub).
                if (!request_hub_get(s, std::atoi(line.c_str() + 8), error)) return usage_error(error);
            } else if (line == "hub-cancel") {
                cancel_hub_get(s); // as its Cancel
            } else if (line == "hide-address") {
                s.follow.show_large = false; // the large address's Hide
            } else if (line.rfind("clear ", 0) == 0) {
                s.follow.clear_request = std::atoi(line.c_str() + 6); // as the check view's Clear
            } else {
                return usage_error("--follow-stdin: " + line +
                                   " is not an edit; use view NAME, strength A, answers, clear Q, screenshot PATH, hide-address, open PATH, layer L, replace TOKEN, fingerprint, grid-fingerprint, reveal Q, weights LAYER PATH, train N, train-fingerprint, generate N, generate-fingerprint, hub-get I, hub-cancel or quit");
            }
            pending = line;
        }
        ::usleep(10000);
    }
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"attnviz_harness: attnviz's window driven by a script, for the tests and make bench.", "attnviz_harness"};
    GuiOptions gui;
    add_gui_options(app, gui);
    KeyScriptProbe keys;
    LayoutProbe layout;
    const Probes probes = {&keys, &layout};
    for (Probe* p : probes) p->add_options(app);
    HarnessOptions o;
    app.add_flag("--follow-stdin", o.follow_stdin, "with --serve: edits as lines on stdin, for the browser test");
    app.add_option("--bench-frames", o.bench_frames, "time N idle and N slider-drag frames, print JSON")->type_name("N");
    app.add_option("--bench-pages", o.bench_pages, "with --serve --bench-frames: wait for K pages first, print when states went out")
        ->type_name("K");
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
    if (!resolve_model_option(gui.config, error) || !make_plan(gui, plan, error)) return usage_error(error);
    for (Probe* p : probes)
        if (!p->check(gui, error)) return usage_error(error);
    if (!make_harness_plan(gui, o, plan, harness, error)) return usage_error(error);
    if (!start_serving(gui, error)) return usage_error(error);
    return run_window(gui, plan, [&](GuiRun& r) {
        if (harness.follow_stdin) return follow_mode(r);
        if (harness.screenshot) return run_screenshot(r, probes);
        if (harness.soak.frames > 0) return soak_mode(r, harness.soak);
        if (gui.serve) return served_bench_mode(r, harness);
        bench_frames(r.window, r.state, harness.bench_frames);
        return 0;
    });
}
