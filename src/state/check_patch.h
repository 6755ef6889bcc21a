// check_patch.h: question 6's "Show me" (check_patch.cpp): which head carries the copied
// token? On question 4's trained induction model (its run on the worker, started if it was
// not asked for yet): a clean repeated segment whose second copy stops one short, and the
// same with the first copy's last letter changed; each head's output (hook_z) of the clean
// run patched into the corrupted run (patching.h), the normalised logit difference of the
// copied letter against the changed one. The sentence the class reads is built from those
// numbers and the detector's induction scores (train.h's probe).
#pragma once
#include "patching.h"
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

struct AppState;

struct PatchDemo {
    bool asked = false;
    bool computed = false;
    bool scroll = false;                   // bring the question into sight once its numbers are in
    std::shared_ptr<const Model> model;    // question 4's trained model
    int64_t step = 0;
    std::vector<int> clean, corrupt;       // BOS first
    int answer = -1, wrong = -1;
    float clean_ld = 0, corrupt_ld = 0;
    std::vector<std::vector<float>> heads; // [layer][head], normalised
    std::vector<std::vector<float>> induction; // [layer][head], the detector's scores on the recipe's probe
    int best_layer = -1, best_head = -1;   // the head that restores most
    std::string sentence;
    std::string error;                     // the core's refusal, when the run could not be patched
};

// The demonstration's sequences for a toy model: a segment of up to 7 letters, its repeat
// without the last letter (the answer); the corrupted one with the first copy's last letter
// changed to the first letter outside the segment (the wrong one).
void patch_demo_sequences(const ModelConfig& c, std::vector<int>& clean, std::vector<int>& corrupt, int& answer, int& wrong);
// Show me: asks for question 4's run when it was not asked for (its model is the one
// patched), and switches to the check view.
void start_patch_demo(AppState& s);
// Called by recompute() every frame: once the run is trained, the patches and the sentence.
void update_patch_demo(AppState& s);
std::string patch_demo_sentence(const PatchDemo& d);
// "Open in the Patching panel": the model on the clean sequence in the Model view, the
// panel's fields set to the corrupted one and the two letters, and Run.
void open_patch_demo(AppState& s);

} // namespace attnviz
