// app_state.cpp: see app_state.h.
#include "app_state.h"
#include "follow_gpt.h"
#include "text_util.h"
#include "inputs.h"
#include "state_internal.h"
#include "train_view_state.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attnviz {

const char* to_string(View v) {
    switch (v) {
    case View::walk: return "walk";
    case View::qkv: return "qkv";
    case View::scores: return "scores";
    case View::causality: return "causality";
    case View::check: return "check";
    case View::train: return "train";
    case View::model: return "model";
    case View::generate: return "generate";
    }
    return "?";
}

bool parse_view(const std::string& s, View& out, std::string& error) {
    for (View v : {View::walk, View::qkv, View::scores, View::causality, View::check, View::train, View::model, View::generate})
        if (s == to_string(v)) {
            out = v;
            return true;
        }
    error = "--view " + quote(s) + " is not a view; use walk, qkv, scores, causality, check, train, model or generate";
    return false;
}

const char* to_string(Theme t) {
    switch (t) {
    case Theme::dark: return "dark";
    case Theme::light: return "light";
    case Theme::high_contrast: return "high-contrast";
    }
    return "?";
}

bool parse_theme(const std::string& s, Theme& out, std::string& error) {
    for (Theme t : {Theme::dark, Theme::light, Theme::high_contrast})
        if (s == to_string(t)) {
            out = t;
            return true;
        }
    error = "--theme " + quote(s) + " is not a theme; use dark, light or high-contrast";
    return false;
}

const char* to_string(PaletteKind k) { return k == PaletteKind::cb ? "cb" : "default"; }

bool parse_palette(const std::string& s, PaletteKind& out, std::string& error) {
    for (PaletteKind k : {PaletteKind::standard, PaletteKind::cb})
        if (s == to_string(k)) {
            out = k;
            return true;
        }
    error = "--palette " + quote(s) + " is not a palette; use default (blue-red and viridis) or cb (purple-orange and cividis)";
    return false;
}

Config lesson_config() { return Config{}; }

void init_app_state(AppState& s, const Config& c, KernelChoice kernel) {
    s.config.ask(c);
    s.kernel_choice.edit = kernel;
    s.edit_trained.reset(); // `c` is the lesson's module (a session, the command line); a model is staged after
    s.config_dirty = true;
}

void request_config(AppState& s, const Config& c, KernelChoice kernel) {
    s.config.ask(c);
    s.kernel_choice.edit = kernel;
    s.config_dirty = true;
}

void request_trained_model(AppState& s, std::shared_ptr<const TrainedInput> in) {
    s.edit_trained = std::move(in);
    s.config_dirty = true;
}

void reset_to_lesson(AppState& s) {
    request_config(s, lesson_config(), KernelChoice::automatic);
    s.screen.shared_ranges = true;
    s.strength = 0;
    s.perturb_dirty = true;
    s.p = 2;
    for (ViewWindow& w : s.screen.windows) w = ViewWindow{};
    // The lesson's input: random x and the seeded weights.
    s.tokens.edit.clear();
    s.weights.edit.reset();
    s.fields.text_field.clear();
    // The lesson's module, not a trained model.
    request_trained_model(s, nullptr);
    s.edit_layer = 0;
    s.shown.replace_token = -1;
}

void request_perturbation(AppState& s, int p, float strength) {
    if (p == s.p && strength == s.strength) return;
    s.p = p;
    s.strength = strength;
    s.perturb_dirty = true;
}

int64_t window_bytes(const Config& c) {
    const int64_t T = c.seq_len, C = c.n_embd, H = c.n_head, f = int64_t(sizeof(float));
    const int64_t trace = trace_bytes(c);
    const bool whole_copy = trace <= keep_base_cap;
    const int copies = whole_copy ? 2 : 1;
    // x, q, k, v, concat, y and the four weight blocks, per kept trace; the per-head
    // scores and weights up to the renderer's budget, or what one frame draws when that is
    // more (the scores view shows two heads: four (T, T) textures, kept while drawn).
    const int64_t textures = copies * (6 * T * C + 4 * C * C) * f;
    const int64_t one_frame = std::min<int64_t>(H, 2) * 2 * T * T * f;
    const int64_t heads = std::min<int64_t>(std::max(head_texture_budget, one_frame), copies * 2 * H * T * T * f);
    return trace + (whole_copy ? trace : T * C * f) + textures + heads;
}

std::string validate_window(const Config& c, int64_t cap) {
    if (std::string why = validate(c, std::numeric_limits<int64_t>::max()); !why.empty()) return why;
    const int64_t need = window_bytes(c);
    if (need <= cap) return "";
    return "seq_len " + std::to_string(c.seq_len) + " with n_embd " + std::to_string(c.n_embd) + " and n_head " +
           std::to_string(c.n_head) + " needs about " + human_bytes(need) +
           " in the window (the trace, its unperturbed copy and their textures), over the cap of " +
           human_bytes(cap) + "; use a smaller seq_len, n_head or n_embd";
}

namespace state_detail {

// Keeps every view's window inside the new shapes.
void clamp_windows(AppState& s) {
    const Config& c = s.config.applied;
    for (ViewWindow& w : s.screen.windows) {
        w.row0 = std::clamp(w.row0, 0, c.seq_len - 1);
        w.key0 = std::clamp(w.key0, 0, c.seq_len - 1);
        w.chan0 = std::clamp(w.chan0, 0, 3 * c.n_embd - 1);
        w.head0 = std::clamp(w.head0, 0, c.n_head - 1);
    }
}

KernelKind resolve_kernel(const AppState& s, const Config& c, KernelChoice k) {
    switch (k) {
    case KernelChoice::reference: return KernelKind::reference;
    case KernelChoice::fast: return KernelKind::fast;
    case KernelChoice::automatic: break;
    }
    return s.auto_kernel ? s.auto_kernel(c) : KernelKind::reference;
}

} // namespace state_detail

namespace {

using namespace state_detail;

// A new config: the recipe, the full forward pass, fresh ranges, every texture.
bool apply_config(AppState& s) {
    const Config c = s.config.edit;
    std::string why = check_inputs(s, c);
    if (why.empty()) why = validate_window(c, s.memory_cap);
    Experiment e;
    if (why.empty()) make_state_experiment(s, c, e, why);
    if (!why.empty()) {
        s.error = "Kept the previous settings: " + why + ".";
        s.config.put_back();
        s.kernel_choice.put_back();
        s.tokens.put_back();
        s.weights.put_back();
        put_back_model(s);
        return false;
    }
    s.error.clear();
    leave_trained(s);
    s.tokens.apply();
    s.weights.apply();
    s.shown.source = lesson_source(s.weights.applied);
    s.config.apply();
    s.kernel_choice.apply();
    s.kernel = resolve_kernel(s, c, s.kernel_choice.applied);
    s.p = std::clamp(s.p, 0, c.seq_len - 1);
    s.perturb_dirty = s.strength != 0;
    run_lesson(std::move(e), s.kernel, trace_bytes(c) <= keep_base_cap, s.run);
    clamp_windows(s);
    s.upload = UploadRequest{};
    s.upload.full = true;
    s.base_upload = true;
    s.ready = true;
    s.status = "Computed seed " + std::to_string(c.seed) + ", C = " + std::to_string(c.n_embd) +
               ", H = " + std::to_string(c.n_head) + ", T = " + std::to_string(c.seq_len) + " with the " +
               to_string(s.kernel) + " kernel" + inputs_status(s) + ".";
    return true;
}

} // namespace

// A new p or strength: at most one input row differs from the recipe's x.
void state_detail::apply_lesson_perturbation(AppState& s) {
    s.p = std::clamp(s.p, 0, s.config.applied.seq_len - 1);
    const RowChange ch = perturb_lesson(s.run, s.p, s.strength);
    if (ch.all) {
        s.upload.full = true;
        return;
    }
    s.upload.row0 = s.upload.row0 >= 0 ? std::min(s.upload.row0, ch.row0) : ch.row0;
    for (int j : ch.rows) s.upload.columns.push_back(j);
    for (int j : ch.rows) s.upload.rows.push_back(j); // the input rows that changed
}

void recompute(AppState& s) {
    poll_hub_get(s);    // Get GPT-2's download: its progress, and the model opened once it is in (hub_get_state.cpp)
    poll_model_load(s); // a model read off the frame thread, staged once it is in (model_loading.cpp)
    // A teacher's GPT layer on a page (follow_gpt.h) takes no edit of its model; the lesson
    // (or another model) in its place goes the usual way.
    if (received_gpt(s) && s.edit_trained == shown_model(s) && (s.config_dirty || s.perturb_dirty || s.ablation.dirty))
        refuse_received_edit(s);
    const bool config_changed = s.config_dirty, perturb_changed = s.perturb_dirty;
    if (s.config_dirty) {
        s.config_dirty = false;
        if (s.edit_trained) apply_trained(s);
        else apply_config(s);
    }
    // Heads ablated or restored (recompute_ablation.cpp): the shown model's run again, from the
    // first layer that changed, with the perturbation applied to it afterwards.
    bool ablation_changed = false;
    if (s.ablation.dirty) {
        s.ablation.dirty = false;
        ablation_changed = apply_ablation_edit(s);
    }
    if (s.perturb_dirty && s.ready) {
        s.perturb_dirty = false;
        apply_shown_perturbation(s); // the lesson's input row, or a model's token (source.cpp)
    }
    update_model_view(s, config_changed, perturb_changed, ablation_changed); // the Model view's detector and predictions (recompute_model_view.cpp)
    // Question 4's demonstration, once its run is trained (check_ablation.cpp).
    if (s.train && s.train->ablation_demo.trained() && !s.train->ablation_demo.computed)
        compute_ablation_demo(s.train->ablation_demo);
    update_patch_demo(s); // question 6's, on the same model once it is trained (check_patch.cpp)
    poll_patch(s, s.screen.screenshot_mode); // the Patching panel's run on its worker (patch_state.cpp)
    fill_patch_fields(s);
    update_generate(s); // the Generate view's steps and the check view's fifth demonstration (generate_state.cpp)
}

float range_of(const AppState& s, const RangeSet& r, int head) {
    float v = r.all;
    if (!s.screen.shared_ranges && head >= 0 && head < int(r.head.size())) v = r.head[size_t(head)];
    return v > 0 ? v : 1.f;
}

} // namespace attnviz
