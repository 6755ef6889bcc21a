// tensor_table.h: the one table of the trace's tensors.
//
// Every place that names a tensor of the forward pass reads this table: the command line
// (--tensor), export (file names, the .csv title), the trace command's JSON and the
// reference files (reference_key), and the window's panels and export menu. A tensor has
// one name here; names used elsewhere before are still accepted by parse_tensor_name.
//
//   name     reference key          shape             the lesson's forward
//   x        x                      (T, C)            x
//   qkv      qkv                    (T, 3C)           self.qkv(x)
//   q k v    q k v                  (H, T, head_dim)  split(C, dim=2), view, transpose(1, 2)
//   scores   raw_scores             (H, T, T)         q @ k.transpose(-2, -1)
//   scaled   scaled_scores          (H, T, T)         att = ... * self.head_dim ** -0.5
//   masked   masked_scores          (H, T, T)         att.masked_fill(~mask, float("-inf"))
//   probs    softmax_probs          (H, T, T)         att = F.softmax(..., dim=-1)
//   heads    head_outputs           (H, T, head_dim)  att @ v
//   concat   y_concat_before_proj   (T, C)            y = (...).transpose(1, 2)...view(B, T, C)
//   y        y1                     (T, C)            self.proj(y)
#pragma once
#include "attention.h"
#include <string>
#include <vector>

namespace attnviz {

// In the order of the shape walk.
enum class TensorName { x, qkv, q, k, v, scores, scaled, masked, probs, heads, concat, y };

// The width of one (T, n) block of a tensor.
enum class TensorWidth { C, three_C, head_dim, T };

struct TraceTensor {
    TensorName id;
    const char* name;          // the command line's, export's and the panels' name
    const char* reference_key; // key in the trace JSON's intermediates_for_x and tests/data
    const char* shape;         // as the lesson writes it: "(H, T, head_dim)"
    bool per_head;             // H blocks of (T, n); else one (T, n) block
    TensorWidth width;
    const char* code;          // the lesson's forward, where the tensor is made
    const char* about;         // a few words for a menu or a title
    std::vector<const char*> old_names; // also accepted by parse_tensor_name
    // Block b (head b, or 0) of the tensor in `tr`, row-major: a pointer into the trace,
    // or into `scratch` for the tensors derived on demand (scaled, masked).
    const float* (*block)(const Trace& tr, int b, Mat& scratch);

    // Rows and columns of one block, and the whole shape, (H, T, n) or (T, n), for `tr`.
    int rows(const Trace& tr) const { return tr.T; }
    int cols(const Trace& tr) const;
    std::vector<int64_t> dims(const Trace& tr) const;
};

// Every tensor, in the order of the shape walk.
const std::vector<TraceTensor>& trace_tensors();
const TraceTensor& tensor_info(TensorName n);

// The names alone, in the same order (the export menu's index).
const std::vector<TensorName>& all_tensor_names();
const char* to_string(TensorName n);   // tensor_info(n).name
const char* reference_key(TensorName n); // tensor_info(n).reference_key
// "x, qkv, q, ..., concat or y"
std::string tensor_name_list();
// Takes a name, a reference key or an old name ("raw_scores", "scores_raw", "att", ...).
// On failure returns false and sets `error` to one sentence naming `s` and the names.
bool parse_tensor_name(const std::string& s, TensorName& out, std::string& error);

// One tensor of a trace, read a (T, n) block at a time: block b is head b of a per-head
// tensor, or the whole matrix (b = 0) otherwise.
struct TensorView {
    const Trace* trace = nullptr;
    TensorName name = TensorName::y;
    bool per_head = false;
    int blocks = 1;               // H or 1
    int rows = 0, cols = 0;       // of one block
    std::vector<int64_t> shape;   // (H, T, n) or (T, n)

    // Block b's rows x cols values, row-major (see TraceTensor::block).
    const float* block(int b, Mat& scratch) const;
    // The whole tensor as one row-major float array of prod(shape) values (a copy).
    std::vector<float> data() const;
};

TensorView tensor_by_name(const Trace& tr, TensorName name);

} // namespace attnviz
