// patching.h: activation patching on a GPT model, as TransformerLens's patching module does it.
// A clean prompt and a corrupted one of the same length; one activation of the clean run is
// copied into the corrupted run, the rest of the corrupted run is computed again, and the
// metric says how much of the clean answer came back:
//
//   ld(run)     logits[T-1, answer] - logits[T-1, wrong]       (the logit difference, float32)
//   normalised  (ld(patched) - ld(corrupted)) / (ld(clean) - ld(corrupted))   1: restored, 0: no effect
//
//   resid  (L x T)  resid_pre of layer l at position t          get_act_patch_resid_pre
//   heads  (L x H)  head h's output z (hook_z, before c_proj),   get_act_patch_attn_head_out_all_pos
//                   every position, in layer l
//
// Each patch reruns the corrupted trace from its layer on (gpt_rerun_rows): a head's patch
// every row of its layer, a residual patch at t on the reference kernel only rows t.. (causality:
// rows before t are the corrupted run's), on the fast kernel every row (sgemm's last bits may
// depend on the number of rows). The plain runs go through the same rerun, so a patch that
// copies an activation equal in both runs gives the corrupted run's ld bit for bit, and 0
// (patch_tables knows that 0 without the rerun for a residual row equal in both runs: every
// position before the first differing token, and at layer 0 every position where the tokens
// agree; patched_ld_resid reruns it).
// The logits at the last row are ln_f of that row, then a dot with wte[answer] and wte[wrong]
// summed in order (the reference kernel's linear layer: torch's logits bit for bit there).
// GPT models, and toy models with a next-token head (the induction task): their block input
// x is resid_pre, z the same concat columns, the logits lm_head's; every run of a toy model
// projects each block's y again with linear_forward_rows, so the runs sum alike there too.
#pragma once
#include "gpt_model.h"
#include <atomic>
#include <vector>

namespace attnviz {

// The plain runs a table reads: both prompts' lean traces, every layer's clean z (concat,
// (T, C), the head's hd columns h*hd ..) and both logit differences.
struct PatchRuns {
    const Model* model = nullptr;
    KernelKind kernel = KernelKind::reference;
    int answer = 0, wrong = 0;
    ModelTrace clean, corrupt;
    std::vector<Mat> clean_z; // [layer] (T, C)
    float clean_ld = 0, corrupt_ld = 0;
};

// Checks the input (one sentence in std::invalid_argument: a model that is not a GPT,
// prompts of different lengths or outside the vocabulary or block size, answer or wrong
// outside the vocabulary, answer equal to wrong) and runs both prompts. Does not refuse equal
// logit differences: patch_tables does.
void prepare_patch_runs(const Model& m, const std::vector<int>& clean, const std::vector<int>& corrupt, int answer,
                        int wrong, KernelKind kernel, PatchRuns& runs);

// One patch's logit difference (not normalised): the corrupted run with resid_pre of layer l
// at position t, or head h's z of layer l, taken from the clean run.
float patched_ld_resid(const PatchRuns& runs, int l, int t);
float patched_ld_head(const PatchRuns& runs, int l, int h);

struct PatchTables {
    std::vector<std::vector<float>> resid; // [layer][position], normalised; empty when not asked
    std::vector<std::vector<float>> heads; // [layer][head], normalised; empty when not asked
};
// (ld - corrupt_ld) / (clean_ld - corrupt_ld) in double, rounded to float.
float normalised_ld(const PatchRuns& runs, float ld);
// Every patch of the tables asked for, side by side on the work team (each patch on one
// thread). `done`, when set, counts the finished patches (of patch_count) for a progress
// bar on another thread. Throws std::invalid_argument when clean_ld equals corrupt_ld
// exactly (the normalisation would divide by zero).
int patch_count(const PatchRuns& runs, bool resid, bool heads);
PatchTables patch_tables(const PatchRuns& runs, bool resid, bool heads, std::atomic<int>* done = nullptr);

} // namespace attnviz
