// follow_gpt_page.cpp: the page's side of follow_gpt.h. What the teacher's window sent is
// checked (sizes, ids, every tensor's shape) and put into the fields the views draw from;
// nothing of the model is computed, and recompute() leaves it alone (refuse_received_edit).
#include "follow_gpt.h"
#include "follow_generate.h"
#include "follow_gpt_probes.h"
#include "follow_gpt_json.h"
#include "follow_protocol.h"
#include "safetensors.h"
#include "state_internal.h"
#include <algorithm>
#include <cmath>

namespace attnviz {

using json = nlohmann::json;

using namespace follow_gpt_detail;

namespace {

// One safetensors part in memory, its tensors read by name and checked against their shape.
struct Part {
    SafetensorsFile file;
    const uint8_t* bytes = nullptr;
    std::string what;

    bool open(const std::string& b, const char* name, std::string& error) {
        bytes = reinterpret_cast<const uint8_t*>(b.data());
        what = std::string("the teacher's ") + name;
        return parse_safetensors(bytes, b.size(), what, file, error);
    }
    bool has(const std::string& name) const { return file.find(name) != nullptr; }
    bool read(const std::string& name, const std::vector<uint64_t>& shape, float* out, std::string& error) const {
        const TensorInfo* t = file.find(name);
        if (!t || t->shape != shape) {
            error = what + " has no tensor " + name + " of the shape the layer needs";
            return false;
        }
        return decode_tensor_into(file, *t, bytes + file.data_start() + t->begin, out, error);
    }
    bool mat(const std::string& name, int rows, int cols, Mat& m, std::string& error) const {
        const TensorInfo* t = file.find(name);
        if (!t || t->shape != std::vector<uint64_t>{uint64_t(rows), uint64_t(cols)}) {
            error = what + " has no tensor " + name + " of the shape the layer needs";
            return false;
        }
        m.resize(rows, cols);
        return read(name, {uint64_t(rows), uint64_t(cols)}, m.data(), error);
    }
    bool heads(const std::string& name, int H, int rows, int cols, PerHead& p, std::string& error) const {
        const TensorInfo* t = file.find(name); // the shape first: nothing is allocated for a tensor that is not there
        if (!t || t->shape != std::vector<uint64_t>{uint64_t(H), uint64_t(rows), uint64_t(cols)}) {
            error = what + " has no tensor " + name + " of the shape the layer needs";
            return false;
        }
        std::vector<float> all(size_t(H) * size_t(rows) * size_t(cols));
        if (!read(name, {uint64_t(H), uint64_t(rows), uint64_t(cols)}, all.data(), error)) return false;
        p.assign(size_t(H), Mat(rows, cols));
        for (int h = 0; h < H; ++h) std::copy_n(all.data() + size_t(h) * rows * cols, size_t(rows) * cols, p[size_t(h)].data());
        return true;
    }
    bool vec(const std::string& name, size_t n, std::vector<float>& v, std::string& error) const {
        v.resize(n);
        return read(name, {uint64_t(n)}, v.data(), error);
    }
};

bool read_trace(const Part& p, const std::string& prefix, const Config& c, float scale, KernelKind kernel, Trace& tr,
                std::string& error) {
    const int T = c.seq_len, C = c.n_embd, H = c.n_head, d = c.head_dim();
    tr = Trace{};
    tr.config = c, tr.kernel = kernel, tr.T = T, tr.C = C, tr.H = H, tr.head_dim = d, tr.scale = scale;
    return p.mat(prefix + "x", T, C, tr.x, error) && p.mat(prefix + "qkv", T, 3 * C, tr.qkv, error) &&
           p.heads(prefix + "q", H, T, d, tr.q, error) && p.heads(prefix + "k", H, T, d, tr.k, error) &&
           p.heads(prefix + "v", H, T, d, tr.v, error) && p.heads(prefix + "raw_scores", H, T, T, tr.raw_scores, error) &&
           p.heads(prefix + "att", H, T, T, tr.att, error) && p.heads(prefix + "heads", H, T, d, tr.heads, error) &&
           p.mat(prefix + "concat", T, C, tr.concat, error) && p.mat(prefix + "y", T, C, tr.y, error);
}

// The model's sizes and the tokens from the header, checked as a file's would be.
bool read_sizes(const json& h, ModelConfig& c, std::vector<int>& tokens, std::string& error) {
    c = ModelConfig{};
    c.arch = Arch::gpt;
    c.vocab = get_int(h, "vocab", 0), c.seq_len = get_int(h, "block_size", 0), c.n_embd = get_int(h, "n_embd", 0);
    c.n_head = get_int(h, "n_head", 0), c.n_layer = get_int(h, "n_layer", 0);
    c.bias = h.value("bias", false);
    if (c.vocab < 1 || c.n_layer < 1 || c.n_layer > 1000 || c.n_head < 1 || c.n_head > max_n_head || c.n_embd < 1 ||
        c.n_embd > max_n_embd || c.n_embd % c.n_head != 0 || c.seq_len < 1) {
        error = "the teacher's model has sizes this page cannot show";
        return false;
    }
    tokens.clear();
    if (h.contains("tokens") && h["tokens"].is_array())
        for (const json& t : h["tokens"]) tokens.push_back(t.is_number_integer() ? t.get<int>() : -1);
    if (tokens.empty() || tokens.size() > size_t(std::min(c.seq_len, max_seq_len)) ||
        std::any_of(tokens.begin(), tokens.end(), [&](int t) { return t < 0 || t >= c.vocab; })) {
        error = "the teacher's tokens are not ids of its model";
        return false;
    }
    return true;
}

std::shared_ptr<TrainedInput> received_input(const json& h, const ModelConfig& c, const std::vector<int>& tokens) {
    auto m = std::make_shared<Model>();
    m->config = c;
    auto in = std::make_shared<TrainedInput>();
    in->model = m;
    in->tokens = tokens;
    in->received = true;
    in->layout = h.value("layout", std::string("GPT"));
    in->text = h.value("text", std::string());
    in->source = "the teacher's window: " + h.value("name", std::string("a GPT model"));
    in->tokenizer_note = "the model and its tokenizer are on the teacher's computer";
    if (h.contains("labels") && h["labels"].is_object())
        for (const auto& [id, label] : h["labels"].items())
            if (label.is_string() && !id.empty() && id.size() < 10 && id.find_first_not_of("0123456789") == std::string::npos)
                in->labels[std::stoi(id)] = label.get<std::string>();
    return in;
}

} // namespace


namespace {

// What a message and its parts hold, read and checked before anything of the state changes.
struct Received {
    ModelConfig c;
    std::vector<int> tokens;
    int T = 0, layer = 0;
    Config bc;
    KernelKind kernel = KernelKind::reference;
    float scale = 1;
    LayerRun r;
    ModelRun mr;
    Weights w;
    std::vector<Trace> grid;
    bool keep_weights = false, keep_grid = false; // the ones shown stay
};

bool read_received(const AppState& s, const json& h, const std::string* const parts[gpt_part_count], Received& in,
                   std::string& error) {
    if (!h.is_object()) {
        error = "the teacher's GPT layer came without its description";
        return false;
    }
    ModelConfig& c = in.c;
    std::vector<int>& tokens = in.tokens;
    if (!read_sizes(h, c, tokens, error)) return false;
    const int T = in.T = int(tokens.size()), layer = in.layer = get_int(h, "layer", -1);
    if (layer < 0 || layer >= c.n_layer) {
        error = "the teacher's layer is not a layer of its model";
        return false;
    }
    const Config bc = in.bc = block_config(c, T);
    const KernelKind kernel = in.kernel = h.value("kernel", std::string()) == "fast" ? KernelKind::fast : KernelKind::reference;
    const float scale = in.scale = float(get_num(h.value("scale", json())));
    // Everything is read into `r` first: a part that does not fit leaves the state as it was.
    LayerRun& r = in.r;
    ModelRun& mr = in.mr;
    const bool same_sizes = received_gpt(s) && s.run.trace.T == T && s.run.trace.C == c.n_embd && s.run.trace.H == c.n_head &&
                            shown_model(s)->model->config.n_layer == c.n_layer;
    Part part;
    if (const std::string* b = parts[int(GptPart::layer)]) {
        if (!part.open(*b, "layer", error) || !read_trace(part, "trace.", bc, scale, kernel, r.trace, error)) return false;
        if (part.has("base.x")) {
            if (!read_trace(part, "base.", bc, scale, kernel, r.base, error)) return false;
        } else {
            r.base = r.trace;
        }
        if (!part.mat("base_y", T, c.n_embd, r.base_y, error) || !part.vec("dy", size_t(T), r.dy, error) ||
            !part.vec("dy_out", size_t(T), mr.dy_out, error))
            return false;
        if (part.has("causality.resid")) {
            std::vector<float> resid;
            if (!part.vec("causality.logits", size_t(T), mr.causality.logits_max_abs, error)) return false;
            resid.resize(size_t(c.n_layer) * size_t(T));
            if (!part.read("causality.resid", {uint64_t(c.n_layer), uint64_t(T)}, resid.data(), error)) return false;
            for (int l = 0; l < c.n_layer; ++l)
                mr.causality.resid_max_abs.emplace_back(resid.begin() + l * T, resid.begin() + (l + 1) * T);
        }
    } else if (!same_sizes) {
        error = "the teacher's layer has not arrived";
        return false;
    }
    Weights& w = in.w;
    bool& keep_weights = in.keep_weights;
    bool& keep_grid = in.keep_grid;
    const std::string* wb = parts[int(GptPart::weights)];
    if (wb && !wb->empty()) {
        Part wp;
        const int C = c.n_embd;
        if (!wp.open(*wb, "weights", error) || !wp.mat("c_attn.weight", 3 * C, C, w.c_attn.weight, error) ||
            !wp.mat("c_proj.weight", C, C, w.c_proj.weight, error))
            return false;
        if (wp.has("c_attn.bias")) {
            w.c_attn.bias.resize(3 * C);
            if (!wp.read("c_attn.bias", {uint64_t(3 * C)}, w.c_attn.bias.data(), error)) return false;
        }
        if (wp.has("c_proj.bias")) {
            w.c_proj.bias.resize(C);
            if (!wp.read("c_proj.bias", {uint64_t(C)}, w.c_proj.bias.data(), error)) return false;
        }
        w.source = "the teacher's window, layer " + std::to_string(layer);
    } else if (!wb && same_sizes) {
        keep_weights = true; // the weights shown, not copied
    } else {
        // Not sent (the view does not draw them): NaN, never a number the teacher's window does not show.
        w.c_attn.weight = Mat::Constant(3 * c.n_embd, c.n_embd, NAN);
        w.c_proj.weight = Mat::Constant(c.n_embd, c.n_embd, NAN);
        w.source = "not sent (the view does not show it)";
    }
    std::vector<Trace>& grid = in.grid;
    const std::string* gb = parts[int(GptPart::grid)];
    if (gb && !gb->empty()) {
        Part gp;
        if (!gp.open(*gb, "grid", error)) return false;
        grid.resize(size_t(c.n_layer));
        for (int l = 0; l < c.n_layer; ++l) {
            Trace& g = grid[size_t(l)];
            g.config = bc, g.T = T, g.C = c.n_embd, g.H = c.n_head, g.head_dim = c.head_dim(), g.scale = scale;
            if (!gp.heads("att." + std::to_string(l), c.n_head, T, T, g.att, error)) return false;
        }
    } else if (!gb && same_sizes) {
        keep_grid = true;
    } else {
        grid.assign(size_t(c.n_layer), Trace{}); // the grid draws nothing
    }
    return true;
}

// The Model view's numbers and the ablation as received (the detector's roles are read
// off its scores, as the window's are).
void show_received_numbers(AppState& s, const json& h, int T, const std::shared_ptr<const TrainedInput>& in) {
    ModelViewState& mv = s.model_view;
    mv.detection = get_detection(h.value("detection", json()));
    mv.roles = head_roles(mv.detection);
    mv.detected_model = in->model;
    mv.predictions.assign(size_t(T), {});
    if (h.contains("predictions") && h["predictions"].is_array())
        for (const json& p : h["predictions"])
            if (p.is_array() && p.size() == 2 && p[0].is_number_integer() && p[0].get<int>() >= 0 && p[0].get<int>() < T)
                mv.predictions[size_t(p[0].get<int>())] = get_tops(p[1]);
    mv.predict_pos = std::clamp(get_int(h, "predict_pos", -1), -1, T - 1);

    const json a = h.value("ablation", json());
    Ablation applied;
    std::string why;
    if (a.is_object()) {
        parse_ablation_mode(a.value("mode", std::string("zero")), applied.mode, why);
        if (a.contains("heads") && a["heads"].is_array())
            for (const json& hd : a["heads"])
                if (hd.is_array() && hd.size() == 2 && hd[0].is_number_integer() && hd[1].is_number_integer())
                    applied.heads.push_back({hd[0].get<int>(), hd[1].get<int>()});
        s.ablation.numbers = AblationNumbers{};
        s.ablation.numbers.clean = get_run_summary(a.value("clean", json()));
        s.ablation.numbers.ablated = get_run_summary(a.value("ablated", json()));
        s.ablation.numbers.pos = get_int(a, "pos", -1), s.ablation.numbers.token = get_int(a, "token", -1);
    }
    s.ablation.applied = s.ablation.edit = applied;
    s.ablation.dirty = false;
    s.ablation.model_clean = ModelTrace{};
}

} // namespace

bool show_received_gpt(AppState& s, const json& h, const std::string* const parts[gpt_part_count], std::string& error) {
    Received rc;
    if (!read_received(s, h, parts, rc, error)) return false;
    const ModelConfig& c = rc.c;
    const std::vector<int>& tokens = rc.tokens;
    const int T = rc.T, layer = rc.layer;
    const Config& bc = rc.bc;
    const KernelKind kernel = rc.kernel;
    LayerRun& r = rc.r;
    ModelRun& mr = rc.mr;
    Weights& w = rc.w;
    std::vector<Trace>& grid = rc.grid;
    const bool keep_weights = rc.keep_weights, keep_grid = rc.keep_grid;

    // Every check passed: the state shows it.
    std::shared_ptr<const TrainedInput> in = received_input(h, c, tokens);
    if (parts[int(GptPart::layer)]) {
        s.run.trace = std::move(r.trace);
        s.run.base = std::move(r.base);
        s.run.base_y = std::move(r.base_y);
        s.run.dy = std::move(r.dy);
        s.model_run.dy_out = std::move(mr.dy_out);
        s.model_run.causality = std::move(mr.causality);
        s.upload = UploadRequest{};
        s.upload.full = true;
        s.base_upload = true;
    }
    s.run.has_base = true;
    if (!keep_weights) {
        s.run.experiment.weights = std::move(w);
        s.upload.full = true; // the weights' textures too
    }
    s.run.experiment.config = bc;
    if (parts[int(GptPart::layer)]) s.run.experiment.x = s.run.base.x;
    if (!keep_grid) { // (kept: model_base holds the grid alone, as made here before)
        s.model_run.model_base = ModelTrace{};
        s.model_run.model_base.layers = std::move(grid);
        s.model_view.grid_upload = true;
    }
    s.model_run.model_base.tokens = tokens;
    s.model_run.model_perturbed = ModelTrace{};
    s.model_run.causality.p = get_int(h, "causality_p", 0), s.model_run.causality.new_token = get_int(h, "causality_token", 0);
    s.run.ranges = get_ranges(h.value("ranges", json()));
    s.run.dy_summary = get_summary(h.value("dy_summary", json()));
    s.model_run.dy_out_summary = get_summary(h.value("dy_out_summary", json()));
    s.model_run.resid_summary = get_summary(h.value("resid_summary", json()));
    s.run.applied_p = std::clamp(get_int(h, "applied_p", -1), -1, T - 1);
    s.run.applied_strength = float(get_num(h.value("applied_strength", json())));
    s.model_run.applied_replace_token = get_int(h, "applied_replace_token", -1);
    s.run.sharpness = get_sharpness(h.value("sharpness", json()));

    s.shown.source = GptModel{in};
    s.edit_trained = in;
    s.shown.layer = s.edit_layer = layer;
    s.shown.replace_token = get_int(h, "replace_token", -1);
    s.shown.words.clear();
    for (int t : tokens) s.shown.words.push_back(model_token_label(s, t));
    s.config.applied = s.config.edit = bc;
    s.kernel = kernel;
    s.p = std::clamp(get_int(h, "p", 0), 0, T - 1);
    s.strength = float(get_num(h.value("strength", json())));
    if (!std::isfinite(s.strength)) s.strength = 0;
    s.fields.sequence_field = gpt_sequence_text(*in);

    show_received_numbers(s, h, T, in);
    show_received_generate(s, h); // the Generate view's, when it is shown (follow_generate.h)
    show_received_probes(s, h.value(follow_protocol::gpt_probes, json()), in); // the lens cells and patching tables (follow_gpt_probes.h)
    s.config_dirty = s.perturb_dirty = false;
    state_detail::clamp_windows(s);
    s.ready = true;
    s.error.clear();
    s.status = "Showing the teacher's " + in->layout + " model (" + h.value("name", std::string()) + "), layer " +
               std::to_string(layer) + " of " + std::to_string(c.n_layer) + ", on " + std::to_string(T) + " tokens.";
    return true;
}

void refuse_received_edit(AppState& s) {
    s.error = std::string("Kept what is shown: ") + gpt_lives_on_teacher;
    s.config.put_back();
    s.kernel_choice.put_back();
    state_detail::put_back_model(s);
    s.ablation.put_back();
    s.strength = s.run.applied_p >= 0 ? s.run.applied_strength : 0.f;
    if (s.run.applied_p >= 0) s.p = s.run.applied_p;
    s.shown.replace_token = s.model_run.applied_replace_token;
    s.config_dirty = s.perturb_dirty = s.ablation.dirty = false;
}

} // namespace attnviz
