// generate_view.cpp: the Generate view (generate_state.h). The model writes on one token at a
// time: on the left the text and the next-token distribution with the sampling controls; on
// the right the attention picture growing one row per step and the KV cache growing one
// column per step, with the cached step's time against a full recompute's. Everything drawn
// here was computed by update_generate; the buttons only call its request functions.
#include "format.h"
#include "theme.h"
#include "views.h"
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz {

namespace {

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

void heading(UiContext& ui, const char* text) {
    ImGui::PushFont(ui.fonts->heading);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "%s", text);
    ImGui::PopFont();
}

// Recorded for --layout-out when wholly in sight (the view scrolls at large text).
void record(UiContext& ui, const char* kind, const std::string& name, int position, float value, ImVec2 a, ImVec2 b,
            int rows = 0, int cols = 0) {
    if (!ui.layout) return;
    const ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 c0 = dl->GetClipRectMin(), c1 = dl->GetClipRectMax();
    if (a.x < c0.x - 0.5f || a.y < c0.y - 0.5f || b.x > c1.x + 0.5f || b.y > c1.y + 0.5f) return;
    LayoutItem it;
    it.kind = kind, it.name = name, it.position = position, it.value = value;
    it.x = a.x, it.y = a.y, it.w = b.x - a.x, it.h = b.y - a.y;
    it.rows = rows, it.cols = cols;
    ui.layout->push_back(it);
}

// Step, Play / Pause, Back, Reset and where the generation is.
void buttons(AppState& s, UiContext& ui) {
    GenerateState& g = s.generate;
    ImGui::PushFont(ui.fonts->heading);
    const bool full = int(g.rows.size()) >= g.block;
    ImGui::BeginDisabled(!g.why_not.empty() || full || g.playing);
    if (ImGui::Button("Step ▶")) request_generate_step(s);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("One more token (Right arrow)");
    ImGui::SameLine();
    ImGui::BeginDisabled(!g.why_not.empty() || (full && !g.playing));
    if (ImGui::Button(g.playing ? "Pause ❚❚" : "Play ▶▶")) request_generate_play(s, !g.playing);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Keep stepping until the block size (Space)");
    ImGui::SameLine();
    ImGui::BeginDisabled(g.steps.empty() || g.playing);
    if (ImGui::Button("◀ Back")) request_generate_back(s);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Take the last token back (Left arrow)");
    ImGui::SameLine();
    ImGui::BeginDisabled(g.steps.empty());
    if (ImGui::Button("Reset")) request_generate_reset(s);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Back to the prompt (Home)");
    ImGui::PopFont();
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    if (g.why_not.empty())
        ImGui::Text("position %d of %d (prompt %d, written %d)", int(g.rows.size()), g.block, g.prompt_len, int(g.steps.size()));
}

// The prompt and what was written after it, large; the written part in the accent colour.
void text_box(AppState& s, UiContext& ui, float width) {
    const GenerateState& g = s.generate;
    ImFont* f = ui.fonts->heading;
    const std::string prompt = generate_prompt_text(s), added = generate_new_text(s);
    const float pad = std::round(8 * ui.scale);
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
        const char* none = mode(s) == Mode::lesson ? "The lesson's module has no tokens: each Step appends a new random row of x."
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
    const float h = f->FontSize + std::round(4 * ui.scale);
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
        const std::string pct = t.prob == 0 ? "cut" : fmt("%.1f %%", 100.0 * t.prob);
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
    ImGui::SetNextItemWidth(std::round(90 * ui.scale));
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
    const int V = int(g.logits.size());
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

// The kept layer's head `h`: one row per position, the newest outlined; a window of the
// last `n` positions when there are more than fit.
void attention_picture(AppState& s, UiContext& ui, ImVec2 p0, float side, int h) {
    const GenerateState& g = s.generate;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const int T = int(g.rows.size());
    if (T == 0) return;
    const int n = std::min(T, std::max(4, int(side / std::max(3.f, 4 * ui.scale))));
    const int t0 = T - n;
    const float cell = std::floor(side / float(std::max(n, 10)));
    const float cell_side = std::max(2.f, std::min(cell, std::round(40 * ui.scale)));
    const float w = cell_side * float(n);
    for (int r = 0; r < n; ++r) {
        const Mat& row = g.rows[size_t(t0 + r)];
        for (int k = 0; k < n; ++k) {
            const ImVec2 a(p0.x + cell_side * float(k), p0.y + cell_side * float(r)), b(a.x + cell_side, a.y + cell_side);
            if (k > r) {
                dl->AddRectFilled(a, b, ui.pal.panel);
                continue;
            }
            const float v = row(h, t0 + k);
            dl->AddRectFilled(a, b, ImGui::ColorConvertFloat4ToU32(colormap_color(Colormap::viridis, v, ui.pal.colormaps)));
        }
    }
    dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p0.x + w + 1, p0.y + w + 1), ui.pal.frame);
    if (!g.steps.empty()) { // the newest row, outlined as the views outline what changed
        const float y = p0.y + cell_side * float(n - 1);
        dl->AddRect(ImVec2(p0.x - 1, y - 1), ImVec2(p0.x + w + 1, y + cell_side + 1), IM_COL32(0, 0, 0, 255), 0, 0, 3.f);
        dl->AddRect(ImVec2(p0.x, y), ImVec2(p0.x + w, y + cell_side), IM_COL32(240, 228, 66, 255), 0, 0, 2.f);
    }
    record(ui, "generate_attention", "att", h, float(T), p0, ImVec2(p0.x + w, p0.y + w), T, T);
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (m.x >= p0.x && m.y >= p0.y && m.x < p0.x + w && m.y < p0.y + w && ImGui::IsWindowHovered()) {
        const int r = t0 + int((m.y - p0.y) / cell_side), k = t0 + int((m.x - p0.x) / cell_side);
        if (k > r) ImGui::SetTooltip("query %d → key %d: masked, a later key (weight exactly 0)", r, k);
        else ImGui::SetTooltip("query %d → key %d: weight %s", r, k, format_value(g.rows[size_t(r)](h, k), 4).c_str());
    }
    ImGui::Dummy(ImVec2(w, w));
    if (t0 > 0) ImGui::TextDisabled("rows: query position i, columns: key position j; the last %d of %d", n, T);
    else ImGui::TextDisabled("rows: query position i, columns: key position j; the new row outlined");
}

// One strip of a cache: a column per position, its rows every stride-th channel of the head
// matrices side by side, the newest column lit.
void cache_strip(UiContext& ui, const PerHead& m, int T, ImVec2 a, float w, float hgt, float range, bool lit) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const int H = int(m.size());
    if (H == 0 || T == 0) return;
    const int hd = int(m[0].cols()), C = H * hd;
    const int rows = std::max(1, std::min(C, int(hgt / 2)));
    const int cols = std::min(T, std::max(1, int(w / 3)));
    const int t0 = T - cols;
    const float cw = std::floor(w / float(std::max(cols, 16))), rh = hgt / float(rows);
    for (int c = 0; c < cols; ++c)
        for (int r = 0; r < rows; ++r) {
            const int ch = r * C / rows, head = ch / hd;
            const float v = m[size_t(head)](t0 + c, ch % hd);
            const ImVec2 p(a.x + cw * float(c), a.y + rh * float(r));
            dl->AddRectFilled(p, ImVec2(p.x + cw, p.y + rh),
                              ImGui::ColorConvertFloat4ToU32(colormap_color(Colormap::diverging, 0.5f + 0.5f * v / range, ui.pal.colormaps)));
        }
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(a.x + cw * float(cols) + 1, a.y + hgt + 1), ui.pal.frame);
    if (lit) {
        const float x = a.x + cw * float(cols - 1);
        dl->AddRect(ImVec2(x - 1, a.y - 2), ImVec2(x + cw + 1, a.y + hgt + 2), IM_COL32(240, 228, 66, 255), 0, 0, 2.f);
    }
}

constexpr int kv_layers_shown = 6;
float kv_strip_height(const UiContext& ui) { return std::round(std::clamp(20 * ui.scale, 10.f, 40.f)); }

// Every layer's K and V strips, T × C each, and their bytes.
void kv_strips(AppState& s, UiContext& ui, float width) {
    const GenerateState& g = s.generate;
    const bool lesson = mode(s) == Mode::lesson;
    const int L = lesson ? 1 : int(g.cache.layers.size());
    const int T = lesson ? g.lesson_T : g.cache.T;
    const int C = lesson ? g.lesson_config.n_embd : g.cache.n_embd;
    const int64_t bytes = 2 * int64_t(L) * T * C * 4;
    ImGui::Text("KV cache: K and V of %d positions × C = %d in %d layer%s", T, C, L, L == 1 ? "" : "s");
    ImGui::TextDisabled("2 · L · T · C · 4 = 2 · %d · %d · %d · 4 = %s bytes", L, T, C, format_count(bytes).c_str());
    const float label_w = text_size(ui.fonts->small, "L00 K").x + 6;
    const int shown = std::min(L, kv_layers_shown);
    const float strip_h = kv_strip_height(ui);
    const float range = g.cache_range;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p = ImGui::GetCursorScreenPos();
    for (int l = 0; l < shown; ++l) {
        const LayerKv& kv = lesson ? g.lesson_kv : g.cache.layers[size_t(l)];
        for (int which = 0; which < 2; ++which) {
            const std::string name = "L" + std::to_string(l) + (which == 0 ? " K" : " V");
            dl->AddText(ui.fonts->small, ui.fonts->small->FontSize, ImVec2(p.x, p.y), which == 0 ? ui.pal.k_text : ui.pal.v_text,
                        name.c_str());
            cache_strip(ui, which == 0 ? kv.k : kv.v, T, ImVec2(p.x + label_w, p.y), width - label_w, strip_h, range,
                        !g.steps.empty());
            record(ui, "generate_cache", name, l, float(T), ImVec2(p.x + label_w, p.y), ImVec2(p.x + width, p.y + strip_h), T, C);
            p.y += strip_h + 4;
        }
    }
    ImGui::Dummy(ImVec2(width, p.y - ImGui::GetCursorScreenPos().y));
    if (shown < L) ImGui::TextDisabled("layers 0–%d of %d shown", shown - 1, L);
}

// On the line of the last item when `text` fits before the wrap position, else on the next.
void same_line_if_fits(const std::string& text, float spacing = -1) {
    const float gap = spacing >= 0 ? spacing : ImGui::GetStyle().ItemSpacing.x;
    const float edge = ImGui::GetWindowPos().x + ImGui::GetContentRegionMax().x;
    if (ImGui::GetItemRectMax().x + gap + ImGui::CalcTextSize(text.c_str()).x <= edge) ImGui::SameLine(0, gap);
}

// The last step's numbers: the two times and the check.
void measurements(AppState& s, UiContext& ui) {
    const GenerateState& g = s.generate;
    if (g.steps.empty()) {
        ImGui::TextDisabled("Step to see a cached step's time against a full recompute's, and the check of the earlier rows.");
        return;
    }
    const GenerateStep& st = g.steps.back();
    ImGui::PushFont(ui.fonts->heading);
    if (st.full_ms >= 0)
        ImGui::Text("cached step %s ms  ·  full recompute %s ms", fmt("%.3f", st.cached_ms).c_str(),
                    fmt("%.3f", st.full_ms).c_str());
    else
        ImGui::Text("cached step %s ms  ·  full recompute: Step to time it", fmt("%.3f", st.cached_ms).c_str());
    ImGui::PopFont();
    const std::string where = "(this step, position " + std::to_string(int(g.rows.size()) - 1) + ", " + to_string(g.kernel) + " kernel)";
    same_line_if_fits(where);
    ImGui::TextDisabled("%s", where.c_str());
    const ImVec2 a = ImGui::GetCursorScreenPos();
    std::string line = "max |Δ| of earlier rows vs a full recompute: ";
    line += st.rows_max_abs < 0 ? "not measured at this size" : format_diff(float(st.rows_max_abs));
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(st.rows_max_abs == 0 ? ui.pal.exact_zero : ui.pal.text));
    ImGui::TextUnformatted(line.c_str());
    ImGui::PopStyleColor();
    record(ui, "generate_rows_diff", line, int(g.rows.size()) - 1, float(st.rows_max_abs), a,
           ImVec2(a.x + ImGui::GetItemRectSize().x, a.y + ImGui::GetItemRectSize().y));
    const char* what = mode(s) == Mode::lesson ? "the new output row y vs the recompute's: "
                                                 : "the new logits vs the recompute's: ";
    const std::string logits_line =
        what + (st.logits_max_abs < 0 ? std::string("not compared while playing at this size")
                                      : format_diff(float(st.logits_max_abs)));
    same_line_if_fits(logits_line, std::round(24 * ui.scale));
    ImGui::TextUnformatted(logits_line.c_str());
    if (g.kernel == KernelKind::fast && (st.rows_max_abs > 0 || st.logits_max_abs > 0))
        ImGui::TextDisabled("The fast kernel's products sum in another order than a step's: equal within 1e-5, not bit "
                            "for bit (K: reference kernel).");
    if (st.rows_max_abs_short >= 0) {
        int short_rows = 0;
        for (int t : g.row_made_at) short_rows += t < generate_lane_sum_keys ? 1 : 0;
        const std::string d = st.rows_max_abs_short == 0 ? "0.0 (exactly)" : fmt("%.3g", st.rows_max_abs_short);
        ImGui::TextDisabled("Rows 0–%d, kept from when the sequence was shorter than %d: %s. Torch sums a softmax row "
                            "of fewer than %d values in order and a longer one in %d lanes, so the recompute's last bit "
                            "differs; the kept rows never change.",
                            short_rows - 1, generate_lane_sum_keys, d.c_str(), generate_lane_sum_keys, generate_lane_sum_keys);
    }
}

} // namespace

void draw_generate_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    GenerateState& g = s.generate;
    const float legend_h = ui.fonts->small->FontSize + std::round(6 * ui.scale);
    // The view scrolls when large text needs more than the window's height; the legend stays.
    ImGui::SetCursorScreenPos(p0);
    ImGui::BeginChild("generate", ImVec2(p1.x - p0.x, p1.y - p0.y - legend_h), false);
    ImGui::PushFont(ui.fonts->body);
    const float width = ImGui::GetContentRegionAvail().x, gap = std::round(18 * ui.scale);
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
        if (mode(s) != Mode::lesson) text_box(s, ui, width);
        const float top = ImGui::GetCursorScreenPos().y;
        const float left_w = std::round(width * 0.46f), right_x = x0 + left_w + gap, right_w = x0 + width - right_x;

        // Left: the distribution and the sampling, or the lesson's note.
        ImGui::SetCursorScreenPos(ImVec2(x0, top));
        ImGui::BeginGroup();
        ImGui::PushTextWrapPos(x0 + left_w - wx);
        if (mode(s) == Mode::lesson) {
            heading(ui, "The lesson's module: no tokens, nothing to sample");
            ImGui::TextWrapped("Each Step appends a new row of x: the next torch.randn(C) of the recipe's generator "
                               "(seed %d, after the weights, x and the replacement row). Its q, k and v are computed, "
                               "its k and v join the cache, and only its row of scores is new.",
                               int(s.config.seed));
        } else {
            distribution(s, ui, left_w);
            ImGui::Spacing();
            sampling_controls(s, ui, left_w);
        }
        ImGui::PopTextWrapPos();
        ImGui::EndGroup();
        const float left_bottom = ImGui::GetItemRectMax().y;

        // Right: the attention picture and the cache.
        const int H = g.rows.empty() ? 1 : int(g.rows[0].rows());
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
        const std::string title = "Attention · " + (s.shown.input ? "layer " + std::to_string(g.layer) + " · " : std::string()) +
                                  "head " + std::to_string(win.head0) + " of " + std::to_string(H);
        ImGui::TextUnformatted(title.c_str());
        // The picture takes what the cache's strips and the captions leave of the view's height.
        const int layers = mode(s) == Mode::lesson ? 1 : std::min(int(g.cache.layers.size()), kv_layers_shown);
        const float line = ImGui::GetTextLineHeightWithSpacing();
        const float below = 4 * line + float(2 * layers) * (kv_strip_height(ui) + 4);
        const float room = ImGui::GetWindowPos().y + view_h - ImGui::GetCursorScreenPos().y - below;
        const float side = std::max(std::round(80 * ui.scale), std::min(right_w, std::floor(room)));
        attention_picture(s, ui, ImGui::GetCursorScreenPos(), side, win.head0);
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
