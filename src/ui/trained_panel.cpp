// trained_panel.cpp: what the window shows of a trained model besides its trace - the side
// panel's "Trained model" section (task, vocabulary, sizes, source, the sequence as letters,
// the block, "Back to the lesson"), the block picker above every view, and its keys.
#include "follow_gpt.h"
#include "format.h"
#include "inputs.h"
#include "text_fit.h"
#include "model_io.h"
#include "views.h"
#include "widgets.h"
#include <algorithm>
#include <cmath>
#include <imgui_stdlib.h>

namespace attnviz {

namespace {

void dim_wrapped(const std::string& text) { wrapped_text(text, true); }
void wrapped(const std::string& text) { wrapped_text(text); }

int64_t param_count(const ModelConfig& c) {
    int64_t n = 0;
    for (const ModelTensor& t : model_layout(c)) n += int64_t(t.rows) * t.cols;
    return n;
}

// GLFW key codes, as keys.cpp uses them.
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

namespace {

void source_line(const TrainedInput& in) {
    const std::string& source = in.source;
    const size_t slash = source.find_last_of('/', source.size() > 1 ? source.size() - 2 : 0);
    if (!in.name.empty()) dim_wrapped("from " + in.name + " (the Hugging Face cache)");
    else dim_wrapped("from " + (slash == std::string::npos ? source : source.substr(slash + 1)));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", source.c_str());
}

// The text (or ids) field and its Apply button; `hint` in the empty field, `tip` on hover.
void sequence_field(AppState& s, const char* label, const char* hint, const std::string& tip) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(label);
    ImGui::SameLine();
    const float apply_w = ImGui::CalcTextSize("Apply").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SetNextItemWidth(-(apply_w + ImGui::GetStyle().ItemSpacing.x));
    if (s.screen.focus_panel) { // F6: the keyboard starts in the first field
        ImGui::SetKeyboardFocusHere(0);
        s.screen.focus_panel = false;
    }
    const bool enter = ImGui::InputTextWithHint("##sequence", hint, &s.fields.sequence_field, ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip.c_str());
    ImGui::SameLine();
    if (ImGui::Button("Apply##sequence") || enter) {
        std::string error;
        set_trained_sequence(s, s.fields.sequence_field, error);
    }
}

// A GPT-2 or nanoGPT model: its file, sizes and tokenizer, and the text it reads.
void draw_gpt_header(AppState& s) {
    const TrainedInput& in = *shown_model(s);
    const ModelConfig& c = in.model->config;
    wrapped(in.layout + ": L = " + std::to_string(c.n_layer) + " layers, H = " + std::to_string(c.n_head) + ", C = " +
            std::to_string(c.n_embd) + ", head_dim = " + std::to_string(c.head_dim()));
    dim_wrapped("vocabulary " + format_count(c.vocab) + ", block size " + std::to_string(c.seq_len) + ", GELU " +
                to_string(c.gelu) + (c.bias ? ", with biases" : ", no biases"));
    source_line(in);
    if (in.received) {
        // A teacher's GPT layer (follow_gpt.h): nothing to type, the text is the teacher's.
        dim_wrapped(gpt_lives_on_teacher);
        if (!in.text.empty()) wrapped("text: " + in.text);
    } else if (in.tokenizer) {
        dim_wrapped("tokenizer: GPT-2's byte-level BPE beside the model; a leading space shows as ·, a newline as \\n");
        sequence_field(s, "text", "The cat sat on the mat.",
                       "The text the model reads, through its tokenizer (up to " + std::to_string(c.seq_len) +
                           " tokens). Enter applies.");
    } else {
        dim_wrapped(in.tokenizer_note + "; type token ids");
        sequence_field(s, "ids", "464, 3797, 3332",
                       "The token ids the model reads, 0 to " + std::to_string(c.vocab - 1) + ", separated by commas or "
                       "spaces. Enter applies.");
    }
    std::string ids;
    for (size_t t = 0; t < in.tokens.size() && t < 16; ++t) ids += (t ? ", " : "") + std::to_string(in.tokens[t]);
    if (in.tokens.size() > 16) ids += ", …";
    dim_wrapped(std::to_string(s.config.applied.seq_len) + (s.config.applied.seq_len == 1 ? " token: " : " tokens: ") + ids);
}

// A toy model: its task, vocabulary, sizes and file, and the letters it reads.
void draw_toy_header(AppState& s) {
    const TrainedInput& in = *shown_model(s);
    const ModelConfig& c = in.model->config;
    wrapped(std::string("task ") + to_string(c.task) + ": " + task_sentence(c.task));
    dim_wrapped("vocabulary " + vocabulary_text(c) + " (" + std::to_string(c.vocab) +
                " letters); ^ is BOS, always first");
    dim_wrapped("L = " + std::to_string(c.n_layer) + (c.n_layer == 1 ? " block" : " blocks") + ", H = " +
                std::to_string(c.n_head) + ", C = " + std::to_string(c.n_embd) + ", head_dim = " +
                std::to_string(c.head_dim()) + "; up to " + std::to_string(c.seq_len) + " letters after BOS");
    dim_wrapped("parameters " + format_count(param_count(c)));
    source_line(in);
    // The sequence, as letters; BOS is put first by attnviz.
    sequence_field(s, "letters", "a b c a b d",
                   "The sequence the model reads, one letter of its vocabulary per position (" + vocabulary_text(c) +
                       "); ^ (BOS) is put first. Enter applies.");
    dim_wrapped(std::to_string(s.config.applied.seq_len) + " positions: ^ and " + std::to_string(s.config.applied.seq_len - 1) +
                " letters");
}

} // namespace

void draw_trained_section(AppState& s, UiContext& ui) {
    const ModelConfig& c = shown_model(s)->model->config;
    std::string heading = model_noun(s);
    heading[0] = char(std::toupper(static_cast<unsigned char>(heading[0]))); // "Trained model", "GPT model"
    section_heading(ui, heading.c_str());
    // Each kind's header: a GPT model's file, sizes and text, a toy model's task and letters.
    std::visit(Overload{[&](const GptModel&) { draw_gpt_header(s); }, [&](const ToyModel&) { draw_toy_header(s); },
                        [](const auto&) {}},
               s.shown.source);

    if (c.n_layer >= 2) {
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted(layer_word(s));
        ImGui::SameLine();
        ImGui::SetNextItemWidth(-1);
        const std::string now = "layer " + std::to_string(s.shown.layer) + " of " + std::to_string(c.n_layer);
        if (ImGui::BeginCombo("##layer_pick", now.c_str())) {
            for (int l = 0; l < c.n_layer; ++l)
                if (ImGui::Selectable(("layer " + std::to_string(l)).c_str(), l == s.shown.layer)) request_layer(s, l);
            ImGui::EndCombo();
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The %s every view shows (keys , and .).", layer_word(s));
    }
    ImGui::Spacing();
    if (ImGui::Button("Back to the lesson  L", ImVec2(-1, 0))) reset_to_lesson(s);
}

float draw_layer_strip(AppState& s, UiContext& ui, ImVec2 p0, float width) {
    if (layer_count(s) < 2) return 0;
    const int L = shown_model(s)->model->config.n_layer;
    ImGui::SetCursorScreenPos(p0);
    ImGui::PushID("layer_strip");
    ImGui::BeginDisabled(s.shown.layer <= 0);
    if (ImGui::ArrowButton("##layer_prev", ImGuiDir_Left)) request_layer(s, s.shown.layer - 1);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Previous layer (,)");
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(s.shown.layer + 1 >= L);
    if (ImGui::ArrowButton("##layer_next", ImGuiDir_Right)) request_layer(s, s.shown.layer + 1);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next layer (.)");
    ImGui::EndDisabled();
    ImGui::SameLine();
    // Every layer in a list (GPT-2 has 12), its title in the accent colour.
    const std::string title = "layer " + std::to_string(s.shown.layer) + " of " + std::to_string(L);
    ImGui::SetNextItemWidth(ImGui::CalcTextSize(title.c_str()).x + ImGui::GetFrameHeight() +
                            2 * ImGui::GetStyle().FramePadding.x);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ui.pal.accent));
    const bool open = ImGui::BeginCombo("##layer_strip_pick", title.c_str());
    ImGui::PopStyleColor();
    if (open) {
        for (int l = 0; l < L; ++l)
            if (ImGui::Selectable(("layer " + std::to_string(l)).c_str(), l == s.shown.layer)) request_layer(s, l);
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The layer every view shows (keys , and .).");
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    const float x = ImGui::GetCursorScreenPos().x;
    const std::string line = fit_text(ui.fonts->body, layer_sentence(s), p0.x + width - x);
    ImGui::TextDisabled("%s", line.c_str());
    ImGui::PopID();
    return ImGui::GetFrameHeight() + ui.px(6);
}

void handle_layer_keys(AppState& s) {
    const ImGuiIO& io = ImGui::GetIO();
    if (layer_count(s) < 2 || io.WantTextInput || io.KeyCtrl || io.KeyAlt) return;
    if (ImGui::IsKeyPressed(key_comma, false)) request_layer(s, s.shown.layer - 1);
    if (ImGui::IsKeyPressed(key_period, false)) request_layer(s, s.shown.layer + 1);
}

} // namespace attnviz
