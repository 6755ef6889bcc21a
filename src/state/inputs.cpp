// inputs.cpp: see inputs.h.
#include "inputs.h"
#include "model_io.h"
#include "text_util.h"
#include "text_input.h"
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <filesystem>

namespace attnviz {

// ---- Words

int max_words(const AppState& s) {
    // validate_window() is monotonic in T: the largest T it accepts, by bisection.
    Config c = s.config.edit;
    auto fits = [&](int T) {
        c.seq_len = T;
        return validate_window(c, s.memory_cap).empty();
    };
    if (!fits(1)) return 0;
    int lo = 1, hi = max_seq_len;
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (fits(mid)) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

bool set_text(AppState& s, const std::string& text, std::string& error) {
    std::vector<std::string> words = tokenize(text);
    if (words.empty()) {
        // Back to the seeded random input, at the T the words had.
        s.tokens.edit.clear();
        s.config.edit.seq_len = s.config.applied.seq_len;
        s.config_dirty = true;
        return true;
    }
    const int limit = max_words(s);
    if (words.size() > size_t(limit)) {
        const std::string count = std::to_string(words.size());
        if (limit == max_seq_len)
            error = "the text has " + count + " words, more than the " + std::to_string(limit) +
                    " positions attnviz takes (one position per word); shorten it";
        else
            error = "the text has " + count + " words, more than the " + std::to_string(limit) +
                    " positions the window can hold at C = " + std::to_string(s.config.edit.n_embd) +
                    ", H = " + std::to_string(s.config.edit.n_head) + " (one position per word); shorten it";
        s.error = "Kept the previous words: " + error + ".";
        return false;
    }
    s.tokens.edit = std::move(words);
    s.config.edit.seq_len = int(s.tokens.edit.size());
    s.config_dirty = true;
    return true;
}

// ---- Weights

namespace {

// The largest divisor of C that is at most `want` (and at most max_n_head).
int divisor_near(int C, int want) {
    int best = 1;
    for (int d : divisors(C))
        if (d <= want && d <= max_n_head) best = d;
    return best;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
    return out;
}

} // namespace

WeightsPathKind weights_path_kind(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(std::filesystem::path(path) / "model.safetensors", ec))
        return WeightsPathKind::gpt_directory;
    if (is_trained_model_file(path)) return WeightsPathKind::trained_model;
    return WeightsPathKind::attention_block;
}

bool load_weights_file(AppState& s, const std::string& path, int layer, std::string& error) {
    auto refuse = [&](const std::string& why) {
        error = why;
        s.status = "Kept the current weights: " + why + ".";
        s.error = s.status;
        return false;
    };
    if (path.empty()) return refuse("no weights file given; type the path of a .safetensors file");
    if (layer < 0) return refuse("layer " + std::to_string(layer) + " is not a layer; give 0 or more");
    // A GPT-2 directory: the whole model, in every view (a single GPT file keeps giving one
    // attention block here; Open model shows it whole).
    const WeightsPathKind kind = weights_path_kind(path);
    if (kind == WeightsPathKind::gpt_directory) return open_model_path(s, path, error);
    // A model attnviz train wrote: shown whole, on its letters, in every view.
    if (kind == WeightsPathKind::trained_model) {
        if (!open_trained_file(s, path, "", error)) return false;
        s.edit_layer = std::clamp(layer, 0, s.edit_trained->model->config.n_layer - 1);
        return true;
    }
    // H: the file's n_head when it says; otherwise the current H, if it divides the file's C.
    SafetensorsFile header;
    std::string why;
    if (!read_safetensors_header(path, header, why)) return refuse(why);
    const bool file_says_h = header.meta("n_head") != nullptr;
    auto w = std::make_shared<WeightsFile>();
    w->path = path;
    w->layer = layer;
    TensorReader read = [&header](const TensorInfo& t, std::vector<float>& v, std::string& e) {
        return read_tensor(header, t, v, e);
    };
    std::optional<int> n_head;
    if (!file_says_h) n_head = 1; // 1 divides any C; the real choice follows below
    if (!weights_from_safetensors(header, read, n_head, layer, w->loaded, why)) return refuse(why);
    if (!file_says_h) w->loaded.n_head = divisor_near(w->loaded.n_embd, s.config.edit.n_head);
    Config c = s.config.edit;
    c.n_embd = w->loaded.n_embd;
    c.n_head = w->loaded.n_head;
    if (std::string size = validate_window(c, s.memory_cap); !size.empty())
        return refuse(path + " has n_embd " + std::to_string(c.n_embd) + ", but " + size);
    s.config.ask(c);
    s.weights.edit = std::move(w);
    s.config_dirty = true;
    return true;
}

void unload_weights(AppState& s) {
    s.weights.edit.reset();
    s.config_dirty = true;
}

bool read_session_weights(const std::string& path, int layer, const Config& c,
                          std::shared_ptr<const WeightsFile>& out, std::string& error) {
    auto w = std::make_shared<WeightsFile>();
    w->path = path;
    w->layer = layer;
    if (!load_weights(path, c.n_head, layer, w->loaded, error)) {
        error = "the session's weights file cannot be used: " + error;
        return false;
    }
    if (w->loaded.n_embd != c.n_embd) {
        error = "the session's n_embd " + std::to_string(c.n_embd) + " does not match its weights file " + escaped(path) +
                ", whose n_embd is " + std::to_string(w->loaded.n_embd);
        return false;
    }
    out = std::move(w);
    return true;
}

std::string weights_summary(const WeightsFile& w) { return escaped(w.path) + ": " + weights_details(w); }

std::string weights_details(const WeightsFile& w) {
    const LoadedWeights& l = w.loaded;
    std::vector<std::string> names{l.qkv_name, l.proj_name};
    if (!l.qkv_bias_name.empty()) names.push_back(l.qkv_bias_name);
    if (!l.proj_bias_name.empty()) names.push_back(l.proj_bias_name);
    std::string layers;
    if (l.layers.size() > 1)
        layers = "layer " + std::to_string(l.layer) + " of " + std::to_string(l.layers.front()) + " to " +
                 std::to_string(l.layers.back());
    else
        layers = "layer " + std::to_string(l.layer) + " (the only one)";
    return scheme_name(l) + ", " + layers + "; C = " + std::to_string(l.n_embd) + ", H = " + std::to_string(l.n_head) +
           (l.n_head_from_file ? " (from the file)" : " (not in the file; n_head above sets it)") + "; names " +
           join(names, ", ") + (l.conv1d ? " (transposed from Conv1D)" : "");
}

// ---- Applying

std::string check_inputs(const AppState& s, const Config& c) {
    if (!s.tokens.edit.empty() && c.seq_len != int(s.tokens.edit.size())) {
        const std::string n = std::to_string(s.tokens.edit.size());
        return "T follows the text, which has " + n + (n == "1" ? " word" : " words") +
               "; clear the text to choose T = " + std::to_string(c.seq_len);
    }
    if (s.weights.edit && c.n_embd != s.weights.edit->loaded.n_embd)
        return "the weights file " + escaped(s.weights.edit->path) + " fixes C = " +
               std::to_string(s.weights.edit->loaded.n_embd) + "; unload it to choose C = " + std::to_string(c.n_embd);
    return "";
}

bool make_state_experiment(const AppState& s, const Config& c, Experiment& e, std::string& error) {
    const Weights* w = s.weights.edit ? &s.weights.edit->loaded.weights : nullptr;
    if (!s.tokens.edit.empty()) return make_text_experiment(c, s.tokens.edit, w, e, error);
    e = w ? make_experiment(c, *w) : make_experiment(c);
    return true;
}

std::string inputs_status(const AppState& s) {
    std::string out;
    if (!s.tokens.applied.empty()) out += " from " + std::to_string(s.tokens.applied.size()) + (s.tokens.applied.size() == 1 ? " word" : " words");
    if (s.weights.applied) out += " with the weights of " + s.weights.applied->path;
    return out;
}

// ---- Labels

std::string position_word(const std::vector<std::string>& tokens, int t, int max_chars) {
    if (t < 0 || size_t(t) >= tokens.size()) return "";
    const std::string& w = tokens[size_t(t)];
    if (utf8_count(w) <= size_t(max_chars)) return w;
    return w.substr(0, utf8_prefix(w, size_t(std::max(1, max_chars - 1)))) + "…";
}

std::string position_label(const std::vector<std::string>& tokens, int t, int max_chars) {
    if (t < 0 || size_t(t) >= tokens.size()) return std::to_string(t);
    return std::to_string(t) + " " + position_word(tokens, t, max_chars);
}

// ---- Export

std::string default_png_name(View v) { return std::string("attnviz-") + to_string(v) + ".png"; }

std::string default_tensor_file(TensorName n, bool csv) {
    return std::string("attnviz-") + to_string(n) + (csv ? ".csv" : ".npy");
}

bool is_default_png_name(const std::string& path) {
    for (int v = 0; v < view_count; ++v)
        if (path == default_png_name(View(v))) return true;
    return path.empty();
}

bool is_default_tensor_file(const std::string& path) {
    for (TensorName n : all_tensor_names())
        if (path == default_tensor_file(n, false) || path == default_tensor_file(n, true)) return true;
    return path.empty();
}

bool export_tensor_file(const AppState& s, TensorName n, const std::string& path, std::string& error) {
    if (!s.ready) {
        error = "nothing is computed yet; export once the view shows a trace";
        return false;
    }
    return check_export_path(path, error) && export_tensor(path, tensor_by_name(s.run.trace, n), error);
}

void export_tensor_now(AppState& s) {
    const std::vector<TensorName>& names = all_tensor_names();
    const TensorName n = names[size_t(std::clamp(s.fields.export_tensor, 0, int(names.size()) - 1))];
    std::string error;
    if (export_tensor_file(s, n, s.fields.tensor_path, error)) {
        const TensorView v = tensor_by_name(s.run.trace, n);
        std::vector<int64_t> shape = v.shape;
        s.status = std::string("Saved ") + to_string(n) + " " + python_tuple(shape) + " to " + escaped(s.fields.tensor_path) +
                   (s.run.applied_p >= 0 ? " (with position " + std::to_string(s.run.applied_p) + " perturbed, as shown)." : ".");
    } else {
        s.status = "Not saved: " + error + ".";
    }
}

void request_png(AppState& s) {
    if (is_default_png_name(s.fields.png_path)) s.fields.png_path = default_png_name(s.screen.view);
    const std::string& p = s.fields.png_path;
    if (p.size() < 5 || (p.compare(p.size() - 4, 4, ".png") != 0 && p.compare(p.size() - 4, 4, ".PNG") != 0)) {
        s.status = "Not saved: " + quote_path(p) + " does not end in .png; give a name such as " + default_png_name(s.screen.view) + ".";
        return;
    }
    s.screen.png_request = p;
}

} // namespace attnviz
