// patch_json.h: the logit lens's and activation patching's JSON (logit_lens.h, patching.h).
//
//   trace --logit-lens   "logit_lens": {"rows": ["embed", "0", ..., "L-1"],
//                                       "top": [row][pos] = [{"token", "prob", "text"} x 5],
//                                       "next_prob": [row][pos]}   (null at the last position;
//                                       "text" only with a tokenizer)
//   patch --json         {"clean_ld", "corrupt_ld", "resid": [layer][pos], "heads": [layer][head],
//                         "patch_ms"}   (a table not asked for is absent)
// docs/cli.md documents both.
#pragma once
#include "logit_lens.h"
#include "patching.h"
#include <ostream>

namespace attnviz {

class BpeTokenizer;
class JsonWriter;

// The "logit_lens" object's value, into an open writer.
void write_logit_lens(JsonWriter& w, const LogitLens& lens, const BpeTokenizer* tokenizer);

void write_patch_json(std::ostream& out, const PatchRuns& runs, const PatchTables& tables, double patch_ms);

} // namespace attnviz
