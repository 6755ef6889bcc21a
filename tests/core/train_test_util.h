// train_test_util.h: reading the training engine's PyTorch reference files
// (tests/data/train, written by scripts/gen_train_reference.py from the training recipe).
// Tensors there are base64 of little-endian float32 bytes: exact, and compact.
#pragma once
#include "core_test_util.h"
#include "model.h"
#include "train.h"
#include <stdexcept>

namespace attnviz::test {

inline std::vector<float> decode_floats(const std::string& text) {
    auto value = [](char ch) -> int {
        if (ch >= 'A' && ch <= 'Z') return ch - 'A';
        if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
        if (ch >= '0' && ch <= '9') return ch - '0' + 52;
        if (ch == '+') return 62;
        if (ch == '/') return 63;
        return -1;
    };
    std::vector<unsigned char> bytes;
    uint32_t acc = 0;
    int nbits = 0;
    for (char ch : text) {
        const int v = value(ch);
        if (v < 0) continue; // '=' padding
        acc = (acc << 6) | uint32_t(v);
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            bytes.push_back((unsigned char)((acc >> nbits) & 0xFF));
        }
    }
    if (bytes.size() % 4 != 0) throw std::runtime_error("base64 tensor is not whole float32s");
    std::vector<float> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), bytes.size()); // little-endian, as x86
    return out;
}

inline std::vector<float> tensor(const json& j) { return decode_floats(j.get<std::string>()); }

inline Task task_of(const std::string& name) {
    Task t{};
    std::string error;
    if (!parse_task(name, t, error)) throw std::runtime_error(error);
    return t;
}

// {"V", "T", "C", "H", "L"} as the reference files write a configuration.
inline ModelConfig model_config(const std::string& task, const json& c) {
    ModelConfig m;
    m.task = task_of(task);
    m.vocab = c.at("V").get<int>();
    m.seq_len = c.at("T").get<int>();
    m.n_embd = c.at("C").get<int>();
    m.n_head = c.at("H").get<int>();
    m.n_layer = c.at("L").get<int>();
    return m;
}

inline void load_weights(const json& weights, Model& m) {
    for (Param& p : parameters(m)) {
        std::vector<float> v = tensor(weights.at(p.name));
        if (int64_t(v.size()) != p.value->size()) throw std::runtime_error("size of " + p.name);
        std::memcpy(p.value->data(), v.data(), v.size() * sizeof(float));
    }
}

// Largest |a - b| over the largest |b|: the gradient test's measure.
inline double relative_to_max(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0.0, scale = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
        scale = std::max(scale, std::fabs(double(b[i])));
    }
    return scale > 0 ? diff / scale : diff;
}

inline std::vector<float> flat_model(Model& m) {
    std::vector<float> v;
    for (Param& p : parameters(m)) v.insert(v.end(), p.value->data(), p.value->data() + p.value->size());
    return v;
}

} // namespace attnviz::test
