// formats.h: how attnviz writes numbers and tensors: JSON, .npy and .csv.
//
// Shared by the command line (trace, export) and the GUI's export, so a tensor saved from
// either place is the same file. Every writer streams: a tensor is written one (T, n) block
// at a time, so exporting never needs a second copy of a T x T x H tensor in memory.
//
//   JSON numbers   float32 with 9 significant digits (%.9g): parses back to the same float.
//                  NaN, -inf and +inf have no JSON spelling and are written as null.
//   .npy           NPY format 1.0, '<f4', C order, the tensor's own shape (numpy.load).
//   .csv           one tensor row per line, comma-separated, %.9g; -inf, inf and nan
//                  spelled so; a first comment line "# name (shape)" and, for per-head
//                  tensors, a comment line "# head h" before each head's T rows, so
//                  numpy.loadtxt(path, delimiter=",") gives (H*T, n) or (T, n).
#pragma once
#include "experiment.h"
#include "weights_io.h"
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attnviz {

// ---------------------------------------------------------------------------------------
// Numbers as text

// "%.9g" of a float32, or "null" when it is NaN or infinite.
std::string json_number(float v);
// Appends the same text to `out`; returns its length. Faster than json_number in loops.
int append_json_number(std::string& out, float v);
// "%.9g", but "-inf", "inf" and "nan" for the non-finite values (the CSV spelling).
int append_csv_number(std::string& out, float v);

// Length of the valid UTF-8 sequence starting at s[i] (1 to 4), or 0 when the byte there
// does not start one. JSON strings are written as UTF-8; other bytes become U+FFFD.
size_t utf8_sequence_length(const std::string& s, size_t i);
// Offset of the first byte that breaks UTF-8, or std::string::npos when `s` is valid.
size_t invalid_utf8_at(const std::string& s);

// repr(v) as Python 3 prints a float: the shortest text that reads back as the same
// double, "0.0" and "1.5" with their point, "1e-05" and "1e+16" outside [1e-4, 1e16).
std::string python_float_repr(double v);
// Python's round(v, ndigits) for a float: the double nearest to v correctly rounded to
// ndigits decimals (ties to even on v's exact binary value).
double python_round(double v, int ndigits);
// A shape as Python prints a tuple: "(1, 4, 8)", "(8,)", "()".
std::string python_tuple(const std::vector<int64_t>& shape);

// ---------------------------------------------------------------------------------------
// A small streaming JSON writer

// Writes one JSON value as it goes; commas are placed automatically. Output is buffered
// and handed to the stream in large pieces. Keys and strings are escaped.
class JsonWriter {
public:
    explicit JsonWriter(std::ostream& out);
    ~JsonWriter(); // flushes

    void begin_object();
    void end_object();
    void begin_array();
    void end_array();
    void key(const std::string& k); // inside an object, before its value; a new line

    void value(float v);            // json_number
    void value_int(int64_t v);
    void value_string(const std::string& s);
    void value_bool(bool b);
    void value_null();
    void value_shape(const std::vector<int64_t>& shape); // [1, 4, 8]

    // Nested arrays of float32 in row-major order: `shape` gives the nesting, e.g.
    // {1, T, C} for a (T, C) matrix with B in front. data holds prod(shape) values.
    void array(const float* data, const std::vector<int64_t>& shape);
    // Hands everything written so far to the stream.
    void flush();

private:
    std::ostream& out_;
    std::string buf_;
    std::vector<bool> first_; // per open container: nothing written in it yet
    bool after_key_ = false;
    void before_value();
    void spill();
};

// ---------------------------------------------------------------------------------------
// Tensors of a trace, by the names export uses

// x (T, C), qkv (T, 3C), q k v (H, T, head_dim), scores (H, T, T: raw q k^T), scaled
// (H, T, T: scores * scale), masked (H, T, T: scaled, -inf where the mask forbids),
// probs (H, T, T), heads (H, T, head_dim), concat (T, C), y (T, C).
enum class TensorName { x, qkv, q, k, v, scores, scaled, masked, probs, heads, concat, y };

// All names in the order of the shape walk, and their text.
const std::vector<TensorName>& all_tensor_names();
const char* to_string(TensorName n);
// "x, qkv, q, ..., concat or y"
std::string tensor_name_list();
// On failure returns false and sets `error` to one sentence naming `s` and the names.
bool parse_tensor_name(const std::string& s, TensorName& out, std::string& error);

// The reference JSON's key for a tensor inside intermediates_for_x ("raw_scores", ...).
const char* reference_key(TensorName n);

// One tensor of a trace, read a (T, n) block at a time: block b is head b of a per-head
// tensor, or the whole matrix (b = 0) otherwise.
struct TensorView {
    const Trace* trace = nullptr;
    TensorName name = TensorName::y;
    bool per_head = false;
    int blocks = 1;               // H or 1
    int rows = 0, cols = 0;       // of one block
    std::vector<int64_t> shape;   // (H, T, n) or (T, n)

    // Block b's rows x cols values, row-major: a pointer into the trace, or into
    // `scratch` for the tensors derived on demand (scaled, masked).
    const float* block(int b, Mat& scratch) const;
    // The whole tensor as one row-major float array of prod(shape) values (a copy).
    std::vector<float> data() const;
};

TensorView tensor_by_name(const Trace& tr, TensorName name);

// ---------------------------------------------------------------------------------------
// Files

// Writes `path` through a temporary file in the same directory that is renamed into place
// only when everything was written, so a failed write never leaves a half file. On failure
// returns false and sets `error` to one sentence naming the path and the cause.
bool write_npy(const std::string& path, const TensorView& t, std::string& error);
bool write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape,
               std::string& error);
bool write_csv(const std::string& path, const TensorView& t, std::string& error);
bool write_csv(const std::string& path, const float* data, const std::vector<int64_t>& shape,
               std::string& error);
// .npy or .csv by the path's extension; anything else is an error sentence.
bool check_export_path(const std::string& path, std::string& error);
bool export_tensor(const std::string& path, const TensorView& t, std::string& error);

// The NPY 1.0 header (magic, version, length, padded dict) for a '<f4' C-order array.
std::string npy_header(const std::vector<int64_t>& shape);

// ---------------------------------------------------------------------------------------
// The trace command's JSON

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
