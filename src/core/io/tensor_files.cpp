// tensor_files.cpp: see tensor_files.h.
#include "tensor_files.h"
#include "atomic_file.h"
#include "json_writer.h"
#include "python_text.h"
#include "text_util.h"
#include <cctype>
#include <cstring>

namespace attnviz {

namespace {

// A tensor as a sequence of row-major blocks, from a TensorView or from plain data.
struct BlockSource {
    std::vector<int64_t> shape;
    int blocks = 1;
    int64_t rows = 0, cols = 0;
    const TensorView* view = nullptr;
    const float* data = nullptr;
    std::string title;       // first CSV comment line
    std::string block_label; // "head" for per-head tensors

    const float* block(int b, Mat& scratch) const {
        return view ? view->block(b, scratch) : data + int64_t(b) * rows * cols;
    }
};

BlockSource source_of(const TensorView& t) {
    BlockSource s;
    s.shape = t.shape;
    s.blocks = t.blocks;
    s.rows = t.rows;
    s.cols = t.cols;
    s.view = &t;
    s.title = std::string("attnviz ") + to_string(t.name) + ", shape " + tensor_info(t.name).shape +
              " = " + python_tuple(t.shape);
    if (t.per_head) s.block_label = "head";
    return s;
}

// Plain data: the leading dimensions of a 3-D or higher shape become blocks.
BlockSource source_of(const float* data, const std::vector<int64_t>& shape) {
    BlockSource s;
    s.shape = shape;
    s.data = data;
    s.title = "attnviz tensor, shape " + python_tuple(shape);
    if (shape.empty()) {
        s.rows = s.cols = 1;
    } else if (shape.size() == 1) {
        s.rows = 1;
        s.cols = shape[0];
    } else {
        s.cols = shape.back();
        s.rows = shape[shape.size() - 2];
        int64_t blocks = 1;
        for (size_t i = 0; i + 2 < shape.size(); ++i) blocks *= shape[i];
        s.blocks = int(blocks);
        if (shape.size() > 2) s.block_label = "block";
    }
    return s;
}

bool write_npy_blocks(const std::string& path, const BlockSource& s, std::string& error) {
    AtomicFile f(path);
    if (!f.open(error)) return false;
    f.write(npy_header(s.shape));
    Mat scratch;
    for (int b = 0; b < s.blocks; ++b)
        f.write(s.block(b, scratch), size_t(s.rows * s.cols) * sizeof(float)); // x86-64: little-endian
    return f.commit(error);
}

bool write_csv_blocks(const std::string& path, const BlockSource& s, std::string& error) {
    AtomicFile f(path);
    if (!f.open(error)) return false;
    std::string line = "# " + s.title + "\n";
    Mat scratch;
    for (int b = 0; b < s.blocks; ++b) {
        if (!s.block_label.empty()) line += "# " + s.block_label + " " + std::to_string(b) + "\n";
        const float* p = s.block(b, scratch);
        for (int64_t i = 0; i < s.rows; ++i) {
            for (int64_t j = 0; j < s.cols; ++j) {
                if (j > 0) line += ',';
                append_csv_number(line, p[i * s.cols + j]);
            }
            line += '\n';
            if (line.size() >= (1 << 16)) {
                f.write(line);
                line.clear();
            }
        }
    }
    f.write(line);
    return f.commit(error);
}
} // namespace

std::string npy_header(const std::vector<int64_t>& shape) {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + python_tuple(shape) + ", }";
    // magic (6) + version (2) + header length (2) + dict + padding + '\n', a multiple of 64.
    size_t total = 10 + dict.size() + 1;
    size_t padded = (total + 63) / 64 * 64;
    dict += std::string(padded - total, ' ') + "\n";
    std::string h = "\x93NUMPY";
    h += char(1);
    h += char(0);
    uint16_t len = uint16_t(dict.size());
    h += char(len & 0xff);
    h += char(len >> 8);
    return h + dict;
}

bool write_npy(const std::string& path, const TensorView& t, std::string& error) {
    return write_npy_blocks(path, source_of(t), error);
}

bool write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape,
               std::string& error) {
    return write_npy_blocks(path, source_of(data, shape), error);
}

bool write_csv(const std::string& path, const TensorView& t, std::string& error) {
    return write_csv_blocks(path, source_of(t), error);
}

bool write_csv(const std::string& path, const float* data, const std::vector<int64_t>& shape,
               std::string& error) {
    return write_csv_blocks(path, source_of(data, shape), error);
}

bool check_export_path(const std::string& path, std::string& error) {
    if (ends_with_nocase(path, ".npy") || ends_with_nocase(path, ".csv")) return true;
    error = "output file " + quote_path(path) + " has an unknown extension; give a name ending in .npy or .csv";
    return false;
}

bool export_tensor(const std::string& path, const TensorView& t, std::string& error) {
    if (!check_export_path(path, error)) return false;
    if (ends_with_nocase(path, ".npy")) return write_npy(path, t, error);
    return write_csv(path, t, error);
}

} // namespace attnviz
