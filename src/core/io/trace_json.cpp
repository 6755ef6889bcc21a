// trace_json.cpp: see trace_json.h.
#include "trace_json.h"
#include "json_writer.h"
#include "tensor_table.h"

namespace attnviz {

// One tensor of the trace with B = 1 in front: [1][T][n] or [1][H][T][n].
static void write_with_batch(JsonWriter& w, const TensorView& t) {
    Mat scratch;
    w.begin_array(); // B
    if (t.per_head) {
        w.begin_array(); // H
        for (int h = 0; h < t.blocks; ++h) w.array(t.block(h, scratch), {t.rows, t.cols});
        w.end_array();
    } else {
        w.array(t.block(0, scratch), {t.rows, t.cols});
    }
    w.end_array();
}

static std::vector<int64_t> with_batch(std::vector<int64_t> shape) {
    shape.insert(shape.begin(), 1);
    return shape;
}

// Where the weights came from, when a file gave them: "weights": {file, scheme, names, ...}.
static void write_weights_source(JsonWriter& w, const LoadedWeights& lw, const std::string& path) {
    auto name_or_null = [&w](const std::string& n) {
        if (n.empty()) w.value_null();
        else w.value_string(n);
    };
    w.key("weights");
    w.begin_object();
    w.key("file"); w.value_string(path);
    w.key("scheme"); w.value_string(scheme_name(lw));
    w.key("description"); w.value_string(lw.description);
    w.key("names");
    w.begin_object();
    w.key("qkv"); name_or_null(lw.qkv_name);
    w.key("proj"); name_or_null(lw.proj_name);
    w.key("qkv_bias"); name_or_null(lw.qkv_bias_name);
    w.key("proj_bias"); name_or_null(lw.proj_bias_name);
    w.end_object();
    w.key("layer"); w.value_int(lw.layer);
    w.key("layers");
    w.begin_array();
    for (int l : lw.layers) w.value_int(l);
    w.end_array();
    w.key("transposed"); w.value_bool(lw.conv1d);
    w.key("n_head_from_file"); w.value_bool(lw.n_head_from_file);
    w.key("has_bias"); w.value_bool(lw.weights.has_bias());
    w.end_object();
}

// Every intermediate of the shape walk for x: x and y are the run's own "x" and "y1", the
// rest in the walk's order, their shapes first.
static void write_intermediates(JsonWriter& w, const Trace& scratch) {
    std::vector<TensorName> walk;
    for (const TraceTensor& t : trace_tensors())
        if (t.id != TensorName::x && t.id != TensorName::y) walk.push_back(t.id);
    w.key("intermediates_for_x");
    w.begin_object();
    w.key("shapes");
    w.begin_object();
    for (TensorName n : walk) {
        w.key(reference_key(n));
        w.value_shape(with_batch(tensor_by_name(scratch, n).shape));
    }
    w.end_object();
    for (TensorName n : walk) {
        w.key(reference_key(n));
        write_with_batch(w, tensor_by_name(scratch, n));
    }
    w.end_object();
}

void write_trace_json(std::ostream& out, const Experiment& e, const TraceJsonRequest& r, Trace& scratch) {
    const Config& c = e.config;
    const int T = c.seq_len, C = c.n_embd;
    forward(c, e.weights, e.x, r.kernel, scratch);

    JsonWriter w(out);
    w.begin_object();
    // The run, as the reference files describe it.
    w.key("seed"); w.value_int(int64_t(c.seed));
    w.key("n_embd"); w.value_int(C);
    w.key("n_head"); w.value_int(c.n_head);
    w.key("B"); w.value_int(1);
    w.key("T"); w.value_int(T);
    if (r.text) {
        w.key("text"); w.value_string(*r.text);
        w.key("tokens");
        w.begin_array();
        for (const std::string& t : r.tokens) w.value_string(t);
        w.end_array();
    }
    if (r.perturb) { w.key("perturbed_position"); w.value_int(*r.perturb); }
    w.key("head_dim"); w.value_int(c.head_dim());
    w.key("scale_float32"); w.value(scratch.scale);
    w.key("mask"); w.value_string(to_string(c.mask));
    w.key("scale"); w.value_string(to_string(c.scale));
    w.key("kernel"); w.value_string(to_string(r.kernel));
    w.key("param_count"); w.value_int(int64_t(e.weights.c_attn.weight.size() + e.weights.c_proj.weight.size() +
                                             e.weights.c_attn.bias.size() + e.weights.c_proj.bias.size()));

    // Where the weights came from, when a file gave them.
    if (r.weights) write_weights_source(w, *r.weights, r.weights_path);

    // The weights, [out][in] as torch stores them, and the input.
    w.key("qkv_weight"); w.array(e.weights.c_attn.weight.data(), {3 * C, C});
    w.key("proj_weight"); w.array(e.weights.c_proj.weight.data(), {C, C});
    if (e.weights.c_attn.bias.size() > 0) { w.key("qkv_bias"); w.array(e.weights.c_attn.bias.data(), {3 * C}); }
    if (e.weights.c_proj.bias.size() > 0) { w.key("proj_bias"); w.array(e.weights.c_proj.bias.data(), {C}); }
    w.key("x"); w.array(e.x.data(), {1, T, C});
    Mat x2;
    if (r.perturb) {
        Vec row = perturbed_row(e, *r.perturb, 1.f);
        x2 = perturbed_input(e, *r.perturb, 1.f);
        w.key("perturbed_row"); w.array(row.data(), {C});
        w.key("x2"); w.array(x2.data(), {1, T, C});
    }
    w.key("y1"); w.array(scratch.y.data(), {1, T, C});

    // Every intermediate of the shape walk for x.
    if (r.intermediates) write_intermediates(w, scratch);

    // The causality test: rerun on x2 in the same buffers and compare with y1.
    if (r.perturb) {
        Mat y1 = scratch.y;
        forward(c, e.weights, x2, r.kernel, scratch);
        w.key("y2"); w.array(scratch.y.data(), {1, T, C});
        std::vector<float> diff = max_abs_diff_per_position(y1, scratch.y);
        w.key("max_abs_diff_per_position"); w.array(diff.data(), {int64_t(diff.size())});
    }
    w.end_object();
    w.flush();
}

} // namespace attnviz
