// train_view_plot.cpp: the Train view's curves, drawn with ImDrawList (axes, ticks and
// labels in the view's fonts, so they grow with the text size): the loss of every step on a
// log scale, the accuracy at each snapshot on 0 .. 1 under it, sharing its step axis, and
// the history scrubber. Past the shown step (scrubbed back) the curves are dimmed.
#include "format.h"
#include "matrix_panel.h"
#include "train_view.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

// Okabe-Ito hues that are not Q, K or V's: vermillion, sky blue, reddish purple.
ImU32 accuracy_color(const std::string& key) {
    if (key == "prev") return IM_COL32(213, 94, 0, 255);
    if (key == "dup") return IM_COL32(86, 180, 233, 255);
    return IM_COL32(204, 121, 167, 255);
}

ImU32 dimmed(ImU32 c) { return (c & 0x00FFFFFF) | (IM_COL32(0, 0, 0, 90) & 0xFF000000); }

// 1, 2 or 5 times a power of ten, so that about `want` ticks cover [0, hi].
double nice_step(double hi, int want) {
    const double raw = hi / std::max(1, want);
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= raw) return m * p;
    return 10 * p;
}

std::string decade_label(int e) {
    if (e >= 0 && e <= 3) return std::to_string(int(std::pow(10, e)));
    if (e < 0 && e >= -3) {
        std::string s = "0.";
        for (int k = 1; k < -e; ++k) s += '0';
        return s + "1";
    }
    return "1e" + std::to_string(e);
}

struct Plot {
    float x0, y0, x1, y1; // the data rectangle
    double xmax;
    float x_of(double step) const { return x0 + float(step / xmax) * (x1 - x0); }
};

// Axes with step ticks along the bottom (labels only when `labels`); returns the rectangle.
Plot frame(UiContext& ui, ImDrawList* dl, ImVec2 a, ImVec2 b, double xmax, float left_w, bool labels) {
    ImFont* f = ui.fonts->small;
    Plot p{a.x + left_w, a.y, b.x - ui.px(8), b.y - (labels ? f->FontSize * 2 + 6 : 4), xmax};
    dl->AddRectFilled(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), ui.pal.panel);
    dl->AddLine(ImVec2(p.x0, p.y1), ImVec2(p.x1, p.y1), ui.pal.frame);
    dl->AddLine(ImVec2(p.x0, p.y0), ImVec2(p.x0, p.y1), ui.pal.frame);
    const int want = std::max(2, int((p.x1 - p.x0) / ui.scaled(70)));
    const double st = nice_step(xmax, want);
    for (double s = 0; s <= xmax + 1e-9; s += st) {
        const float x = std::round(p.x_of(s));
        dl->AddLine(ImVec2(x, p.y1), ImVec2(x, p.y1 + 4), ui.pal.frame);
        if (!labels) continue;
        const std::string t = format_count(int64_t(s));
        const float w = text_size(f, t).x;
        dl->AddText(f, f->FontSize, ImVec2(std::min(x - w / 2, p.x1 - w), p.y1 + 4), ui.pal.text_dim, t.c_str());
    }
    if (labels) {
        const char* cap = "step";
        dl->AddText(f, f->FontSize, ImVec2((p.x0 + p.x1 - text_size(f, cap).x) / 2, p.y1 + 4 + f->FontSize), ui.pal.text_dim, cap);
    }
    return p;
}

// The shown step as a vertical line across the plot.
void marker(UiContext& ui, ImDrawList* dl, const Plot& p, int64_t step) {
    const float x = std::round(p.x_of(double(step)));
    dl->AddLine(ImVec2(x, p.y0), ImVec2(x, p.y1), ui.pal.accent, std::max(1.f, ui.px(1.5f)));
}

// The loss plot's title: the loss at the step shown (shorter when narrow).
std::string loss_title(const std::vector<float>& loss, int64_t now, int64_t shown, ImFont* body, float width) {
    std::string title = "loss (log scale)";
    if (shown >= 1 && shown <= now) title += ": " + format_value(loss[size_t(shown - 1)], 4) + " at step " + std::to_string(shown);
    if (text_size(body, title).x > width && shown >= 1 && shown <= now) // narrow: "loss 0.1575 @ 1500"
        title = "loss " + format_value(loss[size_t(shown - 1)], 4) + " at " + std::to_string(shown);
    return title;
}

// The loss in the plot lp, log scale: a line per decade, one point per pixel column (the
// mean of the log losses in it), bright up to the step shown and dimmed after it.
void draw_loss_curve(const UiContext& ui, ImDrawList* dl, const Plot& lp, const std::vector<float>& loss, int64_t shown,
                     double xmax, float lw) {
    ImFont* f = ui.fonts->small;
    const int64_t now = int64_t(loss.size());
    float lo = 1e30f, hi = 0;
    for (float v : loss)
        if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    if (hi <= 0) lo = 0.1f, hi = 10;
    const int e0 = int(std::floor(std::log10(lo))), e1 = std::max(e0 + 1, int(std::ceil(std::log10(hi))));
    auto y_of = [&](double v) {
        return lp.y1 - float((std::log10(std::max(v, 1e-30)) - e0) / double(e1 - e0)) * (lp.y1 - lp.y0);
    };
    // Every decade gets a line; labels skip decades when they would touch.
    const float decade_px = (lp.y1 - lp.y0) / float(e1 - e0);
    const int label_every = std::max(1, int(std::ceil(f->FontSize * 1.1f / std::max(1.f, decade_px))));
    for (int e = e0; e <= e1; ++e) {
        const float y = std::round(y_of(std::pow(10.0, e)));
        dl->AddLine(ImVec2(lp.x0 - 4, y), ImVec2(lp.x1, y), e == e0 || e == e1 ? ui.pal.frame : (ui.pal.frame & 0x60FFFFFF));
        if ((e1 - e) % label_every != 0) continue;
        const std::string l = decade_label(e);
        dl->AddText(f, f->FontSize, ImVec2(lp.x0 - 6 - text_size(f, l).x, y - f->FontSize / 2), ui.pal.text_dim, l.c_str());
    }
    const int cols = std::max(1, int(lp.x1 - lp.x0));
    std::vector<ImVec2> before, after;
    for (int c = 0; c < cols && now > 0; ++c) {
        const int64_t a = int64_t(double(c) / cols * xmax), b = std::min<int64_t>(now, std::max(a + 1, int64_t(double(c + 1) / cols * xmax)));
        if (a >= now) break;
        double sum = 0;
        int n = 0;
        for (int64_t k = a; k < b; ++k)
            if (loss[size_t(k)] > 0) sum += std::log10(double(loss[size_t(k)])), ++n;
        if (!n) continue;
        const ImVec2 pt(lp.x0 + float(c) + 0.5f, y_of(std::pow(10.0, sum / n)));
        (b <= shown ? before : after).push_back(pt);
    }
    if (!before.empty() && !after.empty()) after.insert(after.begin(), before.back());
    if (before.size() > 1) dl->AddPolyline(before.data(), int(before.size()), ui.pal.text, 0, lw);
    if (after.size() > 1) dl->AddPolyline(after.data(), int(after.size()), dimmed(ui.pal.text), 0, lw);
}

// The accuracy at each snapshot, 0 .. 1, from ay0 down to p1, each key in its colour with
// its name as the legend.
void draw_accuracy_plot(const TrainViewState& t, UiContext& ui, ImDrawList* dl, ImVec2 p0, ImVec2 p1, float ay0,
                        int64_t shown, double xmax, float left_w, float lw) {
    ImFont* body = ui.fonts->body;
    ImFont* f = ui.fonts->small;
    std::string acc_title = "accuracy";
    for (const auto& [k, v] : t.picture.accuracy) {
        char num[16];
        std::snprintf(num, sizeof num, "%.3f", v);
        acc_title += "   " + k + " " + num;
    }
    if (t.picture.scores_step >= 0 && t.picture.scores_step != shown)
        acc_title += " (step " + std::to_string(t.picture.scores_step) + ")";
    dl->AddText(body, body->FontSize, ImVec2(p0.x, ay0), ui.pal.text, acc_title.c_str());
    Plot ap = frame(ui, dl, ImVec2(p0.x, ay0 + body->FontSize + 4), p1, xmax, left_w, true);
    for (double v : {0.0, 0.5, 1.0}) {
        const float y = std::round(ap.y1 - float(v) * (ap.y1 - ap.y0));
        dl->AddLine(ImVec2(ap.x0 - 4, y), ImVec2(ap.x1, y), v == 0.5 ? (ui.pal.frame & 0x60FFFFFF) : ui.pal.frame);
        const std::string l = v == 0 ? "0" : v == 1 ? "1" : "0.5";
        dl->AddText(f, f->FontSize, ImVec2(ap.x0 - 6 - text_size(f, l).x, y - f->FontSize / 2), ui.pal.text_dim, l.c_str());
    }
    if (!t.history.snapshots.empty()) {
        for (const auto& kv : t.history.snapshots.front().accuracy) {
            std::vector<ImVec2> a, b;
            for (const TrainSnapshot& snap : t.history.snapshots) {
                auto it = snap.accuracy.find(kv.first);
                if (!snap.scored || it == snap.accuracy.end()) continue;
                const ImVec2 pt(ap.x_of(double(snap.step)), ap.y1 - float(it->second) * (ap.y1 - ap.y0));
                (snap.step <= shown ? a : b).push_back(pt);
            }
            if (!a.empty() && !b.empty()) b.insert(b.begin(), a.back());
            const ImU32 col = accuracy_color(kv.first);
            if (a.size() > 1) dl->AddPolyline(a.data(), int(a.size()), col, 0, lw);
            if (b.size() > 1) dl->AddPolyline(b.data(), int(b.size()), dimmed(col), 0, lw);
        }
        // The legend: each key in its colour, inside the plot's top-left corner.
        float lx = ap.x0 + 6;
        for (const auto& kv : t.history.snapshots.front().accuracy) {
            const std::string name = kv.first == "next" ? "next letter" : kv.first == "prev" ? "previous letter" : "appeared before";
            dl->AddLine(ImVec2(lx, ap.y0 + f->FontSize * 0.6f), ImVec2(lx + ui.scaled(14), ap.y0 + f->FontSize * 0.6f),
                        accuracy_color(kv.first), lw);
            lx += ui.scaled(18);
            dl->AddText(f, f->FontSize, ImVec2(lx, ap.y0 + 2), ui.pal.text_dim, name.c_str());
            lx += text_size(f, name).x + ui.scaled(12);
        }
    }
    marker(ui, dl, ap, shown);
}

} // namespace

void draw_train_curves(TrainViewState& t, UiContext& ui, ImVec2 p0, ImVec2 p1, bool with_accuracy) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* body = ui.fonts->body;
    ImFont* f = ui.fonts->small;
    const std::vector<float>& loss = t.history.losses;
    const int64_t now = int64_t(loss.size()), shown = shown_step(t);
    const double xmax = std::max<double>(10, double(now));
    const float left_w = text_size(f, "0.001").x + ui.px(10);
    const float total = p1.y - p0.y;
    const float acc_h = with_accuracy ? std::round(total * 0.4f) : 0.f;

    // The loss, log scale.
    const std::string title = loss_title(loss, now, shown, body, p1.x - p0.x);
    std::string acc_line; // no room for the accuracy's plot: its numbers go under the title
    if (!with_accuracy)
        for (const auto& [k, v] : t.picture.accuracy) {
            char num[24];
            std::snprintf(num, sizeof num, "%s%s %.3f", acc_line.empty() ? "accuracy: " : ", ", k.c_str(), v);
            acc_line += num;
        }
    const ImVec4 clip(p0.x, p0.y, p1.x, p1.y);
    dl->AddText(body, body->FontSize, p0, ui.pal.text, title.c_str(), nullptr, 0.f, &clip);
    float top = p0.y + body->FontSize + ui.px(6);
    if (!acc_line.empty()) {
        dl->AddText(f, f->FontSize, ImVec2(p0.x, top - 2), ui.pal.text, acc_line.c_str(), nullptr, 0.f, &clip);
        top += f->FontSize + 4;
    }
    Plot lp = frame(ui, dl, ImVec2(p0.x, top), ImVec2(p1.x, p1.y - acc_h), xmax, left_w, !with_accuracy);
    const float lw = std::max(1.5f, ui.px(2));
    draw_loss_curve(ui, dl, lp, loss, shown, xmax, lw);
    marker(ui, dl, lp, shown);
    if (with_accuracy) draw_accuracy_plot(t, ui, dl, p0, p1, p1.y - acc_h + ui.px(6), shown, xmax, left_w, lw);
}

float draw_train_scrubber(TrainViewState& t, UiContext& ui, ImVec2 p0, float width) {
    const std::vector<TrainSnapshot>& snaps = t.history.snapshots;
    const TrainStatus& st = t.shown_status;
    ImGui::SetCursorScreenPos(p0);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("history");
    ImGui::SameLine();
    // Positions: each snapshot, then the run's latest step.
    const int n = int(snaps.size());
    int idx = n;
    if (t.scrub >= 0)
        for (int i = 0; i < n; ++i)
            if (snaps[size_t(i)].step == t.scrub) idx = i;
    const int64_t at = idx < n ? snaps[size_t(idx)].step : st.step;
    const std::string fmt = "step " + std::to_string(at);
    const float latest_w = ImGui::CalcTextSize("Latest").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SetNextItemWidth(std::max(60.f, p0.x + width - ImGui::GetCursorScreenPos().x - latest_w - ImGui::GetStyle().ItemSpacing.x));
    if (ImGui::SliderInt("##history", &idx, 0, n, fmt.c_str(), ImGuiSliderFlags_NoInput)) {
        if (st.running) train_pause(t); // replaying history: the run waits
        t.scrub = idx < n && snaps[size_t(idx)].step < st.step ? snaps[size_t(idx)].step : -1;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Drag to replay the run: the heads and the curves at each snapshot (Left / Right)");
    ImGui::SameLine();
    ImGui::BeginDisabled(t.scrub < 0);
    if (ImGui::Button("Latest")) t.scrub = -1;
    ImGui::EndDisabled();
    ImGui::SetCursorScreenPos(ImVec2(p0.x, ImGui::GetCursorScreenPos().y));
    ImGui::PushTextWrapPos(p0.x + width - ImGui::GetWindowPos().x);
    char line[200];
    if (t.scrub >= 0)
        std::snprintf(line, sizeof line, "Showing step %lld of %lld. Train or Step goes on from here and drops steps %lld to %lld.",
                      (long long)t.scrub, (long long)st.step, (long long)t.scrub + 1, (long long)st.step);
    else
        std::snprintf(line, sizeof line, width < ui.scaled(500) ? "Every %d steps: %.1f / %.0f MB" : "A snapshot every %d steps: %.1f of %.0f MB.", st.every,
                      double(st.history_bytes) / 1048576.0, double(st.budget) / 1048576.0);
    ImGui::TextDisabled("%s", line);
    ImGui::PopTextWrapPos();
    return ImGui::GetCursorScreenPos().y;
}

} // namespace attnviz
