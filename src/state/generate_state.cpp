// generate_state.cpp: see generate_state.h.
#include "generate_state.h"
#include "app_state.h"
#include "gpt_model.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnviz {

namespace {

using Clock = std::chrono::steady_clock;

void update_cache_range(AppState& s);

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

bool wanted(const AppState& s) {
    const GenerateState& g = s.generate;
    return s.screen.view == View::generate || g.step_requests > 0 || g.back_requests > 0 || g.reset_request || g.playing;
}

// The generator the lesson's new rows come from, where the recipe leaves it: after the
// weights' 4C² draws, x = torch.randn(1, T, C) and the replacement row torch.randn(C).
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

void refresh_probs(GenerateState& g) {
    g.probs.clear();
    g.top.clear();
    const int V = int(g.logits.size());
    if (V == 0) return;
    try {
        sampling_probs(g.logits.data(), V, g.options, g.probs);
    } catch (const std::invalid_argument& e) {
        g.status = e.what();
        return;
    }
    std::vector<int> ids(static_cast<size_t>(V));
    for (int i = 0; i < V; ++i) ids[size_t(i)] = i;
    const int n = std::min(10, V);
    // The most likely first; among equal chances (cut tokens: 0) the larger logit, then the lower id.
    std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), [&](int a, int b) {
        if (g.probs[size_t(a)] != g.probs[size_t(b)]) return g.probs[size_t(a)] > g.probs[size_t(b)];
        if (g.logits[a] != g.logits[b]) return g.logits[a] > g.logits[b];
        return a < b;
    });
    for (int i = 0; i < n; ++i) g.top.push_back({ids[size_t(i)], g.probs[size_t(ids[size_t(i)])], g.logits[ids[size_t(i)]]});
}

// Every layer's softmax weights over `tokens`, as the views' forward makes them.
void full_forward(const Model& m, const std::vector<int>& tokens, KernelKind kernel, ModelTrace& tr) {
    if (m.config.arch == Arch::gpt) gpt_forward(m, tokens, kernel, true, tr);
    else model_forward(m, tokens, kernel, tr);
}

bool rows_checked(const ModelConfig& c, int64_t T) { return int64_t(c.n_layer) * c.n_head * T * T <= generate_rows_check_cap; }

// The model's cache (kv_prefill) and the picture's rows for `tokens`: the full forward's when
// it is small enough to keep every layer's weights a moment, else one step at a time.
void build_model(const Model& m, GenerateState& g, const std::vector<int>& tokens) {
    g.rows.clear();
    g.row_made_at.clear();
    KvStepRow row;
    const int T = int(tokens.size());
    if (rows_checked(m.config, T)) {
        kv_prefill(m, tokens, g.kernel, g.cache, row);
        ModelTrace tr;
        full_forward(m, tokens, g.kernel, tr);
        for (int t = 0; t < T; ++t) g.rows.push_back(head_rows(tr.layers[size_t(g.layer)], t));
        g.row_made_at.assign(size_t(T), T);
    } else {
        kv_prefill(m, {tokens[0]}, g.kernel, g.cache, row);
        g.rows.push_back(row.att[size_t(g.layer)]);
        for (int t = 1; t < T; ++t) {
            kv_step(m, tokens[size_t(t)], g.kernel, g.cache, row);
            g.rows.push_back(row.att[size_t(g.layer)]);
        }
        for (int t = 0; t < T; ++t) g.row_made_at.push_back(t + 1);
    }
    g.tokens = tokens;
    g.logits = row.logits;
}

std::string start_lesson(const AppState& s, GenerateState& g) {
    const Config& c = s.config;
    if (c.mask != MaskMode::causal)
        return "The lesson's module writes on only under the causal mask: without it a new row would change the earlier "
               "ones and nothing could be kept; press M until the mask is causal.";
    if (c.seq_len >= lesson_generate_rows)
        return "The lesson's module grows here up to " + std::to_string(lesson_generate_rows) + " rows and T is already " +
               std::to_string(c.seq_len) + "; use a smaller seq_len.";
    g.block = lesson_generate_rows;
    g.prompt_len = c.seq_len;
    Trace tr;
    forward(c, s.experiment.weights, s.experiment.x, g.kernel, tr);
    attention_cache_from(tr, g.lesson_kv, g.lesson_T);
    g.lesson_x = s.experiment.x;
    for (int t = 0; t < tr.T; ++t) g.rows.push_back(head_rows(tr, t));
    g.row_made_at.assign(size_t(tr.T), tr.T);
    g.lesson_gen = lesson_generator(c);
    return "";
}

std::string start_model(const AppState& s, GenerateState& g, const std::vector<int>& tokens) {
    const TrainedInput& in = *s.shown.input;
    if (in.received) return "The teacher's model has no weights on this page: it writes on in the teacher's window.";
    const Model& m = *in.model;
    if (std::string why = generation_support(m); !why.empty()) return why;
    g.block = generation_block_size(m);
    g.prompt_len = int(s.shown.input->tokens.size());
    if (g.prompt_len >= g.block)
        return "The prompt's " + std::to_string(g.prompt_len) + " positions already fill the model's block size of " +
               std::to_string(g.block) + "; shorten the text in the side panel to leave room.";
    build_model(m, g, tokens);
    return "";
}

// Starts again from what is shown (the prompt), keeping the options; `keep`: the tokens so
// far (a layer switch rebuilds the picture for the new layer and keeps the generation).
void start(AppState& s, bool keep) {
    GenerateState& g = s.generate;
    const std::vector<int> tokens = keep && !g.tokens.empty() ? g.tokens : (s.shown.input ? s.shown.input->tokens : std::vector<int>{});
    if (!keep || mode(s) == Mode::lesson) g.steps.clear();
    g.synced = true;
    g.input = s.shown.input;
    g.source_tokens = s.shown.input ? s.shown.input->tokens : std::vector<int>{};
    g.lesson_config = s.config;
    g.lesson_x0 = s.experiment.x;
    g.kernel = s.kernel;
    g.layer = s.shown.input ? s.shown.layer : 0;
    g.cache = KvCache{};
    g.lesson_kv = LayerKv{};
    g.lesson_T = 0;
    g.lesson_x.resize(0, 0);
    g.lesson_gen_before.clear();
    g.rows.clear();
    g.row_made_at.clear();
    g.tokens.clear();
    g.logits.resize(0);
    g.draws = 0;
    for (const GenerateStep& st : g.steps) g.draws += st.drew ? 1 : 0;
    g.playing = false;
    g.prompt_len = 0;
    g.block = 0;
    try {
        g.why_not = mode(s) == Mode::lesson ? start_lesson(s, g) : start_model(s, g, tokens);
    } catch (const std::exception& e) {
        g.why_not = e.what();
    }
    if (!g.why_not.empty()) {
        g.rows.clear();
        g.steps.clear();
    }
    refresh_probs(g);
    update_cache_range(s);
}

bool same_source(const AppState& s) {
    const GenerateState& g = s.generate;
    if (!g.synced || g.input != s.shown.input || g.kernel != s.kernel) return false;
    if (s.shown.input) return g.source_tokens == s.shown.input->tokens;
    const Config& a = g.lesson_config;
    const Config& b = s.config;
    return a.seed == b.seed && a.n_embd == b.n_embd && a.n_head == b.n_head && a.seq_len == b.seq_len && a.mask == b.mask &&
           a.scale == b.scale && g.lesson_x0.rows() == s.experiment.x.rows() && g.lesson_x0.cols() == s.experiment.x.cols() &&
           g.lesson_x0 == s.experiment.x;
}

// max |a - b| over two equal-length float arrays.
double max_abs(const float* a, const float* b, int64_t n) {
    double d = 0;
    for (int64_t i = 0; i < n; ++i) d = std::max(d, double(std::fabs(a[i] - b[i])));
    return d;
}

// The full recompute's softmax rows 0 .. T-2 of the kept layer against the picture's, split
// by whether a row was summed the way the recompute sums it (see GenerateStep).
void earlier_rows_diff(const Trace& full, const GenerateState& g, int T, GenerateStep& st) {
    const bool lanes = T >= generate_lane_sum_keys;
    st.rows_max_abs = 0;
    for (int t = 0; t + 1 < T; ++t) {
        double d = 0;
        for (int h = 0; h < full.H; ++h)
            for (int j = 0; j <= t; ++j) d = std::max(d, double(std::fabs(full.att[size_t(h)](t, j) - g.rows[size_t(t)](h, j))));
        if ((g.row_made_at[size_t(t)] >= generate_lane_sum_keys) == lanes) st.rows_max_abs = std::max(st.rows_max_abs, d);
        else st.rows_max_abs_short = std::max(std::max(st.rows_max_abs_short, 0.0), d);
    }
}

void step_model(AppState& s) {
    GenerateState& g = s.generate;
    const Model& m = *s.shown.input->model;
    const int V = int(g.logits.size());
    GenerateStep st;
    std::vector<float> probs;
    if (g.options.greedy) {
        st.token = argmax_token(g.logits.data(), V);
        sampling_probs(g.logits.data(), V, g.options, probs);
        st.prob = probs[size_t(st.token)];
    } else {
        // One generator from the seed, `draws` draws in: the tokens after a Back come again.
        Sampler sampler(g.options);
        const float one = 0;
        for (int k = 0; k < g.draws; ++k) sampler.next(&one, 1);
        st.token = sampler.next(g.logits.data(), V, &st.prob);
        st.drew = true;
    }
    KvStepRow row;
    Clock::time_point t0 = Clock::now();
    kv_step(m, st.token, g.kernel, g.cache, row);
    st.cached_ms = ms_since(t0);
    g.tokens.push_back(st.token);
    g.rows.push_back(row.att[size_t(g.layer)]);
    g.row_made_at.push_back(int(g.tokens.size()));
    const int T = int(g.tokens.size());
    // GPT-2 small's full forward at a thousand positions takes seconds: while playing, a
    // large sequence writes on at the cache's pace, and a single Step shows the comparison.
    if (!g.playing || rows_checked(m.config, T)) {
        KvStepRow full;
        t0 = Clock::now();
        full_last_row(m, g.tokens, g.kernel, full);
        st.full_ms = ms_since(t0);
        st.logits_max_abs = max_abs(row.logits.data(), full.logits.data(), row.logits.size());
    } else {
        st.full_ms = -1;
    }
    if (rows_checked(m.config, T)) {
        ModelTrace tr;
        full_forward(m, g.tokens, g.kernel, tr);
        earlier_rows_diff(tr.layers[size_t(g.layer)], g, T, st);
    }
    if (st.drew) ++g.draws;
    g.steps.push_back(st);
    g.logits = row.logits;
    refresh_probs(g);
}

void step_lesson(AppState& s) {
    GenerateState& g = s.generate;
    const Config& c = g.lesson_config;
    const int C = c.n_embd;
    GenerateStep st;
    g.lesson_gen_before.push_back(g.lesson_gen);
    std::vector<float> x(static_cast<size_t>(C));
    g.lesson_gen.randn(x.data(), C);
    const Eigen::Index n = g.lesson_x.rows();
    g.lesson_x.conservativeResize(n + 1, C);
    for (int i = 0; i < C; ++i) g.lesson_x(n, i) = x[size_t(i)];
    AttentionStepRow out;
    Clock::time_point t0 = Clock::now();
    attention_step(c, s.experiment.weights, x.data(), g.kernel, g.lesson_kv, g.lesson_T, out);
    st.cached_ms = ms_since(t0);
    g.rows.push_back(out.att);
    g.row_made_at.push_back(int(g.lesson_x.rows()));
    Config all = c;
    all.seq_len = int(g.lesson_x.rows());
    Trace tr;
    t0 = Clock::now();
    forward(all, s.experiment.weights, g.lesson_x, g.kernel, tr);
    st.full_ms = ms_since(t0);
    st.logits_max_abs = max_abs(out.y.data(), Vec(tr.y.row(n)).data(), C);
    earlier_rows_diff(tr, g, tr.T, st);
    g.steps.push_back(st);
}

void update_cache_range(AppState& s) {
    GenerateState& g = s.generate;
    const bool lesson = mode(s) == Mode::lesson;
    const int T = lesson ? g.lesson_T : g.cache.T;
    float r = 0;
    auto over = [&](const LayerKv& kv) {
        for (const PerHead* m : {&kv.k, &kv.v})
            for (const Mat& x : *m)
                if (T > 0 && x.rows() >= T) r = std::max(r, x.topRows(T).cwiseAbs().maxCoeff());
    };
    if (lesson) over(g.lesson_kv);
    else
        for (const LayerKv& kv : g.cache.layers) over(kv);
    g.cache_range = r > 0 ? r : 1.f;
}

// One step, or why none.
bool step(AppState& s) {
    GenerateState& g = s.generate;
    if (!g.why_not.empty()) {
        g.status = g.why_not;
        return false;
    }
    const int T = int(g.rows.size());
    if (T >= g.block) {
        g.status = "Stopped at the block size: " + std::to_string(g.block) + " positions.";
        return false;
    }
    try {
        if (mode(s) == Mode::lesson) step_lesson(s);
        else step_model(s);
    } catch (const std::exception& e) {
        g.status = e.what();
        return false;
    }
    update_cache_range(s);
    g.status.clear(); // the view shows where the generation is
    return true;
}

void back(AppState& s) {
    GenerateState& g = s.generate;
    if (g.steps.empty() || int(g.rows.size()) <= g.prompt_len) {
        g.status = "Nothing to take back: only the prompt is left.";
        return;
    }
    const GenerateStep st = g.steps.back();
    g.steps.pop_back();
    g.rows.pop_back();
    g.row_made_at.pop_back();
    if (st.drew) --g.draws;
    if (mode(s) == Mode::lesson) {
        --g.lesson_T; // the cache's rows from lesson_T on are no longer in use
        g.lesson_x.conservativeResize(g.lesson_x.rows() - 1, g.lesson_x.cols());
        g.lesson_gen = g.lesson_gen_before.back();
        g.lesson_gen_before.pop_back();
    } else {
        // The logits at the new last position: its step again, on the cache as it was then
        // (the same inputs, so the same numbers).
        const Model& m = *s.shown.input->model;
        g.tokens.pop_back();
        const int T = int(g.tokens.size());
        KvStepRow row;
        if (T == 1) {
            kv_prefill(m, {g.tokens[0]}, g.kernel, g.cache, row);
        } else {
            kv_truncate(g.cache, T - 1);
            kv_step(m, g.tokens.back(), g.kernel, g.cache, row);
        }
        g.logits = row.logits;
        refresh_probs(g);
    }
    update_cache_range(s);
    g.status.clear();
}

// The demonstration on the lesson's module: new rows of x with the cache and by a full forward.
void demo_lesson(const AppState& s, KernelKind kernel, GenerateDemo& d) {
    const Config& c = s.config;
    if (c.mask != MaskMode::causal) {
        d.why_not = "The lesson's module keeps its keys and values only under the causal mask; press M until it is causal.";
        return;
    }
    d.steps = std::min(8, std::max(0, lesson_generate_rows - c.seq_len));
    Trace tr;
    forward(c, s.experiment.weights, s.experiment.x, kernel, tr);
    LayerKv kv;
    int T = 0;
    attention_cache_from(tr, kv, T);
    TorchGenerator gen = lesson_generator(c);
    Mat x = s.experiment.x;
    for (int k = 0; k < d.steps; ++k) {
        std::vector<float> row(size_t(c.n_embd));
        gen.randn(row.data(), c.n_embd);
        x.conservativeResize(x.rows() + 1, c.n_embd);
        for (int i = 0; i < c.n_embd; ++i) x(x.rows() - 1, i) = row[size_t(i)];
        AttentionStepRow out;
        Clock::time_point t0 = Clock::now();
        attention_step(c, s.experiment.weights, row.data(), kernel, kv, T, out);
        d.cached_ms += ms_since(t0);
        Config all = c;
        all.seq_len = int(x.rows());
        Trace full;
        t0 = Clock::now();
        forward(all, s.experiment.weights, x, kernel, full);
        d.full_ms += ms_since(t0);
        const int t = int(x.rows()) - 1;
        d.max_abs_logits = std::max(d.max_abs_logits, max_abs(out.y.data(), Vec(full.y.row(t)).data(), c.n_embd));
        Mat r = head_rows(full, t);
        d.max_abs_logits = std::max(d.max_abs_logits, max_abs(out.att.data(), r.data(), r.size()));
    }
}

// The demonstration on a model: greedy tokens with the cache and by a full forward each step.
void demo_model(const AppState& s, KernelKind kernel, GenerateDemo& d) {
    const TrainedInput& in = *s.shown.input;
    if (in.received) {
        d.why_not = "The teacher's model has no weights on this page: it writes on in the teacher's window.";
        return;
    }
    const Model& m = *in.model;
    if (std::string why = generation_support(m); !why.empty()) {
        d.why_not = why;
        return;
    }
    const int block = generation_block_size(m);
    d.steps = std::min(8, block - int(in.tokens.size()));
    if (d.steps < 1) {
        d.why_not = "The prompt already fills the model's block size of " + std::to_string(block) + "; shorten it.";
        return;
    }
    KvCache cache;
    KvStepRow row;
    Clock::time_point t0 = Clock::now();
    kv_prefill(m, in.tokens, kernel, cache, row);
    d.cached_ms += ms_since(t0);
    std::vector<int> tokens = in.tokens;
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

void compute_demo(AppState& s) {
    GenerateDemo& d = s.generate.demo;
    const bool asked = d.asked, scroll = d.scroll;
    d = GenerateDemo{};
    d.asked = asked;
    d.scroll = scroll;
    d.computed = true;
    d.lesson = mode(s) == Mode::lesson;
    try {
        if (d.lesson) demo_lesson(s, s.kernel, d);
        else demo_model(s, s.kernel, d);
    } catch (const std::exception& e) {
        d.why_not = e.what();
    }
    if (!d.why_not.empty()) return;
    d.sentence = demo_sentence(d, s.kernel);
}

} // namespace

void request_generate_step(AppState& s) { ++s.generate.step_requests; }
void request_generate_back(AppState& s) { ++s.generate.back_requests; }
void request_generate_reset(AppState& s) { s.generate.reset_request = true; }

void request_generate_play(AppState& s, bool play) {
    GenerateState& g = s.generate;
    g.playing = play;
    g.last_play = Clock::time_point{};
}

bool request_sampling(AppState& s, const SamplingOptions& o) {
    GenerateState& g = s.generate;
    if (std::string why = validate(o); !why.empty()) {
        g.error = "Kept the previous sampling settings: " + why;
        return false;
    }
    g.error.clear();
    const bool reseed = o.seed != g.options.seed;
    g.options = o;
    if (reseed) g.status = "Seed " + std::to_string(o.seed) + ": the next draws come from it.";
    refresh_probs(g);
    return true;
}

void request_generate_demo(AppState& s) {
    s.generate.demo.asked = true;
    s.generate.demo.computed = false;
    s.generate.demo.scroll = true;
}

void update_generate(AppState& s) {
    GenerateState& g = s.generate;
    if (s.ready && g.demo.asked && !g.demo.computed) compute_demo(s);
    if (!s.ready || !wanted(s)) return;
    if (!same_source(s)) start(s, false);
    else if (s.shown.input && g.layer != s.shown.layer) start(s, true);
    if (g.reset_request) {
        g.reset_request = false;
        g.steps.clear();
        start(s, false);
        g.status = "Back to the prompt.";
    }
    for (; g.back_requests > 0; --g.back_requests) back(s);
    for (; g.step_requests > 0; --g.step_requests) step(s);
    if (g.playing) {
        const Clock::time_point now = Clock::now();
        if (g.play_interval_ms <= 0 || ms_since(g.last_play) >= g.play_interval_ms) {
            g.last_play = now;
            if (!step(s)) g.playing = false;
            else if (int(g.rows.size()) >= g.block) {
                g.playing = false;
                g.status = "Stopped at the block size: " + std::to_string(g.block) + " positions.";
            }
        }
    }
}

bool generate_busy(const AppState& s) { return s.generate.playing; }

std::string generate_token_label(const AppState& s, int token) { return model_token_label(s, token); }

namespace {

std::string tokens_text(const AppState& s, int from, int to) {
    const GenerateState& g = s.generate;
    if (!s.shown.input || from >= to) return "";
    const std::vector<int> ids(g.tokens.begin() + from, g.tokens.begin() + to);
    if (s.shown.input->gpt()) {
        if (s.shown.input->tokenizer) return s.shown.input->tokenizer->decode(ids);
        std::string out;
        for (int id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
        return (from > 0 ? " " : "") + out;
    }
    std::string out;
    for (int id : ids) out += (out.empty() ? "" : " ") + model_token_label(s, id);
    return (from > 0 ? " " : "") + out;
}

} // namespace

std::string generate_prompt_text(const AppState& s) {
    return tokens_text(s, 0, std::min<int>(s.generate.prompt_len, int(s.generate.tokens.size())));
}

std::string generate_new_text(const AppState& s) {
    return tokens_text(s, s.generate.prompt_len, int(s.generate.tokens.size()));
}

} // namespace attnviz
