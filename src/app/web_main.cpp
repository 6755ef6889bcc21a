// web_main.cpp: attnviz in the browser (make web). The same window, state and panels as
// the desktop (gui_main.h); only the loop differs: the browser calls one frame at a time
// (emscripten_set_main_loop), and between frames the page's own work is done here: the
// canvas's size, training in slices (train_session.h), downloads and the settings' storage
// (web_platform.h).
//
// The page's address may carry the window's options, as on the command line without the
// leading dashes: index.html?view=causality&theme=light&font-scale=2 (web/pre.js).
#include "frame.h"
#include "gui_main.h"
#include "lesson.h"
#include "options.h"
#include "train_session.h"
#include "web_follow.h"
#include "web_platform.h"
#include "web_probe.h"
#include <CLI/CLI.hpp>
#include <cstdio>
#include <emscripten.h>
#include <map>
#include <vector>

namespace attnviz {

namespace {

// The one run of the page; the JavaScript entry point below reaches the state through it.
GuiRun* the_run = nullptr;
std::map<std::string, double> the_files; // web_offer_downloads' record

// Training's share of each frame, in milliseconds: steps of the default model take a few
// milliseconds each, so the page keeps drawing at about 30 frames per second while it trains.
constexpr double train_slice_ms = 20;

struct WebLoop {
    bool first = true;
    double last = 0;
};

void web_frame(void* arg) {
    GuiRun& r = *static_cast<GuiRun*>(arg);
    static WebLoop loop;
    AppState& s = r.state;
    web_follow_canvas(r.window.glfw());
    web_probe_frame(r); // the browser tests' probes, in their build only (web_probe.h)
    pump_training(train_slice_ms);
    web_follow_frame(s); // served by attnviz --serve: the teacher's latest state (web_follow.h)
    frame(r.window, s);
    s.screen.fullscreen_toggle = false; // F11: the browser's own full screen, which the canvas follows
    const Settings before = r.settings.written;
    r.settings.save_if_changed(s);
    if (before.theme != r.settings.written.theme || before.font_scale != r.settings.written.font_scale ||
        before.palette != r.settings.written.palette)
        web_persist_settings();
    web_offer_downloads(the_files);
    const double now = emscripten_get_now();
    if (loop.first) {
        // The time from opening the page (the navigation's start) to the first frame drawn.
        std::printf("attnviz: first frame after %.0f ms\n", EM_ASM_DOUBLE({ return performance.now(); }));
        loop.first = false;
    } else {
        s.screen.frame_ms = float(now - loop.last);
    }
    loop.last = now;
}

// The page's run lives on the heap for the page's life: leaving main for the browser's loop
// (simulate_infinite_loop) gives main's stack back, whatever lived there.
struct Page {
    GuiOptions options;
    GuiPlan plan;
    OpenWindow window;
};

} // namespace

} // namespace attnviz

// The page's "Open a file" button wrote /files/NAME (web/index.html).
extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_web_file_added(const char* name) {
    attnviz::web_offer_downloads(attnviz::the_files, false); // not offered back
    if (attnviz::the_run) attnviz::web_file_added(attnviz::the_run->state, name);
}

int main(int argc, char** argv) {
    using namespace attnviz;
    // The lesson's four lines, as `attnviz lesson` prints them: stdout is the console.
    for (const std::string& line : lesson_lines()) std::printf("%s\n", line.c_str());
    std::fflush(stdout);

    web_start_files();
    CLI::App app{"attnviz in the browser", "attnviz"};
    Page* page = new Page; // never deleted: the page is closed, not the app
    GuiOptions& o = page->options;
    add_gui_options(app, o);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "attnviz: the page's options: %s\n", describe_parse_error(app, e).c_str());
        return 2;
    }
    GuiPlan& plan = page->plan;
    std::string error;
    if (!make_plan(o, plan, error)) {
        std::fprintf(stderr, "attnviz: %s\n", error.c_str());
        return 2;
    }
    web_canvas_pixels(plan.width, plan.height);
    plan.headless = false; // the page is never headless: its settings are kept
    if (const int status = open_window(o, plan, page->window); status != 0) return status;
    the_run = new GuiRun{o, plan, page->window.window, page->window.state, page->window.settings};
    web_follow_start(page->window.state);
    emscripten_set_main_loop_arg(web_frame, the_run, 0, 1); // does not return
    return 0;
}
