// lens_state.cpp: the logit lens table's cells, made on demand for the positions the table
// shows; see lens_state.h. No ImGui here.
#include "lens_state.h"
#include "app_state.h"
#include "state_internal.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define ATTNVIZ_LENS_IN_FRAME 1
#endif

namespace attnviz {

// Below this many logits a trace's own are copied with the residuals (the last layer's row
// is then the forward's, bit for bit); above it the kernel makes that row again.
constexpr int64_t lens_copy_logits_below = int64_t(1) << 22;

struct LensJob {
    std::shared_ptr<const Model> model;
    unsigned run = 0; // LensTable::run when asked: a result of an older run is dropped
    int p0 = 0, p1 = 0;
    std::future<LogitLens> result;
};

const std::vector<TokenProb>* LensTable::top(int row, int pos) const {
    if (!has(pos) || row < 0 || row >= lens.rows()) return nullptr;
    return &lens.top[size_t(row)][size_t(pos - p0)];
}

float LensTable::next_prob(int row, int pos) const {
    if (!has(pos) || row < 0 || row >= lens.rows()) return NAN;
    return lens.next_prob[size_t(row)][size_t(pos - p0)];
}

bool lens_available(const AppState& s) { return has_next_token_head(s); }

std::pair<int, int> lens_window(const AppState& s) {
    const int T = int(s.model_run.model_base.tokens.size());
    const LensTable& t = s.model_view.lens;
    const int n = std::clamp(t.columns, 0, T);
    const int first = t.first < 0 ? T - n : std::clamp(t.first, 0, std::max(0, T - n));
    return {first, first + n};
}

void request_lens_first(AppState& s, int first) {
    const int T = int(s.model_run.model_base.tokens.size());
    s.model_view.lens.first = std::clamp(first, 0, std::max(0, T - std::max(1, s.model_view.lens.columns)));
}

bool lens_busy(const AppState& s) { return s.model_view.lens.job != nullptr; }

namespace {

LogitLens make_range(std::shared_ptr<const Model> m, std::shared_ptr<const ModelTrace> tr, KernelKind kernel, int p0,
                     int p1) {
    return logit_lens_range(*m, *tr, kernel, p0, p1);
}

void start_range(AppState& s, int p0, int p1) {
    const std::shared_ptr<const Model> m = shown_model(s)->model;
    auto tr = std::make_shared<const ModelTrace>(lens_inputs(*m, s.model_run.model_base, lens_copy_logits_below));
    auto job = std::make_shared<LensJob>();
    job->model = m;
    job->run = s.model_view.lens.run;
    job->p0 = p0;
    job->p1 = p1;
#ifdef ATTNVIZ_LENS_IN_FRAME
    std::promise<LogitLens> done;
    done.set_value(make_range(m, tr, s.kernel, p0, p1));
    job->result = done.get_future();
#else
    job->result = std::async(std::launch::async, make_range, m, tr, s.kernel, p0, p1);
#endif
    s.model_view.lens.job = std::move(job);
}

} // namespace

namespace state_detail {

void update_lens(AppState& s, bool new_run, bool wait) {
    LensTable& t = s.model_view.lens;
    if (received_gpt(s)) return; // a teacher's cells, as received
    // A job still going is kept until it is done (its future would wait when dropped), and
    // its result is dropped then if the run changed meanwhile.
    if (new_run || (!lens_available(s) && t.count() > 0)) {
        t.lens = LogitLens{};
        t.p0 = 0;
        ++t.run;
    }
    if (t.job) {
        if (!wait && t.job->result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
        LogitLens got = t.job->result.get();
        const bool current = t.job->run == t.run;
        const int p0 = t.job->p0;
        t.job.reset();
        if (current) {
            t.lens = std::move(got);
            t.p0 = p0;
        }
    }
    if (!lens_available(s) || s.screen.view != View::model || s.model_view.panel != ModelPanel::lens || t.columns <= 0) return;
    const auto [p0, p1] = lens_window(s);
    if (p1 <= p0 || (t.has(p0) && t.has(p1 - 1))) return;
    start_range(s, p0, p1);
    if (wait) update_lens(s, false, true);
}

} // namespace state_detail

} // namespace attnviz
