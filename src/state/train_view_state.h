// train_view_state.h: what the Train view shows and edits, and the work it needs done
// outside the panels.
//
// The panels (train_view*.cpp) only draw this state and record edits: the settings through
// request_train_settings (a refused value keeps the run and says why), the run's controls
// straight to the session (they only post a request to its worker). Once per frame, before
// the panels, refresh_train_view() copies what the worker published (when it changed),
// picks the step to show (the latest, or the scrubbed snapshot), and runs the model on the
// probe sequence for the heads' attention patterns and labels.
#pragma once
#include "check_patch.h"
#include "ablation.h"
#include "train_session.h"
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

struct AppState;

// The speeds the view offers, steps per second; 0 is "as fast as the machine goes".
const std::vector<double>& train_speeds();

// A head's score passes its threshold: the label the view writes under it.
// The thresholds follow what trained heads reach and untrained ones do not: a trained
// previous-token head scores 0.74 to 0.99, a duplicate head 0.73 to 0.99, an induction head
// 0.82 to 0.90, while at step 0 every score is near 1 / (keys visible), under 0.35.
constexpr float prev_token_threshold = 0.6f, duplicate_threshold = 0.6f, induction_threshold = 0.6f;

// One head on the probe, as shown.
struct HeadView {
    int layer = 0, head = 0;
    std::vector<float> probs; // (N, N) row-major softmax weights on the probe, 0 above the diagonal
    float prev_token = 0, duplicate = 0, induction = 0;
    std::string label;        // "previous-token head (0.98)", or "" below every threshold
};

// The picture at one step: the model, its heads on the probe, its accuracy.
struct TrainPicture {
    int64_t step = -1;
    std::shared_ptr<const Model> model;
    std::vector<int> probe;           // tokens, BOS first
    std::vector<HeadView> heads;      // layer-major
    bool scored = false;              // scores and accuracy belong to this step
    int64_t scores_step = -1;         // the snapshot the scores come from
    std::map<std::string, double> accuracy;
};

// Question 2's second "Show me" (the check view): `both` at its recipe trained to its default
// end with H = 1, then with H = 4, at the same C, seed and batches, each run on a worker of
// its own. The numbers and labels are the runs' own; the panel only draws them.
struct HeadsRun {
    TrainSettings settings;
    std::unique_ptr<TrainSession> session; // made when its turn comes
    TrainStatus status;                    // as last published
    TrainPicture picture;                  // the last step's heads on the probe, once done
    bool done() const { return picture.model != nullptr; }
};
struct HeadsComparison {
    int64_t steps = 0;          // both's default end
    std::vector<HeadsRun> runs; // H = 1, then H = 4; empty until asked for
    std::string sentence;       // what the class sees, once both runs are done
    bool scroll = false;        // the check view brings it into sight (at the start, when done)
};

// Question 4's "Show me" (the check view): the 2-layer induction model trained at its recipe's
// defaults on a worker, then, in recompute(), layer 0's previous-token heads found by the
// detector and ablated (zero): the layer-1 induction heads' scores on repeated sequences,
// their patterns on the probe and the next-token accuracy, before, ablated and restored.
struct AblationDemoState {
    std::string name;                          // "before", "ablated", "restored"
    Ablation ablation;                         // empty: the clean model
    std::vector<std::vector<float>> induction; // [layer][head], on repeated sequences
    TaskMetrics metrics;                       // loss and "next" accuracy on the accuracy probe
    std::vector<HeadView> heads;               // the layer-1 induction heads on the probe
};
struct AblationDemo {
    int64_t steps = 0;                      // induction's default end
    TrainSettings settings;
    std::unique_ptr<TrainSession> session;  // while it trains
    TrainStatus status;
    TrainPicture picture;                   // the trained model and the probe (once done)
    bool computed = false;                  // recompute() filled what follows
    std::vector<int> prev_heads;            // layer 0's previous-token heads (ablated)
    std::vector<float> prev_scores;         // their previous-token scores (the recipe's probe)
    std::vector<int> induction_heads;       // layer 1's induction heads in the clean model
    AblationDemoState states[3];            // before, ablated, restored
    double chance = 0;                      // 1 / V
    std::string sentence;                   // built from the run's own numbers
    bool scroll = false;
    bool asked() const { return steps > 0; }
    bool trained() const { return picture.model != nullptr; }
};

struct TrainViewState {
    // The run, and the settings the fields show (applied by request_train_settings).
    std::unique_ptr<TrainSession> session;
    TrainSettings settings;
    TrainSettings edit;
    std::string lr_field = "0.005";
    int speed_index = 0; // into train_speeds()
    std::string error;   // why the last settings edit was refused ("" when none)
    std::string status;  // what the last action did (saved, loaded, resumed)
    // The run's step when `status` was said. Once the run has trained on from there and
    // stopped, refresh_train_view says where it is instead, so no line outlives its truth
    // ("A new run", "Retraining ..." after the run got there).
    int64_t status_step = 0;
    std::string seen_message; // the worker's last message taken into `status`

    // The probe: the letters the heads are shown on.
    std::string probe_field;
    std::vector<int> probe;    // tokens, BOS first; N = T + 1
    std::string probe_error;
    uint64_t shuffles = 0;

    // History: -1 follows the run; otherwise the snapshot step the scrubber shows.
    int64_t scrub = -1;
    int64_t restore_scrub = -1; // a session's scrubbed step, set once its run is retrained
    std::string model_path = "attnviz-train.safetensors";

    // Copies of what the worker published, refreshed when its version changes.
    TrainStatus shown_status;
    TrainHistory history;
    uint64_t seen_version = ~uint64_t(0);
    TrainPicture picture;
    std::string loaded_from; // the file the run started from ("" : from its seed)

    HeadsComparison compare;
    AblationDemo ablation_demo;
    PatchDemo patch_demo; // question 6's, on ablation_demo's model (check_patch.h)
};

// The Train view's state in `s`, made (task both, its defaults) on first use.
TrainViewState& train_view(AppState& s);
// The run's controls, as the Train view's buttons and keys (Space, N) give them. Train and
// Step from a step replayed in the history (t.scrub) resume there: the worker drops what
// came after, and the replay ends.
void train_run(TrainViewState& t);
void train_pause(TrainViewState& t);
void train_step(TrainViewState& t);
// The speed at train_speeds()[index] (0: as fast as it goes).
void train_set_speed(TrainViewState& t, int index);
// What the worker is doing now (the Train view draws t.shown_status, this frame's copy).
TrainStatus train_status(const TrainViewState& t);
// Starts a new run with these settings, dropping the old one; a bad value is refused with
// one sentence in `error` and the run stays.
bool request_train_settings(TrainViewState& t, const TrainSettings& next);
// Starts a new run from a model (a loaded file), paused at step 0 of its own history.
void start_from_model(TrainViewState& t, const Model& m, const std::string& source);
// See the top of this file.
void refresh_train_view(AppState& s);
// Letters of the vocabulary separated by spaces ("a b c a b d"), BOS implied; refused with
// the vocabulary named when a word is not a letter of it or the count is not T.
bool set_probe_text(TrainViewState& t, const std::string& text, std::string& error);
// New random letters in the default probe's shape: a segment, its repeat, then filler.
void shuffle_probe(TrainViewState& t);
// The probe as the view prints it: "^ a b c a b d".
std::string probe_text(const ModelConfig& c, const std::vector<int>& tokens);
// The default probe for a config: a segment of T / 3 letters, its repeat, then filler.
std::vector<int> default_probe(const ModelConfig& c);

// The heads of `p.model` on `p.probe` (their patterns) and the scores and accuracy of the
// newest scored snapshot at or before `p.step`, with the label of each head.
void fill_heads(TrainPicture& p, const std::vector<TrainSnapshot>& snaps);

// Starts question 2's comparison afresh (train_view_compare.cpp); the check view shows it.
void start_heads_comparison(AppState& s);
// Once per frame (from refresh_train_view): starts the H = 4 run when H = 1's is done, and
// takes each finished run's picture. With `wait`, blocks until both runs are done (headless).
void refresh_heads_comparison(TrainViewState& t, bool wait = false);
// The sentence for two finished runs (H = 1 first), from their accuracies and labels.
std::string comparison_sentence(const HeadsRun& one, const HeadsRun& four);

// Question 4's demonstration (check_ablation.cpp): started afresh (Alt+5, its Show me), its
// run polled once per frame (from refresh_train_view; `wait`: until done, headless), and its
// numbers computed by recompute() once the run is done.
void start_ablation_demo(AppState& s);
void refresh_ablation_demo(TrainViewState& t, bool wait = false);
void compute_ablation_demo(AblationDemo& d);
// The sentence for a computed demonstration, from its numbers.
std::string ablation_demo_sentence(const AblationDemo& d);
// Opens the demonstration's model in the views, Model view, with its previous-token heads ablated.
void open_ablation_demo(AppState& s);

// True while the run trains or restores a snapshot (the window then draws without waiting
// for events, so the curves move).
bool train_busy(const AppState& s);
// Blocks until the run has reached what it was asked for (headless runs only).
void finish_training(AppState& s);

// "Open in the views": the picture's model on the probe, staged for every view (the next
// recompute applies it), and the view switched to the shape walk.
void open_in_views(AppState& s);
// Save / Load of the view's model file (model_io.h); the result goes to `status`.
void save_train_model(TrainViewState& t, const std::string& path);
void load_train_model(TrainViewState& t, const std::string& path);

} // namespace attnviz
