// input_panel.cpp: the side panel's Words, Weights and Export sections (inputs.h does
// the work; these only arrange the widgets).
#include "format.h"
#include "inputs.h"
#include "text_fit.h"
#include "views.h"
#include "widgets.h"
#include <algorithm>
#include <cmath>
#include <imgui_stdlib.h>

namespace attnviz {

namespace {

void wrapped_dim(const std::string& text) { wrapped_text(text, true); }

} // namespace

void draw_words_section(AppState& s, UiContext& ui) {
    section_heading(ui, "Words");
    const float apply_w = ImGui::CalcTextSize("Apply").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SetNextItemWidth(-(apply_w + ImGui::GetStyle().ItemSpacing.x));
    const bool enter = ImGui::InputTextWithHint("##text", "e.g. the cat saw the cat", &s.fields.text_field,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Words as input, one position each: each distinct word gets its own seeded random row, so a "
                          "repeated word repeats its row of x. Enter applies; an empty text goes back to random x.");
    ImGui::SameLine();
    if (ImGui::Button("Apply") || enter) {
        std::string error;
        set_text(s, s.fields.text_field, error);
    }
    if (s.tokens.applied.empty())
        wrapped_dim("no words: x = torch.randn(1, T, C)");
    else
        wrapped_dim(std::to_string(s.tokens.applied.size()) + " words, T = " + std::to_string(s.config.applied.seq_len) + "; at most " +
                    std::to_string(max_words(s)) + " at this C and H");
}

void draw_weights_section(AppState& s, UiContext& ui) {
    section_heading(ui, "Weights");
    // A model's weights are its own, shown with the sizes they fix in its section above.
    if (config_fixed(s)) {
        wrapped_dim(std::string("the ") + model_noun(s) + "'s own (above)" +
                    "; a file here replaces it: the lesson's layout, a model attnviz train wrote, or with Open "
                    "model a whole GPT-2 directory or nanoGPT file");
    } else if (s.weights.applied) {
        // The file's name (the whole path on hover), then its scheme, layer, sizes and names.
        const std::string& path = s.weights.applied->path;
        const size_t slash = path.find_last_of('/');
        wrapped_text(slash == std::string::npos ? path : path.substr(slash + 1));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", path.c_str());
        wrapped_dim(weights_details(*s.weights.applied));
    } else
        wrapped_dim("seeded: SelfAttention(C, H) after torch.manual_seed(" + std::to_string(s.config.applied.seed) + ")");
    ImGui::SetNextItemWidth(-1);
    const bool enter = ImGui::InputTextWithHint("##weights_path", "model.safetensors", &s.fields.weights_field,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("A .safetensors file with the lesson's, nanoGPT's or GPT-2's attention names (C comes from the "
                          "file; x still comes from the seed), or a model attnviz train wrote (shown on its letters).");
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("layer");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    int layer = s.fields.layer_field;
    if (ImGui::InputInt("##layer", &layer, 1, 1)) s.fields.layer_field = std::max(0, layer);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Which h.N of a GPT-2 or nanoGPT model file (0 for one-block files).");
    // "Load weights…" whole, "Unload" in the rest of the row.
    const float row = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x;
    const float load_w = std::max(row / 2, ImGui::CalcTextSize("Load weights…").x + 2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::Button("Load weights…", ImVec2(load_w, 0)) || enter) {
        std::string error;
        request_weights_file(s, s.fields.weights_field, s.fields.layer_field, error);
    }
    ImGui::SameLine();
    ImGui::BeginDisabled(!s.weights.applied && !s.weights.edit);
    if (ImGui::Button("Unload", ImVec2(std::max(1.f, row - load_w), 0))) unload_weights(s);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Back to the seeded weights of this config.");
    ImGui::EndDisabled();
    if (ImGui::Button("Open model (every layer)", ImVec2(-1, 0))) {
        std::string error;
        request_model_path(s, s.fields.weights_field, error);
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The path above as a whole model in every view: a GPT-2 directory (model.safetensors, "
                          "config.json, its tokenizer) or a nanoGPT .safetensors file, all its layers and its "
                          "tokenizer; or a model attnviz train wrote.");
}

void draw_export_section(AppState& s, UiContext& ui) {
    section_heading(ui, "Export");
    // The default names follow the view and the tensor until the user types a name.
    if (is_default_png_name(s.fields.png_path)) s.fields.png_path = default_png_name(s.screen.view);
    const float save_w = ImGui::CalcTextSize("PNG  Ctrl+P").x + 2 * ImGui::GetStyle().FramePadding.x;
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    ImGui::SetNextItemWidth(-(save_w + gap));
    ImGui::InputText("##png_path", &s.fields.png_path);
    ImGui::SameLine();
    if (ImGui::Button("PNG  Ctrl+P", ImVec2(save_w, 0))) request_png(s);

    const std::vector<TensorName>& names = all_tensor_names();
    s.fields.export_tensor = std::clamp(s.fields.export_tensor, 0, int(names.size()) - 1);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("tensor");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##tensor", to_string(names[size_t(s.fields.export_tensor)]))) {
        for (int i = 0; i < int(names.size()); ++i)
            if (ImGui::Selectable(to_string(names[size_t(i)]), i == s.fields.export_tensor)) {
                const bool csv = s.fields.tensor_path.size() >= 4 && s.fields.tensor_path.compare(s.fields.tensor_path.size() - 4, 4, ".csv") == 0;
                if (is_default_tensor_file(s.fields.tensor_path)) s.fields.tensor_path = default_tensor_file(names[size_t(i)], csv);
                s.fields.export_tensor = i;
            }
        ImGui::EndCombo();
    }
    ImGui::SetNextItemWidth(-(save_w + gap));
    ImGui::InputText("##tensor_path", &s.fields.tensor_path);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip(".npy (numpy.load gives the tensor's own shape) or .csv");
    ImGui::SameLine();
    if (ImGui::Button("Save  Ctrl+E", ImVec2(save_w, 0))) export_tensor_now(s);
}

} // namespace attnviz
