// app_state.h: everything the window shows and edits, as one plain struct, and the one
// function that recomputes it.
//
// Panels read AppState and, on an edit, change a field and set a dirty flag. Once per
// frame, before the panels run, recompute() does the work the flags ask for: a full
// forward() when the config changed, update_row() when only the perturbed position or
// the strength changed. It also says which texture rows the loop must upload, and keeps
// the few numbers panels print that the trace does not hold (the check view's sharpness
// table, the causality view's summary of dy), so that panels only draw.
#pragma once
#include "ablation.h"
#include "bpe_tokenizer.h"
#include "experiment.h"
#include "follow.h"
#include "generate_state.h"
#include "hub_get_state.h"
#include "gpt_causality.h"
#include "head_detector.h"
#include "heatmap_renderer.h"
#include "lens_state.h"
#include "model.h"
#include "patch_state.h"
#include "source.h"
#include "staged.h"
#include "trace_textures.h"
#include "view_runs.h"
#include "view_names.h"
#include "weights_io.h"
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnviz {

struct TrainViewState; // train_view_state.h

// The shape walk: step 0 is the input x, the last step is proj.
constexpr int walk_last_step = 11;

// What the window may hold for one configuration (window_bytes): the trace, the
// unperturbed copy (whole up to keep_base_cap, else only its y), the (T, C) and (C, C)
// textures of each, and the per-head (T, T) textures up to the renderer's
// head_texture_budget (128 MiB) or one frame's four when those are more. 1.1 GiB of that
// takes (2048, 2048, 16), the largest size the project names (about 1.0 GiB; 1.1-1.3 GB
// peak RSS in every view, Mesa and the fonts included), and at the cap's edges every view
// peaks at 1.18-1.34 GB. The textures must be counted, not the trace alone: a wide C
// ((2800, 4096, 1)) or a long T ((8070, 8, 2)) has a trace well under the cap and peaks at
// 1.6 or 2.2 GB in the window.
constexpr int64_t gui_memory_cap = int64_t(1126) << 20;
// A whole GPT model's cap (gpt_window_bytes): GPT-2 small on its 1024 tokens, 1.34 GiB by
// that estimate, peaks at PEAK_WALK in the window (docs/models.md); GPT-2 medium's weights
// alone (1.3 GiB) are refused.
constexpr int64_t gui_gpt_memory_cap = int64_t(1400) << 20;
// Up to this size the unperturbed trace is kept whole, so that every view can outline
// the cells the perturbation changed; above it only the unperturbed output y is kept.
constexpr int64_t keep_base_cap = int64_t(256) << 20;

// A GPT model whose every layer's softmax weights (L H T^2 floats) are over this many bytes
// is shown from a compact trace (gpt_model.h: the 1024-token context of GPT-2 small), on the
// fast kernel: the grid draws pooled pictures and a hovered head is recomputed.
constexpr int64_t gpt_compact_default = int64_t(128) << 20;

// Bytes the window holds for config c (see gui_memory_cap).
int64_t window_bytes(const Config& c);
// validate() for the window: "" when c is valid and window_bytes(c) <= cap, else one
// sentence naming the sizes and what to do instead.
std::string validate_window(const Config& c, int64_t cap);

// What one view shows of matrices too big to read whole: a zoom factor and the first
// query row, key column, channel and head on screen. All panels of a view share it, so
// heads and steps line up cell for cell.
struct ViewWindow {
    float zoom = 1;   // multiplies the cell size chosen to fit
    int row0 = 0;     // first position shown as a row (query position i, or position t)
    int key0 = 0;     // first key position j shown as a column
    int chan0 = 0;    // first channel c shown as a column
    int head0 = 0;    // first head shown
    int centred_p = -1; // the perturbed position the window last scrolled to (causality)
};

// A matrix that shows only a window of its cells, as the overview (minimap) in the side
// panel draws it: the whole matrix, with the window outlined; a click moves the window.
struct Minimap {
    bool active = false;
    HeatmapDraw whole;       // the heatmap draw for every cell (screen rectangle set when drawn)
    std::string title;
    int rows = 0, cols = 0;
    int row0 = 0, col0 = 0, nrows = 0, ncols = 0;
    int row_axis = 0, col_axis = 0; // the matrix_panel Axis of rows and columns
    int view = 0;                   // the view whose window it moves
};

// One drawn rectangle, as attnviz_harness's --layout-out writes it: a heatmap (with its window of cells),
// a colour bar or a bar of the causality chart.
struct LayoutItem {
    std::string kind;  // "heatmap", "colorbar", "bar"
    std::string name;  // e.g. "masked", "probs", "y" (MatrixSpec::name), "dy"
    int head = -1;     // -1: not per head
    float x = 0, y = 0, w = 0, h = 0;   // screen pixels, origin top-left
    int rows = 0, cols = 0;             // shape of the whole matrix
    int row0 = 0, col0 = 0, nrows = 0, ncols = 0; // the cells shown in the rectangle
    int position = -1; // bars: the position t
    float value = 0;   // bars: max |dy| at t
};

// Weights read from a safetensors file (inputs.h): the file as given, the layer, and what
// the reader found. Shared and immutable, so that the staged and the applied state can
// hold the same file without copying its matrices.
struct WeightsFile {
    std::string path;
    int layer = 0;
    LoadedWeights loaded;
};

// A model (model.h) shown in every view instead of the lesson's module: a toy model (the
// Train view's "Open in the views", or --weights / --model with a file `attnviz train`
// wrote) or a whole GPT-2 / nanoGPT model (--model, the side panel's Open model). Shared and
// immutable, like WeightsFile, so the staged and the applied state can hold the same model.
struct TrainedInput {
    std::shared_ptr<const Model> model;
    std::vector<int> tokens; // the sequence the views run it on: toy, BOS (= vocab) first; GPT, the ids
    std::string source;      // for the side panel: "Train view, step 1000" or the file's path
    std::string name;        // a model from the Hugging Face cache: its Hub id ("gpt2"); else empty
    // What the panels, the status line and the class's pages call it: the name, else the source.
    const std::string& shown_name() const { return name.empty() ? source : name; }
    // GPT only: GPT-2's tokenizer found beside the model (nullptr: none, ids are typed), the
    // sentence saying why there is none, and the text the ids came from ("" when typed as ids).
    std::shared_ptr<const BpeTokenizer> tokenizer;
    std::string tokenizer_note;
    std::string text;
    std::string layout;      // GPT: "GPT-2 (Hugging Face)" or "nanoGPT"
    // A teacher's GPT layer on a page that follows (follow_gpt.h): the model holds its sizes
    // and no weights, and every number the views read was received, none can be computed;
    // `labels` names the ids the page shows (it has no tokenizer).
    bool received = false;
    std::map<int, std::string> labels;
    // This input is a GPT model (a staged or a read one); for what is shown, ask the source (source.h).
    bool gpt() const { return model && model->config.arch == Arch::gpt; }
};

// What the views show (source.h) and what of it: the block of a model shown, the letter the
// perturbed position is blended toward, the positions' labels. While a model is shown,
// run.trace and run.base are block `layer`'s of the perturbed and the unperturbed forward
// (model_run), run.experiment holds that block's weights and input, and `config` is the one
// the views need (T = the tokens, C, H, causal, ÷ √head_dim).
struct ShownModel {
    Source source;                    // applied by recompute (the staged one: edit_trained, weights.edit)
    int layer = 0;                    // the block shown in every view
    int replace_token = -1;           // the letter position p is blended toward; -1: the next letter
    std::vector<std::string> words;   // "^", "a", ... or GPT's "The", "·cat": the position labels
};

// The Model view's head ablation (ablation.h): one run's summaries, as recompute() keeps
// them for the clean model (no head ablated) and for the ablated one.
struct RunSummary {
    TaskMetrics task;            // toy: loss and accuracies on the accuracy probe (seed 4321)
    double loss = NAN;           // GPT: the next-token loss on the text
    std::vector<TokenProb> top;  // GPT: the top 5 at the DLA's position
    HeadDetection detection;     // the head detector (text and repeated sequences)
    LogitAttribution dla;        // at the position onto the clean run's top-1 token there
    bool has_dla = false;
};
// Before (clean) and after (ablated), and what the clean numbers belong to: they are kept
// until the model, its tokens or the kernel change.
struct AblationNumbers {
    RunSummary clean;
    RunSummary ablated;          // valid while AppState::ablation.applied is not empty
    int pos = -1;                // the DLA's and the top 5's position: the predictions' picker
    int token = -1;              // the clean run's top-1 token there (the DLA's logit)
    std::shared_ptr<const Model> clean_model; // whose clean numbers these are (nullptr: none)
    std::vector<int> clean_tokens;
    KernelKind clean_kernel = KernelKind::reference;
    bool clean_repeat = false;   // clean.detection.repeat_induction is the clean_model's
    // What ablated.detection.repeat_induction was measured with (it needs no text unless the
    // means do): the model and the ablation, or nullptr.
    std::shared_ptr<const Model> repeat_model;
    Ablation repeat_ablation;
};

// What is on screen and how it looks: the view and its step, each view's window of cells,
// the colours and fonts, the side panel and the overlays, and what the last frame drew.
// The panels and the keys edit it. Nothing in it changes what the core computes: the state
// layer touches it only to save and restore it in a session, to switch the view when an
// action means another one (Open in the views, the check view's demonstration), to ask for
// a PNG, and in range_of.
struct ScreenState {
    View view = View::walk;
    int step = 0;
    ViewWindow windows[view_count];
    bool shared_ranges = true;
    Theme theme = Theme::dark;
    float font_scale = 1;
    bool screenshot_mode = false; // no frame-time text
    bool answer_shown[check_question_count] = {}; // the check view's revealed answers (in sessions)
    PaletteKind palette = PaletteKind::standard;
    PanelMode side_panel = PanelMode::automatic;
    bool panel_visible = true;       // the side panel was drawn in the last frame
    bool focus_panel = false;        // F6: put the keyboard in the side panel's first field
    bool show_help = false;          // F1: the shortcut overlay
    bool fullscreen_toggle = false;  // F11: asks the loop to switch full screen
    float frame_ms = 0;
    float view_rect[4] = {0, 0, 0, 0};     // the view's screen rectangle x0, y0, x1, y1 (tabs included)
    // A PNG the loop writes after the next frame is drawn (empty: none asked for).
    std::string png_request;
    // Rectangles drawn in the last frame (the harness's --layout-out), and the overview to draw next frame.
    std::vector<LayoutItem> layout;
    Minimap minimap;
};

// The side panel's text fields and pickers as the user types them: nothing in them is
// applied until a button or Enter hands it to a request function (inputs.h,
// app_state.h), which also writes back what was applied.
struct FieldState {
    std::string text_field;                // the words box
    std::string weights_field;             // the weights path
    int layer_field = 0;                   // the weights file's layer
    std::string session_path = "attnviz-session.json"; // Save / Open session
    // Export (inputs.h): the picture's and the tensor's paths, and the tensor.
    std::string png_path = "attnviz-walk.png";
    std::string tensor_path = "attnviz-x.npy";
    int export_tensor = 0;                 // index into all_tensor_names()
    std::string replace_field;             // GPT: the causality view's replacement, a word or an id
    std::string sequence_field;            // a model's letters (BOS left out), or GPT's text or ids
};

// The Model view (model_view*.cpp): every layer's heads, the head detector and the
// next-token predictions, all computed by recompute() (recompute_model_view.cpp), and the
// grid's paging and the cursor the panels leave for the keys.
struct ModelViewState {
    HeadDetection detection;                  // of what is shown: the trained model, or the lesson's module
    std::shared_ptr<const Model> detected_model; // whose repeated-sequence induction `detection` holds
    std::vector<HeadRole> roles;              // the heads `detection` finds over the threshold: the grid's and the table's highlights
    int predict_pos = -1;                     // the position picker's (keyboard); -1: the last position
    int predict_hover = -1;                   // under the cursor in the grid or the scores view; -1: none
    std::vector<std::vector<TokenProb>> predictions; // per position, the top 5 (empty: not computed)
    bool grid_upload = false;                 // every block's weights textures must be sent again
    int model_layer0 = 0;                     // the grid's first layer when it pages (its first head: the view's window)
    // The head under the cursor in the grid or the table last frame (the key A ablates it).
    int hover_layer = -1, hover_head = -1;
    // A compact GPT trace keeps no softmax weights: the hovered head's, recomputed
    // (gpt_head_weights) for the grid's tooltip.
    int weights_layer = -1, weights_head = -1;
    Mat weights;
    bool run_changed = false; // a new model_base since update_model_view last ran (not a layer switch)
    // The main area: the grid, the logit lens table (lens_state.h) or the Patching panel.
    ModelPanel panel = ModelPanel::heads;
    LensTable lens;
};

// Head ablation (ablation.h, recompute_ablation.cpp). Not the Model view's alone: while a
// model is shown with heads ablated, model_base is the ablated run and every view shows it.
// The applied one, and the one asked for (applied by the next recompute; a refused one is
// put back with one sentence in `error`).
struct AblationState : Staged<Ablation> { // applied: in mean mode with its means; edit: heads and mode asked for
    bool dirty = false;
    ModelTrace model_clean;            // the clean run while heads are ablated (empty otherwise)
    AblationNumbers numbers;           // before / after, for the Model view
};

struct ModelLoad; // model_loading.cpp

struct AppState {
    // The numbers every view reads are the core's (view_runs.h): the shown layer's run
    // (experiment, trace, base, dy, ranges, the sharpness table, the summaries) and, while a
    // model is shown, the model's (every layer's run, unperturbed and changed). recompute()
    // fills them with one core call per source and edit.
    LayerRun run;
    ModelRun model_run;

    // The inputs the controls edit (staged.h): `applied` is what the views show, `edit` what
    // the controls asked for, applied by the next recompute or put back with one sentence
    // in `error`. The config in use, and how the kernel is chosen.
    Staged<Config> config;
    Staged<KernelChoice> kernel_choice{KernelChoice::automatic};
    KernelKind kernel = KernelKind::reference; // in use
    KernelKind (*auto_kernel)(const Config&) = nullptr; // how "auto" chooses; set by the app
    int64_t memory_cap = gui_memory_cap;
    int64_t gpt_memory_cap = gui_gpt_memory_cap;
    int64_t gpt_compact_above = gpt_compact_default; // tests lower it to see a small model compact

    bool ready = false;     // run holds a trace

    // The perturbation asked for: input row p blended toward the lesson's replacement row
    // (run.applied_p and run.applied_strength say what run.trace holds now).
    int p = 2;
    float strength = 0;     // 0: the original input, 1: the replacement row

    // What is on screen and how (ScreenState).
    ScreenState screen;

    // Messages: what happened last, and why an edit was refused (empty: nothing refused).
    std::string status;
    std::string error;

    // The lesson's module's words and weights (inputs.h), staged like the config; kept while
    // a model is shown, for the lesson's module to come back with.
    Staged<std::vector<std::string>> tokens;        // one word per position; empty: x = torch.randn(1, T, C)
    Staged<std::shared_ptr<const WeightsFile>> weights; // nullptr: the seeded weights
    // A model file or directory being read on a worker (model_loading.cpp); nullptr: none.
    // The views keep the shown model until it is read.
    std::shared_ptr<ModelLoad> loading;
    // The side panel's Get GPT-2: the list, the download on its worker, its outcome (hub_get_state.h).
    HubGetState hub;
    // What the side panel's fields hold (FieldState).
    FieldState fields;

    // The model in the views (ShownModel; no input: the lesson's module), and the one and the
    // block asked for: request_trained_model() and request_layer() stage them and recompute()
    // applies them with the config.
    ShownModel shown;
    std::shared_ptr<const TrainedInput> edit_trained;
    int edit_layer = 0;

    // The Model view's numbers and cursor (ModelViewState).
    ModelViewState model_view;

    // Head ablation (AblationState): the applied one, which every view shows while a model is.
    AblationState ablation;

    // The Model view's Patching panel (patch_state.h): its fields, tables and worker.
    PatchPanelState patch;

    // The Generate view (generate_state.h): the shown model writing on with a KV cache.
    GenerateState generate;

    // The Train view (train_view_state.h): its run on a worker thread, its settings and
    // history. Made on first use; shared so that AppState stays copyable.
    std::shared_ptr<TrainViewState> train;

    // Dirty flags, cleared by recompute() and by the loop.
    bool config_dirty = true;
    bool perturb_dirty = false;
    bool fonts_dirty = false;
    UploadRequest upload;      // the current trace's textures
    bool base_upload = false;  // the unperturbed textures

    // Follow the teacher (follow.h): serving pages, or following the teacher's window.
    FollowStatus follow;
};

// The lesson's example: seed 0, C = 8, H = 2, T = 4, causal mask, head_dim scale.
Config lesson_config();
// Puts the state on `c`, the lesson's module (applied by the first recompute; a trained
// model shown is dropped unless one is staged after).
void init_app_state(AppState& s, const Config& c, KernelChoice kernel);
// Requests a new config from the controls (validated by recompute; a refused one leaves the
// previous state in place and sets `error`).
void request_config(AppState& s, const Config& c, KernelChoice kernel);
void request_perturbation(AppState& s, int p, float strength);
// "Reset to the lesson" (the side panel's button and the key L, whether or not the panel is
// shown): the lesson's config and kernel choice, its input (no words, seeded weights), p = 2
// unperturbed, shared colour ranges and every view's window back to the start.
void reset_to_lesson(AppState& s);
// Stages a trained model for the views (nullptr: back to the lesson's module); the next
// recompute applies it, or refuses it with one sentence in `error` and keeps what is shown.
void request_trained_model(AppState& s, std::shared_ptr<const TrainedInput> in);
// Does what the dirty flags ask; see the top of this file.
void recompute(AppState& s);

// ---- Head ablation (recompute_ablation.cpp)

// Asks for these heads to be ablated (empty: none) with `mode`; the next recompute applies
// it to the shown model, or refuses it with one sentence in `error` (a head the model does
// not have, the lesson's module, no room for the clean run beside the ablated one).
void request_ablation(AppState& s, std::vector<HeadRef> heads, AblationMode mode);
// One head in or out of the asked-for ablation (the grid's mark, the table's box, the key A).
void toggle_ablation(AppState& s, int layer, int head);
// Every head back ("Restore all", Shift+A).
void restore_all_heads(AppState& s);
// The head is ablated in what is shown, or asked to be.
bool head_ablated(const AppState& s, int layer, int head);
// "L0 h1, L1 h2" for the heads of an ablation ("" for none).
std::string ablated_heads_text(const Ablation& a);

// ---- A trained model in the views (recompute_model.cpp)

// The block every view shows, 0 .. L-1 (applied by the next recompute).
void request_layer(AppState& s, int layer);
// The letter the perturbed position is blended toward (-1: the letter after the one at p).
void request_replacement(AppState& s, int token);
// (position_words and replacement_token are the source's answers, source.h.)
// "a b c a b d" (BOS left out) as the shown model's tokens, staged like a new model; a
// word outside its vocabulary, or more words than its positions, is refused with one
// sentence in `error` (and s.error) naming the vocabulary or the limit.
bool set_trained_sequence(AppState& s, const std::string& text, std::string& error);
// The same parse for any model: BOS first, then the words' tokens.
bool parse_trained_sequence(const ModelConfig& c, const std::string& text, std::vector<int>& tokens, std::string& error);
// A sequence every model can read: "a b c d a b c d" (its first letters, repeated, so an
// induction head has something to copy), cut to the model's positions.
std::vector<int> default_trained_tokens(const ModelConfig& c);
// "a b c d" for the side panel's field (BOS left out).
std::string sequence_text(const ModelConfig& c, const std::vector<int>& tokens);
// Reads a trained model file and stages it on `text` (empty: default_trained_tokens). On
// failure `error` is one sentence naming the file or the word, and nothing is staged.
bool open_trained_file(AppState& s, const std::string& path, const std::string& text, std::string& error);
bool read_trained_input(const std::string& path, const std::string& text, std::shared_ptr<const TrainedInput>& out,
                        std::string& error);

// ---- A GPT-2 or nanoGPT model in the views (recompute_gpt.cpp)

// A token as every axis labels it: GPT-2's "Ġcat" as "·cat" (each space a middle dot, so a
// leading space shows), a newline as \n, a tab as \t, other control bytes and bytes that
// are not UTF-8 on their own as \xNN; "#464" without a tokenizer.
std::string gpt_token_label(const BpeTokenizer* tok, int id);
// Bytes the window holds for a GPT model on T tokens: its weights, the unperturbed and the
// changed trace (lean when large), the shown layer's traces and textures, the grid's.
int64_t gpt_window_bytes(const Model& m, int T);
// (gpt_compact_default is above AppState.)
bool gpt_compact(const ModelConfig& c, int T, int64_t above = gpt_compact_default);
// The text through the model's tokenizer, or, without one, ids ("464, 3797" or "464 3797");
// false with one sentence for an empty or over-long input, or an id outside the vocabulary.
bool parse_gpt_input(const TrainedInput& in, const std::string& text, std::vector<int>& ids, std::string& error);
// The side panel's field for the tokens shown: the text, or the ids.
std::string gpt_sequence_text(const TrainedInput& in);
// Reads a GPT-2 directory or nanoGPT file (gpt_io.h) and its tokenizer beside it, on `text`
// (through the tokenizer) or `ids` (typed ids; at most one of the two), else a default
// sentence (or default ids without a tokenizer). False with one sentence on failure.
bool read_gpt_input(const std::string& path, std::optional<int> n_head, const std::string& text,
                    const std::string& ids, std::shared_ptr<const TrainedInput>& out, std::string& error);
// The causality view's replacement for a GPT model: a word that is one token through the
// tokenizer (" dog"), or an id; empty: the next id. Turns the replacement on. A refused one
// keeps the current with one sentence in `error` and s.error.
bool set_replacement_text(AppState& s, const std::string& text, std::string& error);
// Opens any model file or directory in the views: a toy model attnviz train wrote, a GPT-2
// directory or a nanoGPT file; staged like request_trained_model (layer 0). On failure
// nothing is staged and `error` (and s.error) is one sentence.
bool open_model_path(AppState& s, const std::string& path, std::string& error);

// ---- Reading a model off the frame thread (model_loading.cpp)

// The side panel's "Open model" and "Load weights…" for a whole model: a GPT-2 directory, a
// nanoGPT file or a model attnviz train wrote is read on a worker while the frame goes on;
// s.status says what is being read and for how long. `layer` (>= 0) is the layer to show of
// a trained model, as load_weights_file takes it. False, with one sentence in `error` and
// s.error, when nothing was started: an empty path, or a read still going.
bool request_model_path(AppState& s, const std::string& path, std::string& error, int layer = -1);
// The panel's "Load weights…": a whole model through request_model_path, a single attention
// block's file (small) through load_weights_file at once.
bool request_weights_file(AppState& s, const std::string& path, int layer, std::string& error);
// The Model view's weights of (layer, head) for a tooltip: the grid's model run's, the shown
// layer's, or the hovered head's recomputed for a compact trace; nullptr while it is not
// computed yet (the next recompute does).
const Mat* grid_head_weights(const AppState& s, int layer, int head);

// Called by recompute() every frame: stages a finished read like open_model_path (or says
// why it was refused), else refreshes the progress line. `wait`: blocks until it is read
// (the headless picture, which must show the model asked for).
void poll_model_load(AppState& s, bool wait = false);
bool model_loading(const AppState& s);

// Largest |value| for a family, honouring s.screen.shared_ranges; never 0.
float range_of(const AppState& s, const RangeSet& r, int head);

} // namespace attnviz
