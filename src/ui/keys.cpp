// keys.cpp: the keyboard - every shortcut, as handle_keys applies it and the help overlay
// (F1) lists it.
#include "format.h"
#include "inputs.h"
#include "specs.h"
#include "session_state.h"
#include "train_view_state.h"
#include "views.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

// GLFW key codes (the backend's; ImGui 1.86 indexes KeysDown with them).
constexpr int key_equal = 61, key_minus = 45, key_kp_add = 334, key_kp_subtract = 333, key_0 = 48;
constexpr int key_f1 = 290, key_f2 = 291, key_f6 = 295, key_f11 = 300;
constexpr int key_left_bracket = 91, key_right_bracket = 93, key_home = 268;

bool pressed(int key) { return ImGui::IsKeyPressed(key, false); }
bool pressed_repeat(int key) { return ImGui::IsKeyPressed(key, true); }

// The next divisor of C above (up) or below the current H, within max_n_head.
int next_heads(const Config& c, bool up) {
    const std::vector<int> d = divisors(c.n_embd);
    int best = c.n_head;
    if (up) {
        for (int x : d)
            if (x > c.n_head && x <= max_n_head) return x;
    } else {
        for (int x : d)
            if (x < c.n_head) best = x;
    }
    return best;
}

// The Train view's keys: Space trains or pauses, N steps once, the arrows walk the history.
void train_keys(AppState& s, bool left, bool right) {
    TrainViewState& t = train_view(s);
    const TrainStatus st = train_status(t);
    if (pressed(32)) { // GLFW_KEY_SPACE
        if (st.running) train_pause(t);
        else train_run(t); // from a replayed step, on from there
    }
    if (pressed('N')) train_step(t);
    if (!left && !right) return;
    const std::vector<TrainSnapshot>& snaps = t.history.snapshots;
    const int n = int(snaps.size());
    int idx = n; // the latest
    for (int i = 0; i < n; ++i)
        if (snaps[size_t(i)].step == t.scrub) idx = i;
    if (t.scrub < 0) // from the latest, Left goes to the last snapshot before it
        while (idx > 0 && snaps[size_t(idx - 1)].step >= st.step) --idx;
    idx = std::clamp(idx + (right ? 1 : -1), 0, n);
    if (st.running) train_pause(t);
    t.scrub = idx < n && snaps[size_t(idx)].step < st.step ? snaps[size_t(idx)].step : -1;
}

// The Model view's keys: Up / Down move the predictions' position, Left / Right the grid's
// first layer when it pages (the grid clamps it to what fits).
void model_keys(AppState& s, bool left, bool right) {
    const int N = s.config.applied.seq_len;
    const int p = s.model_view.predict_pos < 0 ? N - 1 : s.model_view.predict_pos;
    if (pressed_repeat(ImGui::GetKeyIndex(ImGuiKey_UpArrow))) s.model_view.predict_pos = std::max(0, p - 1);
    if (pressed_repeat(ImGui::GetKeyIndex(ImGuiKey_DownArrow))) s.model_view.predict_pos = std::min(N - 1, p + 1);
    if (left) s.model_view.model_layer0 = std::max(0, s.model_view.model_layer0 - 1);
    if (right) s.model_view.model_layer0 += 1;
    // A: ablate or restore the head under the cursor (the grid or the table); Shift+A: every head back.
    if (pressed('A') && heads_ablatable(s)) {
        if (ImGui::GetIO().KeyShift) restore_all_heads(s);
        else if (s.model_view.hover_layer >= 0 && s.model_view.hover_head >= 0) toggle_ablation(s, s.model_view.hover_layer, s.model_view.hover_head);
    }
}

} // namespace

const std::vector<Shortcut>& shortcuts() {
    static const std::vector<Shortcut> list = {
        {"1 to 8", "shape walk, QKV split, scores, causality, check yourself, train, model, generate"},
        {"Right / Left (generate)", "generate: Step (one more token) / Back (take the last one back)"},
        {"Space / Home (generate)", "generate: Play / Pause; Reset to the prompt"},
        {"Space / N", "train: train / pause, one step"},
        {"Left / Right (train)", "train: previous / next snapshot of the history"},
        {"Left / Right", "shape walk: previous / next step; causality: strength − / + 0.05"},
        {"Up / Down", "causality: perturbed position p − / +; model: the predictions' position − / +"},
        {"Left / Right (model)", "model: the grid's layers up / down by one when they are paged"},
        {"A / Shift+A (model)", "model: ablate / restore the hovered head; restore all"},
        {"[ / ]", "previous / next head"},
        {", / .", "a trained model: previous / next block (layer)"},
        {"= / - / 0", "zoom the view in / out / fit"},
        {"M", "mask: causal → none → off-by-one"},
        {"S", "scale: ÷ √head_dim → ÷ √C → none"},
        {"H / Shift+H", "more / fewer heads (divisors of C)"},
        {"K", "kernel: auto → reference → fast"},
        {"R", "same colour range for all heads on / off"},
        {"L", "reset to the lesson"},
        {"A", "check yourself: show / hide the answers"},
        {"Alt+1 / Alt+2 / Alt+3", "check yourself: Show me of question 1, 2 (H: 1 → 2 → 4), 3"},
        {"Alt+4", "check yourself: question 2 by training both with H = 1, then H = 4"},
        {"Alt+5", "check yourself: question 4, ablate the induction model's previous-token head"},
        {"Alt+6", "check yourself: question 5, generate with and without the KV cache"},
        {"Alt+7", "check yourself: question 6, patch each head of the induction model"},
        {"T", "theme: dark → light → high contrast"},
        {"P", "palette: default ↔ cb (colour-blind safe)"},
        {"Ctrl+= / Ctrl+-", "larger / smaller text (1× to 3×)"},
        {"F2", "side panel on / off"},
        {"F6", "keyboard into the side panel's fields (Tab moves on, Enter applies, Esc leaves)"},
        {"Ctrl+S", "save the session to the file named in the side panel"},
        {"Ctrl+O", "open that session file"},
        {"Ctrl+E", "export the tensor chosen in the side panel (.npy or .csv) to its file"},
        {"Ctrl+P", "save the view as PNG to the file named in the side panel"},
        {"F11", "full screen on / off"},
        {"F1 or ?", "this list on / off (Esc closes it)"}};
    return list;
}

void handle_keys(AppState& s) {
    ImGuiIO& io = ImGui::GetIO();
    // Ctrl+S / Ctrl+O save and open the session named in the side panel, even from its field.
    if (io.KeyCtrl && pressed('S')) save_session_file(s, s.fields.session_path);
    if (io.KeyCtrl && pressed('O')) open_session_file(s, s.fields.session_path);
    // Ctrl+E / Ctrl+P export the tensor / the view as PNG to the side panel's Export paths.
    if (io.KeyCtrl && pressed('E')) export_tensor_now(s);
    if (io.KeyCtrl && pressed('P')) request_png(s);
    const bool bigger = ImGui::IsKeyPressed(key_equal) || ImGui::IsKeyPressed(key_kp_add);
    const bool smaller = ImGui::IsKeyPressed(key_minus) || ImGui::IsKeyPressed(key_kp_subtract);
    if (io.KeyCtrl && (bigger || smaller)) {
        // Steps of a quarter; the loop re-bakes the fonts at the new pixel size.
        const float next = std::clamp(std::round(s.screen.font_scale * 4 + (bigger ? 1 : -1)) / 4, 1.f, 3.f);
        if (next != s.screen.font_scale) {
            s.screen.font_scale = next;
            s.fonts_dirty = true;
        }
    }
    if (pressed(key_f1)) s.screen.show_help = !s.screen.show_help;
    if (pressed(key_f11)) s.screen.fullscreen_toggle = true;
    if (pressed(key_f2)) s.screen.side_panel = s.screen.panel_visible ? PanelMode::hidden : PanelMode::shown;
    if (pressed(key_f6)) {
        if (!s.screen.panel_visible) s.screen.side_panel = PanelMode::shown;
        s.screen.focus_panel = true;
    }
    // Alt+1..3: the check view's "Show me" buttons; Alt+4: question 2's second, by training.
    if (io.KeyAlt && !io.KeyCtrl && s.screen.view == View::check) {
        for (int q = 1; q <= 3; ++q)
            if (pressed('0' + q)) show_me(s, q);
        if (pressed('4')) start_heads_comparison(s);
        if (pressed('5')) start_ablation_demo(s);
        if (pressed('6')) show_me(s, 5);
        if (pressed('7')) show_me(s, 6);
    }
    if (io.WantTextInput || io.KeyCtrl || io.KeyAlt) return;
    for (ImWchar c : io.InputQueueCharacters)
        if (c == '?') s.screen.show_help = !s.screen.show_help;
    if (pressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) s.screen.show_help = false;
    // ImGui 1.86: keys are the backend's (GLFW) key codes, via the ImGuiKey_ map.
    const bool right = pressed_repeat(ImGui::GetKeyIndex(ImGuiKey_RightArrow));
    const bool left = pressed_repeat(ImGui::GetKeyIndex(ImGuiKey_LeftArrow));
    if (s.screen.view == View::walk) {
        if (right) s.screen.step = std::min(walk_last_step, s.screen.step + 1);
        if (left) s.screen.step = std::max(0, s.screen.step - 1);
    }
    if (s.screen.view == View::generate && s.ready) {
        if (right) request_generate_step(s);
        if (left) request_generate_back(s);
        if (pressed(32)) request_generate_play(s, !s.generate.playing); // GLFW_KEY_SPACE
        if (pressed(key_home)) request_generate_reset(s);
    }
    if (s.screen.view == View::causality && s.ready) {
        float a = s.strength;
        int p = s.p;
        if (right) a = std::min(1.f, std::round(a * 20 + 1) / 20);
        if (left) a = std::max(0.f, std::round(a * 20 - 1) / 20);
        if (pressed_repeat(ImGui::GetKeyIndex(ImGuiKey_UpArrow))) p = std::max(0, p - 1);
        if (pressed_repeat(ImGui::GetKeyIndex(ImGuiKey_DownArrow))) p = std::min(s.config.applied.seq_len - 1, p + 1);
        request_perturbation(s, p, a);
    }
    for (int v = 0; v < view_count; ++v)
        if (pressed('1' + v)) s.screen.view = View(v);
    if (s.screen.view == View::train) train_keys(s, left, right);
    if (s.screen.view == View::model && s.ready) model_keys(s, left, right);
    ViewWindow& win = s.screen.windows[int(s.screen.view)];
    if (pressed_repeat(key_equal) || pressed_repeat(key_kp_add)) win.zoom = std::min(16.f, win.zoom * 1.25f);
    if (pressed_repeat(key_minus) || pressed_repeat(key_kp_subtract)) win.zoom = std::max(0.25f, win.zoom / 1.25f);
    if (pressed(key_0)) {
        win.zoom = 1;
        win.row0 = win.key0 = win.chan0 = 0;
    }
    if (pressed(key_left_bracket)) win.head0 = std::max(0, win.head0 - 1);
    if (pressed(key_right_bracket)) win.head0 = std::clamp(win.head0 + 1, 0, std::max(0, s.config.applied.n_head - 1));
    // The side panel's settings; the config ones go through request_config like its fields.
    Config e = s.config.edit;
    KernelChoice k = s.kernel_choice.edit;
    bool changed = false;
    if (pressed('M')) e.mask = MaskMode((int(e.mask) + 1) % 3), changed = true;
    if (pressed('S')) e.scale = ScaleMode((int(e.scale) + 1) % 3), changed = true;
    if (pressed('H')) e.n_head = next_heads(e, !io.KeyShift), changed = true;
    if (pressed('K')) k = KernelChoice((int(k) + 1) % 3), changed = true;
    if (changed) request_config(s, e, k);
    if (pressed('R')) s.screen.shared_ranges = !s.screen.shared_ranges;
    if (pressed('L')) reset_to_lesson(s);
    if (pressed('A') && s.screen.view == View::check) {
        bool any = false;
        for (bool b : s.screen.answer_shown) any = any || b;
        for (bool& b : s.screen.answer_shown) b = !any;
    }
    if (pressed('T')) {
        s.screen.theme = Theme((int(s.screen.theme) + 1) % 3);
        s.fonts_dirty = true; // the style is re-applied with the fonts
    }
    if (pressed('P')) s.screen.palette = s.screen.palette == PaletteKind::cb ? PaletteKind::standard : PaletteKind::cb;
}

void draw_help_overlay(AppState& s, UiContext& ui) {
    if (!s.screen.show_help) return;
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + vp->Size.x / 2, vp->Pos.y + vp->Size.y / 2), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(vp->Size.x - 20, vp->Size.y - 20));
    ImGui::SetNextWindowBgAlpha(0.96f);
    ImGui::Begin("Keyboard shortcuts", &s.screen.show_help,
                 ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoCollapse);
    ImGui::PushFont(ui.fonts->body);
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_SizingFixedFit)) {
        for (const Shortcut& k : shortcuts()) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "%s", k.keys);
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(k.what);
        }
        ImGui::EndTable();
    }
    ImGui::PopFont();
    ImGui::End();
}

} // namespace attnviz
