// session_state.cpp: see session_state.h.
#include "session_state.h"
#include "check_questions.h"
#include "follow_generate.h"
#include "text_util.h"
#include "inputs.h"
#include "model_io.h"
#include "train_view_state.h"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace attnviz {

namespace {

bool default_options(const SamplingOptions& o) {
    const SamplingOptions d;
    return o.greedy == d.greedy && o.temperature == d.temperature && o.top_k == d.top_k && o.top_p == d.top_p && o.seed == d.seed;
}

// The Generate view's generation (or one read from a session and not yet written again);
// none for a GPT model, which a session does not keep.
// A toy model shown: its letters, block, replacement and ablated heads.
void to_session_model(const AppState& s, const TrainedInput& in, SessionModel& sm) {
    sm.present = true;
    sm.letters = sequence_text(in.model->config, in.tokens);
    sm.layer = s.shown.layer;
    sm.replace_token = s.shown.replace_token;
    sm.source = in.source;
    for (const HeadRef& h : s.ablation.applied.heads) sm.ablate += (sm.ablate.empty() ? "" : ",") + to_string(h);
    sm.ablate_mode = to_string(s.ablation.applied.mode);
}

SessionGenerate session_generate(const AppState& s) {
    const GenerateState& g = s.generate;
    SessionGenerate out;
    if (!session_keeps_generation(s) || g.received) return out;
    const bool pending = g.restore.pending;
    const std::vector<GenerateStep>& steps = pending ? g.restore.steps : g.steps;
    out.options = pending ? g.restore.options : g.options;
    out.present = pending || (g.synced && g.why_not.empty() && (!steps.empty() || !default_options(out.options)));
    if (!out.present) return out;
    for (const GenerateStep& st : steps) {
        out.tokens.push_back(st.token);
        out.sampled.push_back(st.drew);
        out.probs.push_back(st.prob);
    }
    return out;
}

void restore_generate(AppState& s, const SessionGenerate& sg) {
    GenerateRestore& r = s.generate.restore;
    r = GenerateRestore{};
    r.pending = true; // without one (an older session): at the prompt, the options' defaults
    if (!sg.present) return;
    r.options = sg.options;
    for (size_t i = 0; i < sg.tokens.size(); ++i) {
        GenerateStep st;
        st.token = sg.tokens[i];
        st.drew = sg.sampled[i];
        st.prob = sg.probs[i];
        r.steps.push_back(st);
    }
}

} // namespace

Session to_session(const AppState& s) {
    Session ss;
    ss.config = s.config.applied;
    ss.kernel = s.kernel_choice.applied == KernelChoice::reference ? "reference"
                : s.kernel_choice.applied == KernelChoice::fast    ? "fast"
                                                           : "";
    ss.view = to_string(s.screen.view);
    ss.step = s.screen.step;
    ss.perturb = s.strength != 0 ? s.p : -1;
    ss.strength = s.strength != 0 ? double(s.strength) : 1.0;
    ss.theme = to_string(s.screen.theme);
    ss.font_scale = double(s.screen.font_scale);
    ss.palette = to_string(s.screen.palette);
    ss.tokens = s.tokens.applied;
    for (int q = 0; q < check_question_count; ++q)
        if (s.screen.answer_shown[q]) ss.answers_shown.push_back(q);
    // The source: a file's layer by its path, a toy model by its letters and block (its
    // weights are written beside the session); a GPT model is opened again from its own
    // files, not kept.
    std::visit(Overload{[&](const WeightsLayer& w) {
                            ss.weights_path = w.file->path;
                            ss.layer = w.file->layer;
                        },
                        [&](const ToyModel& m) { to_session_model(s, *m.input, ss.model); }, [](const auto&) {}},
               s.shown.source);
    if (s.train && s.train->session) {
        const TrainViewState& t = *s.train;
        const TrainSettings& ts = t.session->settings();
        SessionTrain& st = ss.train;
        st.present = true;
        st.task = to_string(ts.model.task);
        st.seed = ts.seed;
        st.vocab = ts.model.vocab, st.seq_len = ts.model.seq_len, st.n_embd = ts.model.n_embd;
        st.n_head = ts.model.n_head, st.n_layer = ts.model.n_layer;
        st.lr = ts.lr;
        st.batch = ts.batch;
        st.step = t.session->status().step;
        st.scrub = t.scrub;
        st.probe = probe_text(ts.model, t.probe).substr(2);
        st.speed_index = t.speed_index;
    }
    ss.generate = session_generate(s);
    return ss;
}

namespace {

// The Train view of a session: its settings checked, its run retrained from the seed to its
// step on the worker (deterministic, so the same weights and history come back).
bool apply_session_train(AppState& s, const SessionTrain& st, std::string& error) {
    TrainSettings ts;
    std::string why;
    if (!parse_task(st.task, ts.model.task, why)) {
        error = "the session's train task: " + why;
        return false;
    }
    ts.model.vocab = st.vocab, ts.model.seq_len = st.seq_len, ts.model.n_embd = st.n_embd;
    ts.model.n_head = st.n_head, ts.model.n_layer = st.n_layer;
    ts.seed = st.seed;
    ts.lr = st.lr;
    ts.batch = st.batch;
    if (std::string bad = validate(ts); !bad.empty()) {
        error = "the session's training settings: " + bad;
        return false;
    }
    // The same run here already, not past the session's step: it goes on to that step
    // instead of starting again from step 0. A page that follows the teacher's Train view
    // gets a session each time the teacher's run moves, so retraining from the seed each
    // time would never catch up.
    if (s.train && s.train->session) {
        const TrainSettings& have = s.train->session->settings();
        const ModelConfig &a = have.model, &b = ts.model;
        const bool same_run = a.task == b.task && a.vocab == b.vocab && a.seq_len == b.seq_len && a.n_embd == b.n_embd &&
                              a.n_head == b.n_head && a.n_layer == b.n_layer && have.seed == ts.seed && have.lr == ts.lr &&
                              have.batch == ts.batch;
        TrainViewState& t = *s.train;
        const int64_t at = t.session->status().step;
        if (same_run && at <= st.step) {
            if (!st.probe.empty() && !set_probe_text(t, st.probe, why)) {
                error = "the session's probe: " + why;
                return false;
            }
            if (!st.probe.empty()) t.probe_field = st.probe;
            t.speed_index = st.speed_index;
            if (st.step > at) t.session->run_to(st.step);
            if (st.scrub < 0) t.scrub = t.restore_scrub = -1; // the latest step
            else t.restore_scrub = st.scrub;
            return true;
        }
    }
    auto t = std::make_shared<TrainViewState>();
    t->speed_index = st.speed_index;
    if (!request_train_settings(*t, ts)) {
        error = t->error;
        return false;
    }
    if (!st.probe.empty() && !set_probe_text(*t, st.probe, why)) {
        error = "the session's probe: " + why;
        return false;
    }
    t->probe_field = st.probe.empty() ? t->probe_field : st.probe;
    if (st.step > 0) t->session->run_to(st.step);
    t->restore_scrub = st.scrub; // once the retrain is there
    t->status = "Retraining the session's run from seed " + std::to_string(st.seed) + " to step " + std::to_string(st.step) + ".";
    s.train = std::move(t);
    return true;
}

// What a session says of the screen (view, step, theme, palette, answers shown), checked.
struct SessionScreen {
    View view = View::walk;
    Theme theme = Theme::dark;
    PaletteKind palette = PaletteKind::standard;
};

bool check_session_screen(const Session& ss, SessionScreen& out, std::string& error) {
    if (!parse_view(ss.view, out.view, error) || !parse_theme(ss.theme, out.theme, error)) return false;
    if (!parse_palette(ss.palette, out.palette, error)) {
        error = "the session's palette " + quote(ss.palette) + " is not a palette; use default or cb";
        return false;
    }
    if (ss.step < 0 || ss.step > walk_last_step) {
        error = "the session's step " + std::to_string(ss.step) + " is outside 0.." + std::to_string(walk_last_step);
        return false;
    }
    for (int q : ss.answers_shown)
        if (q >= check_question_count) {
            error = "the session's answers_shown names question " + std::to_string(q) + "; the check view has " +
                    std::to_string(check_question_count) + " (0 to " + std::to_string(check_question_count - 1) + ")";
            return false;
        }
    return true;
}

void set_session_screen(AppState& s, const Session& ss, const SessionScreen& c) {
    s.screen.view = c.view;
    s.screen.step = ss.step;
    if (s.screen.theme != c.theme || s.screen.font_scale != float(ss.font_scale)) s.fonts_dirty = true;
    s.screen.theme = c.theme;
    s.screen.font_scale = float(ss.font_scale);
    s.screen.palette = c.palette;
    for (bool& shown : s.screen.answer_shown) shown = false;
    for (int q : ss.answers_shown) s.screen.answer_shown[q] = true;
}

} // namespace

bool apply_session_screen(AppState& s, const Session& ss, std::string& error) {
    SessionScreen c;
    if (!check_session_screen(ss, c, error)) return false;
    set_session_screen(s, ss, c);
    return true;
}

bool apply_session(AppState& s, const Session& ss, std::string& error) {
    if (std::string why = validate_window(ss.config, s.memory_cap); !why.empty()) {
        error = "the session's sizes do not fit the window: " + why;
        return false;
    }
    if (!ss.tokens.empty() && ss.config.seq_len != int(ss.tokens.size())) {
        error = "the session's seq_len " + std::to_string(ss.config.seq_len) + " differs from its " +
                std::to_string(ss.tokens.size()) + " words; T follows the words";
        return false;
    }
    SessionScreen screen;
    if (!check_session_screen(ss, screen, error)) return false;
    KernelChoice k = KernelChoice::automatic;
    if (ss.kernel == "reference") k = KernelChoice::reference;
    else if (ss.kernel == "fast") k = KernelChoice::fast;
    else if (!ss.kernel.empty()) {
        error = "the session's kernel " + quote(ss.kernel) + " is not a kernel; use reference, fast or leave it empty";
        return false;
    }
    // Last of the checks: the weights file is read (and must still be there).
    std::shared_ptr<const WeightsFile> weights;
    if (!ss.weights_path.empty() && !read_session_weights(ss.weights_path, ss.layer, ss.config, weights, error))
        return false;
    std::shared_ptr<const TrainedInput> trained;
    std::vector<HeadRef> ablate;
    AblationMode ablate_mode = AblationMode::zero;
    if (ss.model.present) {
        std::shared_ptr<const TrainedInput> read;
        if (!read_trained_input(ss.model.weights_path, ss.model.letters, read, error)) {
            error = "the session's model: " + error;
            return false;
        }
        std::string why;
        if (!parse_ablation_mode(ss.model.ablate_mode, ablate_mode, why) ||
            (!ss.model.ablate.empty() && !parse_heads(ss.model.ablate, read->model->config, ablate, why))) {
            error = "the session's ablation: " + why;
            return false;
        }
        auto in = std::make_shared<TrainedInput>(*read);
        if (!ss.model.source.empty()) in->source = ss.model.source;
        trained = std::move(in);
    }
    if (ss.train.present && !apply_session_train(s, ss.train, error)) return false;
    init_app_state(s, ss.config, k);
    if (trained) {
        s.edit_layer = std::clamp(ss.model.layer, 0, trained->model->config.n_layer - 1);
        s.shown.replace_token = ss.model.replace_token >= 0 && ss.model.replace_token < trained->model->config.vocab
                              ? ss.model.replace_token
                              : -1;
        request_trained_model(s, std::move(trained));
        request_ablation(s, ablate, ablate_mode); // applied after the model, by the same recompute
    }
    s.tokens.edit = ss.tokens;
    s.weights.edit = weights;
    s.fields.weights_field = ss.weights_path;
    s.fields.layer_field = ss.layer;
    s.fields.text_field.clear();
    for (const std::string& w : ss.tokens) s.fields.text_field += (s.fields.text_field.empty() ? "" : " ") + w;
    set_session_screen(s, ss, screen);
    s.p = ss.perturb >= 0 ? ss.perturb : std::min(2, ss.config.seq_len - 1);
    s.strength = ss.perturb >= 0 ? float(ss.strength) : 0.f;
    s.perturb_dirty = true;
    restore_generate(s, ss.generate);
    return true;
}

bool write_session_files(const std::string& path, const AppState& s, std::string& error) {
    const Session ss = to_session(s);
    if (ss.train.present) {
        std::shared_ptr<const Model> m = s.train->session->latest();
        if (!save_model(train_weights_path(path), *m, error)) return false;
    }
    if (ss.model.present && !save_model(model_weights_path(path), *shown_model(s)->model, error)) return false;
    return write_session(path, ss, error);
}

void save_session_file(AppState& s, const std::string& path) {
    std::string error;
    if (write_session_files(path, s, error))
        s.status = "Saved the session to " + escaped(path) +
                   session_saved_note(s) + ".";
    else s.status = "Not saved: " + error;
}

void open_session_file(AppState& s, const std::string& path) {
    Session ss;
    std::string error;
    if (read_session(path, ss, error) && apply_session(s, ss, error)) s.status = "Opened the session " + escaped(path) + ".";
    else s.status = "Kept the current state: " + error;
}

namespace {

// 64-bit FNV-1a over the bits of each float of the matrices added.
struct FloatHash {
    uint64_t h = 1469598103934665603ull;
    void add(const Mat& m) {
        for (Eigen::Index i = 0; i < m.size(); ++i) {
            uint32_t bits = 0;
            std::memcpy(&bits, m.data() + i, sizeof bits);
            for (int b = 0; b < 4; ++b) {
                h ^= (bits >> (8 * b)) & 0xffu;
                h *= 1099511628211ull;
            }
        }
    }
    void add(int64_t v) {
        for (int b = 0; b < 8; ++b) {
            h ^= uint64_t(v >> (8 * b)) & 0xffu;
            h *= 1099511628211ull;
        }
    }
};

} // namespace

std::string train_fingerprint(const AppState& s) {
    if (!s.train || !s.train->session) return "none";
    int64_t step = 0;
    const std::shared_ptr<const Model> m = s.train->session->latest(&step);
    if (!m) return "none";
    Model copy = *m; // parameters() hands out pointers into a model it may change
    FloatHash f;
    double sum = 0, sum_abs = 0;
    for (const Param& p : parameters(copy)) {
        f.add(*p.value);
        sum += double(p.value->sum());
        sum_abs += double(p.value->cwiseAbs().sum());
    }
    char text[128];
    std::snprintf(text, sizeof text, "%lld %016llx %.9e %.9e", static_cast<long long>(step),
                  static_cast<unsigned long long>(f.h), sum, sum_abs);
    return text;
}

std::string shown_fingerprint(const AppState& s) {
    const Trace& t = s.run.trace;
    FloatHash f;
    f.add(t.x);
    for (const Mat& a : t.att) f.add(a);
    f.add(t.y);
    char text[80];
    std::snprintf(text, sizeof text, "%d %d %d %016llx", t.T, t.C, t.H, static_cast<unsigned long long>(f.h));
    return text;
}

std::string grid_fingerprint(const AppState& s) {
    FloatHash f;
    int heads = 0;
    if (s.model_run.model_base.compact) { // the pooled pictures the grid draws
        for (const PerHead& layer : s.model_run.model_base.att_pooled)
            for (const Mat& a : layer) {
                f.add(a);
                ++heads;
            }
    }
    for (const Trace& t : s.model_run.model_base.layers)
        for (const Mat& a : t.att) {
            if (a.size() == 0) continue;
            f.add(a);
            ++heads;
        }
    char text[80];
    std::snprintf(text, sizeof text, "%d %016llx", heads, static_cast<unsigned long long>(f.h));
    return text;
}

std::string generate_fingerprint(const AppState& s) {
    const GenerateState& g = s.generate;
    if (!g.synced) return "none";
    FloatHash f;
    for (int t : g.tokens) f.add(int64_t(t));
    // The picture's rows a page is sent (follow_generate.h): from rows_from to the diagonal,
    // the newest whole; the rows before it are not on a page following a GPT model.
    const int T = int(g.rows.size()), from = std::max(0, T - generate_follow_rows);
    for (int t = from; t < T; ++t) {
        const Mat& r = g.rows[size_t(t)];
        const int c0 = t + 1 == T ? 0 : from;
        if (r.cols() > c0) f.add(Mat(r.rightCols(r.cols() - c0)));
    }
    for (const TokenChance& c : g.top) {
        f.add(int64_t(c.token));
        f.add(Mat::Constant(1, 1, c.prob));
    }
    char text[96];
    std::snprintf(text, sizeof text, "%d %d %d %016llx", T, g.prompt_len, int(g.steps.size()),
                  static_cast<unsigned long long>(f.h));
    return text;
}

} // namespace attnviz
