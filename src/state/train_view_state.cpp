// train_view_state.cpp: see train_view_state.h.
#include "train_view_state.h"
#include "app_state.h"
#include "model_io.h"
#include "text_util.h"
#include <algorithm>
#include <sstream>

namespace attnviz {

const std::vector<double>& train_speeds() {
    static const std::vector<double> v = {0, 2, 5, 10, 20, 50, 100};
    return v;
}

// [SECTION] The run and its settings

namespace {

void new_session(TrainViewState& t, std::unique_ptr<TrainSession> next) {
    t.session.reset(); // joins the old worker before the new one starts
    t.session = std::move(next);
    t.session->set_speed(train_speeds()[size_t(t.speed_index)]);
    t.settings = t.session->settings();
    t.edit = t.settings;
    char lr[32];
    std::snprintf(lr, sizeof lr, "%g", t.settings.lr);
    t.lr_field = lr;
    t.scrub = -1;
    t.seen_version = ~uint64_t(0);
    t.history = TrainHistory{};
    t.picture = TrainPicture{};
    t.error.clear();
    const ModelConfig& c = t.settings.model;
    if (int(t.probe.size()) != c.n_tokens() || !std::all_of(t.probe.begin() + 1, t.probe.end(), [&](int k) { return k < c.vocab; }))
        t.probe = default_probe(c);
    t.probe_field = probe_text(c, t.probe).substr(2);
    t.probe_error.clear();
}

} // namespace

TrainViewState& train_view(AppState& s) {
    if (!s.train) {
        s.train = std::make_shared<TrainViewState>();
        TrainViewState& t = *s.train;
        new_session(t, std::make_unique<TrainSession>(default_train_settings(Task::both)));
    }
    return *s.train;
}

namespace {

// From a replayed step, the run goes on from there.
void resume_here(TrainViewState& t) {
    if (t.scrub >= 0) t.session->resume_from(t.scrub);
    t.scrub = -1;
}

} // namespace

void train_run(TrainViewState& t) {
    resume_here(t);
    t.session->run();
}

void train_pause(TrainViewState& t) { t.session->pause(); }

void train_step(TrainViewState& t) {
    resume_here(t);
    t.session->step();
}

void train_set_speed(TrainViewState& t, int index) {
    t.speed_index = index;
    t.session->set_speed(train_speeds()[size_t(index)]);
}

TrainStatus train_status(const TrainViewState& t) { return t.session->status(); }

bool request_train_settings(TrainViewState& t, const TrainSettings& next) {
    if (std::string bad = validate(next); !bad.empty()) {
        t.error = "Kept the current run: " + bad + ".";
        t.edit = t.settings;
        return false;
    }
    new_session(t, std::make_unique<TrainSession>(next));
    t.loaded_from.clear();
    t.status = "A new run: " + std::string(to_string(next.model.task)) + ", seed " + std::to_string(next.seed) + ".";
    t.status_step = 0;
    return true;
}

void start_from_model(TrainViewState& t, const Model& m, const std::string& source) {
    TrainSettings s = t.settings;
    if (s.model.task != m.config.task) { // another task: its own learning rate and batch
        const TrainSettings d = default_train_settings(m.config.task);
        s.lr = d.lr;
        s.batch = d.batch;
    }
    new_session(t, std::make_unique<TrainSession>(s, m));
    t.loaded_from = source;
}

// [SECTION] The probe

std::string probe_text(const ModelConfig& c, const std::vector<int>& tokens) {
    std::string out;
    for (int k : tokens) out += (out.empty() ? "" : " ") + token_name(c, k);
    return out;
}

namespace {

// A segment of T / 3 letters, its repeat, then filler: it shows previous-token, duplicate
// and induction heads at once.
std::vector<int> probe_shape(const ModelConfig& c, const std::vector<int>& letters) {
    const int T = c.seq_len, r = std::max(1, T / 3);
    std::vector<int> tok = {c.bos()};
    for (int i = 0; i < r && int(tok.size()) <= T; ++i) tok.push_back(letters[size_t(i)]);
    for (int i = 0; i < r && int(tok.size()) <= T; ++i) tok.push_back(letters[size_t(i)]);
    for (size_t i = size_t(r); int(tok.size()) <= T; ++i) tok.push_back(letters[i % letters.size()]);
    return tok;
}

} // namespace

std::vector<int> default_probe(const ModelConfig& c) {
    // A fixed order, so that the default picture is the same in every run.
    const int order[] = {7, 2, 0, 5, 3, 1, 6, 4, 9, 11, 8, 13, 10, 15, 12, 14};
    std::vector<int> letters;
    for (int k : order) letters.push_back(k % c.vocab);
    for (int k = 16; k < 64; ++k) letters.push_back(k % c.vocab);
    return probe_shape(c, letters);
}

void shuffle_probe(TrainViewState& t) {
    const ModelConfig& c = t.settings.model;
    TorchGenerator g(1000 + t.shuffles++);
    std::vector<int> letters;
    for (int i = 0; i < c.seq_len + 1; ++i) letters.push_back(int(g.randint(0, c.vocab)));
    t.probe = probe_shape(c, letters);
    t.probe_field = probe_text(c, t.probe).substr(2);
    t.probe_error.clear();
}

bool set_probe_text(TrainViewState& t, const std::string& text, std::string& error) {
    const ModelConfig& c = t.settings.model;
    std::istringstream in(text);
    std::vector<int> tok = {c.bos()};
    std::string w;
    while (in >> w) {
        if (w == "^" && tok.size() == 1) continue; // BOS typed in front: it is there anyway
        const int k = token_of(c, w);
        if (k < 0 || k >= c.vocab) {
            error = "“" + escaped(w, 20) + "” is not a letter of the vocabulary (" + vocabulary_text(c) +
                    "); type letters separated by spaces";
            return false;
        }
        tok.push_back(k);
    }
    if (int(tok.size()) != c.n_tokens()) {
        error = "the probe has " + std::to_string(tok.size() - 1) + " letters; the model reads T = " +
                std::to_string(c.seq_len) + " after ^, so type " + std::to_string(c.seq_len);
        return false;
    }
    t.probe = tok;
    return true;
}

// [SECTION] Once per frame

void fill_heads(TrainPicture& p, const std::vector<TrainSnapshot>& snaps) {
    const Model& m = *p.model;
    ModelTrace tr;
    model_forward(m, p.probe, KernelKind::reference, tr);
    // The scores of the newest snapshot at or before the step (the step's own when it is one).
    const TrainSnapshot* scored = nullptr;
    for (const TrainSnapshot& s : snaps)
        if (s.step <= p.step && s.scored) scored = &s;
    p.scored = scored && scored->step == p.step;
    p.scores_step = scored ? scored->step : -1;
    if (scored) p.accuracy = scored->accuracy;
    p.heads.clear();
    const int N = int(p.probe.size());
    for (int l = 0; l < m.config.n_layer; ++l)
        for (int h = 0; h < m.config.n_head; ++h) {
            HeadView v;
            v.layer = l, v.head = h;
            const Mat& pr = tr.layers[size_t(l)].att[size_t(h)];
            v.probs.assign(pr.data(), pr.data() + size_t(N) * size_t(N));
            if (scored) {
                v.prev_token = scored->scores.prev_token[size_t(l)][size_t(h)];
                v.duplicate = scored->scores.duplicate[size_t(l)][size_t(h)];
                v.induction = scored->scores.induction[size_t(l)][size_t(h)];
                // The strongest score past its threshold names the head.
                struct Role {
                    float score, threshold;
                    const char* name;
                } roles[] = {{v.prev_token, prev_token_threshold, "previous-token head"},
                             {v.duplicate, duplicate_threshold, "duplicate-token head"},
                             {v.induction, induction_threshold, "induction head"}};
                const Role* best = nullptr;
                for (const Role& r : roles)
                    if (r.score >= r.threshold && (!best || r.score - r.threshold > best->score - best->threshold)) best = &r;
                if (best) {
                    char num[16];
                    std::snprintf(num, sizeof num, "%.2f", double(best->score));
                    v.label = std::string(best->name) + " (" + num + ")";
                }
            }
            p.heads.push_back(std::move(v));
        }
}

void refresh_train_view(AppState& s) {
    if (!s.train || !s.train->session) return;
    TrainViewState& t = *s.train;
    refresh_heads_comparison(t);
    refresh_ablation_demo(t);
    TrainStatus st = t.session->status();
    if (st.version != t.seen_version) {
        t.seen_version = st.version;
        t.session->copy_history(t.history);
        t.shown_status = st;
        if (!st.message.empty() && st.message != t.seen_message) t.status = st.message, t.status_step = st.step;
        t.seen_message = st.message;
    } else {
        t.shown_status = st;
    }
    if (!st.busy && st.step != t.status_step) {
        const std::string from = t.loaded_from.empty() ? std::string() : " from " + quote_path(t.loaded_from) + "'s weights";
        t.status = "Trained to step " + std::to_string(st.step) + from + ": " + to_string(t.settings.model.task) + ", seed " +
                   std::to_string(t.settings.seed) + ".";
        t.status_step = st.step;
    }
    if (t.restore_scrub >= 0 && !st.busy) {
        t.scrub = t.restore_scrub;
        t.restore_scrub = -1;
    }
    // The scrubbed step must still be a snapshot (a resume or thinning may have dropped it).
    if (t.scrub >= 0) {
        bool found = false;
        for (const TrainSnapshot& snap : t.history.snapshots) found = found || snap.step == t.scrub;
        if (!found || t.scrub >= st.step) t.scrub = -1;
    }
    std::shared_ptr<const Model> model;
    int64_t step = st.step;
    if (t.scrub >= 0) {
        for (const TrainSnapshot& snap : t.history.snapshots)
            if (snap.step == t.scrub) model = snap.model;
        step = t.scrub;
    } else {
        model = t.session->latest(&step);
        if (t.history.snapshots.empty()) return; // the worker is still scoring step 0
    }
    TrainPicture& p = t.picture;
    int64_t newest_scored = -1;
    for (const TrainSnapshot& snap : t.history.snapshots)
        if (snap.scored && snap.step <= step) newest_scored = snap.step;
    const bool scores_moved = newest_scored != p.scores_step;
    if (model && (model != p.model || p.probe != t.probe || scores_moved)) {
        p.model = model;
        p.step = step;
        p.probe = t.probe;
        fill_heads(p, t.history.snapshots);
    }
}

bool train_busy(const AppState& s) {
    if (!s.train) return false;
    for (const HeadsRun& r : s.train->compare.runs)
        if (!r.done()) return true; // the comparison's picture moves until both runs are done
    const AblationDemo& d = s.train->ablation_demo;
    if (d.asked() && !d.computed) return true; // and question 4's until its numbers are in
    return s.train->session && s.train->shown_status.busy;
}

void finish_training(AppState& s) {
    if (!s.train) return;
    refresh_heads_comparison(*s.train, true);
    refresh_ablation_demo(*s.train, true);
    if (s.train->session) s.train->session->wait_idle();
}

// [SECTION] Files and the other views

void open_in_views(AppState& s) {
    TrainViewState& t = train_view(s);
    if (!t.picture.model) return;
    auto in = std::make_shared<TrainedInput>();
    in->model = t.picture.model;
    in->tokens = t.picture.probe;
    in->source = "Train view, step " + std::to_string(t.picture.step);
    request_trained_model(s, in);
    s.screen.view = View::walk;
    t.status_step = t.shown_status.step;
    t.status = "Opened step " + std::to_string(t.picture.step) + "'s model in the views, on the probe " +
               probe_text(t.picture.model->config, t.picture.probe) + ".";
}

void save_train_model(TrainViewState& t, const std::string& path) {
    std::string error;
    if (!t.picture.model) return;
    t.status_step = t.shown_status.step;
    if (!ends_with_nocase(path, ".safetensors")) {
        t.status = "Not saved: " + quote_path(path) + " does not end in .safetensors; give a name like model.safetensors.";
        return;
    }
    if (save_model(path, *t.picture.model, error))
        t.status = "Saved step " + std::to_string(t.picture.step) + "'s model to " + quote_path(path) + ".";
    else
        t.status = "Not saved: " + error + ".";
}

void load_train_model(TrainViewState& t, const std::string& path) {
    Model m;
    std::string error;
    if (!load_model(path, m, error)) {
        t.status_step = t.shown_status.step;
        t.status = "Kept the current run: " + error + ".";
        return;
    }
    start_from_model(t, m, path);
    t.status_step = 0;
    t.status = "Loaded " + quote_path(path) + " (" + to_string(m.config.task) +
               "): its weights are step 0 here; Train goes on from them with a fresh optimiser, as the file holds no history.";
}

} // namespace attnviz
