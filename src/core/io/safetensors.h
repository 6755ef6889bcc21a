// safetensors.h: the safetensors container, read and written by hand over nlohmann-json.
//
//   [8 bytes]  N, little-endian u64: length of the JSON header
//   [N bytes]  {"name": {"dtype": "F32", "shape": [3, 4], "data_offsets": [begin, end]}, ...,
//               "__metadata__": {"key": "value"}}    padded with spaces
//   [rest]     the data buffer; offsets are relative to its start (byte 8 + N of the file)
//
// Nothing here trusts a number from the file: lengths, offsets and shapes are checked
// against the real size before anything is allocated or read, and every problem comes
// back as one sentence that starts with the file's name. Values are converted to
// float32 (F16 and BF16 exactly); whether they are finite is the caller's concern.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {

// Limits on what is accepted as a weights file at all.
constexpr uint64_t max_safetensors_file_bytes = uint64_t(4) << 30; // 4 GiB
constexpr uint64_t max_safetensors_header_bytes = 100'000'000;     // as the reference reader

struct TensorInfo {
    std::string name;
    std::string dtype;          // "F32", "F16", "BF16", or any other name the file gives
    std::vector<uint64_t> shape;
    uint64_t begin = 0, end = 0; // byte range inside the data buffer
    uint64_t numel() const;      // product of shape (1 for a scalar); checked not to overflow
};

struct SafetensorsFile {
    std::string name;                  // the path (or label) used in error sentences
    uint64_t header_bytes = 0;         // N
    uint64_t data_bytes = 0;           // size of the data buffer
    std::vector<TensorInfo> tensors;   // in data order (by begin offset, then name)
    std::vector<std::pair<std::string, std::string>> metadata; // __metadata__, sorted by key

    const TensorInfo* find(const std::string& tensor_name) const; // nullptr when absent
    const std::string* meta(const std::string& key) const;        // nullptr when absent
    uint64_t data_start() const { return 8 + header_bytes; }     // file offset of the data
};

// Bytes per element of a safetensors dtype name, 0 when the name is not known.
int dtype_bytes(const std::string& dtype);
// True for the dtypes attnviz converts to float32: F32, F16, BF16.
bool dtype_supported(const std::string& dtype);
// "F32, F16 or BF16": for error sentences.
const char* supported_dtypes();

// IEEE half (incl. subnormals, inf and NaN) and bfloat16 to float32; both exact.
float f16_to_f32(uint16_t h);
float bf16_to_f32(uint16_t b);

// Parse the header of a whole file held in memory (`size` bytes). On success `out`
// describes every tensor and the data buffer starts at bytes + out.data_start().
bool parse_safetensors(const uint8_t* bytes, size_t size, const std::string& name, SafetensorsFile& out,
                       std::string& error);

// The same for the header bytes alone: `first8` is the file's first 8 bytes, `header`
// the N bytes after them, and `file_size` the size of the whole file. Used by the file
// reader so that only the header and the tensors asked for are ever read.
bool parse_header_length(const uint8_t* first8, uint64_t file_size, const std::string& name, uint64_t& n,
                         std::string& error);
bool parse_header(const char* header, uint64_t n, uint64_t file_size, const std::string& name,
                  SafetensorsFile& out, std::string& error);

// Convert a tensor's raw bytes (t.end - t.begin of them, little-endian) to float32.
// Fails with a sentence naming the tensor when its dtype is not supported.
bool decode_tensor(const SafetensorsFile& file, const TensorInfo& t, const uint8_t* raw, std::vector<float>& out,
                   std::string& error);

// The same, straight into `out` (t.numel() floats), with no copy in between.
bool decode_tensor_into(const SafetensorsFile& file, const TensorInfo& t, const uint8_t* raw, float* out,
                        std::string& error);

// A safetensors file mapped read-only with mmap, for whole models: the header is parsed
// from the mapping, and each tensor is decoded from its pages straight into its destination,
// so the file is never copied into a buffer. The pages touched count in the process's RSS
// until the mapping goes (the destructor, or close()); they are the page cache's, not a copy.
// The same checks as read_safetensors_header (regular file, size) come first.
class MappedSafetensors {
public:
    MappedSafetensors() = default;
    ~MappedSafetensors() { close(); }
    MappedSafetensors(const MappedSafetensors&) = delete;
    MappedSafetensors& operator=(const MappedSafetensors&) = delete;

    bool open(const std::string& path, std::string& error);
    void close();
    const SafetensorsFile& file() const { return file_; }
    // Decode tensor t (from file()) into out, t.numel() floats.
    bool decode(const TensorInfo& t, float* out, std::string& error) const;

private:
    SafetensorsFile file_;
    const uint8_t* bytes_ = nullptr;
    size_t size_ = 0;
};

// Read a file's header from disk with bounded reads: checks that the path exists, is a
// regular file (not a directory, a FIFO or a device), is not empty and is at most
// max_safetensors_file_bytes, before reading 8 + N bytes.
bool read_safetensors_header(const std::string& path, SafetensorsFile& out, std::string& error);
// Read one tensor of a file whose header was read with read_safetensors_header.
bool read_tensor(const SafetensorsFile& file, const TensorInfo& t, std::vector<float>& out, std::string& error);

// One tensor to write: float32 values in row-major order.
struct TensorOut {
    std::string name;
    std::vector<uint64_t> shape;
    const float* data = nullptr; // numel(shape) floats
};

// Write F32 tensors and string metadata as safetensors.torch.save_file does: __metadata__
// first, tensors sorted by name with their data packed in that order, the header padded
// with spaces to a multiple of 8. Writes a temporary file next to
// `path` and renames it over `path`, so a failed write never leaves half a file.
bool write_safetensors(const std::string& path, const std::vector<TensorOut>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata, std::string& error);
// The same bytes in memory (what a server sends): false with one sentence for a tensor that
// cannot be written (no name, two of one name, too large, no data).
bool safetensors_bytes(const std::vector<TensorOut>& tensors, const std::vector<std::pair<std::string, std::string>>& metadata,
                       std::string& out, std::string& error);

} // namespace attnviz
