// gpt_test_util.h: the tiny GPT fixtures of tests/data/gpt_tiny (scripts/gen_gpt_reference.py)
// and a writer of GPT files with chosen faults, for the GPT core tests.
#pragma once
#include "common/temp_dir.h"
#include "gpt_io.h"
#include "gpt_model.h"
#include "safetensors.h"
#include <gtest/gtest.h>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace attnviz::test {

inline std::string gpt_data(const std::string& name) { return std::string(ATTNVIZ_TEST_DATA) + "/gpt_tiny/" + name; }

// One tensor of a forward file as a matrix of `rows` rows.
inline Mat fixture_tensor(const std::string& file, const std::string& name) {
    SafetensorsFile f;
    std::string error;
    if (!read_safetensors_header(file, f, error)) throw std::runtime_error(error);
    const TensorInfo* t = f.find(name);
    if (!t) throw std::runtime_error(file + " has no " + name);
    std::vector<float> v;
    if (!read_tensor(f, *t, v, error)) throw std::runtime_error(error);
    const int64_t cols = int64_t(t->shape.back());
    Mat m(int64_t(v.size()) / cols, cols);
    std::copy(v.begin(), v.end(), m.data());
    return m;
}

inline std::vector<int> fixture_tokens(const std::string& file) {
    SafetensorsFile f;
    std::string error;
    if (!read_safetensors_header(file, f, error)) throw std::runtime_error(error);
    std::vector<int> out;
    std::stringstream ss(*f.meta("tokens"));
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(std::stoi(item));
    return out;
}

inline Model load_fixture_model(const std::string& path) {
    Model m;
    GptFileInfo info;
    std::string error;
    if (!load_gpt(path, std::nullopt, m, info, error)) throw std::runtime_error(error);
    return m;
}

// A model's tensors by name in the nanoGPT (nn.Linear) or Hugging Face (Conv1D) layout, as
// owned copies that a test may change, drop or cut before writing them.
struct GptTensors {
    std::map<std::string, std::pair<std::vector<uint64_t>, std::vector<float>>> t;
    std::vector<std::pair<std::string, std::string>> meta;

    void put(const std::string& name, const float* p, std::vector<uint64_t> shape) {
        uint64_t n = 1;
        for (uint64_t s : shape) n *= s;
        t[name] = {shape, std::vector<float>(p, p + n)};
    }
    void put_mat(const std::string& name, const Mat& m, bool conv1d) {
        if (conv1d) {
            Mat tr = m.transpose();
            put(name, tr.data(), {uint64_t(tr.rows()), uint64_t(tr.cols())});
        } else {
            put(name, m.data(), {uint64_t(m.rows()), uint64_t(m.cols())});
        }
    }
    void put_vec(const std::string& name, const Vec& v) {
        if (v.size() > 0) put(name, v.data(), {uint64_t(v.size())});
    }
    bool write(const std::string& path) const {
        std::vector<TensorOut> out;
        for (const auto& [name, sv] : t) out.push_back({name, sv.first, sv.second.data()});
        std::string error;
        return write_safetensors(path, out, meta, error);
    }
};

inline GptTensors gpt_tensors(const Model& m, bool conv1d, const std::string& prefix) {
    GptTensors g;
    g.put_mat(prefix + "wte.weight", m.wte, false);
    g.put_mat(prefix + "wpe.weight", m.wpe, false);
    for (size_t l = 0; l < m.h.size(); ++l) {
        const Block& b = m.h[l];
        const std::string h = prefix + "h." + std::to_string(l) + ".";
        g.put_vec(h + "ln_1.weight", b.ln_1.weight);
        g.put_vec(h + "ln_1.bias", b.ln_1.bias);
        g.put_vec(h + "ln_2.weight", b.ln_2.weight);
        g.put_vec(h + "ln_2.bias", b.ln_2.bias);
        g.put_mat(h + "attn.c_attn.weight", b.attn.c_attn.weight, conv1d);
        g.put_vec(h + "attn.c_attn.bias", b.attn.c_attn.bias);
        g.put_mat(h + "attn.c_proj.weight", b.attn.c_proj.weight, conv1d);
        g.put_vec(h + "attn.c_proj.bias", b.attn.c_proj.bias);
        g.put_mat(h + "mlp.c_fc.weight", b.mlp.c_fc.weight, conv1d);
        g.put_vec(h + "mlp.c_fc.bias", b.mlp.c_fc.bias);
        g.put_mat(h + "mlp.c_proj.weight", b.mlp.c_proj.weight, conv1d);
        g.put_vec(h + "mlp.c_proj.bias", b.mlp.c_proj.bias);
    }
    g.put_vec(prefix + "ln_f.weight", m.ln_f.weight);
    g.put_vec(prefix + "ln_f.bias", m.ln_f.bias);
    return g;
}

// A scratch directory removed with everything in it at the end of the test.
using ScratchDir = attnviz_test::TempDir;

} // namespace attnviz::test
