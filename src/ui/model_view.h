// model_view.h: the Model view's pieces (model_view*.cpp), BertViz's model view with a head
// detector and the model's next-token predictions. Everything they show was computed by
// recompute() (recompute_model_view.cpp, in src/state): the panels only draw and record edits.
//
//   draw_model_view      the whole view: the grid on the left, the table and the
//                        predictions on the right, the legend at the bottom
//   draw_model_grid      every layer x head as a small attention pattern, highlighted by
//                        the detector; pages of layers and heads when they do not fit
//   draw_detector_table  per head its scores, sortable by each column
//   draw_predictions     the top 5 next tokens at the cursor's (or the picker's) position
#pragma once
#include "ui_context.h"
#include <imgui.h>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {

// The grid's pages: how many layers and heads fit at once at a readable size.
struct GridFit {
    int layers = 1, heads = 1; // shown at once
    float thumb = 0;           // pixels per pattern side
};
// For L x H heads in a `size` area at text scale `scale` (rows and columns of labels
// included). A pattern is never drawn smaller than min_thumb(scale); more than fit is paged,
// layers first.
float min_thumb(float scale);
GridFit fit_grid(int L, int H, ImVec2 size, float label_w, float header_h, float tag_h, float gap, float scale);

void draw_model_grid(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
// The side of a pattern the grid would draw in a `size` area (for choosing the arrangement).
float grid_thumb(const AppState& s, const UiContext& ui, ImVec2 size);
// `compact`: no sentence above the table (it is the title's tooltip), the predictions on two
// lines instead of five bars, for short windows.
void draw_detector_table(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact);
// Returns the height it drew.
float draw_predictions(AppState& s, UiContext& ui, ImVec2 p0, float width, bool compact);
// The height draw_predictions takes (0 when the model has no LM head).
float predictions_height(const AppState& s, const UiContext& ui, bool compact);

// The detector table's columns, and its rows (layer, head) sorted by one of them: NaN
// ("—") always last, equal scores in layer and head order.
// dla: the head's direct logit attribution at the predictions' position (recompute's, of the
// run shown); dla_delta: its change by the ablation (after − before); ablate: 1 for an
// ablated head.
enum class DetectorColumn { head = 0, prev = 1, dup = 2, ind_text = 3, ind_repeat = 4, dla = 5, dla_delta = 6, ablate = 7 };
std::vector<std::pair<int, int>> sorted_heads(const HeadDetection& d, DetectorColumn col, bool descending);
// The same with every column, the DLA and the ablation included, from the state.
std::vector<std::pair<int, int>> sorted_heads(const AppState& s, DetectorColumn col, bool descending);
// A head's score in a column (NaN when not measured; the detector's columns only).
float detector_score(const HeadDetection& d, DetectorColumn col, int layer, int head);
// A head's value in any column of the table (NaN when not measured).
float head_value(const AppState& s, DetectorColumn col, int layer, int head);

// The Ablation box (between the table and the predictions): the mode, the ablated heads,
// Restore all, and before -> after -> Δ of the loss and accuracies (toy) or the next-token
// loss and the top 5 (GPT). Its height for `width`, and the drawing in a rectangle.
float ablation_box_height(const AppState& s, const UiContext& ui, float width, bool compact);
void draw_ablation_box(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1, bool compact);
// "+0.1234", "−2.5000", "0.0 (exactly)": a difference with its sign, 4 decimals.
std::string format_delta(double d);

// "next after 3 “c”: d 0.912 · a 0.031 · ...", the scores view's line ("" without an LM head).
std::string prediction_line(const AppState& s);
// The position whose predictions are shown: under the cursor, else the picker's (-1: the last).
int shown_prediction_pos(const AppState& s);
// The frame colour of a detector role (head_detector.h's kinds), and its words in the legend.
ImU32 role_color(const Palette& pal, int kind);
const char* role_words(int kind); // "previous-token", "duplicate-token", "induction"

// Opens head `head` of layer `layer` in the scores view (a click on the grid or the table).
void open_in_scores(AppState& s, int layer, int head);

// The main area's other panels (chosen above the grid): the logit lens table
// (model_view_lens.cpp) and the Patching panel (patch_panel.cpp).
void draw_lens_table(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
void draw_patch_panel(AppState& s, UiContext& ui, ImVec2 p0, ImVec2 p1);
// One table of patch_tables as a heat map in the diverging palette, -range .. range around 0,
// rows L0.., columns labelled `cols`, with its title; recorded as a "heatmap" named `name`.
// Returns the cell clicked (row * columns + column), or -1.
int draw_patch_heatmap(AppState& s, UiContext& ui, const std::vector<std::vector<float>>& t, const std::vector<std::string>& cols,
                       const std::string& title, const std::string& name, ImVec2 p0, ImVec2 p1, float range);

} // namespace attnviz
