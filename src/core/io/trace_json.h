// trace_json.h: the trace command's JSON, with the field names of the reference files.
#pragma once
#include "experiment.h"
#include "weights_io.h"
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attnviz {

struct TraceJsonRequest {
    KernelKind kernel = KernelKind::reference;
    std::optional<int> perturb;  // position p: adds perturbed_row, x2, y2, max_abs_diff...
    bool intermediates = false;  // adds intermediates_for_x
    std::optional<std::string> text;  // words as input: adds "text" (as given) and "tokens"
    std::vector<std::string> tokens;  // one word per position
    const LoadedWeights* weights = nullptr; // from a file: adds the "weights" object
    std::string weights_path;               // the file as given
};

// Streams one JSON object with the field names of the reference files (lesson_example.json):
// seed, n_embd, n_head, B, T, [text, tokens], [perturbed_position], head_dim, scale_float32,
// mask, scale, kernel, param_count, [weights], qkv_weight, proj_weight, [qkv_bias,
// proj_bias], x, [perturbed_row, x2], y1, [intermediates_for_x], [y2, max_abs_diff_per_position].
// "weights" (with a file) is {file, scheme, description, names: {qkv, proj, qkv_bias,
// proj_bias (null when absent)}, layer, layers, transposed, n_head_from_file, has_bias}.
// Runs forward on e.x, and then on the perturbed input, into `scratch`: at most one trace
// is alive, so the peak memory is one trace plus the JSON text buffer.
void write_trace_json(std::ostream& out, const Experiment& e, const TraceJsonRequest& r, Trace& scratch);

} // namespace attnviz
