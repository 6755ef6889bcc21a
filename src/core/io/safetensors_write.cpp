// safetensors_write.cpp: write_safetensors, see safetensors.h. The layout of
// safetensors.torch.save_file, written through the atomic writer.
#include "safetensors.h"
#include "atomic_file.h"
#include "text_util.h"
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace attnviz {

bool write_safetensors(const std::string& path, const std::vector<TensorOut>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata, std::string& error) {
    if (path.empty()) return fail(error, "''", "no file name given; give a path like weights.safetensors");

    // Header as safetensors writes it: __metadata__ first, then the tensors sorted by name
    // (all F32, so that is also the reference writer's data order), each entry's keys in
    // the order dtype, shape, data_offsets.
    std::vector<const TensorOut*> order;
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
            return fail(error, path, "cannot write a tensor named " + quote(t.name));
        if (i > 0 && order[i - 1]->name == t.name)
            return fail(error, path, "two tensors are named " + quote(t.name));
        uint64_t numel = 1;
        for (uint64_t d : t.shape)
            if (__builtin_mul_overflow(numel, d, &numel)) return fail(error, path, "tensor " + quote(t.name) + " is too large");
        if (numel > 0 && t.data == nullptr) return fail(error, path, "tensor " + quote(t.name) + " has no data");
        nlohmann::ordered_json entry = nlohmann::ordered_json::object();
        entry["dtype"] = "F32";
        entry["shape"] = t.shape;
        entry["data_offsets"] = {offset, offset + 4 * numel};
        header[t.name] = entry;
        offset += 4 * numel;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');

    // Readers never see half a file, and a failed write leaves the old one as it was.
    AtomicFile f(path);
    if (!f.open(error)) return false;
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = uint8_t(uint64_t(text.size()) >> (8 * i));
    f.write(len, 8);
    f.write(text);
    std::vector<uint8_t> buffer;
    for (const TensorOut* t : order) {
        uint64_t numel = 1;
        for (uint64_t d : t->shape) numel *= d;
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
