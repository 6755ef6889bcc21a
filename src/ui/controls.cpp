// controls.cpp: the fixed side panel - the model's sizes, the teaching switches, the
// kernel, "Reset to the lesson", the parameter count (the window's layout is draw_app.cpp).
#include "format.h"
#include "inputs.h"
#include "text_fit.h"
#include "session_state.h"
#include "specs.h"
#include <imgui_stdlib.h>
#include "views.h"
#include "window_layout.h"
#include "widgets.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

// An integer field applied on Enter (or by its - / + buttons).
bool int_field(const char* label, const char* id, int& v, int step, int step_fast, float label_w) {
    field_label(label, label_w);
    int tmp = v;
    bool changed = ImGui::InputInt(id, &tmp, step, step_fast, ImGuiInputTextFlags_EnterReturnsTrue);
    if (changed) v = tmp;
    return changed;
}

// The largest divisor of C that is at most `want` (so a new C keeps H as close as it can).
int nearest_divisor(int C, int want) {
    int best = 1;
    for (int d : divisors(C))
        if (d <= want) best = d;
    return best;
}

} // namespace

namespace {

// The sizes of the lesson's module and its seed; true when one was edited into `e`.
bool draw_model_section(AppState& s, UiContext& ui, Config& e, float label_w) {
    bool changed = false;
    section_heading(ui, "Model");
    int C = e.n_embd;
    if (s.screen.focus_panel) { // F6: the keyboard starts in the first field; Tab moves on
        ImGui::SetKeyboardFocusHere(0);
        s.screen.focus_panel = false;
    }
    if (int_field("n_embd  C", "##C", C, 1, 8, label_w)) {
        e.n_embd = std::clamp(C, 1, max_n_embd);
        if (e.n_embd % e.n_head != 0) e.n_head = nearest_divisor(e.n_embd, e.n_head);
        changed = true;
    }
    // Only divisors of C are offered: C must split evenly into heads.
    field_label("n_head  H", label_w);
    const std::string current = std::to_string(e.n_head);
    if (ImGui::BeginCombo("##H", current.c_str())) {
        for (int d : divisors(e.n_embd)) {
            if (d > max_n_head) break;
            if (ImGui::Selectable(std::to_string(d).c_str(), d == e.n_head)) {
                e.n_head = d;
                changed = true;
            }
        }
        ImGui::EndCombo();
    }
    int T = e.seq_len;
    if (int_field("seq_len  T", "##T", T, 1, 16, label_w)) {
        e.seq_len = std::clamp(T, 1, max_seq_len);
        changed = true;
    }
    field_label("seed", label_w);
    uint64_t seed = e.seed;
    const uint64_t one = 1;
    if (ImGui::InputScalar("##seed", ImGuiDataType_U64, &seed, &one, nullptr, "%llu", ImGuiInputTextFlags_EnterReturnsTrue)) {
        e.seed = seed;
        changed = true;
    }
    ImGui::TextDisabled("head_dim = C / H = %d", s.config.applied.head_dim());
    wrapped_text("parameters 4C² = " + format_count(s.config.applied.param_count())); // 3C² for qkv plus C² for proj
    return changed;
}

// A choice of three shown by its short name in the field and its long one in the list.
bool choice3(const char* label, const char* id, const char* const short_names[3], const char* const long_names[3],
             int& value, float label_w) {
    bool changed = false;
    field_label(label, label_w);
    if (ImGui::BeginCombo(id, short_names[value])) {
        for (int m = 0; m < 3; ++m)
            if (ImGui::Selectable(long_names[m], value == m)) {
                value = m;
                changed = true;
            }
        ImGui::EndCombo();
    }
    return changed;
}

// The mask and the score scale (fixed by a model in the views); true when one changed.
bool draw_switches_section(const AppState& s, UiContext& ui, Config& e, float label_w) {
    section_heading(ui, "Teaching switches");
    if (config_fixed(s)) {
        wrapped_text("The trained model was trained with the causal mask and ÷ √head_dim; Back to the lesson "
                     "to try others.",
                     true);
    }
    ImGui::BeginDisabled(config_fixed(s));
    const char* mask_short[] = {"causal", "none", "off-by-one"};
    const char* mask_long[] = {"causal: tril (the lesson's)", "none: every key visible", "off-by-one: tril(diagonal=-1)"};
    int mask = int(e.mask);
    const bool mask_changed = choice3("mask", "##mask", mask_short, mask_long, mask, label_w);
    e.mask = MaskMode(mask);
    const char* scale_short[] = {"÷ √head_dim", "÷ √C", "none"};
    const char* scale_long[] = {"÷ √head_dim (the lesson's)", "÷ √C", "none"};
    int scale = int(e.scale);
    const bool scale_changed = choice3("scale", "##scale", scale_short, scale_long, scale, label_w);
    e.scale = ScaleMode(scale);
    ImGui::EndDisabled();
    return mask_changed || scale_changed;
}

// The kernel asked for and the one in use; true when the choice changed.
bool draw_kernel_section(const AppState& s, UiContext& ui, KernelChoice& k, float label_w) {
    section_heading(ui, "Kernel");
    field_label("kernel", label_w);
    const char* kernels[] = {"auto", "reference", "fast"};
    int ki = int(k);
    const bool changed = ImGui::Combo("##kernel", &ki, kernels, 3);
    if (changed) k = KernelChoice(ki);
    ImGui::TextDisabled("in use: %s", to_string(s.kernel));
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(s.kernel == KernelKind::reference
                              ? "Plain loops in PyTorch's order: bit-exact with the lesson's numbers."
                              : "OpenBLAS products: within 1e-5 of the reference, fast enough for large sizes.");
    return changed;
}

// The overview of a matrix that shows only a window of its cells.
void draw_overview_section(AppState& s, UiContext& ui) {
    if (!s.screen.minimap.active || s.screen.minimap.view != int(s.screen.view)) return;
    section_heading(ui, "Overview");
    const Minimap& m = s.screen.minimap;
    ImGui::TextDisabled("%d × %d, showing rows %d–%d", m.rows, m.cols, m.row0, m.row0 + m.nrows - 1);
    const float w = ImGui::GetContentRegionAvail().x;
    const float h = std::min(w * float(m.rows) / float(m.cols), ui.scaled(120));
    const float mw = h * float(m.cols) / float(m.rows);
    const ImVec2 a = ImGui::GetCursorScreenPos();
    draw_minimap(ui, m, s.screen.windows[m.view], a, ImVec2(a.x + mw, a.y + h));
}

// Theme, palette, text size and shared ranges: the screen's own, applied at once.
void draw_display_section(AppState& s, UiContext& ui, float label_w) {
    section_heading(ui, "Display");
    field_label("theme", label_w);
    const char* themes[] = {"dark", "light", "high contrast"};
    int t = int(s.screen.theme);
    if (ImGui::Combo("##theme", &t, themes, 3)) {
        s.screen.theme = Theme(t);
        s.fonts_dirty = true; // the style is re-applied with the fonts
    }
    field_label("palette", label_w);
    const char* palettes[] = {"default", "cb (colour-blind)"};
    int pk = int(s.screen.palette);
    if (ImGui::Combo("##palette", &pk, palettes, 2)) s.screen.palette = PaletteKind(pk);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("default: blue-red and viridis. cb: purple-orange and cividis, which read the same to every "
                          "colour vision. Key P.");
    field_label("text size", label_w);
    float fs = s.screen.font_scale;
    ImGui::SliderFloat("##font_scale", &fs, 1.f, 3.f, "%.2f×");
    // Re-baking the fonts on every drag step would stall; apply on release.
    if (ImGui::IsItemDeactivatedAfterEdit()) {
        s.screen.font_scale = std::clamp(fs, 1.f, 3.f);
        s.fonts_dirty = true;
    }
    ImGui::Checkbox("same range for all heads", &s.screen.shared_ranges);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("On: one colour scale for every head, so heads compare. Off: each head uses its own range.");
}

void draw_session_section(AppState& s, UiContext& ui) {
    section_heading(ui, "Session");
    ImGui::SetNextItemWidth(-1);
    ImGui::InputText("##session_path", &s.fields.session_path);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The session file: config, view, step, perturbation, theme and text size.");
    const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
    if (ImGui::Button("Save  Ctrl+S", ImVec2(half, 0))) save_session_file(s, s.fields.session_path);
    ImGui::SameLine();
    if (ImGui::Button("Open  Ctrl+O", ImVec2(half, 0))) open_session_file(s, s.fields.session_path);
}

// What happened last, and the frame time (not in screenshots, which must not vary).
void draw_status(const AppState& s) {
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::PushTextWrapPos(0.f);
    if (!s.status.empty()) ImGui::TextDisabled("%s", s.status.c_str());
    ImGui::PopTextWrapPos();
    if (!s.screen.screenshot_mode) ImGui::TextDisabled("%.1f ms per frame", double(s.screen.frame_ms));
}

} // namespace

// The side panel top to bottom. The edits of the config and the kernel are gathered in `e`
// and `k` and requested once at the end, so one frame's edits make one recompute.
void draw_controls(AppState& s, UiContext& ui) {
    Config e = s.config.edit;
    KernelChoice k = s.kernel_choice.edit;
    bool changed = false;
    const float label_w = ui.px(86);

    ImGui::PushFont(ui.fonts->heading);
    ImGui::TextUnformatted("attnviz");
    ImGui::PopFont();
    ImGui::TextDisabled("causal multi-head self-attention");
    draw_follow_section(s, ui); // a page following the teacher's window (follow_panel.cpp)

    // A trained model fixes the sizes and the input: its own section instead of both.
    if (config_fixed(s)) {
        draw_trained_section(s, ui);
    } else {
        changed |= draw_model_section(s, ui, e, label_w);
        draw_words_section(s, ui);
    }
    draw_weights_section(s, ui);
    draw_get_gpt2_section(s, ui);
    changed |= draw_switches_section(s, ui, e, label_w);
    changed |= draw_kernel_section(s, ui, k, label_w);
    ImGui::Spacing();
    if (ImGui::Button("Reset to the lesson  L", ImVec2(-1, 0))) {
        reset_to_lesson(s);
        e = s.config.edit;
        k = s.kernel_choice.edit;
        changed = false; // reset_to_lesson made the request; edits above this frame are dropped
    }
    // A refused edit says why, right under the settings it refused.
    if (!s.error.empty()) wrapped_text(s.error, ui.pal.warning);
    draw_overview_section(s, ui);
    draw_display_section(s, ui, label_w);
    draw_serve_section(s, ui); // serving the class (follow_panel.cpp)
    draw_session_section(s, ui);
    draw_export_section(s, ui);

    if (changed) request_config(s, e, k);
    draw_status(s);
}

} // namespace attnviz
