// trained_panel.cpp: what the window shows of a trained model besides its trace - the side
// panel's "Trained model" section (task, vocabulary, sizes, source, the sequence as letters,
// the block, "Back to the lesson"), the block picker above every view, and its keys.
#include "format.h"
#include "inputs.h"
#include "model_io.h"
#include "views.h"
#include <algorithm>
#include <cmath>
#include <imgui_stdlib.h>

namespace attnviz {

namespace {

void dim_wrapped(const std::string& text) {
    ImGui::PushTextWrapPos(0.f);
    ImGui::TextDisabled("%s", text.c_str());
    ImGui::PopTextWrapPos();
}

void wrapped(const std::string& text) {
    ImGui::PushTextWrapPos(0.f);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
}

int64_t param_count(const ModelConfig& c) {
    int64_t n = 0;
    for (const ModelTensor& t : model_layout(c)) n += int64_t(t.rows) * t.cols;
    return n;
}

// GLFW key codes, as view_common.cpp uses them.
constexpr int key_comma = 44, key_period = 46;

} // namespace

const char* task_sentence(Task t) {
    switch (t) {
    case Task::prev: return "predict the previous letter";
    case Task::dup: return "has this letter appeared before?";
    case Task::both: return "the previous letter, and has this letter appeared before?";
    case Task::induction: return "continue the repeated segment";
    }
    return "";
}

std::string block_sentence(const AppState& s) {
    if (!s.trained) return "";
    const int L = s.trained->model->config.n_layer, l = s.layer;
    const std::string input = l == 0 ? "x = wte[token] + wpe[position], the embeddings"
                                     : "x = h + attn(h) of block " + std::to_string(l - 1) + ", the residual stream";
    const std::string output = l + 1 < L ? "its h + attn(h) is block " + std::to_string(l + 1) + "'s input"
                                         : "its h + attn(h) goes to the task heads";
    return "block " + std::to_string(l) + " of " + std::to_string(L) + ": input " + input + "; " + output + ".";
}

void draw_trained_section(AppState& s, UiContext& ui) {
    const TrainedInput& in = *s.trained;
    const ModelConfig& c = in.model->config;
    ImGui::Spacing();
    ImGui::PushFont(ui.fonts->body);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "Trained model");
    ImGui::PopFont();
    ImGui::Separator();
    wrapped(std::string("task ") + to_string(c.task) + ": " + task_sentence(c.task));
    dim_wrapped("vocabulary " + vocabulary_text(c) + " (" + std::to_string(c.vocab) +
                " letters); ^ is BOS, always first");
    dim_wrapped("L = " + std::to_string(c.n_layer) + (c.n_layer == 1 ? " block" : " blocks") + ", H = " +
                std::to_string(c.n_head) + ", C = " + std::to_string(c.n_embd) + ", head_dim = " +
                std::to_string(c.head_dim()) + "; up to " + std::to_string(c.seq_len) + " letters after BOS");
    dim_wrapped("parameters " + format_count(param_count(c)));
    {
        const size_t slash = in.source.find_last_of('/');
        dim_wrapped("from " + (slash == std::string::npos ? in.source : in.source.substr(slash + 1)));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", in.source.c_str());
    }

    // The sequence, as letters; BOS is put first by attnviz.
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("letters");
    ImGui::SameLine();
    const float apply_w = ImGui::CalcTextSize("Apply").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SetNextItemWidth(-(apply_w + ImGui::GetStyle().ItemSpacing.x));
    if (s.focus_panel) { // F6: the keyboard starts in the first field
        ImGui::SetKeyboardFocusHere(0);
        s.focus_panel = false;
    }
    const bool enter = ImGui::InputTextWithHint("##sequence", "a b c a b d", &s.sequence_field,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The sequence the model reads, one letter of its vocabulary per position (%s); ^ (BOS) is "
                          "put first. Enter applies.",
                          vocabulary_text(c).c_str());
    ImGui::SameLine();
    if (ImGui::Button("Apply##sequence") || enter) {
        std::string error;
        set_trained_sequence(s, s.sequence_field, error);
    }
    dim_wrapped(std::to_string(s.config.seq_len) + " positions: ^ and " + std::to_string(s.config.seq_len - 1) +
                " letters");

    if (c.n_layer >= 2) {
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted("block");
        ImGui::SameLine();
        ImGui::SetNextItemWidth(-1);
        const std::string now = "layer " + std::to_string(s.layer) + " of " + std::to_string(c.n_layer);
        if (ImGui::BeginCombo("##layer_pick", now.c_str())) {
            for (int l = 0; l < c.n_layer; ++l)
                if (ImGui::Selectable(("layer " + std::to_string(l)).c_str(), l == s.layer)) request_layer(s, l);
            ImGui::EndCombo();
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The block every view shows (keys , and .).");
    }
    ImGui::Spacing();
    if (ImGui::Button("Back to the lesson  L", ImVec2(-1, 0))) reset_to_lesson(s);
}

float draw_layer_strip(AppState& s, UiContext& ui, ImVec2 p0, float width) {
    if (!s.trained || s.trained->model->config.n_layer < 2) return 0;
    const int L = s.trained->model->config.n_layer;
    ImGui::SetCursorScreenPos(p0);
    ImGui::PushID("layer_strip");
    ImGui::BeginDisabled(s.layer <= 0);
    if (ImGui::ArrowButton("##layer_prev", ImGuiDir_Left)) request_layer(s, s.layer - 1);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Previous block (,)");
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(s.layer + 1 >= L);
    if (ImGui::ArrowButton("##layer_next", ImGuiDir_Right)) request_layer(s, s.layer + 1);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next block (.)");
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    const std::string title = "layer " + std::to_string(s.layer) + " of " + std::to_string(L);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ui.pal.accent));
    ImGui::TextUnformatted(title.c_str());
    ImGui::PopStyleColor();
    ImGui::SameLine();
    const float x = ImGui::GetCursorScreenPos().x;
    const std::string line = fit_text(ui.fonts->body, block_sentence(s), p0.x + width - x);
    ImGui::TextDisabled("%s", line.c_str());
    ImGui::PopID();
    return ImGui::GetFrameHeight() + std::round(6 * ui.scale);
}

void handle_layer_keys(AppState& s) {
    const ImGuiIO& io = ImGui::GetIO();
    if (!s.trained || io.WantTextInput || io.KeyCtrl || io.KeyAlt) return;
    if (ImGui::IsKeyPressed(key_comma, false)) request_layer(s, s.layer - 1);
    if (ImGui::IsKeyPressed(key_period, false)) request_layer(s, s.layer + 1);
}

} // namespace attnviz
