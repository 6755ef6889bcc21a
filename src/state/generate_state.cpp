// generate_state.cpp: see generate_state.h. GCC 12's -Wmaybe-uninitialized inside Eigen's
// AVX-512 reductions (maxCoeff) is silenced as in model.cpp (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "generate_state.h"
#include "follow_gpt.h"
#include "generate_detail.h"
#include "gpt_model.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnviz {

using namespace generate_detail;

namespace {

void update_cache_range(AppState& s);

bool wanted(const AppState& s) {
    const GenerateState& g = s.generate;
    return s.screen.view == View::generate || g.step_requests > 0 || g.back_requests > 0 || g.reset_request || g.playing ||
           g.restore.pending;
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
        forward_either(m, tokens, g.kernel, tr);
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
    const Config& c = s.config.applied;
    if (c.mask != MaskMode::causal)
        return "The lesson's module writes on only under the causal mask: without it a new row would change the earlier "
               "ones and nothing could be kept; press M until the mask is causal.";
    if (c.seq_len >= lesson_generate_rows)
        return "The lesson's module grows here up to " + std::to_string(lesson_generate_rows) + " rows and T is already " +
               std::to_string(c.seq_len) + "; use a smaller seq_len.";
    g.block = lesson_generate_rows;
    g.prompt_len = c.seq_len;
    Trace tr;
    forward(c, s.run.experiment.weights, s.run.experiment.x, g.kernel, tr);
    attention_cache_from(tr, g.lesson_kv, g.lesson_T);
    g.lesson_x = s.run.experiment.x;
    for (int t = 0; t < tr.T; ++t) g.rows.push_back(head_rows(tr, t));
    g.row_made_at.assign(size_t(tr.T), tr.T);
    g.lesson_gen = lesson_generator(c);
    return "";
}

std::string start_model(const AppState& s, GenerateState& g, const std::vector<int>& tokens) {
    const TrainedInput& in = *shown_model(s);
    const Model& m = *in.model;
    if (std::string why = generation_support(m); !why.empty()) return why;
    g.block = generation_block_size(m);
    g.prompt_len = int(shown_model(s)->tokens.size());
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
    g.input = shown_model(s); // nullptr: the lesson's module, which writes rows of x, not tokens
    g.source_tokens = g.input ? g.input->tokens : std::vector<int>{};
    const std::vector<int> tokens = keep && !g.tokens.empty() ? g.tokens : g.source_tokens;
    if (!keep || !g.input) g.steps.clear();
    g.synced = true;
    g.lesson_config = s.config.applied;
    g.lesson_x0 = s.run.experiment.x;
    g.kernel = s.kernel;
    g.layer = g.input ? s.shown.layer : 0;
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
    ++g.epoch;
    try {
        g.why_not = g.input ? start_model(s, g, tokens) : start_lesson(s, g);
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
    if (!g.synced || g.input != shown_model(s) || g.kernel != s.kernel) return false;
    if (g.input) return g.source_tokens == g.input->tokens;
    const Config& a = g.lesson_config;
    const Config& b = s.config.applied;
    return a.seed == b.seed && a.n_embd == b.n_embd && a.n_head == b.n_head && a.seq_len == b.seq_len && a.mask == b.mask &&
           a.scale == b.scale && g.lesson_x0.rows() == s.run.experiment.x.rows() && g.lesson_x0.cols() == s.run.experiment.x.cols() &&
           g.lesson_x0 == s.run.experiment.x;
}

// The next token under the options: one generator from the seed, `draws` draws in, so the
// tokens after a Back come again (greedy: the argmax, and no draw).
GenerateStep choose_token(const GenerateState& g) {
    const int V = int(g.logits.size());
    GenerateStep st;
    if (g.options.greedy) {
        std::vector<float> probs;
        st.token = argmax_token(g.logits.data(), V);
        sampling_probs(g.logits.data(), V, g.options, probs);
        st.prob = probs[size_t(st.token)];
    } else {
        Sampler sampler(g.options);
        const float one = 0;
        for (int k = 0; k < g.draws; ++k) sampler.next(&one, 1);
        st.token = sampler.next(g.logits.data(), V, &st.prob);
        st.drew = true;
    }
    return st;
}

// One token on the cache, then the full recompute it is measured and checked against: at once
// when small, on a worker when it would take long (the view says "working" meanwhile).
// `forced`: the token written (a session's), else the sampler's.
void step_model(AppState& s, const GenerateStep* forced) {
    GenerateState& g = s.generate;
    const std::shared_ptr<const Model> model = shown_model(s)->model;
    const Model& m = *model;
    GenerateStep st = forced ? *forced : choose_token(g);
    if (st.token < 0 || st.token >= int(g.logits.size()))
        throw std::invalid_argument("token " + std::to_string(st.token) + " is not an id of the model");
    st.cached_ms = st.full_ms = -1, st.rows_max_abs = st.rows_max_abs_short = st.logits_max_abs = -1;
    KvStepRow row;
    Clock::time_point t0 = Clock::now();
    kv_step(m, st.token, g.kernel, g.cache, row);
    st.cached_ms = ms_since(t0);
    g.tokens.push_back(st.token);
    g.rows.push_back(row.att[size_t(g.layer)]);
    g.row_made_at.push_back(int(g.tokens.size()));
    if (st.drew) ++g.draws;
    g.steps.push_back(st);
    ++g.epoch;
    g.logits = row.logits;
    refresh_probs(g);
    const int T = int(g.tokens.size());
    // GPT-2 small's full forward at a thousand positions takes seconds: while playing, a
    // large sequence writes on at the cache's pace, and a single Step shows the comparison.
    if (g.playing && !rows_checked(m.config, T)) return;
    if (full_macs(m.config, T) >= g.worker_min_macs) {
        start_check(s, model, row.logits);
        return;
    }
    GenerateStep& out = g.steps.back();
    KvStepRow full;
    t0 = Clock::now();
    full_last_row(m, g.tokens, g.kernel, full);
    out.full_ms = ms_since(t0);
    out.logits_max_abs = max_abs(row.logits.data(), full.logits.data(), row.logits.size());
    if (rows_checked(m.config, T)) {
        ModelTrace tr;
        forward_either(m, g.tokens, g.kernel, tr);
        earlier_rows_diff(tr.layers[size_t(g.layer)], g.rows, g.row_made_at, T, out);
    }
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
    attention_step(c, s.run.experiment.weights, x.data(), g.kernel, g.lesson_kv, g.lesson_T, out);
    st.cached_ms = ms_since(t0);
    g.rows.push_back(out.att);
    g.row_made_at.push_back(int(g.lesson_x.rows()));
    Config all = c;
    all.seq_len = int(g.lesson_x.rows());
    Trace tr;
    t0 = Clock::now();
    forward(all, s.run.experiment.weights, g.lesson_x, g.kernel, tr);
    st.full_ms = ms_since(t0);
    st.logits_max_abs = max_abs(out.y.data(), Vec(tr.y.row(n)).data(), C);
    earlier_rows_diff(tr, g.rows, g.row_made_at, tr.T, st);
    g.steps.push_back(st);
}

void update_cache_range(AppState& s) {
    GenerateState& g = s.generate;
    const bool lesson = !g.input;
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

// One step, or why none; `forced`: the token to write (a session's).
bool step(AppState& s, const GenerateStep* forced = nullptr) {
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
        if (!g.input) step_lesson(s);
        else step_model(s, forced);
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
    ++g.epoch;
    if (!g.input) {
        --g.lesson_T; // the cache's rows from lesson_T on are no longer in use
        g.lesson_x.conservativeResize(g.lesson_x.rows() - 1, g.lesson_x.cols());
        g.lesson_gen = g.lesson_gen_before.back();
        g.lesson_gen_before.pop_back();
    } else {
        // The logits at the new last position: its step again, on the cache as it was then
        // (the same inputs, so the same numbers).
        const Model& m = *g.input->model;
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
    if (g.received) {
        g.error = std::string("Kept the teacher's sampling settings: ") + gpt_lives_on_teacher;
        return false;
    }
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

namespace {

// A session's generation (GenerateRestore): from the prompt, the same tokens again, each
// written on the cache and the last one measured and checked as a Step is. A token the
// shown model does not have, or more than its block size, leaves the prompt and says why.
void restore(AppState& s) {
    GenerateState& g = s.generate;
    GenerateRestore r = std::move(g.restore);
    g.restore = GenerateRestore{};
    g.options = r.options;
    g.steps.clear();
    start(s, false);
    if (r.steps.empty()) return;
    if (!g.why_not.empty()) {
        g.status = "The session's generation was not written again: " + g.why_not;
        return;
    }
    const bool lesson = !g.input;
    const int V = int(g.logits.size());
    auto fits = [&](const GenerateStep& st) { return lesson ? st.token == -1 : st.token >= 0 && st.token < V; };
    if (int(g.rows.size() + r.steps.size()) > g.block || !std::all_of(r.steps.begin(), r.steps.end(), fits)) {
        g.status = "The session's " + std::to_string(r.steps.size()) + " generated " + (lesson ? "rows" : "tokens") +
                   " do not fit the model shown (its ids, or its block size of " + std::to_string(g.block) +
                   "): back at the prompt.";
        return;
    }
    if (!lesson && r.steps.size() > 1) { // every token but the last at once, from one prefill
        for (size_t i = 0; i + 1 < r.steps.size(); ++i) g.tokens.push_back(r.steps[i].token);
        g.steps.assign(r.steps.begin(), r.steps.end() - 1);
        for (GenerateStep& st : g.steps) st.cached_ms = st.full_ms = st.logits_max_abs = st.rows_max_abs = st.rows_max_abs_short = -1;
        start(s, true);
    }
    for (size_t i = lesson ? 0 : r.steps.size() - 1; i < r.steps.size(); ++i)
        if (!step(s, lesson ? nullptr : &r.steps[i])) return;
    const std::string what = std::to_string(r.steps.size()) + (lesson ? " rows" : " tokens");
    g.status = s.follow.page ? "The teacher's generation: " + what + ", made again on this page from the teacher's seed."
                             : "The session's generation: " + what + " written again.";
}

// A page showing the teacher's GPT model computes nothing: every request is refused, and says why.
void refuse_on_page(AppState& s) {
    GenerateState& g = s.generate;
    const bool asked = g.step_requests > 0 || g.back_requests > 0 || g.reset_request || g.playing != g.received_playing;
    g.step_requests = g.back_requests = 0;
    g.reset_request = false;
    g.playing = g.received_playing;
    g.restore = GenerateRestore{};
    if (asked) s.error = std::string("Kept what is shown: ") + gpt_lives_on_teacher;
    if (g.demo.asked && !g.demo.computed) {
        g.demo.why_not = "The teacher's model has no weights on this page: it writes on in the teacher's window.";
        g.demo.computed = true;
    }
}

// The requests, in order: Reset, Back, Step, then Play's step when it is time. A step whose
// full recompute went to a worker holds the rest until it is in.
void do_requests(AppState& s) {
    GenerateState& g = s.generate;
    if (g.reset_request) {
        g.reset_request = false;
        g.steps.clear();
        start(s, false);
        g.status = "Back to the prompt.";
    }
    for (; g.back_requests > 0; --g.back_requests) back(s);
    for (; g.step_requests > 0 && !g.work; --g.step_requests) step(s);
    if (!g.playing || g.work) return;
    const Clock::time_point now = Clock::now();
    if (g.play_interval_ms > 0 && ms_since(g.last_play) < g.play_interval_ms) return;
    g.last_play = now;
    if (!step(s)) {
        g.playing = false;
    } else if (int(g.rows.size()) >= g.block) {
        g.playing = false;
        g.status = "Stopped at the block size: " + std::to_string(g.block) + " positions.";
    }
}

} // namespace

void update_generate(AppState& s) {
    GenerateState& g = s.generate;
    if (poll_work(s)) return; // the worker's result first; everything else waits for it
    if (s.ready && received_gpt(s)) {
        refuse_on_page(s);
        return;
    }
    g.received = false;
    if (s.ready && g.demo.asked && !g.demo.computed && !g.demo.working) start_demo(s);
    if (g.work || !s.ready || !wanted(s)) return;
    if (g.restore.pending) restore(s);
    else if (!same_source(s)) start(s, false);
    else if (g.input && g.layer != s.shown.layer) start(s, true);
    if (!g.work) do_requests(s);
}

bool generate_busy(const AppState& s) { return s.generate.playing || s.generate.work; }

} // namespace attnviz
