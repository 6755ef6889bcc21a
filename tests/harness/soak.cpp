// soak.cpp: see soak.h.
//
// The run: a fixed tour of boundary sizes in every view first (so that the largest buffers
// the run will ever need exist before RSS is first read), then random edits with random
// timing: slider drags that last several frames, size and switch edits, view, step, zoom and
// pan changes, theme and text-size changes, "Reset to the lesson", and invalid edits. RSS
// is read at the same state both times (the lesson's config after Reset, three frames
// settled), so any growth between the readings is memory the run kept.
#include "soak.h"
#include "soak_support.h"
#include "inputs.h"
#include "session_state.h"
#include "train_session.h"
#include "train_view_state.h"
#include "text_util.h"
#include "weights_io.h"
#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <malloc.h>
#include <fstream>
#include <random>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace attnviz {

bool parse_soak_fault(const std::string& s, SoakFault& out, std::string& error) {
    if (s == "none") out = SoakFault::none;
    else if (s == "gl-error") out = SoakFault::gl_error;
    else if (s == "leak") out = SoakFault::leak;
    else {
        error = "--soak-fault " + quote(s) + " is not a fault; use none, gl-error or leak";
        return false;
    }
    return true;
}

int soak_warmup_frames(int frames) { return std::max(1, std::min(frames / 10, 1000)); }

namespace {

constexpr double max_rss_growth_mb = 5.0;

bool same_config(const Config& a, const Config& b) {
    return a.n_embd == b.n_embd && a.n_head == b.n_head && a.seq_len == b.seq_len && a.seed == b.seed &&
           a.mask == b.mask && a.scale == b.scale;
}

std::string describe(const Config& c) {
    return "(T, C, H) = (" + std::to_string(c.seq_len) + ", " + std::to_string(c.n_embd) + ", " +
           std::to_string(c.n_head) + ")";
}

// The script's state: the random stream, a slider drag in progress, the tallies.
struct Soak {
    AppState& s;
    const SoakPlan& plan;
    GlErrorCounter& gl;
    const std::function<void()>& draw_frame;
    std::mt19937_64 rng;
    int frame = 0;            // frames drawn so far
    int drag_left = 0;        // frames the current strength drag still lasts
    float drag_step = 0;      // strength change per frame of that drag
    int64_t refused = 0;      // invalid edits refused as they should be
    int64_t config_edits = 0; // valid config edits applied
    double rss_peak = 0;
    std::string failure;      // the first broken expectation
    std::vector<std::vector<char>> leaked; // SoakFault::leak only
    std::string dir;          // a private temporary directory for the session files
    int64_t files_opened = 0; // good session files opened and applied
    int64_t files_refused = 0; // bad files refused with the state kept
    int64_t weights_loaded = 0;  // good weights files loaded and applied
    int64_t weights_refused = 0; // bad weights files refused with the state kept

    Soak(AppState& state, const SoakPlan& p, GlErrorCounter& counter, const std::function<void()>& draw_fn)
        : s(state), plan(p), gl(counter), draw_frame(draw_fn), rng(p.seed) {}

    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
    float uniform_real(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }
    bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    template <class V> auto pick(const V& v) { return v[size_t(uniform(0, int(v.size()) - 1))]; }

    void fail(const std::string& why) {
        if (failure.empty()) failure = "frame " + std::to_string(frame) + ": " + why;
    }

    void draw() {
        draw_frame();
        poll_gl_errors(gl);
        ++frame;
        rss_peak = std::max(rss_peak, rss_mb());
    }

    // A valid config, applied as the side panel applies one; the next frame must show it.
    void apply(const Config& c, KernelChoice k) {
        request_config(s, c, k);
        draw();
        ++config_edits;
        if (!same_config(s.config.applied, c) || !s.error.empty())
            fail("the valid config " + describe(c) + " was not applied (" + s.error + ")");
    }

    // An invalid config: must be refused with a message, the previous config and trace kept.
    void refuse(const Config& bad) {
        const Config before = s.config.applied;
        const Mat y = s.run.trace.y;
        request_config(s, bad, s.kernel_choice.applied);
        draw();
        const bool kept = same_config(s.config.applied, before) && same_config(s.config.edit, before) &&
                          s.run.trace.y.rows() == y.rows() && s.run.trace.y.cols() == y.cols() &&
                          std::memcmp(s.run.trace.y.data(), y.data(), size_t(y.size()) * sizeof(float)) == 0;
        if (s.error.empty()) fail("the invalid config " + describe(bad) + " was accepted without a message");
        else if (!kept) fail("the invalid config " + describe(bad) + " changed the state");
        else ++refused;
    }

    // n_head: any divisor of C the combo box offers, small ones more often.
    int random_heads(int C) {
        std::vector<int> d;
        for (int h : divisors(C))
            if (h <= max_n_head) d.push_back(h);
        return chance(0.7) ? d[size_t(uniform(0, std::min(int(d.size()) - 1, 3)))] : pick(d);
    }

    Config random_config() {
        static_assert(max_n_embd >= 512 && max_seq_len >= 256, "the soak's sizes are inside the limits");
        // Plain arrays: under ASan with detect_stack_use_after_return (make test SANITIZE=1),
        // GCC 12's code for these two vectors built from initializer lists read a wild
        // address here on the first call (SEGV in the copy); arrays need no copy.
        constexpr std::array<int, 16> Cs{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512};
        constexpr std::array<int, 16> Ts{1, 2, 3, 4, 5, 7, 11, 12, 13, 16, 33, 64, 100, 128, 255, 256};
        Config c = s.config.edit;
        const int what = uniform(0, 5);
        if (what <= 1) { // C, keeping H a divisor as the C field does
            c.n_embd = pick(Cs);
            if (c.n_embd % c.n_head != 0) c.n_head = random_heads(c.n_embd);
        } else if (what == 2) {
            c.n_head = random_heads(c.n_embd);
        } else if (what == 3) {
            c.seq_len = pick(Ts);
        } else if (what == 4) { // +/- buttons: one step
            c.seq_len = std::clamp(c.seq_len + (chance(0.5) ? 1 : -1), 1, 256);
        } else {
            c.n_embd = pick(Cs);
            c.n_head = random_heads(c.n_embd);
            c.seq_len = pick(Ts);
        }
        // The inputs fix some sizes, as the side panel does: T follows the words, C the
        // weights file (H stays a divisor of it).
        if (!s.tokens.edit.empty()) c.seq_len = int(s.tokens.edit.size());
        if (s.weights.edit && c.n_embd != s.weights.edit->loaded.n_embd) {
            c.n_embd = s.weights.edit->loaded.n_embd;
            c.n_head = random_heads(c.n_embd);
        }
        // Many heads over many positions: keep a frame's draw within reason.
        if (int64_t(c.n_head) * c.seq_len * c.seq_len > (int64_t(1) << 22)) {
            std::vector<int> d = divisors(c.n_embd); // ascending; 1 always fits (T <= 256)
            c.n_head = 1;
            for (int h : d)
                if (int64_t(h) * c.seq_len * c.seq_len <= (int64_t(1) << 22)) c.n_head = h;
        }
        return c;
    }

    Config random_invalid() {
        Config c = s.config.applied;
        switch (uniform(0, 8)) {
        case 0: c.n_embd = 12, c.n_head = 5; break;             // not a divisor
        case 1: c.seq_len = 0; break;
        case 2: c.seq_len = -1; break;
        case 3: c.n_embd = 0; break;
        case 4: c.n_head = 0; break;
        case 5: c.seq_len = max_seq_len + 1; break;
        case 6: c.n_embd = max_n_embd + 8, c.n_head = 8; break;
        case 7: c.n_embd = 512, c.n_head = 512; break;          // more heads than allowed
        default: c.n_embd = 8, c.n_head = 2, c.seq_len = max_seq_len; break; // over the memory cap
        }
        return c;
    }

    // The strength slider and the p slider / radio buttons, as draw_perturb_controls does.
    void perturb_edit() {
        const int T = s.config.applied.seq_len;
        if (drag_left > 0) {
            --drag_left;
            request_perturbation(s, s.p, std::clamp(s.strength + drag_step, 0.f, 1.f));
            return;
        }
        switch (uniform(0, 5)) {
        case 0: // a drag of the strength slider
            drag_left = uniform(3, 40);
            drag_step = uniform_real(-0.08f, 0.08f);
            break;
        case 1: request_perturbation(s, uniform(0, T - 1), s.strength); break;
        case 2: request_perturbation(s, chance(0.5) ? 0 : T - 1, chance(0.5) ? 0.f : 1.f); break;
        case 3: request_perturbation(s, std::min(2, T - 1), 1.f); break; // "The lesson: p = 2, strength 1"
        case 4: request_perturbation(s, s.p, uniform_real(0, 1)); break;
        default: // a drag of p
            request_perturbation(s, std::clamp(s.p + uniform(-3, 3), 0, T - 1), s.strength);
            break;
        }
    }

    // Zoom buttons, Fit, the window's drag fields, the head pager.
    void window_edit() {
        ViewWindow& w = s.screen.windows[uniform(0, view_count - 1)];
        const Config& c = s.config.applied;
        switch (uniform(0, 5)) {
        case 0: w.zoom = std::min(16.f, w.zoom * 1.25f); break;
        case 1: w.zoom = std::max(0.25f, w.zoom / 1.25f); break;
        case 2: w.zoom = chance(0.5) ? 0.25f : 16.f; break;
        case 3: w.zoom = 1, w.row0 = w.key0 = w.chan0 = 0; break;
        case 4:
            w.row0 = uniform(0, c.seq_len - 1);
            w.key0 = uniform(0, c.seq_len - 1);
            w.chan0 = uniform(0, c.n_embd - 1);
            break;
        default: w.head0 = uniform(0, c.n_head - 1); break;
        }
    }

    // Save / Open from the side panel: a bad file must leave the state as it was and say why;
    // a file just saved must bring back its config.
    void file_edit() {
        if (chance(0.4)) {
            const std::string path = dir + "/good-" + std::to_string(uniform(0, 3)) + ".json";
            save_session_file(s, path);
            const Config saved = s.config.applied;
            open_session_file(s, path);
            draw();
            if (!same_config(s.config.applied, saved)) fail("reopening the session " + path + " did not restore " + describe(saved) + " (" + s.status + ")");
            else ++files_opened;
            return;
        }
        const char* const bad[] = {"not-json.json", "no-version.json", "newer.json", "too-long.json",
                                          "bad-heads.json", "over-cap.json", "empty.json", "a-directory.json", "missing.json"};
        const std::string path = dir + "/" + bad[uniform(0, int(std::size(bad)) - 1)];
        const Config before = s.config.applied;
        const Mat y = s.run.trace.y;
        open_session_file(s, path);
        draw();
        const bool kept = same_config(s.config.applied, before) && s.run.trace.y.rows() == y.rows() && s.run.trace.y.cols() == y.cols() &&
                          std::memcmp(s.run.trace.y.data(), y.data(), size_t(y.size()) * sizeof(float)) == 0;
        if (s.status.rfind("Kept the current state", 0) != 0) fail("the bad session file " + path + " was not refused (" + s.status + ")");
        else if (!kept) fail("the bad session file " + path + " changed the state");
        else ++files_refused;
    }

    // The side panel's Weights: a good file is applied (C follows the file), Unload goes back
    // to the seeded weights, and a bad file leaves the weights and trace as they were.
    void weights_edit() {
        std::string error;
        if (s.weights.applied && chance(0.3)) {
            unload_weights(s);
            draw();
            if (s.weights.applied) fail("Unload kept the weights of " + s.weights.applied->path);
            return;
        }
        if (chance(0.4)) {
            const int C = chance(0.5) ? 8 : 24;
            const std::string path = dir + "/good-" + std::to_string(C) + ".safetensors";
            if (!load_weights_file(s, path, 0, error)) {
                fail("the good weights file " + path + " was refused: " + error);
                return;
            }
            draw();
            if (s.config.applied.n_embd != C || !s.weights.applied || !s.error.empty())
                fail("the weights of " + path + " were not applied (" + s.error + ")");
            else ++weights_loaded;
            return;
        }
        const char* const bad[] = {"truncated.safetensors", "header-past-end.safetensors", "nan.safetensors",
                                   "text.safetensors", "empty.safetensors", "a-directory.json", "missing.safetensors"};
        const std::string path = dir + "/" + bad[uniform(0, int(std::size(bad)) - 1)];
        const Config before = s.config.applied;
        const std::string weights_before = s.weights.applied ? s.weights.applied->path : "";
        const Mat y = s.run.trace.y;
        const bool taken = load_weights_file(s, path, 0, error);
        draw();
        const bool kept = same_config(s.config.applied, before) && (s.weights.applied ? s.weights.applied->path : "") == weights_before &&
                          s.run.trace.y.rows() == y.rows() && s.run.trace.y.cols() == y.cols() &&
                          std::memcmp(s.run.trace.y.data(), y.data(), size_t(y.size()) * sizeof(float)) == 0;
        if (taken || error.empty()) fail("the bad weights file " + path + " was not refused");
        else if (!kept) fail("the bad weights file " + path + " changed the state");
        else ++weights_refused;
    }

    // Words in the side panel's text box: a few words from a small vocabulary (so words
    // repeat), clearing the text, or more words than the window takes (refused, state kept).
    void text_edit() {
        const char* const vocab[] = {"the", "cat", "saw", "a", "dog", "sat", "on", "mat", "é", "∞"};
        std::string text, error;
        const int r = uniform(0, 9);
        if (r == 0) {
            set_text(s, "", error);
            draw();
            if (!s.tokens.applied.empty()) fail("clearing the text kept " + std::to_string(s.tokens.applied.size()) + " words");
            return;
        }
        const bool too_many = r == 1;
        const int n = too_many ? max_words(s) + 1 : uniform(1, 12);
        for (int i = 0; i < n; ++i) text += std::string(i ? " " : "") + vocab[uniform(0, int(std::size(vocab)) - 1)];
        const Config before = s.config.applied;
        const bool taken = set_text(s, text, error);
        draw();
        if (too_many) {
            if (taken || error.empty()) fail(std::to_string(n) + " words were not refused");
            else if (!same_config(s.config.applied, before)) fail(std::to_string(n) + " words changed the state");
            else ++refused;
        } else if (!taken || s.config.applied.seq_len != n || int(s.tokens.applied.size()) != n) {
            fail("the text \"" + text + "\" was not applied (" + error + s.error + ")");
        }
    }

    // "Reset to the lesson", as the side panel's button and the key L do it.
    void reset() { reset_to_lesson(s); }

    // RSS at a fixed state: the lesson after Reset, in the walk view at text size 1, three
    // frames settled. Reset keeps the text size, and a font atlas baked at size 3 holds
    // about 6 MB more than at size 1 (plus its texture): that is not memory kept. Freed heap
    // goes back to the system first (malloc_trim), so the reading is what the run still holds.
    double checkpoint_rss() {
        drag_left = 0;
        reset();
        s.screen.font_scale = 1.f;
        s.fonts_dirty = true;
        s.screen.view = View::walk;
        s.screen.step = 0;
        for (int i = 0; i < 3; ++i) draw();
        // A session reopened last retrains its Train view on a worker thread: read RSS once
        // that is done, not half-way through its scoring buffers.
        if (s.train && s.train->session) s.train->session->wait_idle();
        if (!same_config(s.config.applied, lesson_config()) || s.weights.applied || !s.tokens.applied.empty())
            fail("Reset did not bring back the lesson's example (" + describe(s.config.applied) + ")");
#if !defined(__SANITIZE_ADDRESS__)
        malloc_trim(0); // hand freed heap back, so that RSS counts what is kept, not what malloc caches
#endif
        return rss_mb();
    }

    // The boundary sizes, each in every view, before the first RSS reading.
    void tour() {
        const Config lesson = lesson_config();
        std::vector<Config> sizes;
        for (auto [T, C, H] : std::vector<std::array<int, 3>>{
                 {1, 1, 1}, {256, 512, 8}, {256, 256, 64}, {64, 256, 256}, {1, 512, 512 / 2}, {13, 12, 3}}) {
            Config c = lesson;
            c.seq_len = T, c.n_embd = C, c.n_head = H;
            sizes.push_back(c);
        }
        for (const Config& c : sizes) {
            apply(c, KernelChoice(frame % 3));
            request_perturbation(s, c.seq_len - 1, 1.f);
            for (int v = 0; v < view_count; ++v) {
                s.screen.view = View(v);
                s.screen.step = v * walk_last_step / (view_count - 1);
                draw();
            }
        }
        // One session saved and reopened: its Train view retrains on a new worker thread,
        // whose malloc arena and scoring buffers are made once, on first use, not kept per
        // reopen; they belong before the first reading, as the sizes' textures do.
        const std::string path = dir + "/tour.json";
        save_session_file(s, path);
        open_session_file(s, path);
        draw();
        if (s.train && s.train->session) s.train->session->wait_idle();
    }

    void random_frame() {
        const double r = std::uniform_real_distribution<double>(0, 1)(rng);
        if (r < 0.30) perturb_edit();
        else if (r < 0.36) apply(random_config(), s.kernel_choice.edit);
        else if (r < 0.39) {
            Config c = s.config.edit;
            switch (uniform(0, 2)) {
            case 0: c.mask = MaskMode(uniform(0, 2)); break;
            case 1: c.scale = ScaleMode(uniform(0, 2)); break;
            default: c.seed = chance(0.2) ? UINT64_MAX : uint64_t(uniform(0, 1000)); break;
            }
            apply(c, s.kernel_choice.edit);
            return;
        } else if (r < 0.41) {
            apply(s.config.edit, KernelChoice(uniform(0, 2)));
            return;
        } else if (r < 0.46) s.screen.view = View(uniform(0, view_count - 1));
        else if (r < 0.51) s.screen.step = chance(0.3) ? (chance(0.5) ? 0 : walk_last_step) : std::clamp(s.screen.step + (chance(0.5) ? 1 : -1), 0, walk_last_step);
        else if (r < 0.56) window_edit();
        else if (r < 0.57) s.screen.shared_ranges = !s.screen.shared_ranges;
        else if (r < 0.575) {
            s.screen.theme = Theme(uniform(0, 2));
            s.fonts_dirty = true;
        } else if (r < 0.578) {
            s.screen.font_scale = chance(0.5) ? (chance(0.5) ? 1.f : 3.f) : uniform_real(1, 3);
            s.fonts_dirty = true;
        } else if (r < 0.583) reset();
        else if (r < 0.588) {
            file_edit();
            return;
        } else if (r < 0.593) {
            weights_edit();
            return;
        } else if (r < 0.603) {
            text_edit();
            return;
        } else if (r < 0.623) {
            refuse(random_invalid());
            return;
        }
        // Otherwise: an idle frame.
        draw();
    }
};

} // namespace

int run_soak(AppState& s, const SoakPlan& plan, GlErrorCounter& gl, const std::function<void()>& draw_frame) {
    Soak k(s, plan, gl, draw_frame);
    const auto t0 = std::chrono::steady_clock::now();
    const int warmup = soak_warmup_frames(plan.frames);
    double rss_warm = -1, rss_end = -1;
    try {
        make_soak_files(k.dir);
        k.draw(); // the state as init_app_state left it
        k.tour();
        while (k.frame < warmup) k.random_frame();
        rss_warm = k.checkpoint_rss();
        const int fault_frame = k.frame + (plan.frames - k.frame) / 2;
        bool provoked = false;
        // The last three frames are the final checkpoint's.
        while (k.frame < plan.frames - 3) {
            k.random_frame();
            if (plan.fault == SoakFault::gl_error && !provoked && k.frame >= fault_frame) {
                provoke_gl_error();
                poll_gl_errors(gl);
                provoked = true;
            }
            if (plan.fault == SoakFault::leak) {
                k.leaked.emplace_back(size_t(512) << 10, char(1)); // touched, so resident; far above RSS noise
            }
        }
        rss_end = k.checkpoint_rss();
    } catch (const std::exception& e) {
        k.fail(std::string("a frame threw: ") + e.what());
    }
    remove_soak_files(k.dir);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double growth = rss_end - rss_warm;
    const int64_t errors = gl_error_count(gl);

    std::printf("{\"frames\": %d, \"seed\": %" PRIu64 ", \"warmup_frames\": %d, \"gl_errors\": %" PRId64
                ", \"gl_debug_output\": %s, \"rss_mb_after_warmup\": %.2f, \"rss_mb_end\": %.2f, "
                "\"rss_growth_mb\": %.2f, \"rss_peak_mb\": %.2f, \"refused_edits\": %" PRId64
                ", \"config_edits\": %" PRId64 ", \"files_opened\": %" PRId64 ", \"files_refused\": %" PRId64
                ", \"weights_loaded\": %" PRId64 ", \"weights_refused\": %" PRId64 ", \"seconds\": %.1f}\n",
                k.frame, plan.seed, warmup, errors, gl.debug_output ? "true" : "false", rss_warm, rss_end, growth,
                k.rss_peak, k.refused, k.config_edits, k.files_opened, k.files_refused, k.weights_loaded,
                k.weights_refused, seconds);
    std::fflush(stdout);

    std::string why = k.failure;
    if (why.empty() && errors > 0)
        why = std::to_string(errors) + " OpenGL error(s), the first: " + gl.first_message;
    if (why.empty() && (rss_warm < 0 || rss_end < 0)) why = "could not read the resident set size from /proc/self/statm";
    if (why.empty() && growth > max_rss_growth_mb) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "resident memory grew by %.2f MB after warm-up (from %.2f to %.2f MB), over the %.0f MB allowed",
                      growth, rss_warm, rss_end, max_rss_growth_mb);
        why = buf;
    }
    if (!why.empty()) {
        std::fprintf(stderr, "attnviz: soak failed: %s\n", why.c_str());
        return 1;
    }
    return 0;
}

} // namespace attnviz
