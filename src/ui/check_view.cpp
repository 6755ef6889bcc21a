// check_view.cpp: the lesson's "Check yourself" questions. Each has a "Show me" button that
// puts the app into the demonstration that answers it, and a short answer revealed on
// request; the lesson's key takeaways sit beside them.
#include "check_questions.h"
#include "check_view.h"
#include "format.h"
#include "matrix_panel.h"
#include "train_view.h"
#include "train_view_state.h"
#include "views.h"
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

namespace attnviz {

void heading(UiContext& ui, const char* text) {
    ImGui::PushFont(ui.fonts->heading);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(ui.pal.accent), "%s", text);
    ImGui::PopFont();
}

// The question's choices. In the teacher's window while it serves the class: how many pages
// chose each, as bars that move as answers come in, and Clear (to ask again). Elsewhere (a
// page, or the lesson alone): a radio button per choice, this screen's own answer, which a
// page sends to the teacher's window. Show the answer marks the right choice everywhere.
void choices(AppState& s, UiContext& ui, int q) {
    const CheckQuestion& cq = check_questions()[size_t(q)];
    FollowStatus& f = s.follow;
    const bool revealed = s.screen.answer_shown[q];
    const std::vector<std::vector<int>>& counts = f.answers.counts();
    const bool tally = f.serving && size_t(q) < counts.size() && counts[size_t(q)].size() == cq.choices.size();
    const int total = tally ? f.answers.total(q) : 0, most = tally ? f.answers.most(q) : 0;
    ImGui::PushID(100 + q);
    const ImU32 right_col = ui.pal.accent;
    constexpr float answers_bar_w = 140; // a choice's bar of the class's answers
    const float bar_w = ui.px(answers_bar_w);
    const float count_w = ImGui::CalcTextSize("000 · 100%").x;
    const float letter_w = ImGui::CalcTextSize("W").x + ImGui::GetStyle().ItemSpacing.x;
    for (int c = 0; c < int(cq.choices.size()); ++c) {
        const bool right = revealed && c == cq.correct;
        const char letter[2] = {choice_letter(c), 0};
        ImGui::AlignTextToFramePadding();
        if (tally) {
            const int n = counts[size_t(q)][size_t(c)];
            const float x0 = ImGui::GetCursorPosX();
            ImGui::TextUnformatted(letter);
            ImGui::SameLine(x0 + letter_w); // A, B, C, D are not as wide as each other
            const float h = ImGui::GetFrameHeight();
            const ImVec2 b0 = ImGui::GetCursorScreenPos();
            ImDrawList* dl = ImGui::GetWindowDrawList();
            dl->AddRectFilled(b0, ImVec2(b0.x + bar_w, b0.y + h), ui.pal.frame);
            const float filled = n > 0 ? std::max(2.f, std::round(bar_w * float(n) / float(most))) : 0.f;
            if (n > 0) dl->AddRectFilled(b0, ImVec2(b0.x + filled, b0.y + h), right ? right_col : ui.pal.bar);
            if (ui.layout && ImGui::IsRectVisible(b0, ImVec2(b0.x + bar_w, b0.y + h))) {
                // The tests read the bars back: head = the question, position = the choice.
                LayoutItem it;
                it.kind = "bar", it.name = "answers", it.head = q, it.position = c, it.value = float(n);
                it.x = b0.x, it.y = b0.y, it.w = filled, it.h = h;
                ui.layout->push_back(it);
            }
            ImGui::Dummy(ImVec2(bar_w, h));
            ImGui::SameLine();
            const float x = ImGui::GetCursorPosX();
            ImGui::AlignTextToFramePadding();
            if (total > 0) ImGui::Text("%d · %d%%", n, int(std::lround(100.0 * n / total)));
            else ImGui::TextDisabled("0");
            ImGui::SameLine(x + count_w);
        } else {
            int& mine = f.my_answer[q];
            const float x0 = ImGui::GetCursorPosX();
            const std::string label = std::string(letter) + "##answer" + std::to_string(q + 1);
            if (ImGui::RadioButton(label.c_str(), mine == c) && mine != c) {
                mine = c;
                f.answer_pending[q] = f.page; // a page sends it (web_follow.cpp)
            }
            ImGui::SameLine(x0 + ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + letter_w);
        }
        if (right) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(right_col));
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted(right ? (std::string(cq.choices[size_t(c)]) + "  (the answer)").c_str() : cq.choices[size_t(c)]);
        if (right) ImGui::PopStyleColor();
    }
    if (tally) {
        ImGui::AlignTextToFramePadding();
        const char* pages = f.clients == 1 ? "page" : "pages";
        if (total == 0) ImGui::TextDisabled("No answers yet: students pick one on their pages (%d %s following).", f.clients, pages);
        else ImGui::TextDisabled("%d %s from the class (%d %s following).", total, total == 1 ? "answer" : "answers",
                                 f.clients, pages);
        if (total > 0) {
            ImGui::SameLine();
            if (ImGui::SmallButton("Clear the answers")) f.clear_request = q;
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("Forget the class's answers to this question, to ask it again");
        }
    } else if (f.page) {
        if (f.my_answer[q] < 0) ImGui::TextDisabled("Pick one: the teacher's window counts the class's answers.");
        else if (f.answer_pending[q]) ImGui::TextDisabled("Your answer waits for the teacher's window.");
        else ImGui::TextDisabled("Your answer went to the teacher's window; pick another to change it.");
    }
    ImGui::PopID();
}

// "Show answer" / the answer in a dimmer colour.
void answer(AppState& s, int n, const char* text) {
    ImGui::PushID(n);
    if (!s.screen.answer_shown[n]) {
        if (ImGui::SmallButton("Show the answer")) s.screen.answer_shown[n] = true;
    } else {
        ImGui::TextDisabled("%s", text);
        if (ImGui::SmallButton("Hide the answer")) s.screen.answer_shown[n] = false;
    }
    ImGui::PopID();
}

// A text at the cursor, recorded (when visible) for the layout file with its value.
void recorded_text(UiContext& ui, const std::string& text, const std::string& kind, const std::string& name, int position,
                   float value, ImU32 colour) {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colour));
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopStyleColor();
    const ImVec2 size = ImGui::GetItemRectSize();
    if (!ui.layout || !ImGui::IsRectVisible(at, ImVec2(at.x + size.x, at.y + size.y))) return;
    LayoutItem it;
    it.kind = kind, it.name = name, it.position = position, it.value = value;
    it.x = at.x, it.y = at.y, it.w = size.x, it.h = size.y;
    ui.layout->push_back(it);
}

void scroll_here_into_sight() {
    ImGui::SetScrollFromPosY(ImGui::GetCursorPosY() - ImGui::GetScrollY() - ImGui::GetStyle().ItemSpacing.y, 0.f);
}

bool show_me_button(const char* label, const char* tooltip, const char* hint) {
    const bool clicked = ImGui::Button(label);
    if (tooltip && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tooltip);
    ImGui::SameLine();
    ImGui::TextDisabled("%s", hint);
    return clicked;
}

namespace {

// Question 1: the lesson's perturbation in the causality view.
void show_causality(AppState& s) {
    Config e = s.config.applied;
    if (e.mask != MaskMode::causal || e.seq_len < 3) {
        e.mask = MaskMode::causal;
        e.seq_len = std::max(e.seq_len, 3);
        request_config(s, e, s.kernel_choice.applied);
    }
    s.screen.view = View::causality;
    request_perturbation(s, 2, 1.f);
}

// Question 2: same C, another number of heads, the scores view.
void show_heads(AppState& s, int H) {
    Config e = s.config.applied;
    e.n_head = H;
    request_config(s, e, s.kernel_choice.applied);
    s.screen.view = View::scores;
}

void set_scale(AppState& s, ScaleMode m) {
    Config e = s.config.applied;
    e.scale = m;
    request_config(s, e, s.kernel_choice.applied);
}

// Question 3: each head's and each query row's max weight and entropy under both scales,
// as recompute() left them in s.run.sharpness.
void sharpness_table(AppState& s, UiContext& ui) {
    const Trace& tr = s.run.trace;
    const SharpnessTable& table = s.run.sharpness;
    const int heads = table.heads, rows = table.rows;
    ImGui::PushFont(ui.fonts->small);
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX;
    if (ImGui::BeginTable("sharpness", 6, flags)) {
        ImGui::TableSetupColumn("head");
        ImGui::TableSetupColumn("query i");
        ImGui::TableSetupColumn("max w ÷√head_dim");
        ImGui::TableSetupColumn("entropy ÷√head_dim");
        ImGui::TableSetupColumn("max w ÷√C");
        ImGui::TableSetupColumn("entropy ÷√C");
        ImGui::TableHeadersRow();
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < rows; ++i) {
                const RowSharpness& x = table.at(h, i)[0];
                const RowSharpness& y = table.at(h, i)[1];
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                if (i == 0) ImGui::Text("%d", h);
                ImGui::TableNextColumn();
                ImGui::Text("%d", i);
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(format_with(x.max_weight, "%.3f").c_str());
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(format_with(x.entropy, "%.3f").c_str());
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(format_with(y.max_weight, "%.3f").c_str());
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(format_with(y.entropy, "%.3f").c_str());
            }
        ImGui::EndTable();
    }
    if (tr.H > heads || tr.T > rows)
        ImGui::TextDisabled("showing heads 0–%d and query rows 0–%d of %d × %d", heads - 1, rows - 1, tr.H, tr.T);
    ImGui::TextDisabled("entropy in nats: 0 = all weight on one key, ln(i+1) = spread evenly over the visible keys");
    ImGui::PopFont();
}

// Question 2's second demonstration: both runs, each with its accuracies and its heads on
// the probe (pattern and label), then the sentence that reads them.
void heads_comparison(AppState& s, UiContext& ui) {
    if (!s.train || s.train->compare.runs.empty()) return;
    const HeadsComparison& c = s.train->compare;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* f = ui.fonts->small;
    const float gap = ui.box_gap();
    const float avail = ImGui::GetContentRegionAvail().x;
    // Four heads' boxes fit the width; a label too long for its box takes its short form.
    constexpr float max_box_w = 200; // a head's box at most: its pattern stays small beside the text
    const float box_w = std::floor(std::min((avail - gap * 3) / 4, ui.scaled(max_box_w)));
    // Form 0 "head 2: previous-token head (0.99)", 1 "head 2: prev-token (0.99)", 2 "prev-token
    // (0.99)": the first that every head's label fits, so that all read alike.
    int form = 0;
    auto label_in = [&](const HeadView& hv, int k) {
        const std::string full = hv.label.empty() ? "no role" : hv.label, head = "head " + std::to_string(hv.head) + ": ";
        std::string short_form = full;
        if (full.rfind("previous-token head", 0) == 0) short_form = "prev-token" + full.substr(19);
        else if (full.rfind("duplicate-token head", 0) == 0) short_form = "duplicate" + full.substr(20);
        return k == 0 ? head + full : k == 1 ? head + short_form : short_form;
    };
    for (const HeadsRun& r : c.runs)
        for (const HeadView& hv : r.picture.heads)
            while (form < 2 && text_size(f, label_in(hv, form)).x > box_w) ++form;
    auto label_of = [&](const HeadView& hv) { return label_in(hv, form); };
    float label_h = f->FontSize;
    for (const HeadsRun& r : c.runs)
        for (const HeadView& hv : r.picture.heads)
            label_h = std::max(label_h, f->CalcTextSizeA(f->FontSize, FLT_MAX, box_w, label_of(hv).c_str()).y);
    // Patterns small enough that both runs and the sentence fit the view's height once it
    // scrolled here: two title lines, two labels, the sentence (or its room).
    const int N = c.runs[0].settings.model.n_tokens();
    const std::string sentence = c.sentence.empty() ? std::string(380, 'x') : c.sentence;
    const float text_h = 2 * ImGui::GetFrameHeightWithSpacing() + 2 * (label_h + 10) +
                         ImGui::CalcTextSize(sentence.c_str(), nullptr, false, avail).y + 4 * ImGui::GetStyle().ItemSpacing.y;
    const float view_h = ImGui::GetWindowHeight() - ImGui::GetFrameHeightWithSpacing();
    const float cell_h = std::floor((view_h - text_h) / float(2 * N));
    for (size_t i = 0; i < c.runs.size(); ++i) {
        const HeadsRun& r = c.runs[i];
        const ModelConfig& m = r.settings.model;
        ImGui::Text("H = %d, head_dim %d:", m.n_head, m.head_dim());
        ImGui::SameLine();
        if (!r.done()) {
            if (r.session)
                ImGui::TextDisabled("training, step %lld of %lld", (long long)r.status.step, (long long)c.steps);
            else
                ImGui::TextDisabled("waits for H = %d", c.runs[0].settings.model.n_head);
            continue;
        }
        const auto& a = r.picture.accuracy;
        const double prev = a.count("prev") ? a.at("prev") : 0, dup = a.count("dup") ? a.at("dup") : 0;
        const std::string h = "H=" + std::to_string(m.n_head);
        recorded_text(ui, "previous letter " + format_with(prev, "%.3f"), "check_accuracy", h + " prev", m.n_head, float(prev),
                      ui.pal.text);
        ImGui::SameLine(0, gap);
        recorded_text(ui, "appeared before " + format_with(dup, "%.3f"), "check_accuracy", h + " dup", m.n_head, float(dup),
                      dup < 0.8 ? ui.pal.warning : ui.pal.text);
        ImGui::SameLine(0, gap);
        ImGui::TextDisabled("(step %lld)", (long long)r.picture.step);
        // The heads side by side; a label wraps under its pattern.
        const int n = int(r.picture.heads.size());
        const float cell = std::max(2.f, std::min({std::floor(box_w / float(N)), cell_h, ui.small_cell()}));
        const ImVec2 p0 = ImGui::GetCursorScreenPos();
        float bottom = p0.y;
        for (int k = 0; k < n; ++k) {
            const HeadView& hv = r.picture.heads[size_t(k)];
            const ImVec2 at(p0.x + float(k) * (box_w + gap), p0.y + 2);
            draw_head_pattern(ui, dl, hv, r.picture, at, cell, false);
            const float side = cell * float(N);
            const std::string label = label_of(hv);
            const ImVec2 ts = f->CalcTextSizeA(f->FontSize, FLT_MAX, box_w, label.c_str());
            dl->AddText(f, f->FontSize, ImVec2(at.x, at.y + side + 4), hv.label.empty() ? ui.pal.text_dim : ui.pal.accent,
                        label.c_str(), nullptr, box_w);
            bottom = std::max(bottom, at.y + side + 4 + ts.y);
            if (ui.layout && ImGui::IsRectVisible(at, ImVec2(at.x + side, at.y + side))) {
                LayoutItem it;
                it.kind = "check_head", it.name = hv.label, it.head = k, it.position = m.n_head;
                it.x = at.x, it.y = at.y, it.w = it.h = side;
                ui.layout->push_back(it);
            }
        }
        ImGui::Dummy(ImVec2(avail, bottom - p0.y + 2));
    }
    if (!c.sentence.empty()) recorded_text(ui, c.sentence, "check_sentence", c.sentence, -1, 0, ui.pal.text);
}

void takeaways(UiContext& ui) {
    heading(ui, "Key takeaways");
    ImGui::PushFont(ui.fonts->body);
    for (const char* t : {"Self-attention is one qkv projection, a scaled q·kᵀ, a causal mask, and an output projection.",
                          "Multi-head splits channels, not compute: heads run in parallel over the same budget.",
                          "Test causality by perturbing one position and checking earlier outputs.",
                          "The causal mask's payoff: the keys and values of the past never change, so a model keeps them and writes on cheaply."}) {
        ImGui::Bullet();
        ImGui::TextUnformatted(t);
        ImGui::Spacing();
    }
    ImGui::PopFont();
}

void spacing_between_questions() {
    ImGui::Spacing();
    ImGui::Spacing();
}

// Question 1: what the causal mask keeps from y[0] and y[1].
void causality_question(AppState& s, UiContext& ui) {
    heading(ui, check_questions()[0].text);
    choices(s, ui, 0);
    if (show_me_button("Show me##1", nullptr, "causality view, p = 2, strength 1 (drag the strength slider)")) show_me(s, 1);
    answer(s, 0,
           "The causal mask: query i only sees keys j ≤ i, so the softmax weights of queries 0 and 1 on key 2 are "
           "exactly 0 and nothing from position 2 reaches y[0] or y[1]. Their max |Δy| is 0.0 (exactly); the "
           "outputs from position 2 on move (0.3175 in the lesson).");
}

// Question 2: why several heads, and what they cost; its second demonstration trains both.
void heads_question(AppState& s, UiContext& ui) {
    const Config& c = s.config.applied;
    heading(ui, check_questions()[1].text);
    choices(s, ui, 1);
    ImGui::AlignTextToFramePadding();
    ImGui::Text("C = %d, show me H =", c.n_embd);
    for (int H : {1, 2, 4}) {
        ImGui::SameLine();
        const bool ok = c.n_embd % H == 0 && !config_fixed(s);
        const bool on = c.n_head == H;
        if (!ok) ImGui::BeginDisabled();
        if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(ui.pal.accent));
        if (on) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(text_over(ImGui::ColorConvertU32ToFloat4(ui.pal.accent))));
        if (ImGui::Button((std::to_string(H) + "##heads").c_str())) show_heads(s, H);
        if (on) ImGui::PopStyleColor(2);
        if (!ok) ImGui::EndDisabled();
    }
    if (config_fixed(s))
        ImGui::TextDisabled("The trained model keeps its H = %d; Back to the lesson (L) to compare H on the lesson's module.",
                            c.n_head);
    else
        ImGui::Text("H = %d heads of head_dim %d; parameters 4C² = %s whatever H", c.n_head, c.head_dim(),
                    format_count(c.param_count()).c_str());
    // The second demonstration: the same question answered by training.
    if (s.train && s.train->compare.scroll) {
        scroll_here_into_sight();
        s.train->compare.scroll = false;
    }
    if (show_me_button("Show me##2b", "Alt+4: train both with H = 1, then with H = 4, and compare the heads",
                       "train both with H = 1, then H = 4, at C = 64 (Alt+4)"))
        start_heads_comparison(s);
    heads_comparison(s, ui);
    answer(s, 1,
           "Each head has its own softmax over its own head_dim channels of q and k, so different heads can attend "
           "to different positions at once (compare the heads' weights in the scores view). The cost stays the "
           "same: W_qkv is 3C × C and W_proj is C × C for any H; heads split the channels, not the budget.");
}

// Question 3: why ÷ √head_dim; the scale buttons and both scales' sharpness.
void scale_question(AppState& s, UiContext& ui) {
    const Config& c = s.config.applied;
    heading(ui, check_questions()[2].text);
    choices(s, ui, 2);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("scale in use:");
    const char* names[] = {"÷ √head_dim", "÷ √C", "none"};
    ImGui::BeginDisabled(shown_model(s) != nullptr); // trained with ÷ √head_dim; the table below still compares both
    for (int m = 0; m < 3; ++m) {
        ImGui::SameLine();
        const bool on = int(c.scale) == m;
        if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(ui.pal.accent));
        if (on) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(text_over(ImGui::ColorConvertU32ToFloat4(ui.pal.accent))));
        if (ImGui::Button(names[m])) set_scale(s, ScaleMode(m));
        if (on) ImGui::PopStyleColor(2);
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Show me##3")) show_me(s, 3);
    ImGui::TextUnformatted("How sharp each softmax row is under both scales (same q and k):");
    sharpness_table(s, ui);
    answer(s, 2,
           "A head's score is a dot product of head_dim numbers, so its spread grows like √head_dim, not √C. "
           "Dividing by √head_dim keeps every head's scores near unit variance; dividing by √C shrinks them √H "
           "times too much, and the softmax flattens: lower max weight, higher entropy.");
}

} // namespace

void show_me(AppState& s, int question) {
    if (question == 1) show_causality(s);
    if (question == 2) {
        // The next of 1, 2, 4 after the current H that divides C (back to 1 after the last).
        int next = 1;
        for (int H : {1, 2, 4})
            if (H > s.config.applied.n_head && s.config.applied.n_embd % H == 0) {
                next = H;
                break;
            }
        // A trained model's H is its own: the Train view trains another.
        if (config_fixed(s)) s.status = "A trained model keeps its H = " + std::to_string(s.config.applied.n_head) +
                                  "; press L (Back to the lesson) to compare H = 1, 2, 4 on the lesson's module.";
        else show_heads(s, next);
    }
    if (question == 3) s.screen.view = View::scores;
    if (question == 4) start_ablation_demo(s);
    if (question == 5) request_generate_demo(s);
    if (question == 6) start_patch_demo(s);
}

void draw_check_view(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1) {
    const float width = p1.x - p0.x;
    constexpr float two_columns_w = 760; // narrower: the demonstrations go under the questions
    const bool two_columns = width >= ui.scaled(two_columns_w);
    const float left_w = two_columns ? std::round(width * 0.64f) : width;
    const float gap = ui.column_gap();
    const float wx = ImGui::GetWindowPos().x; // wrap positions are window-local

    ImGui::SetCursorScreenPos(p0);
    ImGui::BeginChild("questions", ImVec2(left_w, p1.y - p0.y), false);
    ImGui::PushTextWrapPos(0.f);
    ImGui::PushFont(ui.fonts->body);

    causality_question(s, ui);
    spacing_between_questions();
    heads_question(s, ui);
    spacing_between_questions();
    scale_question(s, ui);
    spacing_between_questions();
    ablation_question(s, ui); // question 4 (check_demos_view.cpp)
    spacing_between_questions();
    generate_question(s, ui); // question 5 (check_demos_view.cpp)
    patch_question(s, ui); // question 6 (check_patch_view.cpp)

    ImGui::PopFont();
    if (!two_columns) {
        ImGui::Spacing();
        takeaways(ui);
    }
    ImGui::PopTextWrapPos();
    ImGui::EndChild();

    // The lesson's takeaways beside the questions (under them when the view is narrow).
    if (two_columns) {
        ImGui::SetCursorScreenPos(ImVec2(p0.x + left_w + gap, p0.y));
        ImGui::BeginGroup();
        ImGui::PushTextWrapPos(p1.x - wx);
        takeaways(ui);
        ImGui::PopTextWrapPos();
        ImGui::EndGroup();
    }
}

} // namespace attnviz
