// gui_main.cpp: the window. Check every option, open a GLFW window with an OpenGL 3.3
// core context, run the loop (recompute, upload what changed, draw the panels), and in
// screenshot mode read back the third frame into a PNG and exit.
#include "gui_main.h"
#include "app_state.h"
#include "gl_debug.h"
#include "gui_soak.h"
#include "gl_context.h"
#include "heatmap_renderer.h"
#include "imgui_backend.h"
#include "key_script.h"
#include "inputs.h"
#include "layout_record.h"
#include "screenshot.h"
#include "session_state.h"
#include "settings.h"
#include "theme.h"
#include "trace_textures.h"
#include "views.h"
#include <GLFW/glfw3.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <imgui.h>
#include <optional>

namespace attnviz {

void add_gui_options(CLI::App& app, GuiOptions& o) {
    add_config_options(app, o.config, true, true);
    add_input_options(app, o.config);
    app.add_option("--view", o.view, "walk (default), qkv, scores, causality or check")->type_name("VIEW");
    app.add_option("--step", o.step, "shape-walk step: 0 (the input x) to 11 (proj)")->type_name("N");
    app.add_option("--strength", o.strength, "perturbation strength: 0 (original row) to 1 (the lesson's replacement)")->type_name("A");
    app.add_option("--theme", o.theme, "dark (default), light or high-contrast")->type_name("THEME");
    app.add_option("--font-scale", o.font_scale, "text size, 1 to 3 (default 1)")->type_name("S");
    app.add_option("--palette", o.palette, "colour maps: default (blue-red, viridis) or cb (purple-orange, cividis)")->type_name("NAME");
    app.add_option("--settings", o.settings,
                   "settings file (default $XDG_CONFIG_HOME/attnviz/settings.json; --screenshot runs use none unless given)")
        ->type_name("FILE");
    app.add_option("--keys", o.keys, "headless: key presses before the screenshot, e.g. t,p,f2")->group("");
    app.add_option("--screenshot", o.screenshot, "render the chosen view into this PNG file and exit")->type_name("FILE");
    app.add_option("--size", o.size, "screenshot size WxH (default 1280x800)")->type_name("WxH");
    app.add_option("--layout-out", o.layout_out, "with --screenshot: write the drawn rectangles as JSON")->type_name("FILE");
    app.add_option("--bench-frames", o.bench_frames, "headless: time N idle and N slider-drag frames, print JSON")->type_name("N");
    app.add_option("--open", o.open, "start from this session file (its state replaces the state options)")->type_name("FILE");
    app.add_option("--save-session", o.save_session, "write the state to this session file (after --screenshot, or when the window closes)")->type_name("FILE");
    // Soak run (gui_soak.h).
    app.add_option("--soak", o.soak, "headless: drive every control for N frames, check GL errors and memory, print JSON");
    app.add_option("--soak-seed", o.soak_seed, "with --soak: the random script's seed (default 1)");
    app.add_option("--soak-fault", o.soak_fault, "with --soak: none, gl-error or leak (tests of the checks)")->group("");
}

namespace {

// Everything the options say, checked before any window opens.
struct GuiPlan {
    Config config;
    KernelChoice kernel = KernelChoice::automatic;
    View view = View::walk;
    int step = 0;
    std::optional<int> perturb;
    std::optional<float> strength;
    Theme theme = Theme::dark;
    std::optional<float> font_scale;
    bool theme_given = false;
    std::optional<PaletteKind> palette;
    std::vector<KeyPress> keys;
    int width = 1280, height = 800;
    bool headless = false;
    int bench_frames = 0;
    SoakPlan soak;  // soak.frames > 0: the soak run
    // --text and --weights (or the session's words and weights file).
    std::vector<std::string> tokens;
    std::shared_ptr<const WeightsFile> weights;
};

bool parse_size(const std::string& text, int& w, int& h, std::string& error) {
    const size_t x = text.find_first_of("xX");
    int64_t a = 0, b = 0;
    std::string e1;
    if (x == std::string::npos || !parse_int(text.substr(0, x), "width", 320, 7680, a, e1) ||
        !parse_int(text.substr(x + 1), "height", 240, 4320, b, e1)) {
        error = "--size '" + text + "' is not a size from 320x240 to 7680x4320; give it as WIDTHxHEIGHT, e.g. 1280x800";
        return false;
    }
    w = int(a), h = int(b);
    return true;
}

// --soak N [--soak-seed S] [--soak-fault F]: alone, not with --screenshot or --bench-frames.
bool make_soak_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    if (o.soak.empty()) {
        if (!o.soak_seed.empty() || !o.soak_fault.empty()) {
            error = std::string(o.soak_seed.empty() ? "--soak-fault" : "--soak-seed") + " needs --soak N: it belongs to the soak run";
            return false;
        }
        return true;
    }
    if (!o.screenshot.empty() || !o.bench_frames.empty()) {
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

bool make_plan(const GuiOptions& o, GuiPlan& plan, std::string& error) {
    Inputs in;
    if (!to_inputs(o.config, in, error)) return false;
    plan.config = in.config;
    plan.tokens = in.tokens;
    if (in.weights) {
        auto w = std::make_shared<WeightsFile>();
        w->path = in.weights_path;
        w->layer = in.weights->layer;
        w->loaded = std::move(*in.weights);
        plan.weights = std::move(w);
    }
    // The window keeps textures besides the trace: a tighter cap than the commands' (app_state.h).
    if (std::string why = validate_window(plan.config, gui_memory_cap); !why.empty()) {
        error = why + " (the window's limit)";
        if (!plan.tokens.empty()) {
            // Too many words: say how many the window takes at this C and H.
            AppState probe;
            probe.edit = plan.config;
            std::string words;
            if (!set_text(probe, *o.config.text, words)) error = "--text: " + words;
        }
        return false;
    }
    if (!o.config.kernel.empty()) {
        KernelKind k;
        if (!parse_kernel(o.config.kernel, k, error)) return false;
        plan.kernel = k == KernelKind::reference ? KernelChoice::reference : KernelChoice::fast;
    }
    if (!to_perturb(o.config, plan.config, plan.perturb, error)) return false;
    if (!o.view.empty() && !parse_view(o.view, plan.view, error)) return false;
    int64_t v = 0;
    if (!o.step.empty()) {
        if (!parse_int(o.step, "--step", 0, walk_last_step, v, error)) return false;
        plan.step = int(v);
    }
    double d = 0;
    if (!o.strength.empty()) {
        if (!parse_real(o.strength, "--strength", 0, 1, d, error)) return false;
        plan.strength = float(d);
    }
    if (!o.theme.empty() && !parse_theme(o.theme, plan.theme, error)) return false;
    plan.theme_given = !o.theme.empty();
    if (!o.palette.empty()) {
        PaletteKind k;
        if (!parse_palette(o.palette, k, error)) return false;
        plan.palette = k;
    }
    if (!o.keys.empty()) {
        if (o.screenshot.empty()) {
            error = "--keys needs --screenshot: the keys are pressed before the screenshot's frame";
            return false;
        }
        if (!parse_key_script(o.keys, plan.keys, error)) return false;
    }
    if (!o.font_scale.empty()) {
        if (!parse_real(o.font_scale, "--font-scale", 1, 3, d, error)) return false;
        plan.font_scale = float(d);
    }
    if (!o.open.empty()) {
        // The session replaces the state options; checked here, before any window opens.
        Session ss;
        AppState probe;
        probe.memory_cap = gui_memory_cap;
        if (!read_session(o.open, ss, error) || !apply_session(probe, ss, error)) return false;
        plan.config = probe.edit;
        plan.kernel = probe.edit_kernel_choice;
        plan.view = probe.view;
        plan.step = probe.step;
        plan.perturb = probe.p;
        plan.strength = probe.strength;
        plan.theme = probe.theme;
        plan.theme_given = true;
        plan.font_scale = probe.font_scale;
        plan.palette = probe.palette;
        plan.tokens = probe.edit_tokens;
        plan.weights = probe.edit_weights;
    }
    if (!o.size.empty() && !parse_size(o.size, plan.width, plan.height, error)) return false;
    if (!o.layout_out.empty() && o.screenshot.empty()) {
        error = "--layout-out needs --screenshot: the layout is written for the screenshot's frame";
        return false;
    }
    if (!o.bench_frames.empty()) {
        if (!o.screenshot.empty()) {
            error = "--bench-frames and --screenshot cannot be combined; run them one at a time";
            return false;
        }
        if (!parse_int(o.bench_frames, "--bench-frames", 1, 100000, v, error)) return false;
        plan.bench_frames = int(v);
        // The benchmark's size is (T, C, H) = (512, 512, 8) unless a size option changed the
        // lesson's, and it drags the slider in the causality view unless --view says otherwise.
        const ConfigOptions lesson;
        if (o.config.seq_len == lesson.seq_len && o.config.n_embd == lesson.n_embd && o.config.n_head == lesson.n_head &&
            !o.config.text && !o.config.weights && o.open.empty()) {
            plan.config.seq_len = 512;
            plan.config.n_embd = 512;
            plan.config.n_head = 8;
            if (!plan.perturb) plan.perturb = 2;
        }
        if (o.view.empty()) plan.view = View::causality;
    }
    if (!make_soak_plan(o, plan, error)) return false;
    plan.headless = !o.screenshot.empty() || plan.bench_frames > 0 || plan.soak.frames > 0;
    return true;
}

// glfwInit failed: say why in one line and how to run without a desktop.
int no_display() {
    const char* display = std::getenv("DISPLAY");
    const char* hint = "run it on a desktop, or headless as: xvfb-run -a attnviz --screenshot out.png";
    if (!display || !*display) {
        std::fprintf(stderr, "attnviz: no X display (DISPLAY is not set); %s\n", hint);
    } else {
        const char* why = nullptr;
        glfwGetError(&why);
        std::fprintf(stderr, "attnviz: cannot open the X display '%s' (%s); %s\n", display, why ? why : "unknown error",
                     hint);
    }
    return 2;
}

// The GL objects of the window: the heatmap shader and both sets of textures.
struct Gpu {
    HeatmapRenderer renderer;
    TraceTextures tex, base_tex;
};

// Sends what recompute() marked as changed.
void sync_textures(AppState& s, Gpu& gpu) {
    if (s.upload.any()) {
        upload_trace(gpu.tex, s.trace, s.experiment.weights, s.upload);
        s.upload = UploadRequest{};
    }
    if (s.base_upload) {
        destroy(gpu.base_tex);
        if (s.has_base) {
            UploadRequest all;
            all.full = true;
            upload_trace(gpu.base_tex, s.base, s.experiment.weights, all);
        } else {
            // Only the output is kept unperturbed at this size.
            upload(gpu.base_tex.y, s.base_y.data(), int(s.base_y.rows()), int(s.base_y.cols()));
        }
        s.base_upload = false;
    }
}

// Ctrl+P / the Export section's PNG button: the view's part of the frame just drawn, read
// back before the swap; the result goes to the status line.
void write_png_request(GLFWwindow* window, AppState& s) {
    if (s.png_request.empty()) return;
    int fw = 0, fh = 0, ww = 0, wh = 0;
    glfwGetFramebufferSize(window, &fw, &fh);
    glfwGetWindowSize(window, &ww, &wh);
    // view_rect is in window coordinates; the framebuffer may have more pixels (HiDPI).
    const float sx = ww > 0 ? float(fw) / float(ww) : 1.f, sy = wh > 0 ? float(fh) / float(wh) : 1.f;
    const int x0 = std::clamp(int(std::lround(s.view_rect[0] * sx)), 0, fw);
    const int y0 = std::clamp(int(std::lround(s.view_rect[1] * sy)), 0, fh);
    const int x1 = std::clamp(int(std::lround(s.view_rect[2] * sx)), x0, fw);
    const int y1 = std::clamp(int(std::lround(s.view_rect[3] * sy)), y0, fh);
    std::string error;
    if (write_screenshot_png_region(s.png_request, fw, fh, x0, y0, x1 - x0, y1 - y0, error))
        s.status = std::string("Saved the ") + to_string(s.view) + " view (" + std::to_string(x1 - x0) + " × " +
                   std::to_string(y1 - y0) + " pixels) to " + s.png_request + ".";
    else
        s.status = "Not saved: " + error + ".";
    s.png_request.clear();
}

// Where one frame's time went (--bench-frames): ms since the frame began at the end of
// recompute(), of the texture sync and of the panels (ImGui::Render included); the render
// after them (which sends the deferred texture rows, texture.h) is the rest.
struct FrameMarks {
    double recompute = 0, sync = 0, panels = 0;
    double uploads = 0; // part of the render: the deferred texture rows (HeatmapRenderer::upload_ms)
};

// One frame: recompute, upload, panels, draw. The back buffer holds the frame afterwards.
void frame(GLFWwindow* window, AppState& s, Gpu& gpu, Fonts& fonts, FrameMarks* marks = nullptr) {
    const double t0 = marks ? glfwGetTime() : 0;
    auto mark = [&](double FrameMarks::*at) {
        if (marks) marks->*at = (glfwGetTime() - t0) * 1e3;
    };
    if (s.fonts_dirty) {
        fonts = load_fonts(s.font_scale);
        apply_theme(s.theme, s.font_scale);
        rebuild_font_texture();
        s.fonts_dirty = false;
    }
    recompute(s);
    mark(&FrameMarks::recompute);
    sync_textures(s, gpu);
    mark(&FrameMarks::sync);

    imgui_backend_new_frame();
    ImGui::NewFrame();
    begin_heatmap_frame(gpu.renderer);
    s.layout.clear();
    UiContext ui;
    ui.tex = &gpu.tex;
    ui.base_tex = &gpu.base_tex;
    ui.renderer = &gpu.renderer;
    ui.fonts = &fonts;
    ui.pal = make_palette(s.theme, s.palette);
    gpu.renderer.palette = s.palette == PaletteKind::cb ? 1 : 0;
    ui.scale = s.font_scale;
    ui.layout = &s.layout;
    Minimap overview; // offered by this frame's panels, drawn by the side panel next frame
    ui.minimap = &overview;
    ui.view = int(s.view);
    ui.tokens = &s.tokens;
    ui.row_label_w = widest_position_label(fonts.small, s.tokens);
    draw_app(s, ui);
    s.minimap = overview;
    ImGui::Render();
    mark(&FrameMarks::panels);

    int fw = 0, fh = 0;
    glfwGetFramebufferSize(window, &fw, &fh);
    clear_frame(fw, fh, ui.pal.clear_rgb[0], ui.pal.clear_rgb[1], ui.pal.clear_rgb[2]);
    imgui_backend_render();
    if (marks) marks->uploads = gpu.renderer.upload_ms;
    write_png_request(window, s);
}

// --bench-frames: median frame times with nothing changing, and while the strength slider
// moves every frame (update_row, range scan, row uploads, panels, drawing) at two
// positions: the view's p (the lesson's 2, where causality leaves almost every row to
// redo) and T/2 (the position of bench's update_ms). Each drag also says where its median
// frame's time went. The keys median_idle_ms and median_drag_ms are the idle frame and the
// drag at the view's p.
struct FrameSamples {
    std::vector<double> total, recompute, sync, panels, render, uploads;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// `n` frames; `before` runs ahead of each one (untimed), e.g. to move the slider.
template <class Before>
FrameSamples time_frames(GLFWwindow* window, AppState& s, Gpu& gpu, Fonts& fonts, int n, Before before) {
    FrameSamples out;
    for (int i = 0; i < n; ++i) {
        before(i);
        FrameMarks m;
        const double t0 = glfwGetTime();
        frame(window, s, gpu, fonts, &m);
        read_back_buffer(1, 1); // waits for the GPU (llvmpipe draws here), so the frame is really done
        const double total = (glfwGetTime() - t0) * 1e3;
        out.recompute.push_back(m.recompute);
        out.sync.push_back(m.sync - m.recompute);
        out.panels.push_back(m.panels - m.sync);
        out.render.push_back(total - m.panels);
        out.uploads.push_back(m.uploads);
        out.total.push_back(total);
    }
    return out;
}

std::string parts_json(const FrameSamples& f) {
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "{\"recompute\": %.3f, \"sync\": %.3f, \"panels\": %.3f, \"render\": %.3f, \"render_uploads\": %.3f}",
                  median(f.recompute), median(f.sync), median(f.panels), median(f.render), median(f.uploads));
    return buf;
}

void bench(GLFWwindow* window, AppState& s, Gpu& gpu, Fonts& fonts, int n) {
    for (int i = 0; i < 3; ++i) frame(window, s, gpu, fonts); // settle
    const FrameSamples idle = time_frames(window, s, gpu, fonts, n, [](int) {});
    const int heatmaps = gpu.renderer.drawn; // in the idle frame: what the drags redraw too
    // A drag at position p: a few untimed frames first, as moving p itself redoes more
    // (the old row goes back) than a strength step does.
    auto drag_at = [&](int p) {
        request_perturbation(s, p, 1.f);
        for (int i = 0; i < 3; ++i) frame(window, s, gpu, fonts);
        return time_frames(window, s, gpu, fonts, n,
                           [&](int i) { request_perturbation(s, p, float(i % 50 + 1) / 50.f); });
    };
    const int p_view = s.p, p_mid = s.config.seq_len / 2;
    const FrameSamples drag = drag_at(p_view);
    const FrameSamples drag_mid = drag_at(p_mid);
    const double mi = median(idle.total), md = median(drag.total), mm = median(drag_mid.total);
    std::printf("{\"frames\": %d, \"seq_len\": %d, \"n_embd\": %d, \"n_head\": %d, \"kernel\": \"%s\", "
                "\"view\": \"%s\", \"heatmaps_drawn\": %d, \"median_idle_ms\": %.3f, \"p\": %d, \"median_drag_ms\": %.3f, "
                "\"drag_ratio\": %.3f, \"p_mid\": %d, \"median_drag_mid_ms\": %.3f, \"drag_mid_ratio\": %.3f, "
                "\"idle_parts_ms\": %s, \"drag_parts_ms\": %s, \"drag_mid_parts_ms\": %s}\n",
                n, s.config.seq_len, s.config.n_embd, s.config.n_head, to_string(s.kernel), to_string(s.view), heatmaps, mi,
                p_view, md, mi > 0 ? md / mi : 0.0, p_mid, mm, mi > 0 ? mm / mi : 0.0, parts_json(idle).c_str(),
                parts_json(drag).c_str(), parts_json(drag_mid).c_str());
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

int run_gui(const GuiOptions& o) {
    // Options: every value is checked before a window opens.
    GuiPlan plan;
    std::string error;
    if (!make_plan(o, plan, error)) return usage_error(error);

    // Window: OpenGL 3.3 core; hidden when headless.
    if (!glfwInit()) return no_display();
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_VISIBLE, plan.headless ? GLFW_FALSE : GLFW_TRUE);
    // Soak: a debug context, so that KHR_debug reports every GL error (gl_debug.h).
    if (plan.soak.frames > 0) glfwWindowHint(GLFW_OPENGL_DEBUG_CONTEXT, GLFW_TRUE);
    GLFWwindow* window = glfwCreateWindow(plan.width, plan.height, "attnviz: causal self-attention", nullptr, nullptr);
    if (!window) {
        const char* why = nullptr;
        glfwGetError(&why);
        std::fprintf(stderr, "attnviz: could not open an OpenGL 3.3 window (%s); under xvfb-run Mesa's llvmpipe provides one\n",
                     why ? why : "unknown error");
        glfwTerminate();
        return 2;
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval(plan.headless ? 0 : 1);
    if (!plan.headless) glfwSetWindowSizeLimits(window, 640, 400, GLFW_DONT_CARE, GLFW_DONT_CARE);
    if (!load_gl(error)) {
        std::fprintf(stderr, "attnviz: %s\n", error.c_str());
        glfwDestroyWindow(window);
        glfwTerminate();
        return 2;
    }

    // ImGui: no imgui.ini in the working directory; fonts and theme from theme.cpp.
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    AppState s;
    // Settings (settings.h): the file's theme, text size and palette, unless an option says
    // otherwise for this run. Headless runs use a settings file only when --settings names one.
    const std::string settings_path = !o.settings.empty() ? o.settings : plan.headless ? "" : default_settings_path();
    Settings saved;
    bool have_settings = false;
    if (!settings_path.empty()) {
        std::string warning;
        const SettingsRead r = read_settings(settings_path, saved, warning);
        if (r == SettingsRead::broken) std::fprintf(stderr, "%s\n", warning.c_str());
        have_settings = r == SettingsRead::found;
    }
    s.theme = plan.theme_given ? plan.theme : saved.theme;
    s.font_scale = plan.font_scale.value_or(saved.font_scale);
    s.palette = plan.palette.value_or(saved.palette);
    if (!plan.font_scale && !have_settings && !plan.headless) {
        float sx = 1, sy = 1;
        glfwGetWindowContentScale(window, &sx, &sy);
        s.font_scale = std::clamp(sx, 1.f, 3.f);
    }
    Fonts fonts = load_fonts(s.font_scale);
    if (!fonts.warning.empty()) std::fprintf(stderr, "%s\n", fonts.warning.c_str());
    apply_theme(s.theme, s.font_scale);
    init_imgui_backend(window);
    Gpu gpu;
    if (!create_heatmap_renderer(gpu.renderer, error)) {
        std::fprintf(stderr, "attnviz: %s\n", error.c_str());
        shutdown_imgui_backend();
        ImGui::DestroyContext();
        glfwDestroyWindow(window);
        glfwTerminate();
        return 2;
    }

    // State: the plan's config and view; the perturbation when asked for.
    s.auto_kernel = &choose_kernel;
    s.screenshot_mode = !o.screenshot.empty();
    init_app_state(s, plan.config, plan.kernel);
    s.edit_tokens = plan.tokens;
    s.edit_weights = plan.weights;
    for (const std::string& w : plan.tokens) s.text_field += (s.text_field.empty() ? "" : " ") + w;
    if (plan.weights) {
        s.weights_field = plan.weights->path;
        s.layer_field = plan.weights->layer;
    }
    s.view = plan.view;
    s.step = plan.step;
    s.p = plan.perturb.value_or(std::min(2, plan.config.seq_len - 1));
    s.strength = plan.strength.value_or(plan.perturb ? 1.f : 0.f);
    s.perturb_dirty = s.strength != 0;

    // Settings are written when the app changes them (not for the options of this run).
    Settings written = settings_of(s);
    auto save_settings_if_changed = [&] {
        const Settings now = settings_of(s);
        if (settings_path.empty() || (now.theme == written.theme && now.font_scale == written.font_scale &&
                                      now.palette == written.palette))
            return;
        std::string why;
        if (!write_settings(settings_path, now, why)) std::fprintf(stderr, "attnviz: warning: settings not saved: %s\n", why.c_str());
        written = now; // one warning per change, not one per frame
    };

    int status = 0;
    if (!o.screenshot.empty()) {
        // --keys: each key held for one frame and released in the next, as a user presses it.
        frame(window, s, gpu, fonts);
        glfwSwapBuffers(window);
        for (const KeyPress& k : plan.keys) {
            press_key(k, true);
            frame(window, s, gpu, fonts);
            glfwSwapBuffers(window);
            press_key(k, false);
            frame(window, s, gpu, fonts);
            glfwSwapBuffers(window);
        }
        save_settings_if_changed();
        // Three frames: the first computes and uploads, the next ones let the layout settle.
        for (int i = 0; i < 3; ++i) {
            frame(window, s, gpu, fonts);
            if (i < 2) glfwSwapBuffers(window);
        }
        int fw = 0, fh = 0;
        glfwGetFramebufferSize(window, &fw, &fh);
        if (!write_screenshot_png(o.screenshot, fw, fh, error) ||
            (!o.layout_out.empty() && !write_layout_json(o.layout_out, s, fw, fh, error)) ||
            (!o.save_session.empty() && !write_session(o.save_session, to_session(s), error))) {
            std::fprintf(stderr, "attnviz: %s\n", error.c_str());
            status = 2;
        }
    } else if (plan.bench_frames > 0) {
        bench(window, s, gpu, fonts, plan.bench_frames);
    } else if (plan.soak.frames > 0) {
        // Soak: the real frame and swap, GL errors counted after each (gui_soak.h).
        GlErrorCounter gl;
        install_gl_debug(gl);
        status = run_soak(s, plan.soak, gl, [&] {
            glfwPollEvents();
            frame(window, s, gpu, fonts);
            glfwSwapBuffers(window);
        });
        remove_gl_debug(gl);
    } else {
        // The loop.
        WindowedPlace windowed;
        double last = glfwGetTime();
        while (!glfwWindowShouldClose(window)) {
            // Idle: sleep until an event (or a tenth of a second) instead of spinning the CPU.
            if (s.config_dirty || s.perturb_dirty || s.fonts_dirty) glfwPollEvents();
            else glfwWaitEventsTimeout(0.1);
            frame(window, s, gpu, fonts);
            glfwSwapBuffers(window);
            if (s.fullscreen_toggle) toggle_fullscreen(window, windowed);
            save_settings_if_changed();
            s.fullscreen_toggle = false;
            const double now = glfwGetTime();
            s.frame_ms = float((now - last) * 1e3);
            last = now;
        }
        save_settings_if_changed();
        if (!o.save_session.empty() && !write_session(o.save_session, to_session(s), error)) {
            std::fprintf(stderr, "attnviz: %s\n", error.c_str());
            status = 2;
        }
    }

    // Cleanup.
    destroy(gpu.tex);
    destroy(gpu.base_tex);
    destroy_heatmap_renderer(gpu.renderer);
    shutdown_imgui_backend();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return status;
}

} // namespace attnviz
