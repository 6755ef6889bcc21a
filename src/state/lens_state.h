// lens_state.h: the Model view's logit lens table (logit_lens.h): layers down (the embedding,
// then each layer's output), positions across, each cell the top token of that residual read
// through the model's head. The whole lens of GPT-2 small on 1024 tokens costs about 4.7
// forwards, so only the positions the table's window shows are made, on demand while the
// table is shown, by logit_lens_range on a worker (the web page, which has no threads, at
// once) from a copy of the residual rows the run keeps (a compact trace keeps them too).
// The copy leaves out a large trace's logits, so there the last layer's row is made again by
// the kernel (within 1e-5 of the forward's own). A teacher's model on a page following
// (follow_gpt.h) receives the cells instead and computes nothing.
#pragma once
#include "logit_lens.h"
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

struct AppState;

// What the Model view shows in its main area: the grid of heads, the lens table or the
// Patching panel (patch_state.h).
enum class ModelPanel { heads = 0, lens = 1, patching = 2 };

struct LensJob; // lens_state.cpp: one range on its worker

struct LensTable {
    // The table's window: its first position (-1: the last positions) and how many columns
    // fit (set by the view every frame it draws the table).
    int first = -1;
    int columns = 0;
    // The cells made: positions p0 .. p0 + lens.top[0].size() - 1 of the run shown.
    int p0 = 0;
    LogitLens lens;
    std::shared_ptr<LensJob> job; // a range being made; its result is dropped if the run changed
    unsigned run = 0;             // counts the runs shown: a job's result of an older one is dropped

    int count() const { return lens.rows() > 0 ? int(lens.top[0].size()) : 0; }
    bool has(int pos) const { return pos >= p0 && pos < p0 + count(); }
    // The top tokens of row `row` at `pos` (nullptr while not made).
    const std::vector<TokenProb>* top(int row, int pos) const;
    float next_prob(int row, int pos) const; // NaN when not made or at the last position
};

// The model shown has a lens: a GPT model, or a toy model with a next-token head.
bool lens_available(const AppState& s);
// The first and last + 1 positions the table's window shows now (first -1: the last ones).
std::pair<int, int> lens_window(const AppState& s);
// The table's window moved (by the view's buttons): `first` clamped to the tokens.
void request_lens_first(AppState& s, int first);
// True while a range is being made.
bool lens_busy(const AppState& s);

namespace state_detail {
// Called by update_model_view every frame: drops the cells of a run that changed, takes a
// finished range, and starts the one the window shows when it is not made. `wait`: blocks
// until it is in (the headless picture).
void update_lens(AppState& s, bool new_run, bool wait = false);
} // namespace state_detail

} // namespace attnviz
