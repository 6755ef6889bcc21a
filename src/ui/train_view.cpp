// train_view.cpp: the Train view. The class picks a task, presses Train and watches the loss
// plateau and fall while each head's attention on a probe sequence turns from noise into a
// relation (the previous letter, an earlier copy, the letter after an earlier copy), named
// by its score. The settings and controls are drawn here; the curves, the scrubber and the
// heads in train_view_plot.cpp and train_view_heads.cpp.
#include "app_state.h"
#include "matrix_panel.h"
#include "train_view.h"
#include "views.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attnviz {

namespace {

// A label and a field of `w` pixels on the current line.
void label(const char* text) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(text);
    ImGui::SameLine();
}

// Divisors of C that are at most max_train_n_head: the only H the model takes.
std::vector<int> head_choices(int C) {
    std::vector<int> d;
    for (int h = 1; h <= std::min(C, max_train_n_head); ++h)
        if (C % h == 0) d.push_back(h);
    return d;
}

// Train / Pause, Step, Reset, the speed and what the run is doing.
void draw_run_controls(TrainViewState& t, UiContext& ui, float x_end) {
    const TrainStatus& st = t.shown_status;
    const float bw = ui.px(86);
    if (st.running) {
        if (ImGui::Button("Pause", ImVec2(bw, 0))) train_pause(t);
    } else if (ImGui::Button("Train", ImVec2(bw, 0))) {
        train_run(t); // from a replayed step, on from there
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Space: train / pause");
    ImGui::SameLine();
    if (ImGui::Button("Step")) train_step(t);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("One Adam step on one batch (key N)");
    ImGui::SameLine();
    if (ImGui::Button("Reset")) request_train_settings(t, t.settings);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Back to step 0 with the same settings");
    ImGui::SameLine(0, ui.px(16));
    label("speed");
    const std::vector<double>& speeds = train_speeds();
    int idx = t.speed_index;
    const std::string shown = speeds[size_t(idx)] > 0 ? std::to_string(int(speeds[size_t(idx)])) + " steps/s" : "as fast as it goes";
    ImGui::SetNextItemWidth(ui.px(170));
    if (ImGui::SliderInt("##speed", &idx, 0, int(speeds.size()) - 1, shown.c_str(), ImGuiSliderFlags_NoInput))
        train_set_speed(t, idx);
    ImGui::SameLine(0, ui.px(16));
    char line[96];
    if (st.running && st.measured > 0)
        std::snprintf(line, sizeof line, "step %lld · %.0f steps/s", (long long)st.step, st.measured);
    else
        std::snprintf(line, sizeof line, "step %lld%s", (long long)st.step, st.busy ? " · working" : " · paused");
    const float tw = text_size(ui.fonts->body, line).x;
    ImGui::SetCursorScreenPos(ImVec2(std::max(ImGui::GetCursorScreenPos().x, x_end - tw), ImGui::GetCursorScreenPos().y));
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(line);
}

} // namespace

int64_t shown_step(const TrainViewState& t) { return t.picture.step; }

namespace {

// Starts a new line at x0 when `w` more pixels do not fit before x_end.
void flow(float w, float x0, float x_end) {
    ImGui::SameLine();
    if (ImGui::GetCursorScreenPos().x + w > x_end) ImGui::SetCursorScreenPos(ImVec2(x0, ImGui::GetCursorScreenPos().y + ImGui::GetFrameHeightWithSpacing()));
}

// Seed, C, H, L, lr and batch; each applies on Enter (or choice). Returns true on an edit.
bool settings_fields(TrainViewState& t, TrainSettings& e, UiContext& ui, float x0, float x_end) {
    bool changed = false;
    const float gap = ui.px(14), field = ui.px(92);
    const float group = field + ImGui::CalcTextSize("batch").x + gap + 2 * ImGui::GetFrameHeight();
    ImGui::SetCursorScreenPos(ImVec2(x0, ImGui::GetCursorScreenPos().y));
    label("seed");
    int seed = int(std::min<uint64_t>(e.seed, 1u << 30));
    ImGui::SetNextItemWidth(field);
    if (ImGui::InputInt("##seed", &seed, 1, 10, ImGuiInputTextFlags_EnterReturnsTrue)) {
        if (seed < 0) {
            t.error = "Kept the current run: seed " + std::to_string(seed) + " is negative; use 0 or more.";
        } else if (uint64_t(seed) != e.seed) {
            e.seed = uint64_t(seed);
            changed = true;
        }
    }
    flow(group, x0, x_end);
    label("C");
    int C = e.model.n_embd;
    ImGui::SetNextItemWidth(field);
    if (ImGui::InputInt("##C", &C, 8, 32, ImGuiInputTextFlags_EnterReturnsTrue) && C != e.model.n_embd) {
        e.model.n_embd = C;
        // Keep H a divisor of the new C (the nearest below), so a new C alone is never refused for H.
        if (C > 0) {
            int best = 1;
            for (int h : head_choices(C))
                if (h <= e.model.n_head) best = h;
            e.model.n_head = best;
        }
        changed = true;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("C = n_embd, the embedding width (at most %d)", max_train_n_embd);
    flow(group, x0, x_end);
    label("H");
    ImGui::SetNextItemWidth(ui.px(60));
    if (ImGui::BeginCombo("##H", std::to_string(e.model.n_head).c_str())) {
        for (int h : head_choices(std::max(1, e.model.n_embd)))
            if (ImGui::Selectable(std::to_string(h).c_str(), h == e.model.n_head) && h != e.model.n_head) {
                e.model.n_head = h;
                changed = true;
            }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("heads per layer: only divisors of C (head_dim = C / H)");
    flow(group, x0, x_end);
    label("L");
    for (int l = 1; l <= 2; ++l) {
        if (ImGui::RadioButton(l == 1 ? "1##L" : "2##L", e.model.n_layer == l) && e.model.n_layer != l) {
            e.model.n_layer = l;
            changed = true;
        }
        if (l == 1) ImGui::SameLine();
    }
    flow(group, x0, x_end);
    label("lr");
    char lr[32];
    std::snprintf(lr, sizeof lr, "%s", t.lr_field.c_str());
    ImGui::SetNextItemWidth(field);
    if (ImGui::InputText("##lr", lr, sizeof lr, ImGuiInputTextFlags_EnterReturnsTrue)) {
        t.lr_field = lr;
        char* end = nullptr;
        const double v = std::strtod(lr, &end);
        if (end == lr || *end != '\0') {
            t.error = std::string("Kept the current run: the learning rate “") + lr + "” is not a number; type one like 5e-3.";
            t.lr_field = std::to_string(t.settings.lr);
        } else if (v != e.lr) {
            e.lr = v;
            changed = true;
        }
    }
    flow(group, x0, x_end);
    label("batch");
    int batch = e.batch;
    ImGui::SetNextItemWidth(field);
    if (ImGui::InputInt("##batch", &batch, 8, 32, ImGuiInputTextFlags_EnterReturnsTrue) && batch != e.batch) {
        e.batch = batch;
        changed = true;
    }
    return changed;
}

// The model file's Save and Load, and Open in the views.
void file_fields(AppState& s, TrainViewState& t, UiContext& ui, float x0, float x_end) {
    ImGui::SetCursorScreenPos(ImVec2(x0, ImGui::GetCursorScreenPos().y));
    label("model file");
    char path[512];
    std::snprintf(path, sizeof path, "%s", t.model_path.c_str());
    ImGui::SetNextItemWidth(ui.px(240));
    if (ImGui::InputText("##model_path", path, sizeof path)) t.model_path = path;
    ImGui::SameLine();
    if (ImGui::Button("Save")) save_train_model(t, t.model_path);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Write the shown step's model (safetensors, as attnviz train writes it)");
    ImGui::SameLine();
    if (ImGui::Button("Load")) load_train_model(t, t.model_path);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Start from a model attnviz train (or PyTorch) wrote");
    flow(ImGui::CalcTextSize("Open in the views").x + 3 * ImGui::GetStyle().FramePadding.x, x0, x_end);
    if (ImGui::Button("Open in the views")) open_in_views(s);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Make the shown step's model the app's model, on the probe sequence, in every view");
}

} // namespace

float draw_train_settings(AppState& s, TrainViewState& t, UiContext& ui, ImVec2 p0, float width, bool compact) {
    TrainSettings e = t.settings;
    bool changed = false;
    const float gap = ui.px(14), x_end = p0.x + width;
    ImGui::SetCursorScreenPos(p0);

    // Task: four choices (a list when room is short), the chosen one's sentence beside them.
    label("task");
    auto choose = [&](Task k) {
        const uint64_t seed = e.seed;
        e = default_train_settings(k); // each task's recipe: its sizes, lr and batch
        e.seed = seed;
        changed = true;
    };
    if (compact) {
        ImGui::SetNextItemWidth(ui.px(130));
        if (ImGui::BeginCombo("##task", to_string(e.model.task))) {
            for (Task k : {Task::prev, Task::dup, Task::both, Task::induction})
                if (ImGui::Selectable(to_string(k), e.model.task == k) && e.model.task != k) choose(k);
            ImGui::EndCombo();
        }
        ImGui::SameLine();
    } else {
        for (Task k : {Task::prev, Task::dup, Task::both, Task::induction}) {
            if (ImGui::RadioButton(to_string(k), e.model.task == k) && e.model.task != k) choose(k);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", task_sentence(k));
            ImGui::SameLine();
        }
    }
    ImGui::SameLine(0, gap);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ui.pal.accent));
    ImGui::PushTextWrapPos(x_end - ImGui::GetWindowPos().x);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(task_sentence(e.model.task));
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();

    if (compact) {
        // One line says the settings; the button opens them, with the file, in a popup.
        ImGui::SetCursorScreenPos(ImVec2(p0.x, ImGui::GetCursorScreenPos().y));
        if (ImGui::Button("Settings")) ImGui::OpenPopup("train_settings");
        ImGui::SameLine();
        char line[160];
        std::snprintf(line, sizeof line, "seed %llu · C %d · H %d · L %d · lr %g · batch %d",
                      (unsigned long long)e.seed, e.model.n_embd, e.model.n_head, e.model.n_layer, e.lr, e.batch);
        ImGui::AlignTextToFramePadding();
        ImGui::TextDisabled("%s", line);
        if (ImGui::BeginPopup("train_settings")) {
            const float pw = std::min(width, ui.px(760));
            const float px0 = ImGui::GetCursorScreenPos().x;
            changed = settings_fields(t, e, ui, px0, px0 + pw) || changed;
            file_fields(s, t, ui, px0, px0 + pw);
            ImGui::EndPopup();
        }
    } else {
        changed = settings_fields(t, e, ui, p0.x, x_end) || changed;
    }
    if (changed && request_train_settings(t, e)) t.error.clear();

    // Controls, then the file and the other views.
    ImGui::SetCursorScreenPos(ImVec2(p0.x, ImGui::GetCursorScreenPos().y));
    draw_run_controls(t, ui, x_end);
    if (!compact) file_fields(s, t, ui, p0.x, x_end);

    // What was refused, or what happened last.
    float y = ImGui::GetCursorScreenPos().y;
    const std::string& msg = !t.error.empty() ? t.error : t.status;
    if (!msg.empty()) {
        ImGui::SetCursorScreenPos(ImVec2(p0.x, y));
        ImGui::PushTextWrapPos(x_end - ImGui::GetWindowPos().x);
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(!t.error.empty() ? ui.pal.warning : ui.pal.text_dim));
        ImGui::TextUnformatted(msg.c_str());
        ImGui::PopStyleColor();
        ImGui::PopTextWrapPos();
        y = ImGui::GetCursorScreenPos().y;
    }
    return y;
}

void draw_train_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    TrainViewState& t = train_view(s);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float width = p1.x - p0.x;
    ImFont* hf = ui.fonts->heading;
    // Short of height (text size 2 at 720 pixels), the settings fold into one line and a popup.
    const bool compact = p1.y - p0.y < ui.scaled(560);
    const std::string sub = "the lesson's attention in a small model (embeddings, L blocks, a task head), trained as PyTorch would";
    if (!compact && text_size(hf, "Train: heads that learn").x + text_size(ui.fonts->small, sub).x + ui.scaled(30) < width)
        dl->AddText(ui.fonts->small, ui.fonts->small->FontSize,
                    ImVec2(p0.x + text_size(hf, "Train: heads that learn").x + ui.px(16),
                           p0.y + hf->FontSize - ui.fonts->small->FontSize - 1),
                    ui.pal.text_dim, sub.c_str());
    float y = compact ? p0.y : p0.y + hf->FontSize + ui.px(6);
    if (!compact) dl->AddText(hf, hf->FontSize, p0, ui.pal.text, "Train: heads that learn");
    y = draw_train_settings(s, t, ui, ImVec2(p0.x, y), width, compact) + ui.px(6);
    if (!t.picture.model) {
        ImGui::SetCursorScreenPos(ImVec2(p0.x, y));
        ImGui::TextDisabled("Scoring step 0 ...");
        return;
    }
    // The curves and the scrubber on the left, the heads on the right.
    const float left_w = std::round(std::clamp(width * (compact ? 0.32f : 0.36f), ui.scaled(compact ? 200 : 300), ui.scaled(520)));
    const float gap = ui.px(18);
    const float scrub_h = ImGui::GetFrameHeightWithSpacing() * 2 + ui.fonts->small->FontSize * (compact ? 1 : 2);
    draw_train_curves(t, ui, ImVec2(p0.x, y), ImVec2(p0.x + left_w, p1.y - scrub_h), !compact);
    draw_train_scrubber(t, ui, ImVec2(p0.x, p1.y - scrub_h + ui.px(4)), left_w);
    draw_train_heads(t, ui, ImVec2(p0.x + left_w + gap, y), p1, compact);
}

} // namespace attnviz
