// follow_gpt_probes.h: the Model view's logit lens cells and Patching tables in follow_gpt's
// header (follow_gpt.h), so that a page following a teacher's GPT model shows them as the
// teacher's window made them. Small: the lens's cells of the positions the teacher's table
// shows (rows x columns x the top 5) and two tables of L x T and L x H floats.
//
//   "probes": {"panel": 0|1|2,
//              "lens": {"p0": P, "top": [row][i] [[id, prob] x 5], "next_prob": [row][i]},
//              "patch": {"clean", "corrupt", "answer", "wrong", "answer_text", "wrong_text",
//                        "clean_ld", "corrupt_ld", "resid": [[...]], "heads": [[...]]}}
//
// "patch" is absent when the teacher has no tables of the model shown.
#pragma once
#include "app_state.h"
#include <nlohmann/json.hpp>
#include <set>

namespace attnviz {

// The teacher's window.
nlohmann::json probes_json(const AppState& s);
// The ids the probes name, for the header's labels (the page has no tokenizer).
void add_probe_ids(const AppState& s, std::set<int>& ids);
// A page: the probes as received (malformed values read as absent), for the model `in`.
void show_received_probes(AppState& s, const nlohmann::json& j, const std::shared_ptr<const TrainedInput>& in);

} // namespace attnviz
