// safetensors_write.cpp: write_safetensors, see safetensors.h. The layout of
// safetensors.torch.save_file, written through the atomic writer.
#include "safetensors.h"
#include "atomic_file.h"
#include "text_util.h"
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace attnviz {

namespace {

// The header as safetensors writes it (length prefix excluded) and the tensors in data order;
// false with one sentence naming `label` for a tensor that cannot be written.
bool safetensors_header(const std::string& label, const std::vector<TensorOut>& tensors,
                        const std::vector<std::pair<std::string, std::string>>& metadata, std::string& text,
                        std::vector<const TensorOut*>& order, std::string& error) {
    // Header as safetensors writes it: __metadata__ first, then the tensors sorted by name
    // (all F32, so that is also the reference writer's data order), each entry's keys in
    // the order dtype, shape, data_offsets.
    order.clear();
    for (const TensorOut& t : tensors) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const TensorOut* a, const TensorOut* b) { return a->name < b->name; });
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) {
        std::vector<std::pair<std::string, std::string>> sorted = metadata;
        std::sort(sorted.begin(), sorted.end());
        nlohmann::ordered_json m = nlohmann::ordered_json::object();
        for (const auto& kv : sorted) m[kv.first] = kv.second;
        header["__metadata__"] = m;
    }
    uint64_t offset = 0;
    for (size_t i = 0; i < order.size(); ++i) {
        const TensorOut& t = *order[i];
        if (t.name.empty() || t.name == "__metadata__")
            return fail(error, label, "cannot write a tensor named " + quote(t.name));
        if (i > 0 && order[i - 1]->name == t.name)
            return fail(error, label, "two tensors are named " + quote(t.name));
        uint64_t numel = 1;
        for (uint64_t d : t.shape)
            if (__builtin_mul_overflow(numel, d, &numel)) return fail(error, label, "tensor " + quote(t.name) + " is too large");
        if (numel > 0 && t.data == nullptr) return fail(error, label, "tensor " + quote(t.name) + " has no data");
        nlohmann::ordered_json entry = nlohmann::ordered_json::object();
        entry["dtype"] = "F32";
        entry["shape"] = t.shape;
        entry["data_offsets"] = {offset, offset + 4 * numel};
        header[t.name] = entry;
        offset += 4 * numel;
    }
    text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    return true;
}

uint64_t numel_of(const TensorOut& t) {
    uint64_t numel = 1;
    for (uint64_t d : t.shape) numel *= d;
    return numel;
}

// The 8 bytes of the header's length, little-endian.
std::string length_prefix(const std::string& text) {
    std::string len(8, '\0');
    for (int i = 0; i < 8; ++i) len[size_t(i)] = char(uint8_t(uint64_t(text.size()) >> (8 * i)));
    return len;
}

} // namespace

bool safetensors_bytes(const std::vector<TensorOut>& tensors, const std::vector<std::pair<std::string, std::string>>& metadata,
                       std::string& out, std::string& error) {
    std::string text;
    std::vector<const TensorOut*> order;
    if (!safetensors_header("the tensors", tensors, metadata, text, order, error)) return false;
    uint64_t data = 0;
    for (const TensorOut* t : order) data += 4 * numel_of(*t);
    out = length_prefix(text) + text;
    size_t at = out.size();
    out.resize(size_t(at + data));
    for (const TensorOut* t : order) {
        const uint64_t n = numel_of(*t);
        for (uint64_t k = 0; k < n; ++k, at += 4) {
            uint32_t bits;
            std::memcpy(&bits, &t->data[k], 4);
            for (int b = 0; b < 4; ++b) out[at + size_t(b)] = char(uint8_t(bits >> (8 * b)));
        }
    }
    return true;
}

bool write_safetensors(const std::string& path, const std::vector<TensorOut>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata, std::string& error) {
    if (path.empty()) return fail(error, "''", "no file name given; give a path like weights.safetensors");
    std::string text;
    std::vector<const TensorOut*> order;
    if (!safetensors_header(path, tensors, metadata, text, order, error)) return false;

    // Readers never see half a file, and a failed write leaves the old one as it was.
    AtomicFile f(path);
    if (!f.open(error)) return false;
    f.write(length_prefix(text));
    f.write(text);
    std::vector<uint8_t> buffer;
    for (const TensorOut* t : order) {
        const uint64_t numel = numel_of(*t);
        const uint64_t chunk = 1 << 16;
        for (uint64_t i = 0; i < numel; i += chunk) {
            uint64_t m = std::min(chunk, numel - i);
            buffer.resize(size_t(4 * m));
            for (uint64_t k = 0; k < m; ++k) {
                uint32_t bits;
                std::memcpy(&bits, &t->data[i + k], 4);
                for (int b = 0; b < 4; ++b) buffer[4 * k + b] = uint8_t(bits >> (8 * b));
            }
            if (!f.write(buffer.data(), buffer.size())) break; // commit reports why
        }
    }
    return f.commit(error);
}

} // namespace attnviz
