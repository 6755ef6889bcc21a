// tensor_files.h: a tensor as a .npy or .csv file, the same from the command line and the
// window. Every writer streams a (T, n) block at a time, so exporting never needs a second
// copy of a T x T x H tensor in memory, and writes through AtomicFile, so a failed write
// leaves no half file and the old file as it was.
//
//   .npy   NPY format 1.0, '<f4', C order, the tensor's own shape (numpy.load).
//   .csv   one tensor row per line, comma-separated, %.9g; -inf, inf and nan spelled so;
//          a first comment line "# name (shape)" and, for per-head tensors, a comment
//          line "# head h" before each head's T rows, so numpy.loadtxt(path,
//          delimiter=",") gives (H*T, n) or (T, n).
#pragma once
#include "tensor_table.h"
#include <cstdint>
#include <string>
#include <vector>

namespace attnviz {

// On failure these return false and set `error` to one sentence naming the path and the cause.
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

} // namespace attnviz
