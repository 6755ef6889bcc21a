// gpt_io.cpp: GPT-2 / nanoGPT files into a Model; see gpt_io.h.
#include "gpt_io.h"
#include "gpt_model.h"
#include "model_io.h"
#include "safetensors.h"
#include "text_util.h"
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

namespace attnviz {

namespace {

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dir_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string shape_text(const std::vector<uint64_t>& s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
}

// The prefix before "wte.weight" of the file's token embedding, or false when it has none.
bool find_prefix(const SafetensorsFile& f, std::string& prefix) {
    for (const TensorInfo& t : f.tensors) {
        const std::string& n = t.name;
        const std::string tail = "wte.weight";
        if (n.size() >= tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0) {
            prefix = n.substr(0, n.size() - tail.size());
            if (prefix.empty() || prefix.back() == '.') return true;
        }
    }
    return false;
}

// config.json's fields that fix the model; each absent one is -1.
struct HfConfig {
    int n_layer = -1, n_head = -1, n_embd = -1, vocab = -1, n_positions = -1;
    std::string activation;
};

bool read_config_json(const std::string& path, HfConfig& c, std::string& error) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return fail(error, path, "cannot be read; make it readable or remove it");
    // The size before the bytes: a huge file is refused without reading it.
    if (in.tellg() > std::streamoff(1u << 20)) return fail(error, path, "is over 1 MB, too large for a model's config.json");
    in.seekg(0);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() > (1u << 20)) return fail(error, path, "is over 1 MB, too large for a model's config.json");
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fail(error, path, "is not a JSON object; give the config.json that transformers saved, or remove it");
    auto get = [&](const char* key, int& out) {
        auto it = j.find(key);
        if (it == j.end()) return true;
        if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > (1 << 24))
            return fail(error, path, std::string(key) + " is not a positive whole number");
        out = int(it->get<int64_t>());
        return true;
    };
    if (!get("n_layer", c.n_layer) || !get("n_head", c.n_head) || !get("n_embd", c.n_embd) ||
        !get("vocab_size", c.vocab) || !get("n_positions", c.n_positions))
        return false;
    auto act = j.find("activation_function");
    if (act != j.end() && act->is_string()) c.activation = act->get<std::string>();
    return true;
}

// One tensor by name, of exactly `shape` (the file's shape, before a transpose).
struct Reader {
    const MappedSafetensors& map;
    const std::string& file;
    std::string& error;

    const TensorInfo* need(const std::string& name, std::vector<uint64_t> shape) {
        const TensorInfo* t = map.file().find(name);
        if (!t) {
            fail(error, file, "tensor " + name + " is missing; the file is not a whole GPT-2 or nanoGPT model");
            return nullptr;
        }
        if (t->shape != shape) {
            fail(error, file, "tensor " + name + " has shape " + shape_text(t->shape) + " where the model needs " +
                                  shape_text(shape));
            return nullptr;
        }
        return t;
    }
    bool finite(const std::string& name, const float* p, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
            if (!std::isfinite(p[i]))
                return fail(error, file, "tensor " + name + " holds a NaN or infinite value at index " +
                                             std::to_string(i) + "; the weights are damaged");
        return true;
    }
    // (rows, cols) into m, nn.Linear layout; a Conv1D tensor is stored (cols, rows).
    bool matrix(const std::string& name, int rows, int cols, bool conv1d, Mat& m) {
        const TensorInfo* t = need(name, conv1d ? std::vector<uint64_t>{uint64_t(cols), uint64_t(rows)}
                                                : std::vector<uint64_t>{uint64_t(rows), uint64_t(cols)});
        if (!t) return false;
        m.resize(rows, cols);
        if (conv1d) {
            Mat stored(cols, rows);
            if (!map.decode(*t, stored.data(), error)) return false;
            m = stored.transpose();
        } else if (!map.decode(*t, m.data(), error)) {
            return false;
        }
        return finite(name, m.data(), m.size());
    }
    bool vector(const std::string& name, int n, Vec& v) {
        const TensorInfo* t = need(name, {uint64_t(n)});
        if (!t) return false;
        v.resize(n);
        return map.decode(*t, v.data(), error) && finite(name, v.data(), n);
    }
};

} // namespace

bool looks_like_gpt(const std::string& path) {
    if (is_directory(path)) return true;
    SafetensorsFile f;
    std::string error, prefix;
    return read_safetensors_header(path, f, error) && !is_trained_model(f) && find_prefix(f, prefix);
}

namespace {

// The model's sizes and layout from the tensors' shapes: wte, wpe, the blocks' count and
// whether c_attn is stored as Conv1D (Hugging Face) or nn.Linear (nanoGPT).
bool gpt_shapes(const SafetensorsFile& f, const std::string& file, const HfConfig& hc, GptFileInfo& fi, ModelConfig& c,
                std::string& error) {
    const std::string& P = fi.prefix;
    const TensorInfo* wte = f.find(P + "wte.weight");
    const TensorInfo* wpe = f.find(P + "wpe.weight");
    if (wte->shape.size() != 2 || wte->shape[0] < 1 || wte->shape[1] < 1 || wte->shape[0] > (1u << 24) ||
        wte->shape[1] > (1u << 16))
        return fail(error, file, "tensor " + P + "wte.weight has shape " + shape_text(wte->shape) +
                                     "; a token embedding is [vocabulary, n_embd]");
    if (!wpe) return fail(error, file, "tensor " + P + "wpe.weight is missing; the file is not a whole model");
    c.arch = Arch::gpt;
    c.vocab = int(wte->shape[0]);
    c.n_embd = int(wte->shape[1]);
    const int C = c.n_embd;
    if (wpe->shape.size() != 2 || wpe->shape[1] != uint64_t(C) || wpe->shape[0] < 1 || wpe->shape[0] > (1u << 20))
        return fail(error, file, "tensor " + P + "wpe.weight has shape " + shape_text(wpe->shape) +
                                     " where the model needs [block size, " + std::to_string(C) + "]");
    c.seq_len = int(wpe->shape[0]);
    c.n_layer = 0;
    while (f.find(P + "h." + std::to_string(c.n_layer) + ".attn.c_attn.weight")) ++c.n_layer;
    if (c.n_layer == 0) return fail(error, file, "tensor " + P + "h.0.attn.c_attn.weight is missing; the file has no blocks");
    const TensorInfo* attn0 = f.find(P + "h.0.attn.c_attn.weight");
    fi.conv1d = attn0->shape == std::vector<uint64_t>{uint64_t(C), uint64_t(3 * C)};
    if (!fi.conv1d && attn0->shape != std::vector<uint64_t>{uint64_t(3 * C), uint64_t(C)})
        return fail(error, file, "tensor " + P + "h.0.attn.c_attn.weight has shape " + shape_text(attn0->shape) +
                                     ", neither Conv1D's [" + std::to_string(C) + ", " + std::to_string(3 * C) +
                                     "] nor nn.Linear's [" + std::to_string(3 * C) + ", " + std::to_string(C) + "]");
    fi.layout = fi.conv1d ? "GPT-2 (Hugging Face)" : "nanoGPT";
    c.gelu = fi.conv1d ? Gelu::tanh : Gelu::erf;
    if (hc.activation == "gelu_new") c.gelu = Gelu::tanh;
    else if (hc.activation == "gelu") c.gelu = Gelu::erf;
    c.bias = f.find(P + "h.0.attn.c_attn.bias") != nullptr;
    return true;
}

// config.json must describe these tensors.
bool config_agrees(const HfConfig& hc, const ModelConfig& c, const std::string& config_path, std::string& error) {
    auto agree = [&](int v, int shape_v, const char* key, const char* what) {
        if (v < 0 || v == shape_v) return true;
        return fail(error, config_path, std::string(key) + " is " + std::to_string(v) + " but the weights have " +
                                            std::to_string(shape_v) + " " + what +
                                            "; use the config.json saved with these weights");
    };
    return agree(hc.vocab, c.vocab, "vocab_size", "tokens") && agree(hc.n_embd, c.n_embd, "n_embd", "channels") &&
           agree(hc.n_layer, c.n_layer, "n_layer", "blocks") && agree(hc.n_positions, c.seq_len, "n_positions", "positions");
}

// The number of heads, which no shape holds: --n-head, config.json, or the file's __metadata__.
bool gpt_heads(std::optional<int> n_head, const HfConfig& hc, const SafetensorsFile& f, const std::string& file,
               GptFileInfo& fi, ModelConfig& c, std::string& error) {
    if (n_head) {
        c.n_head = *n_head;
        fi.n_head_from = "--n-head";
    } else if (hc.n_head > 0) {
        c.n_head = hc.n_head;
        fi.n_head_from = "config.json";
    } else if (const std::string* m = f.meta("n_head")) {
        try {
            size_t used = 0;
            c.n_head = std::stoi(*m, &used);
            if (used != m->size()) c.n_head = 0;
        } catch (...) {
            c.n_head = 0;
        }
        if (c.n_head < 1)
            return fail(error, file, "n_head \"" + *m + "\" in __metadata__ is not a positive number; give --n-head");
        fi.n_head_from = "__metadata__";
    } else {
        return fail(error, file, "the number of heads is not in the shapes and there is no config.json or n_head "
                                 "in __metadata__; give it with --n-head (GPT-2 small has 12)");
    }
    return true;
}

// Every tensor of the model, checked for shape and finiteness, into m.
bool read_gpt_tensors(const MappedSafetensors& map, const std::string& file, const GptFileInfo& fi, Model& m,
                      std::string& error) {
    const ModelConfig& c = m.config;
    const int C = c.n_embd;
    const std::string& P = fi.prefix;
    Reader r{map, file, error};
    const bool cv = fi.conv1d;
    if (!r.matrix(P + "wte.weight", c.vocab, C, false, m.wte) || !r.matrix(P + "wpe.weight", c.seq_len, C, false, m.wpe))
        return false;
    auto ln = [&](const std::string& name, LayerNormWeights& w) {
        if (!r.vector(name + ".weight", C, w.weight)) return false;
        return !c.bias || r.vector(name + ".bias", C, w.bias);
    };
    m.h.resize(size_t(c.n_layer));
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string h = P + "h." + std::to_string(l) + ".";
        Block& b = m.h[size_t(l)];
        if (!ln(h + "ln_1", b.ln_1) || !ln(h + "ln_2", b.ln_2) ||
            !r.matrix(h + "attn.c_attn.weight", 3 * C, C, cv, b.attn.c_attn.weight) ||
            !r.matrix(h + "attn.c_proj.weight", C, C, cv, b.attn.c_proj.weight) ||
            !r.matrix(h + "mlp.c_fc.weight", 4 * C, C, cv, b.mlp.c_fc.weight) ||
            !r.matrix(h + "mlp.c_proj.weight", C, 4 * C, cv, b.mlp.c_proj.weight))
            return false;
        if (c.bias && (!r.vector(h + "attn.c_attn.bias", 3 * C, b.attn.c_attn.bias) ||
                       !r.vector(h + "attn.c_proj.bias", C, b.attn.c_proj.bias) ||
                       !r.vector(h + "mlp.c_fc.bias", 4 * C, b.mlp.c_fc.bias) ||
                       !r.vector(h + "mlp.c_proj.bias", C, b.mlp.c_proj.bias)))
            return false;
        b.attn.source = file;
    }
    return ln(P + "ln_f", m.ln_f);
}

} // namespace

bool load_gpt(const std::string& path, std::optional<int> n_head, Model& out, GptFileInfo& info,
              std::string& error) {
    GptFileInfo fi;
    std::string file = path, config_path;
    if (is_directory(path)) {
        file = path + "/model.safetensors";
        if (!is_file(file))
            return fail(error, path,
                        "this directory has no model.safetensors; save the model with transformers' "
                        "save_pretrained (safe_serialization) or give the .safetensors file itself");
    }
    if (is_file(dir_of(file) + "/config.json")) config_path = dir_of(file) + "/config.json";
    HfConfig hc;
    if (!config_path.empty()) {
        if (!read_config_json(config_path, hc, error)) return false;
        fi.config_json = true;
    }
    MappedSafetensors map;
    if (!map.open(file, error)) return false;
    const SafetensorsFile& f = map.file();
    if (is_trained_model(f))
        return fail(error, file, "this is a toy model written by attnviz train, not a GPT-2 or nanoGPT file");
    if (!find_prefix(f, fi.prefix))
        return fail(error, file, "no wte.weight tensor; the file is not a whole GPT-2 or nanoGPT model "
                                 "(for one attention layer, use --weights)");
    ModelConfig c;
    if (!gpt_shapes(f, file, hc, fi, c, error) || !config_agrees(hc, c, config_path, error) ||
        !gpt_heads(n_head, hc, f, file, fi, c, error))
        return false;
    const std::string bad = validate_gpt(c);
    if (!bad.empty()) return fail(error, file, bad.substr(0, bad.size() - 1));

    Model m;
    m.config = c;
    if (!read_gpt_tensors(map, file, fi, m, error)) return false;
    m.source = file + ": " + fi.layout + ", " + std::to_string(c.n_layer) + " layers, " + std::to_string(c.n_head) +
               " heads (from " + fi.n_head_from + "), n_embd " + std::to_string(c.n_embd) + ", vocabulary " +
               std::to_string(c.vocab) + ", block size " + std::to_string(c.seq_len) + ", " +
               (c.bias ? "with biases" : "no biases") + ", GELU " + to_string(c.gelu) +
               (fi.conv1d ? ", transposed from Conv1D" : "");
    fi.file = file;
    out = std::move(m);
    info = fi;
    return true;
}

} // namespace attnviz
