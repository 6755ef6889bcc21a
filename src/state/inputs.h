// inputs.h: what the window takes in and gives out besides the config - words as input,
// weights from a file, and exports of the view (PNG) and of any tensor (.npy, .csv).
//
// Words: "the cat saw the cat" becomes T = 5 positions, each distinct word its own seeded
// N(0, 1) row (text_input.h), so a repeated word gives an identical row of x. T follows the
// number of words; the words label the position axes of every view. Clearing the text goes
// back to x = torch.randn(1, T, C) at the same T.
//
// Weights: a safetensors file (weights_io.h) replaces the seeded weights; C comes from it.
// x still comes from the seed, so the same seed gives the same x whichever weights are used.
//
// Every function here is a plain edit of AppState, as the side panel makes it: a refused
// edit leaves the state as it was and says why in one sentence.
#pragma once
#include "app_state.h"
#include "formats.h"
#include <string>
#include <vector>

namespace attnviz {

// ---- Words

// The most words the window takes at the edited C and H: max_seq_len, or fewer when the
// traces of that many positions would not fit the window's memory cap.
int max_words(const AppState& s);
// Splits `text` on whitespace and asks for those words as input (applied by the next
// recompute, T = their number). Empty text clears the words and keeps T. More words than
// max_words(s) is refused: `error` names the count and the limit, s.error says it too, and
// the state is kept.
bool set_text(AppState& s, const std::string& text, std::string& error);

// ---- Weights

// Reads `path` (layer `layer` of a layered file) and asks for its weights (applied by the
// next recompute; C becomes the file's, H the file's n_head or, when the file does not say,
// the current H if it divides C). A file the reader refuses, or whose C the window cannot
// show at the current T, is refused: `error` is the reader's sentence (or the size's), the
// current weights stay, and s.status says it. Returns true when the file was taken.
bool load_weights_file(AppState& s, const std::string& path, int layer, std::string& error);
// What "Load weights…" does with a path: a GPT-2 directory (holding model.safetensors) and a
// model attnviz train wrote are shown whole, in every view; anything else is read as one
// attention block's weights. Both load_weights_file and request_weights_file ask this.
enum class WeightsPathKind { gpt_directory, trained_model, attention_block };
WeightsPathKind weights_path_kind(const std::string& path);
// Back to the seeded weights of the current config.
void unload_weights(AppState& s);
// A session's weights file: read with the session's n_head and checked against its C. On
// failure `error` is one sentence naming the file, and nothing is changed.
bool read_session_weights(const std::string& path, int layer, const Config& c,
                          std::shared_ptr<const WeightsFile>& out, std::string& error);
// "lesson.safetensors: lesson, layer 0 (the only one); C = 8, H = 2 (from the file); names
// qkv.weight, proj.weight": which file, which layer and which tensors.
std::string weights_summary(const WeightsFile& w);
// The same without the file.
std::string weights_details(const WeightsFile& w);

// ---- Applying (recompute)

// Empty when the edited inputs fit the config `c`; otherwise why not, in one sentence
// (T differs from the number of words, C from the weights file's).
std::string check_inputs(const AppState& s, const Config& c);
// The lesson's recipe over the edited words and weights for config `c`.
bool make_state_experiment(const AppState& s, const Config& c, Experiment& e, std::string& error);
// " from 5 words" / " with the weights of FILE" for the status line; empty for neither.
std::string inputs_status(const AppState& s);

// ---- Labels

// The label of position t: "2 saw" with words (the word cut to `max_chars` characters with
// "…"), "2" without.
std::string position_label(const std::vector<std::string>& tokens, int t, int max_chars = 12);
// The word of position t cut to `max_chars` characters ("…" marks a cut); "" without words.
std::string position_word(const std::vector<std::string>& tokens, int t, int max_chars = 12);

// ---- Export

// "attnviz-scores.png"
std::string default_png_name(View v);
// "attnviz-probs.npy" (or .csv when `csv`)
std::string default_tensor_file(TensorName n, bool csv);
// True when `path` is one of the defaults above (for any view or tensor), so the panel
// may follow the view or tensor when the user has not typed a name of their own.
bool is_default_png_name(const std::string& path);
bool is_default_tensor_file(const std::string& path);
// Writes tensor `n` of the trace on screen (with the perturbation applied, as shown) to a
// .npy or .csv `path` (formats.h's export_tensor: the same file `attnviz export` writes).
bool export_tensor_file(const AppState& s, TensorName n, const std::string& path, std::string& error);
// The side panel's Export buttons and Ctrl+E / Ctrl+P: the tensor now, the PNG after the
// loop's next frame (s.screen.png_request); the result goes to s.status.
void export_tensor_now(AppState& s);
void request_png(AppState& s);

} // namespace attnviz
