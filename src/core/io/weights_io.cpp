// weights_io.cpp: naming schemes over the safetensors container; see weights_io.h.
#include "weights_io.h"
#include "config.h"
#include "text_util.h"
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace attnviz {

// ---------------------------------------------------------------------------------------
// [SECTION] helpers
// ---------------------------------------------------------------------------------------

static std::string shape_text(const std::vector<uint64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// "0 to 11" for a run, else "0, 1, 4 and 7" (a long list is cut short).
static std::string layers_text(const std::vector<int>& v) {
    if (v.empty()) return "none";
    if (v.size() == 1) return std::to_string(v[0]);
    if (v.back() - v.front() + 1 == int(v.size()))
        return std::to_string(v.front()) + " to " + std::to_string(v.back());
    std::string s;
    const size_t cap = 20;
    for (size_t i = 0; i < v.size() && i < cap; ++i) {
        if (i > 0) s += (i + 1 == v.size()) ? " and " : ", ";
        s += std::to_string(v[i]);
    }
    if (v.size() > cap) s += " and " + std::to_string(v.size() - cap) + " more";
    return s;
}

// n_head values that split C evenly and are within attnviz's limit.
static std::vector<int> head_choices(int C) {
    std::vector<int> d;
    for (int h : divisors(C))
        if (h <= max_n_head) d.push_back(h);
    return d;
}

// A layered attention tensor: <prefix>h.<N>.attn.<part>, part = c_attn.weight etc.
static bool split_layered(const std::string& name, const std::string& part, std::string& prefix, int& layer) {
    const std::string suffix = ".attn." + part;
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    const std::string stem = name.substr(0, name.size() - suffix.size()); // <prefix>h.<N>
    size_t dot = stem.find_last_of('.');
    if (dot == std::string::npos || dot == stem.size() - 1) return false;
    const std::string digits = stem.substr(dot + 1);
    if (digits.size() > 6 || (digits.size() > 1 && digits[0] == '0') || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    const std::string head = stem.substr(0, dot); // <prefix>h
    if (head.empty() || head.back() != 'h' || (head.size() > 1 && head[head.size() - 2] != '.')) return false;
    prefix = head.substr(0, head.size() - 1);
    layer = std::stoi(digits);
    return true;
}

// ---------------------------------------------------------------------------------------
// [SECTION] loading
// ---------------------------------------------------------------------------------------

std::string scheme_name(const LoadedWeights& w) {
    switch (w.scheme) {
    case WeightScheme::lesson: return "lesson";
    case WeightScheme::nanogpt_block: return w.conv1d ? "GPT-2 attention block" : "nanoGPT attention block";
    case WeightScheme::layered: return w.conv1d ? "GPT-2 (Hugging Face)" : "nanoGPT model";
    }
    return "?";
}

// Read a tensor, check its size and that every value is finite.
static bool read_checked(const SafetensorsFile& file, const TensorReader& read, const TensorInfo& t,
                         std::vector<float>& v, std::string& error) {
    if (!read(t, v, error)) return false;
    if (v.size() != t.numel())
        return fail(error, file.name, "tensor " + quote(t.name) + " did not read back as " + shape_text(t.shape));
    for (size_t i = 0; i < v.size(); ++i) {
        if (std::isfinite(v[i])) continue;
        std::string at = std::to_string(i);
        if (t.shape.size() == 2) at = std::to_string(i / t.shape[1]) + ", " + std::to_string(i % t.shape[1]);
        return fail(error, file.name,
                    "tensor " + quote(t.name) + " has a non-finite value (" + (std::isnan(v[i]) ? "nan" : v[i] > 0 ? "inf" : "-inf") +
                        ") at [" + at + "]; attnviz needs finite weights");
    }
    return true;
}

static bool need_tensor(const SafetensorsFile& file, const std::string& tensor_name, const std::string& why,
                        const TensorInfo*& out, std::string& error) {
    out = file.find(tensor_name);
    if (out) return true;
    return fail(error, file.name, "there is no tensor " + quote(tensor_name) + "; " + why);
}

// The names of a layered file (GPT-2's h.N.attn.c_attn.weight, with any prefix) for `layer`.
static bool pick_layered_names(const SafetensorsFile& file, int layer, LoadedWeights& out, std::string& error) {
    const std::string& path = file.name;
    // prefix -> layers that have c_attn or c_proj
    std::map<std::string, std::set<int>> found;
    for (const TensorInfo& t : file.tensors) {
        std::string prefix;
        int n = 0;
        if (split_layered(t.name, "c_attn.weight", prefix, n) || split_layered(t.name, "c_proj.weight", prefix, n))
            found[prefix].insert(n);
    }
    if (found.empty()) {
        std::string names;
        const size_t cap = 6;
        for (size_t i = 0; i < file.tensors.size() && i < cap; ++i)
            names += (i ? ", " : "") + quote(file.tensors[i].name);
        if (file.tensors.size() > cap) names += " and " + std::to_string(file.tensors.size() - cap) + " more";
        return fail(error, path,
                    "no attention weights found: expected qkv.weight and proj.weight (the lesson), c_attn.weight "
                    "and c_proj.weight (nanoGPT), h.N.attn.c_attn.weight (GPT-2) or a model from attnviz train (with "
                    "attnviz_task in its __metadata__), but the file holds " +
                        (names.empty() ? std::string("no tensors") : names));
    }
    // Several prefixes (say a model and a copy of it): the shortest is the model itself.
    auto pick = std::min_element(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a.first < b.first;
    });
    out.scheme = WeightScheme::layered;
    out.prefix = pick->first;
    out.layers.assign(pick->second.begin(), pick->second.end());
    if (!pick->second.count(layer))
        return fail(error, path,
                    "layer " + std::to_string(layer) + " does not exist; the file has layers " + layers_text(out.layers) +
                        " (" + out.prefix + "h.N.attn)");
    const std::string base = out.prefix + "h." + std::to_string(layer) + ".attn.";
    out.qkv_name = base + "c_attn.weight", out.proj_name = base + "c_proj.weight";
    out.qkv_bias_name = base + "c_attn.bias", out.proj_bias_name = base + "c_proj.bias";
    return true;
}

// 1. Which scheme, which names: sets out's scheme, names and layers, and finds the two weights.
static bool pick_names(const SafetensorsFile& file, int layer, LoadedWeights& out, const TensorInfo*& qkv,
                       const TensorInfo*& proj, std::string& error) {
    const std::string& path = file.name;
    if (file.find("qkv.weight") || file.find("proj.weight")) {
        out.scheme = WeightScheme::lesson;
        out.qkv_name = "qkv.weight", out.proj_name = "proj.weight";
        out.qkv_bias_name = "qkv.bias", out.proj_bias_name = "proj.bias";
    } else if (file.find("c_attn.weight") || file.find("c_proj.weight")) {
        out.scheme = WeightScheme::nanogpt_block;
        out.qkv_name = "c_attn.weight", out.proj_name = "c_proj.weight";
        out.qkv_bias_name = "c_attn.bias", out.proj_bias_name = "c_proj.bias";
    } else if (!pick_layered_names(file, layer, out, error)) {
        return false;
    }
    if (out.scheme != WeightScheme::layered) {
        out.layers = {0};
        if (layer != 0)
            return fail(error, path,
                        "layer " + std::to_string(layer) + " does not exist; the file holds one attention block, layer 0");
    }
    out.layer = layer;
    const std::string qkv_shown = escaped(out.qkv_name), proj_shown = escaped(out.proj_name);
    const std::string pair = qkv_shown + " and " + proj_shown;
    return need_tensor(file, out.qkv_name, "the file has " + proj_shown + " but needs " + pair, qkv, error) &&
           need_tensor(file, out.proj_name, "the file has " + qkv_shown + " but needs " + pair, proj, error);
}

// 2. Shapes: C from c_attn / qkv, and with it the layout; the biases, when there are any,
// must match it (their names are cleared when there are none).
static bool check_shapes(const SafetensorsFile& file, const TensorInfo& qkv, const TensorInfo& proj, LoadedWeights& out,
                         const TensorInfo*& qkv_bias, const TensorInfo*& proj_bias, std::string& error) {
    const std::string& path = file.name;
    const std::string linear_shape = "[3C, C] (nn.Linear)";
    const std::string either_shape = "[3C, C] (nn.Linear) or [C, 3C] (GPT-2's Conv1D)";
    const std::string& expected = out.scheme == WeightScheme::lesson ? linear_shape : either_shape;
    uint64_t C = 0;
    if (qkv.shape.size() == 2 && qkv.shape[0] == 3 * qkv.shape[1] && qkv.shape[1] > 0) {
        C = qkv.shape[1];
    } else if (out.scheme != WeightScheme::lesson && qkv.shape.size() == 2 && qkv.shape[1] == 3 * qkv.shape[0] &&
               qkv.shape[0] > 0) {
        C = qkv.shape[0];
        out.conv1d = true;
    } else {
        return fail(error, path, "tensor " + quote(qkv.name) + " has shape " + shape_text(qkv.shape) + "; it must be " + expected);
    }
    if (C > uint64_t(max_n_embd))
        return fail(error, path,
                    "n_embd " + std::to_string(C) + " (from " + quote(qkv.name) + ") is out of range; attnviz handles 1 to " +
                        std::to_string(max_n_embd));
    out.n_embd = int(C);
    if (proj.shape != std::vector<uint64_t>{C, C})
        return fail(error, path,
                    "tensor " + quote(proj.name) + " has shape " + shape_text(proj.shape) + "; with n_embd " +
                        std::to_string(C) + " it must be " + shape_text({C, C}));
    qkv_bias = file.find(out.qkv_bias_name);
    proj_bias = file.find(out.proj_bias_name);
    if (qkv_bias && qkv_bias->shape != std::vector<uint64_t>{3 * C})
        return fail(error, path,
                    "tensor " + quote(qkv_bias->name) + " has shape " + shape_text(qkv_bias->shape) + "; with n_embd " +
                        std::to_string(C) + " it must be " + shape_text({3 * C}));
    if (proj_bias && proj_bias->shape != std::vector<uint64_t>{C})
        return fail(error, path,
                    "tensor " + quote(proj_bias->name) + " has shape " + shape_text(proj_bias->shape) + "; with n_embd " +
                        std::to_string(C) + " it must be " + shape_text({C}));
    if (!qkv_bias) out.qkv_bias_name.clear();
    if (!proj_bias) out.proj_bias_name.clear();
    return true;
}

// 3. H: the caller's, else the file's; it must split C evenly.
static bool pick_n_head(const SafetensorsFile& file, std::optional<int> n_head, LoadedWeights& out, std::string& error) {
    const std::string& path = file.name;
    const int C = out.n_embd;
    std::string h_origin;
    if (n_head) {
        out.n_head = *n_head;
        h_origin = "";
    } else if (const std::string* m = file.meta("n_head")) {
        int64_t h = 0;
        std::string parse_error;
        if (!parse_int(*m, "n_head in __metadata__", 1, max_n_head, h, parse_error))
            return fail(error, path, parse_error + "; or give --n-head");
        out.n_head = int(h);
        out.n_head_from_file = true;
        h_origin = " (from the file's __metadata__)";
    } else {
        return fail(error, path,
                    "the file does not say how many heads it has (no n_head in its __metadata__); give --n-head, which "
                    "can be " + list_or(head_choices(out.n_embd)) + " for n_embd " + std::to_string(C));
    }
    if (out.n_head < 1 || out.n_head > max_n_head)
        return fail(error, path,
                    "n_head " + std::to_string(out.n_head) + h_origin + " is out of range; give one from 1 to " +
                        std::to_string(max_n_head));
    if (out.n_embd % out.n_head != 0)
        return fail(error, path,
                    "n_embd " + std::to_string(C) + " is not divisible by n_head " + std::to_string(out.n_head) + h_origin +
                        "; n_head can be " + list_or(head_choices(out.n_embd)));
    return true;
}

// A weight read into nn.Linear's layout [out][in] (`rows` outputs), from Conv1D's [in][out]
// when the file is GPT-2's.
static bool read_linear_weight(const SafetensorsFile& file, const TensorReader& read, const TensorInfo& t, int rows,
                               int cols, bool conv1d, Mat& weight, std::string& error) {
    std::vector<float> v;
    if (!read_checked(file, read, t, v, error)) return false;
    weight.resize(rows, cols);
    if (conv1d) {
        for (int i = 0; i < cols; ++i) // file [in][out]
            for (int o = 0; o < rows; ++o) weight(o, i) = v[size_t(i) * rows + o];
    } else {
        std::copy(v.begin(), v.end(), weight.data());
    }
    return true;
}

// 4. Values, into nn.Linear layout [out][in].
static bool read_values(const SafetensorsFile& file, const TensorReader& read, const TensorInfo& qkv,
                        const TensorInfo& proj, const TensorInfo* qkv_bias, const TensorInfo* proj_bias,
                        LoadedWeights& out, std::string& error) {
    const int c = out.n_embd;
    Weights& w = out.weights;
    if (!read_linear_weight(file, read, qkv, 3 * c, c, out.conv1d, w.c_attn.weight, error) ||
        !read_linear_weight(file, read, proj, c, c, out.conv1d, w.c_proj.weight, error))
        return false;
    std::vector<float> v;
    if (qkv_bias) {
        if (!read_checked(file, read, *qkv_bias, v, error)) return false;
        w.c_attn.bias = Eigen::Map<const Vec>(v.data(), 3 * c);
    }
    if (proj_bias) {
        if (!read_checked(file, read, *proj_bias, v, error)) return false;
        w.c_proj.bias = Eigen::Map<const Vec>(v.data(), c);
    }
    return true;
}

// 5. One line that says what was loaded.
static std::string describe(const std::string& path, const LoadedWeights& out) {
    std::string d = escaped(path) + ": " + scheme_name(out);
    if (out.scheme == WeightScheme::layered)
        d += " layer " + std::to_string(out.layer) + " of " + layers_text(out.layers) + " (" + escaped(out.qkv_name) + ")";
    else
        d += " (" + escaped(out.qkv_name) + ", " + escaped(out.proj_name) + ")";
    d += ", n_embd " + std::to_string(out.n_embd) + ", n_head " + std::to_string(out.n_head) +
         (out.n_head_from_file ? " from the file" : "");
    if (out.conv1d) d += ", transposed from Conv1D";
    d += out.weights.has_bias() ? ", with biases" : ", no biases";
    return d;
}

bool weights_from_safetensors(const SafetensorsFile& file, const TensorReader& read, std::optional<int> n_head,
                              int layer, LoadedWeights& out, std::string& error) {
    out = LoadedWeights{};
    for (const TensorInfo& t : file.tensors) out.tensor_names.push_back(t.name);
    // A trained model (model_io.h) is embeddings, blocks and heads, not one attention layer
    // on a seeded x: reading its block 0 as one would show numbers that mean nothing.
    if (const std::string* task = file.meta("attnviz_task"))
        return fail(error, file.name,
                    "this is a model trained by attnviz train (task " + quote(*task) +
                        "), not an attention layer; open it in the window with attnviz --weights FILE, or with attnviz trace "
                        "--weights FILE --text \"a b c\" or attnviz heads --weights FILE");
    const TensorInfo *qkv = nullptr, *proj = nullptr, *qkv_bias = nullptr, *proj_bias = nullptr;
    if (!pick_names(file, layer, out, qkv, proj, error) || !check_shapes(file, *qkv, *proj, out, qkv_bias, proj_bias, error) ||
        !pick_n_head(file, n_head, out, error) || !read_values(file, read, *qkv, *proj, qkv_bias, proj_bias, out, error))
        return false;
    out.description = describe(file.name, out);
    out.weights.source = out.description;
    return true;
}

bool load_weights(const std::string& path, std::optional<int> n_head, int layer, LoadedWeights& out,
                  std::string& error) {
    SafetensorsFile file;
    if (!read_safetensors_header(path, file, error)) return false;
    TensorReader read = [&file](const TensorInfo& t, std::vector<float>& v, std::string& e) {
        return read_tensor(file, t, v, e);
    };
    return weights_from_safetensors(file, read, n_head, layer, out, error);
}

bool load_weights_from_memory(const uint8_t* bytes, size_t size, const std::string& name,
                              std::optional<int> n_head, int layer, LoadedWeights& out, std::string& error) {
    SafetensorsFile file;
    if (!parse_safetensors(bytes, size, name, file, error)) return false;
    TensorReader read = [&file, bytes](const TensorInfo& t, std::vector<float>& v, std::string& e) {
        return decode_tensor(file, t, bytes + file.data_start() + t.begin, v, e);
    };
    return weights_from_safetensors(file, read, n_head, layer, out, error);
}

// ---------------------------------------------------------------------------------------
// [SECTION] saving
// ---------------------------------------------------------------------------------------

static bool all_finite(const float* p, Eigen::Index n, Eigen::Index& at) {
    for (Eigen::Index i = 0; i < n; ++i)
        if (!std::isfinite(p[i])) {
            at = i;
            return false;
        }
    return true;
}

// save_weights' checks and tensors, written to `path` or, when `bytes` is given, into it
// (`path` then names the weights in error sentences).
static bool weights_out(const std::string& path, const Weights& weights, int n_head, std::string* bytes,
                        std::string& error) {
    const Eigen::Index C = weights.c_proj.weight.rows();
    auto dims = [](Eigen::Index r, Eigen::Index c) { return std::to_string(r) + " x " + std::to_string(c); };
    if (C < 1 || C > max_n_embd)
        return fail(error, path, "cannot save weights with n_embd " + std::to_string(C) + "; it must be 1 to " +
                                     std::to_string(max_n_embd));
    if (weights.c_proj.weight.cols() != C)
        return fail(error, path, "cannot save: proj.weight is " + dims(C, weights.c_proj.weight.cols()) + " but must be " + dims(C, C));
    if (weights.c_attn.weight.rows() != 3 * C || weights.c_attn.weight.cols() != C)
        return fail(error, path,
                    "cannot save: qkv.weight is " + dims(weights.c_attn.weight.rows(), weights.c_attn.weight.cols()) + " but must be " +
                        dims(3 * C, C));
    if (weights.c_attn.bias.size() != 0 && weights.c_attn.bias.size() != 3 * C)
        return fail(error, path, "cannot save: qkv.bias has " + std::to_string(weights.c_attn.bias.size()) +
                                     " values but must have " + std::to_string(3 * C));
    if (weights.c_proj.bias.size() != 0 && weights.c_proj.bias.size() != C)
        return fail(error, path, "cannot save: proj.bias has " + std::to_string(weights.c_proj.bias.size()) +
                                     " values but must have " + std::to_string(C));
    if (n_head < 1 || n_head > max_n_head)
        return fail(error, path, "cannot save with n_head " + std::to_string(n_head) + "; give one from 1 to " +
                                     std::to_string(max_n_head));
    if (C % n_head != 0)
        return fail(error, path,
                    "n_embd " + std::to_string(C) + " is not divisible by n_head " + std::to_string(n_head) +
                        "; n_head can be " + list_or(head_choices(int(C))));

    std::vector<TensorOut> tensors;
    tensors.push_back({"qkv.weight", {uint64_t(3 * C), uint64_t(C)}, weights.c_attn.weight.data()});
    tensors.push_back({"proj.weight", {uint64_t(C), uint64_t(C)}, weights.c_proj.weight.data()});
    if (weights.c_attn.bias.size()) tensors.push_back({"qkv.bias", {uint64_t(3 * C)}, weights.c_attn.bias.data()});
    if (weights.c_proj.bias.size()) tensors.push_back({"proj.bias", {uint64_t(C)}, weights.c_proj.bias.data()});
    for (const TensorOut& t : tensors) {
        Eigen::Index at = 0, n = 1;
        for (uint64_t d : t.shape) n *= Eigen::Index(d);
        if (!all_finite(t.data, n, at))
            return fail(error, path, "cannot save: " + t.name + " has a non-finite value at flat index " +
                                         std::to_string(at) + "; only finite weights can be loaded again");
    }
    const std::vector<std::pair<std::string, std::string>> meta = {{"format", "pt"}, {"n_head", std::to_string(n_head)}};
    return bytes ? safetensors_bytes(tensors, meta, *bytes, error) : write_safetensors(path, tensors, meta, error);
}

bool save_weights(const std::string& path, const Weights& weights, int n_head, std::string& error) {
    return weights_out(path, weights, n_head, nullptr, error);
}

bool weights_bytes(const std::string& name, const Weights& weights, int n_head, std::string& out, std::string& error) {
    return weights_out(name, weights, n_head, &out, error);
}

} // namespace attnviz
