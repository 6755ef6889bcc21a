// model_io.cpp: see model_io.h.
#include "model_io.h"
#include "config.h"
#include "text_util.h"
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace attnviz {

namespace {

std::string dims(int64_t r, int64_t c) { return "[" + std::to_string(r) + ", " + std::to_string(c) + "]"; }

std::string shape_text(const std::vector<uint64_t>& s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
}

const char* const wte_name = "transformer.wte.weight";
const char* const wpe_name = "transformer.wpe.weight";
const std::string block_prefix = "transformer.h.";

// "transformer.h.<N>.attn.<leaf>" -> N, or -1 when `name` is not that (N without leading zeros).
int block_of(const std::string& name, const std::string& leaf) {
    if (name.compare(0, block_prefix.size(), block_prefix) != 0) return -1;
    size_t at = block_prefix.size(), end = at;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end == at || end - at > 6 || (name[at] == '0' && end - at > 1)) return -1;
    if (name.compare(end, std::string::npos, ".attn." + leaf) != 0) return -1;
    return std::stoi(name.substr(at, end - at));
}

bool finite_all(const float* p, size_t n, size_t& at) {
    for (size_t i = 0; i < n; ++i)
        if (!std::isfinite(p[i])) {
            at = i;
            return false;
        }
    return true;
}

} // namespace

bool is_trained_model(const SafetensorsFile& file) { return file.meta(trained_task_key) != nullptr; }

bool is_trained_model_file(const std::string& path) {
    SafetensorsFile file;
    std::string error;
    return read_safetensors_header(path, file, error) && is_trained_model(file);
}

std::vector<ModelTensor> model_layout(const ModelConfig& c) {
    const int V = c.vocab, C = c.n_embd;
    std::vector<ModelTensor> out;
    out.push_back({wte_name, V + 1, C, [](Model& m, int) { return &m.wte; }, -1});
    out.push_back({wpe_name, c.n_tokens(), C, [](Model& m, int) { return &m.wpe; }, -1});
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string base = block_prefix + std::to_string(l) + ".attn.";
        out.push_back({base + "c_attn.weight", 3 * C, C, [](Model& m, int b) { return &m.h[size_t(b)].attn.c_attn.weight; }, l});
        out.push_back({base + "c_proj.weight", C, C, [](Model& m, int b) { return &m.h[size_t(b)].attn.c_proj.weight; }, l});
    }
    if (c.has_prev_head()) out.push_back({"head_prev.weight", V + 1, C, [](Model& m, int) { return &m.head_prev; }, -1});
    if (c.has_dup_head()) out.push_back({"head_dup.weight", 2, C, [](Model& m, int) { return &m.head_dup; }, -1});
    if (c.has_lm_head()) out.push_back({"lm_head.weight", V, C, [](Model& m, int) { return &m.lm_head; }, -1});
    return out;
}

// ---------------------------------------------------------------------------------------
// [SECTION] writing

// The one place a model file is written: the safetensors writer renames a finished
// temporary file over `path`.
static bool write_model_file(const std::string& path, const std::vector<TensorOut>& tensors,
                             const std::vector<std::pair<std::string, std::string>>& meta, std::string& error) {
    return write_safetensors(path, tensors, meta, error);
}

// save_model's checks and tensors, written to `path` or, when `bytes` is given, into it
// (`path` then names the model in error sentences).
static bool model_out(const std::string& path, const Model& m, std::string* bytes, std::string& error) {
    const ModelConfig& c = m.config;
    if (std::string bad = validate(c); !bad.empty()) return fail(error, path, "cannot save: " + bad);
    if (int(m.h.size()) != c.n_layer)
        return fail(error, path,
                    "cannot save: the model has " + std::to_string(m.h.size()) + " blocks but its config says n_layer " +
                        std::to_string(c.n_layer));
    Model& mm = const_cast<Model&>(m); // the layout's accessors take a Model&; nothing is changed
    std::vector<TensorOut> tensors;
    for (const ModelTensor& t : model_layout(c)) {
        const Mat& v = *t.member(mm, t.layer);
        if (v.rows() != t.rows || v.cols() != t.cols)
            return fail(error, path,
                        "cannot save: " + t.name + " is " + dims(v.rows(), v.cols()) + " but the config needs " +
                            dims(t.rows, t.cols));
        size_t at = 0;
        if (!finite_all(v.data(), size_t(v.size()), at))
            return fail(error, path,
                        "cannot save: " + t.name + " holds a non-finite value (" + std::to_string(v.data()[at]) +
                            " at row " + std::to_string(at / size_t(t.cols)) + "); nothing was written");
        tensors.push_back({t.name, {uint64_t(t.rows), uint64_t(t.cols)}, v.data()});
    }
    const std::vector<std::pair<std::string, std::string>> meta = {
        {trained_task_key, to_string(c.task)},
        {"n_head", std::to_string(c.n_head)},
        {"n_layer", std::to_string(c.n_layer)},
        {"vocab_size", std::to_string(c.vocab)},
    };
    return bytes ? safetensors_bytes(tensors, meta, *bytes, error) : write_model_file(path, tensors, meta, error);
}

bool save_model(const std::string& path, const Model& m, std::string& error) { return model_out(path, m, nullptr, error); }

bool model_bytes(const std::string& name, const Model& m, std::string& out, std::string& error) {
    return model_out(name, m, &out, error);
}

// ---------------------------------------------------------------------------------------
// [SECTION] reading

static bool meta_int(const SafetensorsFile& file, const char* key, int64_t hi, std::optional<int>& out,
                     std::string& error) {
    out.reset();
    const std::string* m = file.meta(key);
    if (!m) return true;
    int64_t v = 0;
    std::string why;
    const std::string what = std::string(key) + " in __metadata__";
    if (!parse_int(*m, what.c_str(), 1, hi, v, why)) return fail(error, file.name, why + "; the file is damaged");
    out = int(v);
    return true;
}

// C and V from the token embedding, T from the position embedding.
static bool sizes_from_embeddings(const SafetensorsFile& file, ModelConfig& c, std::string& error) {
    const std::string& path = file.name;
    const TensorInfo* wte = file.find(wte_name);
    const TensorInfo* wpe = file.find(wpe_name);
    if (!wte || !wpe)
        return fail(error, path,
                    std::string("a trained model needs ") + wte_name + " and " + wpe_name + ", but the file has no " +
                        (wte ? wpe_name : wte_name));
    if (wte->shape.size() != 2 || wte->shape[0] < 3 || wte->shape[1] < 1 || wte->shape[1] > uint64_t(max_n_embd))
        return fail(error, path,
                    std::string(wte_name) + " has shape " + shape_text(wte->shape) +
                        "; it must be [V+1, C] with V >= 2 and C from 1 to " + std::to_string(max_n_embd));
    const uint64_t C = wte->shape[1];
    if (wpe->shape.size() != 2 || wpe->shape[0] < 2 || wpe->shape[1] != C || wpe->shape[0] > uint64_t(max_seq_len) + 1)
        return fail(error, path,
                    std::string(wpe_name) + " has shape " + shape_text(wpe->shape) + "; with n_embd " +
                        std::to_string(C) + " from " + wte_name + " it must be [T+1, " + std::to_string(C) +
                        "] with T from 1 to " + std::to_string(max_seq_len));
    if (wte->shape[0] > uint64_t(1) << 20)
        return fail(error, path, std::string(wte_name) + " has " + std::to_string(wte->shape[0]) + " rows, too many tokens");
    c.n_embd = int(C);
    c.vocab = int(wte->shape[0]) - 1;
    c.seq_len = int(wpe->shape[0]) - 1;
    return true;
}

// V, H and L from __metadata__: H must be there, V and L, when there, must match the tensors.
static bool heads_from_metadata(const SafetensorsFile& file, ModelConfig& c, std::optional<int>& layers, std::string& error) {
    const std::string& path = file.name;
    std::optional<int> vocab, heads;
    if (!meta_int(file, "vocab_size", 1 << 20, vocab, error) || !meta_int(file, "n_head", max_n_head, heads, error) ||
        !meta_int(file, "n_layer", 4096, layers, error))
        return false;
    if (vocab && *vocab != c.vocab)
        return fail(error, path,
                    "vocab_size " + std::to_string(*vocab) + " in __metadata__ does not match " + wte_name + ", whose " +
                        std::to_string(c.vocab + 1) + " rows hold " + std::to_string(c.vocab) +
                        " tokens and BOS; the file is damaged");
    if (!heads)
        return fail(error, path, "the file does not say how many heads its blocks have (no n_head in its __metadata__)");
    c.n_head = *heads;
    return true;
}

// Blocks: 0 .. L-1, each with both matrices.
static bool blocks_from_tensors(const SafetensorsFile& file, ModelConfig& c, std::optional<int> layers, std::string& error) {
    const std::string& path = file.name;
    std::set<int> blocks;
    for (const TensorInfo& t : file.tensors) {
        int b = block_of(t.name, "c_attn.weight");
        if (b < 0) b = block_of(t.name, "c_proj.weight");
        if (b >= 0) blocks.insert(b);
    }
    if (blocks.empty()) return fail(error, path, "the file has no attention blocks (transformer.h.0.attn.c_attn.weight)");
    c.n_layer = *blocks.rbegin() + 1;
    if (int(blocks.size()) != c.n_layer)
        for (int l = 0; l < c.n_layer; ++l)
            if (!blocks.count(l))
                return fail(error, path,
                            "block " + std::to_string(l) + " is missing (transformer.h." + std::to_string(l) +
                                ".attn) while block " + std::to_string(c.n_layer - 1) + " exists");
    if (layers && *layers != c.n_layer)
        return fail(error, path,
                    "n_layer " + std::to_string(*layers) + " in __metadata__ does not match the " +
                        std::to_string(c.n_layer) + " blocks the file holds; the file is damaged");
    return true;
}

// Every tensor of the layout, with its shape, read into out; nothing else in the file.
static bool read_layout(const SafetensorsFile& file, const TensorReader& read, const std::string& task, Model& out,
                        std::string& error) {
    const std::string& path = file.name;
    const ModelConfig& c = out.config;
    const std::vector<ModelTensor> layout = model_layout(c);
    std::set<std::string> expected;
    for (const ModelTensor& t : layout) expected.insert(t.name);
    for (const TensorInfo& t : file.tensors)
        if (!expected.count(t.name)) {
            const bool head = t.name == "head_prev.weight" || t.name == "head_dup.weight" || t.name == "lm_head.weight";
            return fail(error, path,
                        "tensor " + quote(t.name) +
                            (head ? " is a head that task " + task + " does not have"
                                  : " is not part of a trained model") +
                            "; the file is damaged or not written by attnviz train");
        }
    out.h.resize(size_t(c.n_layer));
    std::vector<float> v;
    for (const ModelTensor& t : layout) {
        const TensorInfo* info = file.find(t.name);
        if (!info)
            return fail(error, path,
                        "tensor '" + t.name + "' is missing; a " + std::string(to_string(c.task)) + " model with " +
                            std::to_string(c.n_layer) + (c.n_layer == 1 ? " block" : " blocks") + " needs it");
        if (info->shape != std::vector<uint64_t>{uint64_t(t.rows), uint64_t(t.cols)})
            return fail(error, path,
                        "tensor '" + t.name + "' has shape " + shape_text(info->shape) + "; with V " +
                            std::to_string(c.vocab) + ", T " + std::to_string(c.seq_len) + " and C " +
                            std::to_string(c.n_embd) + " it must be " + dims(t.rows, t.cols));
        if (!read(*info, v, error)) return false;
        if (v.size() != size_t(t.rows) * size_t(t.cols))
            return fail(error, path, "tensor '" + t.name + "' did not read back as " + dims(t.rows, t.cols));
        size_t at = 0;
        if (!finite_all(v.data(), v.size(), at))
            return fail(error, path,
                        "tensor '" + t.name + "' holds a non-finite value (" + std::to_string(v[at]) + " at row " +
                            std::to_string(at / size_t(t.cols)) + "); the model cannot be used");
        Mat& m = *t.member(out, t.layer);
        m.resize(t.rows, t.cols);
        std::copy(v.begin(), v.end(), m.data());
    }
    return true;
}

bool model_from_safetensors(const SafetensorsFile& file, const TensorReader& read, Model& out, std::string& error) {
    out = Model{};
    const std::string& path = file.name;
    ModelConfig& c = out.config;
    const std::string* task = file.meta(trained_task_key);
    if (!task)
        return fail(error, path,
                    "this is not a model trained by attnviz train (its __metadata__ has no attnviz_task); give a file "
                    "that attnviz train (or PyTorch in its layout) wrote");
    std::string why;
    if (!parse_task(*task, c.task, why)) return fail(error, path, "attnviz_task in __metadata__: " + why);

    if (!sizes_from_embeddings(file, c, error)) return false;
    std::optional<int> layers;
    if (!heads_from_metadata(file, c, layers, error) || !blocks_from_tensors(file, c, layers, error)) return false;
    if (std::string bad = validate(c); !bad.empty()) return fail(error, path, bad);
    return read_layout(file, read, *task, out, error);
}

bool load_model(const std::string& path, Model& out, std::string& error) {
    SafetensorsFile file;
    if (!read_safetensors_header(path, file, error)) return false;
    TensorReader read = [&file](const TensorInfo& t, std::vector<float>& v, std::string& e) {
        return read_tensor(file, t, v, e);
    };
    return model_from_safetensors(file, read, out, error);
}

bool load_model_from_memory(const uint8_t* bytes, size_t size, const std::string& name, Model& out,
                            std::string& error) {
    SafetensorsFile file;
    if (!parse_safetensors(bytes, size, name, file, error)) return false;
    TensorReader read = [&file, bytes](const TensorInfo& t, std::vector<float>& v, std::string& e) {
        return decode_tensor(file, t, bytes + file.data_start() + t.begin, v, e);
    };
    return model_from_safetensors(file, read, out, error);
}

// ---------------------------------------------------------------------------------------
// [SECTION] vocabulary

std::string token_name(const ModelConfig& c, int token) {
    if (token == c.bos()) return "^";
    if (token >= 0 && token < 26) return std::string(1, char('a' + token));
    return "t" + std::to_string(token);
}

std::string vocabulary_text(const ModelConfig& c) {
    if (c.vocab <= 6) {
        std::string s;
        for (int i = 0; i < c.vocab; ++i) s += (i ? ", " : "") + token_name(c, i);
        return s;
    }
    return token_name(c, 0) + ", " + token_name(c, 1) + ", " + token_name(c, 2) + " ... " + token_name(c, c.vocab - 1);
}

int token_of(const ModelConfig& c, const std::string& word) {
    if (word == "^") return c.bos();
    for (int i = 0; i < c.vocab; ++i)
        if (token_name(c, i) == word) return i;
    return -1;
}

} // namespace attnviz
