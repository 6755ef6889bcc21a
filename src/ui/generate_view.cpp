// generate_view.cpp: the Generate view (generate_state.h). The model writes on one token at a
// time: on the left the text and the next-token distribution with the sampling controls; on
// the right the attention picture growing one row per step and the KV cache growing one
// column per step, with the cached step's time against a full recompute's. Everything drawn
// here was computed by update_generate; the buttons only call its request functions.
#include "format.h"
#include "generate_view.h"
#include "theme.h"
#include "views.h"
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz {

using namespace generate_ui;

namespace {

void heading(UiContext& ui, const char* text) {
    ImGui::PushFont(ui.fonts->heading);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "%s", text);
    ImGui::PopFont();
}

// Step, Play / Pause, Back, Reset and where the generation is.
void buttons(AppState& s, UiContext& ui) {
    GenerateState& g = s.generate;
    ImGui::PushFont(ui.fonts->heading);
    const bool full = int(g.rows.size()) >= g.block, working = generate_working(s);
    ImGui::BeginDisabled(!g.why_not.empty() || full || g.playing || working);
    if (ImGui::Button("Step ▶")) request_generate_step(s);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("One more token (Right arrow)");
    ImGui::SameLine();
    ImGui::BeginDisabled(!g.why_not.empty() || (full && !g.playing));
    if (ImGui::Button(g.playing ? "Pause ❚❚" : "Play ▶▶")) request_generate_play(s, !g.playing);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Keep stepping until the block size (Space)");
    ImGui::SameLine();
    ImGui::BeginDisabled(g.steps.empty() || g.playing || working);
    if (ImGui::Button("◀ Back")) request_generate_back(s);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Take the last token back (Left arrow)");
    ImGui::SameLine();
    ImGui::BeginDisabled(g.steps.empty() || working);
    if (ImGui::Button("Reset")) request_generate_reset(s);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Back to the prompt (Home)");
    ImGui::PopFont();
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    if (!g.why_not.empty()) return;
    char where_text[96];
    std::snprintf(where_text, sizeof where_text, "position %d of %d (prompt %d, written %d)", int(g.rows.size()), g.block,
                  g.prompt_len, int(g.steps.size()));
    const std::string where = where_text;
    const std::string note = working ? "working on the full recompute…" : g.received ? "the teacher's window writes" : "";
    // The note goes under the buttons when the line has no room for it (a page at 900 pixels).
    if (note.empty() || ImGui::CalcTextSize((where + " · " + note).c_str()).x <= ImGui::GetContentRegionAvail().x) {
        ImGui::TextUnformatted((note.empty() ? where : where + " · " + note).c_str());
    } else {
        ImGui::TextUnformatted(where.c_str());
        ImGui::TextDisabled("%s", note.c_str());
    }
}

// The prompt and what was written after it, large; the written part in the accent colour.
void text_box(AppState& s, UiContext& ui, float width) {
    const GenerateState& g = s.generate;
    ImFont* f = ui.fonts->heading;
    const std::string prompt = generate_prompt_text(s), added = generate_new_text(s);
    const float pad = ui.box_pad();
    // Prompt and new text as one wrapped paragraph: the prompt's words then the new ones,
    // word by word, so the colour changes where the writing starts.
    struct Word {
        std::string text;
        bool added;
    };
    std::vector<Word> words;
    auto split = [&](const std::string& t, bool a) {
        size_t i = 0;
        while (i < t.size()) {
            size_t j = t.find(' ', i + 1);
            if (j == std::string::npos) j = t.size();
            words.push_back({t.substr(i, j - i), a});
            i = j;
        }
    };
    split(prompt, false);
    split(added, true);
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float x = p0.x + pad, y = p0.y + pad;
    const float right = p0.x + width - pad, line = f->FontSize * 1.15f;
    const int max_lines = ui.scale >= 1.5f ? 2 : 3;
    int lines = 1;
    // When it would take more than three lines, only the end is shown (the newest words).
    std::vector<ImVec2> at(words.size());
    for (size_t i = 0; i < words.size(); ++i) {
        std::string w = words[i].text;
        for (char& c : w)
            if (c == '\n') c = ' ';
        const float ww = text_size(f, w).x;
        if (x + ww > right && x > p0.x + pad) {
            x = p0.x + pad;
            y += line;
            ++lines;
        }
        at[i] = ImVec2(x, y);
        x += ww;
    }
    const int skip = std::max(0, lines - max_lines);
    const float box_h = float(std::min(lines, max_lines)) * line + 2 * pad;
    dl->AddRectFilled(p0, ImVec2(p0.x + width, p0.y + box_h), ui.pal.panel, 4);
    dl->AddRect(p0, ImVec2(p0.x + width, p0.y + box_h), ui.pal.frame, 4);
    if (words.empty()) {
        const char* none = !generates_tokens(s) ? "The lesson's module has no tokens: each Step appends a new random row of x."
                                                   : "";
        dl->AddText(ui.fonts->body, ui.fonts->body->FontSize, ImVec2(p0.x + pad, p0.y + pad), ui.pal.text_dim, none);
    }
    for (size_t i = 0; i < words.size(); ++i) {
        const int row = int(std::lround((at[i].y - p0.y - pad) / line));
        if (row < skip) continue;
        std::string w = words[i].text;
        for (char& c : w)
            if (c == '\n') c = ' ';
        const ImVec2 a(at[i].x, at[i].y - float(skip) * line);
        if (words[i].added) {
            const ImVec2 sz = text_size(f, w);
            dl->AddRectFilled(a, ImVec2(a.x + sz.x, a.y + sz.y), (ui.pal.accent & 0x00FFFFFF) | 0x40000000);
        }
        dl->AddText(f, f->FontSize, a, words[i].added ? ui.pal.accent : ui.pal.text, w.c_str());
    }
    record(ui, "generate_text", added, int(g.tokens.size()), float(g.steps.size()), p0, ImVec2(p0.x + width, p0.y + box_h));
    ImGui::Dummy(ImVec2(width, box_h + 4));
}

// The next-token distribution at the last position: the ten most likely, as bars.
void distribution(AppState& s, UiContext& ui, float width) {
    const GenerateState& g = s.generate;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->body;
    const std::string title = "Next token after position " + std::to_string(int(g.tokens.size()) - 1) +
                              (g.options.greedy ? " (greedy: the plain softmax)" : " (after temperature, top-k, top-p)");
    ImGui::TextUnformatted(title.c_str());
    float label_w = text_size(f, "probability").x;
    for (const TokenChance& t : g.top) label_w = std::max(label_w, text_size(f, generate_token_label(s, t.token)).x);
    label_w = std::min(label_w + 8, width * 0.35f);
    const float pct_w = text_size(f, "100.0 %").x + 8;
    const float bar_w = std::max(20.f, width - label_w - pct_w);
    const float h = f->FontSize + ui.small_gap();
    ImVec2 p = ImGui::GetCursorScreenPos();
    for (size_t i = 0; i < g.top.size(); ++i) {
        const TokenChance& t = g.top[i];
        const float y = p.y + float(i) * (h + 2);
        const std::string label = generate_token_label(s, t.token);
        const ImVec4 clip(p.x, y, p.x + label_w - 4, y + h);
        dl->AddText(f, f->FontSize, ImVec2(p.x, y + 2), ui.pal.text, label.c_str(), nullptr, 0, &clip);
        const ImVec2 a(p.x + label_w, y), b(a.x + bar_w * t.prob, y + h);
        dl->AddRectFilled(a, ImVec2(a.x + bar_w, y + h), ui.pal.panel);
        if (t.prob > 0) dl->AddRectFilled(a, ImVec2(std::max(b.x, a.x + 1), b.y), i == 0 ? ui.pal.accent : ui.pal.bar);
        const std::string pct = t.prob == 0 ? "cut" : format_with(100.0 * t.prob, "%.1f %%");
        dl->AddText(f, f->FontSize, ImVec2(a.x + bar_w + 6, y + 2), t.prob == 0 ? ui.pal.text_dim : ui.pal.text, pct.c_str());
        record(ui, "generate_bar", label, t.token, t.prob, a, ImVec2(a.x + bar_w * t.prob, y + h));
    }
    ImGui::Dummy(ImVec2(width, float(g.top.size()) * (h + 2)));
}

// Greedy or temperature / top-k / top-p / seed; an edit goes through request_sampling.
void sampling_controls(AppState& s, UiContext& ui, float width) {
    GenerateState& g = s.generate;
    SamplingOptions o = g.options;
    bool changed = ImGui::Checkbox("greedy (argmax)", &o.greedy);
    ImGui::SameLine();
    ImGui::TextDisabled("seed");
    ImGui::SameLine();
    int seed = int(o.seed);
    constexpr float seed_field_w = 90; // the seed's field: a few digits and the - + buttons
    ImGui::SetNextItemWidth(ui.px(seed_field_w));
    if (ImGui::InputInt("##seed", &seed)) {
        o.seed = uint64_t(std::max(0, seed));
        changed = true;
    }
    const float slider_w = std::max(80.f, width - ImGui::CalcTextSize("temperature ").x - 8);
    ImGui::BeginDisabled(o.greedy);
    float temp = float(o.temperature), top_p = float(o.top_p);
    ImGui::SetNextItemWidth(slider_w);
    if (ImGui::SliderFloat("temperature", &temp, 0.f, 3.f, "%.2f")) o.temperature = temp, changed = true;
    ImGui::SetNextItemWidth(slider_w);
    // A page following a GPT model has the teacher's bars, not its logits: the vocabulary's size.
    const int V = g.received && vocab_size(s) > 0 ? vocab_size(s) : int(g.logits.size());
    if (ImGui::SliderInt("top-k", &o.top_k, 0, std::max(1, std::min(V, 50)), o.top_k == 0 ? "off" : "%d")) changed = true;
    ImGui::SetNextItemWidth(slider_w);
    if (ImGui::SliderFloat("top-p", &top_p, 0.f, 1.f, top_p >= 1.f ? "off (1)" : "%.2f")) o.top_p = top_p, changed = true;
    ImGui::EndDisabled();
    if (changed) request_sampling(s, o);
    if (!g.error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ui.pal.warning));
        ImGui::TextWrapped("%s", g.error.c_str());
        ImGui::PopStyleColor();
    }
}

} // namespace

void draw_generate_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    GenerateState& g = s.generate;
    const float legend_h = ui.fonts->small->FontSize + ui.text_pad();
    // The view scrolls when large text needs more than the window's height; the legend stays.
    ImGui::SetCursorScreenPos(p0);
    ImGui::BeginChild("generate", ImVec2(p1.x - p0.x, p1.y - p0.y - legend_h), false);
    ImGui::PushFont(ui.fonts->body);
    constexpr float columns_gap = 18; // between the text's column and the picture's
    const float width = ImGui::GetContentRegionAvail().x, gap = ui.px(columns_gap);
    const float x0 = ImGui::GetCursorScreenPos().x, wx = ImGui::GetWindowPos().x;
    const float view_h = ImGui::GetWindowHeight();
    buttons(s, ui);
    if (!g.why_not.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ui.pal.warning));
        ImGui::PushTextWrapPos(x0 + width - wx);
        ImGui::PushFont(ui.fonts->heading);
        ImGui::TextUnformatted(g.why_not.c_str());
        ImGui::PopFont();
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
    } else {
        if (!g.status.empty()) ImGui::TextDisabled("%s", g.status.c_str());
        // The point of the view first: the two times and the check, in sight at any text size.
        ImGui::PushTextWrapPos(x0 + width - wx);
        measurements(s, ui);
        ImGui::PopTextWrapPos();
        ImGui::Spacing();
        if (generates_tokens(s)) text_box(s, ui, width);
        const float top = ImGui::GetCursorScreenPos().y;
        const float left_w = std::round(width * 0.46f), right_x = x0 + left_w + gap, right_w = x0 + width - right_x;

        // Left: the distribution and the sampling, or the lesson's note.
        ImGui::SetCursorScreenPos(ImVec2(x0, top));
        ImGui::BeginGroup();
        ImGui::PushTextWrapPos(x0 + left_w - wx);
        if (!generates_tokens(s)) {
            heading(ui, "The lesson's module: no tokens, nothing to sample");
            ImGui::TextWrapped("Each Step appends a new row of x: the next torch.randn(C) of the recipe's generator "
                               "(seed %d, after the weights, x and the replacement row). Its q, k and v are computed, "
                               "its k and v join the cache, and only its row of scores is new.",
                               int(s.config.applied.seed));
        } else {
            distribution(s, ui, left_w);
            ImGui::Spacing();
            sampling_controls(s, ui, left_w);
        }
        ImGui::PopTextWrapPos();
        ImGui::EndGroup();
        const float left_bottom = ImGui::GetItemRectMax().y;

        // Right: the attention picture and the cache.
        const int H = g.rows.empty() ? 1 : std::max(1, int(g.rows.back().rows()));
        ViewWindow& win = s.screen.windows[int(View::generate)];
        win.head0 = std::clamp(win.head0, 0, H - 1);
        ImGui::SetCursorScreenPos(ImVec2(right_x, top));
        ImGui::BeginGroup();
        ImGui::PushTextWrapPos(right_x + right_w - wx);
        if (ImGui::ArrowButton("##gen_head_prev", ImGuiDir_Left)) win.head0 = std::max(0, win.head0 - 1);
        ImGui::SameLine();
        if (ImGui::ArrowButton("##gen_head_next", ImGuiDir_Right)) win.head0 = std::min(H - 1, win.head0 + 1);
        ImGui::SameLine();
        ImGui::AlignTextToFramePadding();
        const std::string layer = source_kind(s).names_layer ? "layer " + std::to_string(g.layer) + " · " : std::string();
        const std::string title = "Attention · " + layer + "head " + std::to_string(win.head0) + " of " + std::to_string(H);
        ImGui::TextUnformatted(title.c_str());
        // The picture takes what the cache's strips and the captions leave of the view's height.
        const int L = generate_cache_sizes(s).layers, layers = std::min(L, kv_layers_shown);
        const float line = ImGui::GetTextLineHeightWithSpacing();
        const float below = 5 * line + float(2 * layers) * (kv_strip_height(ui, L) + 4);
        const float room = ImGui::GetWindowPos().y + view_h - ImGui::GetCursorScreenPos().y - below;
        // At least a readable window of rows; the view scrolls to the cache below when short.
        constexpr float min_picture_h = 260;
        const float height = std::max(ui.px(min_picture_h), std::floor(room));
        attention_picture(s, ui, ImGui::GetCursorScreenPos(), right_w, height, win.head0);
        ImGui::Spacing();
        kv_strips(s, ui, right_w);
        ImGui::PopTextWrapPos();
        ImGui::EndGroup();
        ImGui::SetCursorScreenPos(ImVec2(x0, std::max(left_bottom, ImGui::GetItemRectMax().y)));
        ImGui::Dummy(ImVec2(width, 1));
    }
    ImGui::PopFont();
    ImGui::EndChild();
    draw_legend(s, ui, ImVec2(p0.x, p1.y - ui.fonts->small->FontSize - 2), p1.x - p0.x, false);
}

} // namespace attnviz
