// web_main.cpp: attnviz in the browser (make web). The same window, state and panels as
// the desktop (gui_main.h); only the loop differs: the browser calls one frame at a time
// (emscripten_set_main_loop), and between frames the page's own work is done here: the
// canvas's size, training in slices (train_session.h), downloads and the settings' storage
// (web_platform.h).
//
// The page's address may carry the window's options, as on the command line without the
// leading dashes: index.html?view=causality&theme=light&font-scale=2 (web/pre.js).
#include "follow_gpt.h"
#include "frame.h"
#include "gui_main.h"
#include "lesson.h"
#include "options.h"
#include "trace_json.h"
#include "session_state.h"
#include "train_session.h"
#include "train_view_state.h"
#include "web_follow.h"
#include "web_platform.h"
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <emscripten.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace attnviz {

namespace {

// The one run of the page; the JavaScript entry points below reach the state through it.
GuiRun* the_run = nullptr;
std::map<std::string, double> the_files; // web_offer_downloads' record
int64_t frames_drawn = 0;

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
    web_probe_frame();
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
    ++frames_drawn;
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

// For the browser test: the view, the applied perturbation, config and weights file, the
// frames drawn, the Train view's step and the theme, as JSON.
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_web_state() {
    static std::string text;
    if (!attnviz::the_run) return "{}";
    attnviz::AppState& s = attnviz::the_run->state;
    const attnviz::TrainStatus& t = attnviz::train_view(s).shown_status;
    nlohmann::json j;
    j["view"] = attnviz::to_string(s.screen.view);
    j["p"] = s.run.applied_p;
    j["strength"] = s.run.applied_strength;
    j["n_embd"] = s.config.applied.n_embd;
    j["weights"] = s.weights.applied ? s.weights.applied->path : "";
    j["weights_field"] = s.fields.weights_field;
    j["status"] = s.status;
    j["frames"] = attnviz::frames_drawn;
    j["train_step"] = t.step;
    j["training"] = t.running;
    j["theme"] = int(s.screen.theme);
    // Follow the teacher (web_follow.h): "none" when the page was not served by attnviz --serve.
    j["follow"] = !s.follow.page ? "none" : s.follow.mode == attnviz::FollowMode::follow ? "follow" : "explore";
    j["teacher"] = s.follow.connected;
    j["follow_note"] = s.follow.note;
    j["follow_applied_ms"] = attnviz::web_follow_applied_ms();
    j["follow_received_ms"] = attnviz::web_follow_received_ms();
    j["fingerprint"] = attnviz::shown_fingerprint(s);
    j["train_fingerprint"] = attnviz::train_fingerprint(s);
    j["grid_fingerprint"] = attnviz::grid_fingerprint(s);
    j["model"] = std::holds_alternative<attnviz::ToyModel>(s.shown.source) ? shown_model(s)->source : "";
    // A teacher's GPT layer (follow_gpt.h): its layer and position labels; -1 and none otherwise.
    j["gpt_layer"] = attnviz::received_gpt(s) ? s.shown.layer : -1;
    j["words"] = attnviz::received_gpt(s) ? s.shown.words : std::vector<std::string>{};
    // The Generate view (generate_state.h): what it shows, to compare with the teacher's window.
    j["generate_fingerprint"] = attnviz::generate_fingerprint(s);
    j["generate_text"] = attnviz::generate_new_text(s);
    j["generate_received"] = s.generate.received;
    j["generate_why_not"] = s.generate.why_not;
    j["error"] = s.error;
    j["answers"] = std::vector<int>(s.follow.my_answer, s.follow.my_answer + attnviz::check_question_count);
    j["answers_shown"] = std::vector<bool>(s.screen.answer_shown, s.screen.answer_shown + attnviz::check_question_count);
    j["answers_pending"] = std::vector<bool>(s.follow.answer_pending, s.follow.answer_pending + attnviz::check_question_count);
    // A token may end inside a character (GPT-2's bytes): replaced, not thrown on.
    text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return text.c_str();
}

// `attnviz trace --intermediates --perturb P --kernel K` for the seeded (C, H, T, seed), as
// the same JSON text, for the browser test to compare with the native build's bit for bit.
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_web_trace(int n_embd, int n_head, int seq_len, int seed, int p,
                                                               int kernel) {
    using namespace attnviz;
    static std::string text;
    Config c;
    c.n_embd = n_embd;
    c.n_head = n_head;
    c.seq_len = seq_len;
    c.seed = uint64_t(seed);
    if (const std::string bad = validate(c); !bad.empty() || p < 0 || p >= seq_len) return "";
    TraceJsonRequest r;
    r.kernel = kernel ? KernelKind::fast : KernelKind::reference;
    r.perturb = p;
    r.intermediates = true;
    std::ostringstream out;
    Trace scratch;
    write_trace_json(out, make_experiment(c), r, scratch);
    text = out.str();
    return text.c_str();
}

// The page's "Open a file" button wrote /files/NAME (web/index.html).
extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_web_file_added(const char* name) {
    attnviz::web_offer_downloads(attnviz::the_files, false); // not offered back
    if (attnviz::the_run) attnviz::web_file_added(attnviz::the_run->state, name);
}

// One forward of the lesson's recipe at (C, H, T) with every intermediate, as `attnviz
// bench` times it (kernel: 0 reference, 1 fast), in milliseconds: the median of `repeat`
// timings of `inner` forwards each (the browser's clock is coarse: 0.1 ms without isolation).
extern "C" EMSCRIPTEN_KEEPALIVE double attnviz_web_bench(int n_embd, int n_head, int seq_len, int kernel, int repeat,
                                                         int inner) {
    using namespace attnviz;
    Config c;
    c.n_embd = n_embd;
    c.n_head = n_head;
    c.seq_len = seq_len;
    if (!validate(c).empty() || repeat < 1 || inner < 1) return -1;
    const Experiment e = make_experiment(c);
    Trace tr;
    std::vector<double> ms;
    for (int i = 0; i < repeat; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < inner; ++k) forward(c, e.weights, e.x, kernel ? KernelKind::fast : KernelKind::reference, tr);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / inner);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
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
