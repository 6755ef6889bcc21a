// session.h: the whole state of a class demonstration, saved to JSON and reopened.
//
// A teacher saves the exact state of last week's slide (config, words, view, step,
// perturbation, theme, font scale) and reopens it with `attnviz --open FILE`. Reading is
// strict: a file that is not a session, is from a newer version, or holds a bad value is
// rejected with one sentence, and the caller keeps its current state.
#pragma once
#include "config.h"
#include "sampling.h"
#include <algorithm>
#include <string>
#include <vector>

namespace attnviz {

constexpr int session_version = 1;

// The Train view's run: its settings and step. The run is retrained from its seed to that
// step when the session is reopened (training is deterministic, so the weights come back bit
// for bit, with the loss curve and the history); the weights at that step are also written
// beside the session, as NAME.train.safetensors, for attnviz heads, trace and the check.
struct SessionTrain {
    bool present = false;
    std::string task = "both";
    uint64_t seed = 0;
    int vocab = 16, seq_len = 16, n_embd = 64, n_head = 4, n_layer = 1;
    double lr = 5e-3;
    int batch = 64;
    int64_t step = 0;
    int64_t scrub = -1;      // the history step shown, -1: the latest
    std::string probe;       // the probe's letters, "" for the default
    int speed_index = 0;
    std::string weights_path; // set by read_session: the file beside the session
};
// NAME.train.safetensors for NAME.json (or NAME): where the Train view's weights go.
std::string train_weights_path(const std::string& session_path);

// A trained model shown in the views ("Open in the views", or --weights with a trained
// file): its weights go beside the session as NAME.model.safetensors.
struct SessionModel {
    bool present = false;
    std::string letters;      // the sequence after BOS, "a b c a b d"
    int layer = 0;            // the block every view shows
    int replace_token = -1;   // the letter the perturbed position blends toward; -1: the next
    std::string source;       // what the side panel says it came from
    std::string ablate;       // the ablated heads, "0.1,1.0" as --ablate takes them; "" for none
    std::string ablate_mode = "zero"; // "zero" or "mean" (ablation.h)
    std::string weights_path; // set by read_session: the file beside the session
};
// NAME.model.safetensors for NAME.json (or NAME).
std::string model_weights_path(const std::string& session_path);

// The Generate view's generation: the tokens written after the prompt and the sampling options.
// Reopened, the same tokens are written again on the shown input's cache (the sampler, re-made
// from the seed and the draws taken, goes on from where it was). Optional: sessions saved
// before it open at the prompt.
struct SessionGenerate {
    bool present = false;
    SamplingOptions options;
    std::vector<int> tokens;    // the generated ids (the lesson's module: -1, one per new row of x)
    std::vector<bool> sampled;  // per token: it took one draw (not greedy)
    std::vector<float> probs;   // per token: its probability when it was written
    int draws() const { return int(std::count(sampled.begin(), sampled.end(), true)); }
};

struct Session {
    Config config;
    std::string kernel;              // "" (chosen by size), "reference" or "fast"
    std::vector<std::string> tokens; // words as input; empty: x = torch.randn(1, T, C)
    std::string view = "walk";       // walk, qkv, scores, causality, check, train, model, generate
    int step = 0;                    // shape-walk step, 0 = the input x
    int perturb = -1;                // perturbed position, -1 = none
    double strength = 1.0;           // 0 = original row, 1 = the lesson's randn(C) row
    std::string theme = "dark";      // dark, light, high-contrast
    double font_scale = 1.0;         // 1 to 3
    std::string palette = "default"; // colormap family, see the app
    std::string weights_path;        // "" = seeded weights
    int layer = 0;                   // layer inside a GPT-2 checkpoint
    SessionTrain train;              // the Train view, when it was used
    SessionModel model;              // a trained model in the views, when one was shown
    std::vector<int> answers_shown;  // the check view's questions (from 0) whose answer is shown
    SessionGenerate generate;        // the Generate view's generation, when there is one
};

// Names the app accepts for the string fields.
const std::vector<std::string>& session_views();
const std::vector<std::string>& session_themes();

// Parses session JSON text; `name` (a path) appears in error sentences.
bool parse_session(const std::string& text, const std::string& name, Session& out, std::string& error);
// Reads a file (at most 1 MiB) and parses it. `out` is untouched on failure.
bool read_session(const std::string& path, Session& out, std::string& error);
// Serialises a session (pretty JSON, stable key order).
std::string session_to_json(const Session& s);
// Writes through AtomicFile (atomic_file.h), so a failed write leaves the old file as it was.
bool write_session(const std::string& path, const Session& s, std::string& error);

} // namespace attnviz
