// gui_plan.h: the window's options, and the plan they make: every value checked before any
// window opens, so that a bad one is one sentence and exit status 2 even without a display.
//
//   attnviz [config options] [--view walk|qkv|scores|causality|check|train|model] [--head N] [--step N] [--perturb P]
//           [--strength A] [--theme dark|light|high-contrast] [--font-scale S] [--palette default|cb]
//           [--settings FILE]
//   attnviz ... --screenshot FILE.png [--size WxH]
//   attnviz --open FILE [--screenshot ...] [--save-session FILE]
//   attnviz --weights TRAINED.safetensors [--text "a b c a b d"] [--layer L] [--perturb P] ...
//   attnviz --model GPT2_DIR|NANOGPT.safetensors|TRAINED.safetensors [--text "..." | --tokens 1,2,3]
//           [--n-head H] [--layer L] [--perturb P [--replace ID]] [--ablate L.H,... [--ablate-mode zero|mean]] ...
//   attnviz --view train [--task T --seed S --n-embd C --n-head H --n-layer L --lr X --batch B]
//           [--train-steps N] [--screenshot ...]
#pragma once
#include "app_state.h"
#include "options.h"
#include "theme.h"
#include "train_session.h"
#include "train_view_state.h"
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnviz {

struct GuiOptions {
    ConfigOptions config;
    std::string screenshot;   // render one state into this PNG and exit
    std::string size;         // "WxH", default 1280x800
    std::string view;         // walk (default), qkv, scores, causality, check
    std::string step;         // shape-walk step, 0 (the input x) .. 11 (proj)
    std::string strength;     // 0 (original row) .. 1 (the lesson's replacement row)
    std::string theme;        // dark (default), light, high-contrast
    std::string font_scale;   // 1 .. 3
    std::string open;         // start from this session file
    std::string save_session; // write the state to this session file (after the screenshot, or on exit)
    std::string save_weights; // write the model the window holds (after the screenshot, or on exit)
    std::string palette;      // default (RdBu, viridis) or cb (PuOr, cividis)
    std::string settings;     // the settings file (settings.h); headless runs use one only when given
    // The Train view's run, as `attnviz train` takes it. With --task, --seed, --n-embd and
    // --n-head are the run's (and the lesson's config keeps its own defaults).
    std::string task, train_steps, lr, batch, n_layer;
    std::string head;         // the first head every per-head view shows, 0 .. H-1
    std::string ablate;       // heads of the model shown to ablate, "0.1,1.0" (L.H)
    std::string ablate_mode;  // zero (default) or mean
    std::string model_panel;  // the Model view's main area: heads (default), lens or patching
    std::string patch_corrupt, patch_answer, patch_wrong; // the Patching panel's fields, then Run
    // Follow the teacher (serve_link.h): serve the web page and this window's state.
    bool serve = false;
    std::string port, bind, max_clients, site;
    std::string per_address;              // the most pages from one address ("" for 8)
    std::vector<std::string> allow_hosts; // names a page's Host may give besides this machine's
    bool no_code = false;                 // no class code
};

void add_gui_options(CLI::App& app, GuiOptions& o);

// Everything the options say, checked.
struct GuiPlan {
    Config config;
    KernelChoice kernel = KernelChoice::automatic;
    View view = View::walk;
    int step = 0;
    std::optional<int> perturb;
    std::optional<float> strength;
    Theme theme = Theme::dark;
    std::optional<float> font_scale;
    bool theme_given = false;
    std::optional<PaletteKind> palette;
    int width = 1280, height = 800;
    bool headless = false;      // a hidden window, no vsync, no settings file unless --settings
    bool debug_context = false; // a GL debug context, so that KHR_debug reports every error
    // --text and --weights (or the session's words and weights file).
    std::vector<std::string> tokens;
    std::shared_ptr<const WeightsFile> weights;
    // --weights with a model attnviz train wrote: the model on --text's letters (or a default
    // sequence), the block shown (--layer) and --perturb's position.
    std::shared_ptr<const TrainedInput> trained;
    int layer = 0;
    int replace_token = -1; // the letter --perturb blends toward (a session's); -1: the next
    std::optional<int> head; // --head: the first head of every per-head view
    // --ablate and --ablate-mode (or a session's): the Model view's ablation of the model shown.
    std::vector<HeadRef> ablate;
    AblationMode ablate_mode = AblationMode::zero;
    // --model-panel, and --patch-corrupt with the answers (Run once the model is shown).
    ModelPanel model_panel = ModelPanel::heads;
    std::optional<std::string> patch_corrupt;
    std::string patch_answer, patch_wrong;
    // The Train view's run (--task ...), and the step it trains to before the window shows.
    std::optional<TrainSettings> train;
    int64_t train_steps = 0;
    std::shared_ptr<TrainViewState> train_state; // a session's Train view (--open)
    GenerateRestore generate;                    // a session's generation (--open), written again
};

// On failure returns false with one sentence in `error`.
bool make_plan(const GuiOptions& o, GuiPlan& plan, std::string& error);

} // namespace attnviz
