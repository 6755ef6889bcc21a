// gui_main.cpp: see gui_main.h. In the manner of Dear ImGui's example_glfw_opengl3: set up
// (window, settings, state), run, and clean up, here by the window's guard.
#include "gui_main.h"
#include "gui_modes.h"
#ifndef __EMSCRIPTEN__
#include "hub_download.h"
#include "serve_link.h"
#endif
#include "train_view_state.h"
#include <algorithm>
#include <cstdio>

namespace attnviz {

void SettingsFile::save_if_changed(const AppState& s) {
    const Settings now = settings_of(s);
    if (path.empty() ||
        (now.theme == written.theme && now.font_scale == written.font_scale && now.palette == written.palette))
        return;
    std::string why;
    if (!write_settings(path, now, why)) std::fprintf(stderr, "attnviz: warning: settings not saved: %s\n", why.c_str());
    written = now; // one warning per change, not one per frame
}

namespace {

// The plan's config, inputs, view and perturbation, applied by the first frame's recompute.
void put_state_on_plan(AppState& s, const GuiPlan& plan) {
    s.auto_kernel = &choose_kernel;
    init_app_state(s, plan.config, plan.kernel);
#ifndef __EMSCRIPTEN__
    // Get GPT-2 (hub_get_state.h): src/hub's download over the environment's endpoint, token
    // and cache, on the state's worker. The page has none and says so.
    s.hub.get = [](const std::string& repo, const std::function<void(const HubProgress&)>& progress,
                   const std::atomic<bool>* cancel) { return hub_get(hub_options_from_env(repo, "main"), progress, cancel); };
#endif
    s.tokens.edit = plan.tokens;
    s.weights.edit = plan.weights;
    for (const std::string& w : plan.tokens) s.fields.text_field += (s.fields.text_field.empty() ? "" : " ") + w;
    if (plan.weights) {
        s.fields.weights_field = plan.weights->path;
        s.fields.layer_field = plan.weights->layer;
    }
    if (plan.trained) {
        // A trained model (--weights): shown in every view by the first recompute.
        request_trained_model(s, plan.trained);
        s.edit_layer = plan.layer;
        s.shown.replace_token = plan.replace_token;
        s.fields.weights_field = plan.trained->source;
        s.fields.layer_field = plan.layer;
        // --ablate (or the session's): applied after the model by the same recompute.
        if (!plan.ablate.empty()) request_ablation(s, plan.ablate, plan.ablate_mode);
        // --patch-corrupt: the panel's fields (the others filled from the model) and Run.
        if (plan.patch_corrupt) {
            s.patch.corrupt_field = *plan.patch_corrupt;
            s.patch.answer_field = plan.patch_answer;
            s.patch.wrong_field = plan.patch_wrong;
            s.patch.run_asked = true;
        }
    }
    s.model_view.panel = plan.model_panel;
    s.screen.view = plan.view;
    if (plan.head)
        for (ViewWindow& w : s.screen.windows) w.head0 = *plan.head; // each view keeps its page of heads on screen
    s.screen.step = plan.step;
    s.p = plan.perturb.value_or(std::min(2, plan.config.seq_len - 1));
    s.strength = plan.strength.value_or(plan.perturb ? 1.f : 0.f);
    s.perturb_dirty = s.strength != 0;
    // The Train view: a session's run, or the one --task and its options ask for.
    if (plan.train_state) s.train = plan.train_state;
    s.generate.restore = plan.generate;
    // Made now, not when the view is first drawn: its worker's first scoring (and the memory
    // that thread's allocator keeps) belongs to start-up, not to a later frame.
    train_view(s);
    if (plan.train) request_train_settings(train_view(s), *plan.train);
    if (plan.train_steps > 0) train_view(s).session->run_to(plan.train_steps);
}

// attnviz's --screenshot: it registers no probe (probe.h).
int screenshot_without_probes(GuiRun& r) { return run_screenshot(r, {}); }

} // namespace

int open_window(const GuiOptions& o, const GuiPlan& plan, OpenWindow& w) {
    AppWindow& window = w.window;
    if (const int status = window.open({plan.width, plan.height, plan.headless, plan.debug_context}); status != 0)
        return status;

    // Settings (settings.h): the file's theme, text size and palette, unless an option says
    // otherwise for this run. Headless runs use a settings file only when --settings names one.
    AppState& s = w.state;
    SettingsFile& settings = w.settings;
    settings.path = !o.settings.empty() ? o.settings : plan.headless ? "" : default_settings_path();
    Settings saved;
    bool have_settings = false;
    if (!settings.path.empty()) {
        std::string warning;
        const SettingsRead r = read_settings(settings.path, saved, warning);
        if (r == SettingsRead::broken) std::fprintf(stderr, "%s\n", warning.c_str());
        have_settings = r == SettingsRead::found;
    }
    s.screen.theme = plan.theme_given ? plan.theme : saved.theme;
    s.screen.font_scale = plan.font_scale.value_or(saved.font_scale);
    s.screen.palette = plan.palette.value_or(saved.palette);
    if (!plan.font_scale && !have_settings && !plan.headless) s.screen.font_scale = std::clamp(window.content_scale(), 1.f, 3.f);
    if (const int status = window.start(s.screen.theme, s.screen.font_scale); status != 0) return status;

    s.screen.screenshot_mode = !o.screenshot.empty();
    put_state_on_plan(s, plan);
    settings.written = settings_of(s);
    return 0;
}

int run_window(const GuiOptions& o, const GuiPlan& plan, const GuiMode& mode) {
    OpenWindow w;
    if (const int status = open_window(o, plan, w); status != 0) return status;
    GuiRun run{o, plan, w.window, w.state, w.settings};
    return mode(run);
}

int run_gui(const GuiOptions& o) {
    GuiPlan plan;
    std::string error;
    if (!make_plan(o, plan, error)) return usage_error(error);
#ifndef __EMSCRIPTEN__
    if (!start_serving(o, error)) return usage_error(error); // --serve: before the window, so without a display too
    const int status = run_window(o, plan, o.screenshot.empty() ? GuiMode(run_interactive) : GuiMode(screenshot_without_probes));
    stop_serving();
    return status;
#else
    return run_window(o, plan, o.screenshot.empty() ? GuiMode(run_interactive) : GuiMode(screenshot_without_probes));
#endif
}

} // namespace attnviz
