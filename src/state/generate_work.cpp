// generate_work.cpp: the Generate view's seconds-long work off the frame thread. At GPT-2
// small's size a full forward over a thousand positions takes seconds: a single Step's full
// recompute (measured and checked against the cached step) and the check question's "Show
// me" run on a worker, and recompute() polls it each frame (as model_loading.cpp reads a
// model). Small inputs (the lesson, the toy models, tiny GPTs) are done at once, as before.
// The web page has no threads: it computes at once.
#include "generate_detail.h"
#include "gpt_model.h"
#include "kv_cache.h"
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define ATTNVIZ_GENERATE_IN_FRAME 1
#endif

namespace attnviz {

using namespace generate_detail;

struct GenerateWork {
    bool demo = false;      // the demonstration, else the last step's full recompute
    size_t step_index = 0;  // the step whose full recompute this is
    uint64_t epoch = 0;     // the generation it was started on
    GenerateStep result;    // full_ms and the differences
    GenerateDemo demo_result;
    std::atomic<bool> done{false};
    std::thread thread;
    ~GenerateWork() {
        if (thread.joinable()) thread.join(); // at exit: the worker finishes its forward
    }
};

namespace {

// Runs `job` on a worker (at once without threads); `hook` first, on the worker.
template <class Job> void launch(AppState& s, std::shared_ptr<GenerateWork> w, Job job) {
    std::function<void()> hook = s.generate.worker_started;
    s.generate.work = w;
#ifdef ATTNVIZ_GENERATE_IN_FRAME
    if (hook) hook();
    job(*w);
    w->done = true;
#else
    GenerateWork* raw = w.get(); // owned by the state, which joins before it lets it go
    w->thread = std::thread([raw, hook, job] {
        if (hook) hook();
        job(*raw);
        raw->done.store(true, std::memory_order_release);
    });
#endif
}

// The demonstration on the lesson's module: new rows of x with the cache and by a full forward.
void demo_lesson(const Config& c, const Weights& w, const Mat& x0, KernelKind kernel, GenerateDemo& d) {
    if (c.mask != MaskMode::causal) {
        d.why_not = "The lesson's module keeps its keys and values only under the causal mask; press M until it is causal.";
        return;
    }
    d.steps = std::min(8, std::max(0, lesson_generate_rows - c.seq_len));
    Trace tr;
    forward(c, w, x0, kernel, tr);
    LayerKv kv;
    int T = 0;
    attention_cache_from(tr, kv, T);
    TorchGenerator gen = lesson_generator(c);
    Mat x = x0;
    for (int k = 0; k < d.steps; ++k) {
        std::vector<float> row(size_t(c.n_embd));
        gen.randn(row.data(), c.n_embd);
        x.conservativeResize(x.rows() + 1, c.n_embd);
        for (int i = 0; i < c.n_embd; ++i) x(x.rows() - 1, i) = row[size_t(i)];
        AttentionStepRow out;
        Clock::time_point t0 = Clock::now();
        attention_step(c, w, row.data(), kernel, kv, T, out);
        d.cached_ms += ms_since(t0);
        Config all = c;
        all.seq_len = int(x.rows());
        Trace full;
        t0 = Clock::now();
        forward(all, w, x, kernel, full);
        d.full_ms += ms_since(t0);
        const int t = int(x.rows()) - 1;
        d.max_abs_logits = std::max(d.max_abs_logits, max_abs(out.y.data(), Vec(full.y.row(t)).data(), c.n_embd));
        Mat r = head_rows(full, t);
        d.max_abs_logits = std::max(d.max_abs_logits, max_abs(out.att.data(), r.data(), r.size()));
    }
}

// The demonstration on a model: greedy tokens with the cache and by a full forward each step.
void demo_model(const Model& m, const std::vector<int>& prompt, KernelKind kernel, GenerateDemo& d) {
    KvCache cache;
    KvStepRow row;
    Clock::time_point t0 = Clock::now();
    kv_prefill(m, prompt, kernel, cache, row);
    d.cached_ms += ms_since(t0);
    std::vector<int> tokens = prompt;
    for (int k = 0; k < d.steps; ++k) {
        KvStepRow full;
        t0 = Clock::now();
        full_last_row(m, tokens, kernel, full);
        d.full_ms += ms_since(t0);
        const int V = int(row.logits.size());
        d.max_abs_logits = std::max(d.max_abs_logits, max_abs(row.logits.data(), full.logits.data(), V));
        const int a = argmax_token(row.logits.data(), V), b = argmax_token(full.logits.data(), V);
        d.cached_tokens.push_back(a);
        d.full_tokens.push_back(b);
        tokens.push_back(a);
        if (k + 1 == d.steps) break;
        t0 = Clock::now();
        kv_step(m, a, kernel, cache, row);
        d.cached_ms += ms_since(t0);
    }
}

// Why the shown model cannot give the demonstration ("" when it can); d.steps set.
std::string demo_model_why_not(const TrainedInput& in, GenerateDemo& d) {
    if (in.received) return "The teacher's model has no weights on this page: it writes on in the teacher's window.";
    if (std::string why = generation_support(*in.model); !why.empty()) return why;
    const int block = generation_block_size(*in.model);
    d.steps = std::min(8, block - int(in.tokens.size()));
    if (d.steps < 1) return "The prompt already fills the model's block size of " + std::to_string(block) + "; shorten it.";
    return "";
}

// What the demonstration's numbers say, in one sentence.
std::string demo_sentence(const GenerateDemo& d, KernelKind kernel) {
    const bool same = d.cached_tokens == d.full_tokens;
    char diff[64];
    if (d.max_abs_logits == 0) std::snprintf(diff, sizeof diff, "are equal, bit for bit");
    else std::snprintf(diff, sizeof diff, "differ by at most %.3g", d.max_abs_logits);
    char buf[400];
    if (d.lesson)
        std::snprintf(buf, sizeof buf,
                      "%d new rows of x, each with the cache (one row of q·kᵀ) and by a full forward over every row: their "
                      "outputs and softmax rows %s (%s kernel); %.3f ms with the cache against %.3f ms recomputing.",
                      d.steps, diff, to_string(kernel), d.cached_ms, d.full_ms);
    else
        std::snprintf(buf, sizeof buf,
                      "%d tokens, greedy, with the cache and by a full forward each step: %s tokens, and the logits "
                      "%s (%s kernel); %.3f ms with the cache (prompt included) against %.3f ms recomputing.",
                      d.steps, same ? "the same" : "DIFFERENT", diff, to_string(kernel), d.cached_ms, d.full_ms);
    return buf;
}

// Runs a demonstration prepared in `d`, catching what the core throws.
template <class Run> void run_demo(GenerateDemo& d, KernelKind kernel, Run run) {
    try {
        run(d);
    } catch (const std::exception& e) {
        d.why_not = e.what();
    }
    d.working = false;
    d.computed = true;
    if (d.why_not.empty()) d.sentence = demo_sentence(d, kernel);
}

} // namespace

namespace generate_detail {

void start_demo(AppState& s) {
    GenerateDemo& d = s.generate.demo;
    const bool asked = d.asked, scroll = d.scroll;
    d = GenerateDemo{};
    d.asked = asked;
    d.scroll = scroll;
    d.lesson = !generates_tokens(s); // the lesson's module writes rows of x
    const KernelKind kernel = s.kernel;
    if (d.lesson) { // the lesson's module: microseconds
        run_demo(d, kernel, [&](GenerateDemo& out) { demo_lesson(s.config.applied, s.run.experiment.weights, s.run.experiment.x, kernel, out); });
        return;
    }
    const std::shared_ptr<const TrainedInput> in = shown_model(s);
    d.why_not = demo_model_why_not(*in, d);
    if (!d.why_not.empty()) {
        d.computed = true;
        return;
    }
    const std::shared_ptr<const Model> m = in->model;
    const double macs = full_macs(m->config, int64_t(in->tokens.size()) + d.steps) * d.steps;
    if (macs < s.generate.worker_min_macs) {
        run_demo(d, kernel, [&](GenerateDemo& out) { demo_model(*m, in->tokens, kernel, out); });
        return;
    }
    d.working = true;
    auto w = std::make_shared<GenerateWork>();
    w->demo = true;
    w->demo_result = d;
    launch(s, w, [m, in, kernel](GenerateWork& job) {
        run_demo(job.demo_result, kernel, [&](GenerateDemo& out) { demo_model(*m, in->tokens, kernel, out); });
    });
}

void start_check(AppState& s, const std::shared_ptr<const Model>& m, const Vec& cached_logits) {
    GenerateState& g = s.generate;
    auto w = std::make_shared<GenerateWork>();
    w->step_index = g.steps.size() - 1;
    w->epoch = g.epoch;
    g.steps.back().checking = true;
    const int T = int(g.tokens.size());
    const bool rows = rows_checked(m->config, T);
    // The worker's own copies: the frame goes on with the state.
    std::vector<Mat> kept = rows ? g.rows : std::vector<Mat>{};
    std::vector<int> made_at = g.row_made_at;
    launch(s, w, [m, tokens = g.tokens, kernel = g.kernel, layer = g.layer, cached_logits, rows, kept = std::move(kept),
                  made_at = std::move(made_at), T](GenerateWork& job) {
        GenerateStep& st = job.result;
        try {
            KvStepRow full;
            const Clock::time_point t0 = Clock::now();
            full_last_row(*m, tokens, kernel, full);
            st.full_ms = ms_since(t0);
            st.logits_max_abs = max_abs(cached_logits.data(), full.logits.data(), cached_logits.size());
            if (rows) {
                ModelTrace tr;
                forward_either(*m, tokens, kernel, tr);
                earlier_rows_diff(tr.layers[size_t(layer)], kept, made_at, T, st);
            }
        } catch (const std::exception&) {
            st.full_ms = -1; // (the cached step stands; the view says it was not measured)
        }
    });
}

bool poll_work(AppState& s) {
    GenerateState& g = s.generate;
    if (!g.work) return false;
    if (!g.work->done.load(std::memory_order_acquire)) return true;
    const std::shared_ptr<GenerateWork> w = std::move(g.work);
    g.work.reset();
    if (w->thread.joinable()) w->thread.join();
    if (w->demo) {
        const bool scroll = g.demo.scroll;
        g.demo = w->demo_result;
        g.demo.asked = true;
        g.demo.scroll = scroll;
    } else if (w->epoch == g.epoch && w->step_index < g.steps.size()) {
        GenerateStep& st = g.steps[w->step_index];
        st.full_ms = w->result.full_ms;
        st.logits_max_abs = w->result.logits_max_abs;
        st.rows_max_abs = w->result.rows_max_abs;
        st.rows_max_abs_short = w->result.rows_max_abs_short;
        st.checking = false;
        ++g.epoch; // the page's copy changes too
    }
    return false;
}

} // namespace generate_detail

void finish_generate(AppState& s, double seconds) {
    const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while ((s.generate.work || s.generate.step_requests > 0 || s.generate.back_requests > 0) && Clock::now() < deadline) {
        recompute(s);
        if (s.generate.work) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

} // namespace attnviz

namespace attnviz::generate_detail {

TorchGenerator lesson_generator(const Config& c) {
    TorchGenerator gen(c.seed);
    gen.skip_draws(4 * uint64_t(c.n_embd) * uint64_t(c.n_embd));
    std::vector<float> skip(size_t(c.seq_len) * size_t(c.n_embd));
    gen.randn(skip.data(), int64_t(skip.size()));
    skip.resize(size_t(c.n_embd));
    gen.randn(skip.data(), c.n_embd);
    return gen;
}

Mat head_rows(const Trace& tr, int t) {
    Mat r(tr.H, t + 1);
    for (int h = 0; h < tr.H; ++h) r.row(h) = tr.att[size_t(h)].row(t).head(t + 1);
    return r;
}

double max_abs(const float* a, const float* b, int64_t n) {
    double d = 0;
    for (int64_t i = 0; i < n; ++i) d = std::max(d, double(std::fabs(a[i] - b[i])));
    return d;
}

bool rows_checked(const ModelConfig& c, int64_t T) { return int64_t(c.n_layer) * c.n_head * T * T <= generate_rows_check_cap; }

double full_macs(const ModelConfig& c, int64_t T) {
    return double(c.n_layer) * double(T) * (12.0 * c.n_embd * c.n_embd + 2.0 * double(T) * c.n_embd);
}

void earlier_rows_diff(const Trace& full, const std::vector<Mat>& rows, const std::vector<int>& row_made_at, int T,
                       GenerateStep& st) {
    const bool lanes = T >= generate_lane_sum_keys;
    st.rows_max_abs = 0;
    for (int t = 0; t + 1 < T; ++t) {
        double d = 0;
        for (int h = 0; h < full.H; ++h)
            for (int j = 0; j <= t; ++j) d = std::max(d, double(std::fabs(full.att[size_t(h)](t, j) - rows[size_t(t)](h, j))));
        if ((row_made_at[size_t(t)] >= generate_lane_sum_keys) == lanes) st.rows_max_abs = std::max(st.rows_max_abs, d);
        else st.rows_max_abs_short = std::max(std::max(st.rows_max_abs_short, 0.0), d);
    }
}

} // namespace attnviz::generate_detail
