// web_probe.cpp: what the browser tests (tests/web) ask the page, in the probes build only
// (ATTNVIZ_WEB_PROBES, web_probe.h). Dear ImGui's test-engine hooks (IMGUI_ENABLE_TEST_ENGINE,
// third_party/web.cmake) report every widget's rectangle and label as it is drawn; the test
// finds a widget by its label ("##strength") and drags it with the mouse like a user. The
// exports below read the page's state, and trace and time forwards, for the tests to compare.
#include "web_probe.h"
#include "follow_gpt.h"
#include "generate_state.h"
#include "gui_main.h"
#include "session_state.h"
#include "trace_json.h"
#include "train_view_state.h"
#include "web_follow.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <emscripten.h>
#include <imgui.h>
#include <imgui_internal.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

std::unordered_map<ImGuiID, ImRect> item_rects;    // by id, as last drawn
std::unordered_map<std::string, ImRect> by_label;  // by label, as last drawn
std::string answer;                                // the text the last call returned
attnviz::GuiRun* the_run = nullptr;                // the page's run, from its first frame
int64_t frames_drawn = 0;                          // frames begun; JavaScript reads between them

} // namespace

void ImGuiTestEngineHook_ItemAdd(ImGuiContext*, const ImRect& bb, ImGuiID id) { item_rects[id] = bb; }
void ImGuiTestEngineHook_ItemInfo(ImGuiContext*, ImGuiID id, const char* label, ImGuiItemStatusFlags) {
    auto it = item_rects.find(id);
    if (label && it != item_rects.end()) by_label[label] = it->second;
}
void ImGuiTestEngineHook_Log(ImGuiContext*, const char*, ...) {}
const char* ImGuiTestEngine_FindItemDebugLabel(ImGuiContext*, ImGuiID) { return nullptr; }

namespace attnviz {

void web_probe_frame(GuiRun& run) {
    the_run = &run;
    ++frames_drawn;
    if (ImGuiContext* g = ImGui::GetCurrentContext()) g->TestEngineHookItems = true;
}

} // namespace attnviz

// The widget with this label as last drawn: "x y w h" in canvas pixels, or "" if none.
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_web_widget(const char* label) {
    answer.clear();
    auto it = by_label.find(label ? label : "");
    if (it != by_label.end()) {
        char text[96];
        const ImRect& r = it->second;
        std::snprintf(text, sizeof text, "%.1f %.1f %.1f %.1f", r.Min.x, r.Min.y, r.GetWidth(), r.GetHeight());
        answer = text;
    }
    return answer.c_str();
}

// For the browser test: the view, the applied perturbation, config and weights file, the
// frames drawn, the Train view's step and the theme, as JSON.
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_web_state() {
    static std::string text;
    if (!the_run) return "{}";
    attnviz::AppState& s = the_run->state;
    const attnviz::TrainStatus& t = attnviz::train_view(s).shown_status;
    nlohmann::json j;
    j["view"] = attnviz::to_string(s.screen.view);
    j["p"] = s.run.applied_p;
    j["strength"] = s.run.applied_strength;
    j["n_embd"] = s.config.applied.n_embd;
    j["weights"] = s.weights.applied ? s.weights.applied->path : "";
    j["weights_field"] = s.fields.weights_field;
    j["status"] = s.status;
    j["frames"] = frames_drawn;
    j["train_step"] = t.step;
    j["training"] = t.running;
    j["theme"] = int(s.screen.theme);
    // Follow the teacher (web_follow.h): "none" when the page was not served by attnviz --serve.
    j["follow"] = !s.follow.page ? "none" : s.follow.mode == attnviz::FollowMode::follow ? "follow" : "explore";
    j["teacher"] = s.follow.connected;
    j["follow_note"] = s.follow.note;
    j["follow_applied_ms"] = attnviz::web_follow_applied_ms();
    j["follow_received_ms"] = attnviz::web_follow_received_ms();
    j["fingerprint"] = attnviz::shown_fingerprint(s);
    j["train_fingerprint"] = attnviz::train_fingerprint(s);
    j["grid_fingerprint"] = attnviz::grid_fingerprint(s);
    j["model"] = std::holds_alternative<attnviz::ToyModel>(s.shown.source) ? attnviz::shown_model(s)->source : "";
    // A teacher's GPT layer (follow_gpt.h): its layer and position labels; -1 and none otherwise.
    j["gpt_layer"] = attnviz::received_gpt(s) ? s.shown.layer : -1;
    j["words"] = attnviz::received_gpt(s) ? s.shown.words : std::vector<std::string>{};
    // The Generate view (generate_state.h): what it shows, to compare with the teacher's window.
    j["generate_fingerprint"] = attnviz::generate_fingerprint(s);
    j["generate_text"] = attnviz::generate_new_text(s);
    j["generate_received"] = s.generate.received;
    j["generate_why_not"] = s.generate.why_not;
    j["error"] = s.error;
    j["answers"] = std::vector<int>(s.follow.my_answer, s.follow.my_answer + attnviz::check_question_count);
    j["answers_shown"] = std::vector<bool>(s.screen.answer_shown, s.screen.answer_shown + attnviz::check_question_count);
    j["answers_pending"] = std::vector<bool>(s.follow.answer_pending, s.follow.answer_pending + attnviz::check_question_count);
    // A token may end inside a character (GPT-2's bytes): replaced, not thrown on.
    text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return text.c_str();
}

// `attnviz trace --intermediates --perturb P --kernel K` for the seeded (C, H, T, seed), as
// the same JSON text, for the browser test to compare with the native build's bit for bit.
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_web_trace(int n_embd, int n_head, int seq_len, int seed, int p,
                                                               int kernel) {
    using namespace attnviz;
    static std::string text;
    Config c;
    c.n_embd = n_embd;
    c.n_head = n_head;
    c.seq_len = seq_len;
    c.seed = uint64_t(seed);
    if (const std::string bad = validate(c); !bad.empty() || p < 0 || p >= seq_len) return "";
    TraceJsonRequest r;
    r.kernel = kernel ? KernelKind::fast : KernelKind::reference;
    r.perturb = p;
    r.intermediates = true;
    std::ostringstream out;
    Trace scratch;
    write_trace_json(out, make_experiment(c), r, scratch);
    text = out.str();
    return text.c_str();
}

// One forward of the lesson's recipe at (C, H, T) with every intermediate, as `attnviz
// bench` times it (kernel: 0 reference, 1 fast), in milliseconds: the median of `repeat`
// timings of `inner` forwards each (the browser's clock is coarse: 0.1 ms without isolation).
extern "C" EMSCRIPTEN_KEEPALIVE double attnviz_web_bench(int n_embd, int n_head, int seq_len, int kernel, int repeat,
                                                         int inner) {
    using namespace attnviz;
    Config c;
    c.n_embd = n_embd;
    c.n_head = n_head;
    c.seq_len = seq_len;
    if (!validate(c).empty() || repeat < 1 || inner < 1) return -1;
    const Experiment e = make_experiment(c);
    Trace tr;
    std::vector<double> ms;
    for (int i = 0; i < repeat; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < inner; ++k) forward(c, e.weights, e.x, kernel ? KernelKind::fast : KernelKind::reference, tr);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / inner);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}
