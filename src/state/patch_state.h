// patch_state.h: the Model view's Patching panel (patching.h). The clean prompt is the
// sequence shown; the panel's fields hold the corrupted prompt and the two answers (token
// text through the model's tokenizer, a toy model's letter, or an id). Run checks them on the
// frame thread (prompts of different lengths, an answer that is not one token, answer equal
// to wrong: refused with one sentence, the previous tables kept) and runs both prompts and
// every patch of both tables (resid_pre: layer x position; hook_z: layer x head) on a worker,
// which recompute() polls (poll_patch) while the panel draws its progress bar from
// patch_tables's counter. Equal logit differences, found by the worker, are refused the same
// way. A teacher's tables reach a page following in follow_gpt.h's header.
#pragma once
#include "patching.h"
#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

struct AppState;
struct PatchJob; // patch_state.cpp: one Run on its worker

// Tables of one run, and what they were run on.
struct PatchResult {
    std::shared_ptr<const Model> model; // whose tables these are (nullptr: none)
    std::vector<int> clean, corrupt;
    int answer = -1, wrong = -1;
    std::string answer_text, wrong_text; // as the axes and the sentence say them
    float clean_ld = 0, corrupt_ld = 0;
    PatchTables tables;
    double seconds = 0; // the worker's time, both plain runs and the patches
    bool empty() const { return tables.resid.empty() && tables.heads.empty(); }
};

struct PatchPanelState {
    // The fields as typed; applied by request_patch_run.
    std::string corrupt_field, answer_field, wrong_field;
    const Model* fields_for = nullptr; // the model the fields were filled for (a new one refills them)
    PatchResult result;                // shown (of the model shown, else nothing is drawn)
    std::string error;                 // why the last Run was refused ("" when it was not)
    std::string status;                // what the last Run did
    std::shared_ptr<PatchJob> job;     // the Run on its worker
    bool run_asked = false;            // Run once the model is shown (the command line, the check view)
    int hover_layer = -1, hover_col = -1; // the cell under the cursor (the panel sets it)
};

// The longest prompt the panel patches: each patch reruns the model, and the two runs are
// kept whole.
constexpr int patch_max_tokens = 256;

// The model shown can be patched (a GPT model, or a toy model with a next-token head) and
// the panel's state is the model's.
bool patch_available(const AppState& s);
// Fills the fields for the model shown, once per model (the shown text, and the model's two
// likeliest next tokens at the end as answer and wrong, so Run works at once after a word is
// changed); for the first model only the fields still empty. Then a Run asked for.
void fill_patch_fields(AppState& s);
// Run: checks the fields and starts the worker, or refuses with one sentence in
// s.patch.error and s.error and keeps the previous tables. True when started.
bool request_patch_run(AppState& s);
// Parses an answer field for the model shown: token text that is exactly one token (GPT),
// a letter (toy model) or an id. False with one sentence.
bool parse_patch_answer(const AppState& s, const std::string& text, const char* which, int& id, std::string& error);
bool patch_running(const AppState& s);
// Finished patches of patch_count (0 .. 1) while running.
float patch_progress(const AppState& s);
// Called by recompute() every frame: takes a finished run (or its refusal). `wait`: blocks
// until it is done (the headless picture, the tests).
void poll_patch(AppState& s, bool wait = false);

} // namespace attnviz
