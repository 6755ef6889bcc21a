// follow_gpt.cpp: see follow_gpt.h. The window's side writes what the views read; the page's
// side reads it back into the same fields. Every float goes as its F32 bits (the parts) or as
// JSON's shortest text of its double (the header), so a hover on a page reads the teacher's
// number bit for bit.
#include "follow_gpt.h"
#include "follow_generate.h"
#include "follow_gpt_probes.h"
#include "follow_gpt_json.h"
#include "follow_protocol.h"
#include "safetensors.h"
#include "state_internal.h"
#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <set>

namespace attnviz {

using json = nlohmann::json;

const char* const gpt_lives_on_teacher =
    "The GPT model lives on the teacher's computer, so this page shows only the layer the teacher's window sent "
    "(Back to the teacher follows it again).";

const char* to_string(GptPart p) {
    switch (p) {
    case GptPart::layer: return "layer";
    case GptPart::weights: return "weights";
    case GptPart::grid: return "grid";
    }
    return "layer";
}

bool gpt_part_needed(GptPart p, View v) {
    switch (p) {
    case GptPart::layer: return true;
    case GptPart::weights: return v == View::walk || v == View::qkv;
    case GptPart::grid: return v == View::model;
    }
    return false;
}

namespace follow_gpt_detail {

// ---- Numbers as JSON: finite floats as numbers (exact through a double), the rest as text.

json num(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}
double get_num(const json& j) {
    if (j.is_number()) return j.get<double>();
    if (j == "inf") return INFINITY;
    if (j == "-inf") return -INFINITY;
    return NAN;
}
json nums(const std::vector<float>& v) {
    json a = json::array();
    for (float x : v) a.push_back(num(x));
    return a;
}
std::vector<float> get_nums(const json& j) {
    std::vector<float> v;
    if (j.is_array())
        for (const json& x : j) v.push_back(float(get_num(x)));
    return v;
}
json table(const std::vector<std::vector<float>>& t) {
    json a = json::array();
    for (const auto& row : t) a.push_back(nums(row));
    return a;
}
std::vector<std::vector<float>> get_table(const json& j) {
    std::vector<std::vector<float>> t;
    if (j.is_array())
        for (const json& row : j) t.push_back(get_nums(row));
    return t;
}
int get_int(const json& j, const char* key, int otherwise) {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<int>() : otherwise;
}

json range_set(const RangeSet& r) { return {{"all", num(r.all)}, {"head", nums(r.head)}}; }
RangeSet get_range_set(const json& j) {
    RangeSet r;
    if (!j.is_object()) return r;
    r.all = float(get_num(j.value("all", json())));
    r.head = get_nums(j.value("head", json()));
    return r;
}
json ranges(const Ranges& r) {
    return {{"x", range_set(r.x)},         {"q", range_set(r.q)},         {"k", range_set(r.k)},
            {"v", range_set(r.v)},         {"raw", range_set(r.raw)},     {"heads", range_set(r.heads)},
            {"y", range_set(r.y)},         {"w_qkv", range_set(r.w_qkv)}, {"w_proj", range_set(r.w_proj)}};
}
Ranges get_ranges(const json& j) {
    Ranges r;
    if (!j.is_object()) return r;
    auto at = [&](const char* k) { return j.contains(k) ? j[k] : json(); };
    r.x = get_range_set(at("x")), r.q = get_range_set(at("q")), r.k = get_range_set(at("k"));
    r.v = get_range_set(at("v")), r.raw = get_range_set(at("raw")), r.heads = get_range_set(at("heads"));
    r.y = get_range_set(at("y")), r.w_qkv = get_range_set(at("w_qkv")), r.w_proj = get_range_set(at("w_proj"));
    return r;
}
json summary(const DySummary& d) {
    return {{"top", num(d.top)}, {"before", num(d.before)}, {"after", num(d.after)}, {"nan", d.nan}, {"zeros_before", d.zeros_before}};
}
DySummary get_summary(const json& j) {
    DySummary d;
    if (!j.is_object()) return d;
    d.top = float(get_num(j.value("top", json()))), d.before = float(get_num(j.value("before", json())));
    d.after = float(get_num(j.value("after", json())));
    d.nan = j.value("nan", false);
    d.zeros_before = get_int(j, "zeros_before", 0);
    return d;
}
json tops(const std::vector<TokenProb>& v) {
    json a = json::array();
    for (const TokenProb& t : v) a.push_back({t.token, num(t.prob)});
    return a;
}
std::vector<TokenProb> get_tops(const json& j) {
    std::vector<TokenProb> v;
    if (!j.is_array()) return v;
    for (const json& t : j)
        if (t.is_array() && t.size() == 2 && t[0].is_number_integer()) v.push_back({t[0].get<int>(), float(get_num(t[1]))});
    return v;
}
json detection(const HeadDetection& d) {
    return {{"prev", table(d.text.prev_token)},       {"dup", table(d.text.duplicate)},
            {"ind", table(d.text.induction)},         {"repeat", table(d.repeat_induction)},
            {"repeat_count", d.repeat_count},         {"repeat_len", d.repeat_len},
            {"repeat_seed", std::to_string(d.repeat_seed)}, {"repeat_bos", d.repeat_bos}};
}
HeadDetection get_detection(const json& j) {
    HeadDetection d;
    if (!j.is_object()) return d;
    d.text.prev_token = get_table(j.value("prev", json())), d.text.duplicate = get_table(j.value("dup", json()));
    d.text.induction = get_table(j.value("ind", json())), d.repeat_induction = get_table(j.value("repeat", json()));
    d.repeat_count = get_int(j, "repeat_count", 0), d.repeat_len = get_int(j, "repeat_len", 0);
    d.repeat_bos = get_int(j, "repeat_bos", -1);
    const std::string seed = j.value("repeat_seed", std::string());
    if (!seed.empty() && seed.size() < 21 && seed.find_first_not_of("0123456789") == std::string::npos)
        d.repeat_seed = std::stoull(seed);
    return d;
}
json sharpness(const SharpnessTable& t) {
    json cells = json::array();
    for (const auto& c : t.cells) cells.push_back({num(c[0].max_weight), num(c[0].entropy), num(c[1].max_weight), num(c[1].entropy)});
    return {{"heads", t.heads}, {"rows", t.rows}, {"cells", cells}};
}
SharpnessTable get_sharpness(const json& j) {
    SharpnessTable t;
    if (!j.is_object() || !j.contains("cells") || !j["cells"].is_array()) return t;
    const int heads = get_int(j, "heads", 0), rows = get_int(j, "rows", 0);
    if (heads < 0 || rows < 0 || heads > sharpness_heads || rows > sharpness_rows || size_t(heads * rows) != j["cells"].size())
        return t;
    t.heads = heads, t.rows = rows;
    for (const json& c : j["cells"]) {
        std::array<RowSharpness, 2> a;
        if (c.is_array() && c.size() == 4) {
            a[0] = {get_num(c[0]), get_num(c[1])};
            a[1] = {get_num(c[2]), get_num(c[3])};
        }
        t.cells.push_back(a);
    }
    return t;
}
json run_summary(const RunSummary& r) {
    const LogitAttribution& a = r.dla;
    return {{"loss", num(r.loss)},
            {"top", tops(r.top)},
            {"detection", detection(r.detection)},
            {"has_dla", r.has_dla},
            {"dla",
             {{"pos", a.pos}, {"token", a.token}, {"logit", num(a.logit)}, {"scale", num(a.scale)}, {"heads", table(a.heads)},
              {"embed", num(a.embed)}, {"pos_embed", num(a.pos_embed)}, {"attn_bias", nums(a.attn_bias)},
              {"mlp", nums(a.mlp)}, {"ln_bias", num(a.ln_bias)}}}};
}
RunSummary get_run_summary(const json& j) {
    RunSummary r;
    if (!j.is_object()) return r;
    r.loss = get_num(j.value("loss", json()));
    r.top = get_tops(j.value("top", json()));
    r.detection = get_detection(j.value("detection", json()));
    r.has_dla = j.value("has_dla", false);
    const json a = j.value("dla", json());
    if (a.is_object()) {
        LogitAttribution& d = r.dla;
        d.pos = get_int(a, "pos", 0), d.token = get_int(a, "token", 0);
        d.logit = float(get_num(a.value("logit", json()))), d.scale = float(get_num(a.value("scale", json())));
        d.heads = get_table(a.value("heads", json()));
        d.embed = float(get_num(a.value("embed", json()))), d.pos_embed = float(get_num(a.value("pos_embed", json())));
        d.attn_bias = get_nums(a.value("attn_bias", json())), d.mlp = get_nums(a.value("mlp", json()));
        d.ln_bias = float(get_num(a.value("ln_bias", json())));
    }
    return r;
}

} // namespace follow_gpt_detail

using namespace follow_gpt_detail;

namespace {

// Every token the page may name: the text's, the replacement, the predictions' and the tops'.
json labels(const AppState& s) {
    std::set<int> ids(shown_model(s)->tokens.begin(), shown_model(s)->tokens.end());
    ids.insert(replacement_token(s, s.p));
    if (s.model_run.applied_replace_token >= 0) ids.insert(s.model_run.applied_replace_token);
    for (const auto& pos : s.model_view.predictions)
        for (const TokenProb& t : pos) ids.insert(t.token);
    for (const RunSummary* r : {&s.ablation.numbers.clean, &s.ablation.numbers.ablated})
        for (const TokenProb& t : r->top) ids.insert(t.token);
    if (s.ablation.numbers.token >= 0) ids.insert(s.ablation.numbers.token);
    add_probe_ids(s, ids); // the lens's and the patching tables' tokens (follow_gpt_probes.h)
    json j = json::object();
    for (int id : ids)
        if (id >= 0) j[std::to_string(id)] = model_token_label(s, id);
    return j;
}

// The Model view's grid: every layer's softmax weights of the run the views show.
int64_t grid_bytes(const AppState& s) {
    const ModelConfig& c = shown_model(s)->model->config;
    return int64_t(c.n_layer) * c.n_head * int64_t(s.config.applied.seq_len) * s.config.applied.seq_len * 4;
}
bool grid_sent(const AppState& s) {
    const ModelConfig& c = shown_model(s)->model->config;
    if (s.model_run.model_base.compact || grid_bytes(s) > gpt_grid_cap || int(s.model_run.model_base.layers.size()) != c.n_layer) return false;
    for (const Trace& tr : s.model_run.model_base.layers)
        if (int(tr.att.size()) != c.n_head) return false;
    return true;
}

std::vector<uint64_t> shape(const Mat& m) { return {uint64_t(m.rows()), uint64_t(m.cols())}; }

// H matrices of one shape, packed head after head (the layout of a (H, rows, cols) tensor).
struct Packed {
    std::vector<float> data;
    std::vector<uint64_t> shape;
};
Packed pack(const PerHead& p) {
    Packed out;
    const uint64_t r = p.empty() ? 0 : uint64_t(p[0].rows()), c = p.empty() ? 0 : uint64_t(p[0].cols());
    out.shape = {uint64_t(p.size()), r, c};
    out.data.reserve(size_t(p.size() * r * c));
    for (const Mat& m : p) out.data.insert(out.data.end(), m.data(), m.data() + m.size());
    return out;
}

void add_trace(const std::string& prefix, const Trace& tr, std::vector<TensorOut>& out, std::deque<Packed>& keep) {
    for (const auto& [name, m] : {std::pair<const char*, const Mat*>{"x", &tr.x}, {"qkv", &tr.qkv}, {"concat", &tr.concat}, {"y", &tr.y}})
        out.push_back({prefix + name, shape(*m), m->data()});
    for (const auto& [name, p] : {std::pair<const char*, const PerHead*>{"q", &tr.q}, {"k", &tr.k}, {"v", &tr.v},
                                  {"raw_scores", &tr.raw_scores}, {"att", &tr.att}, {"heads", &tr.heads}}) {
        keep.push_back(pack(*p));
        out.push_back({prefix + name, keep.back().shape, keep.back().data.data()});
    }
}

} // namespace

json gpt_follow_header(const AppState& s) {
    const TrainedInput& in = *shown_model(s);
    const ModelConfig& c = in.model->config;
    // Its Hub id, or its folder's or file's name: the teacher's paths are not the class's business.
    std::string name = in.shown_name();
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    if (in.name.empty()) name = name.substr(name.find_last_of('/') + 1);
    json predictions = json::array();
    for (size_t pos = 0; pos < s.model_view.predictions.size(); ++pos)
        if (!s.model_view.predictions[pos].empty()) predictions.push_back({pos, tops(s.model_view.predictions[pos])});
    const AblationNumbers& n = s.ablation.numbers;
    json heads = json::array();
    for (const HeadRef& h : s.ablation.applied.heads) heads.push_back({h.layer, h.head});
    json out = {{"layout", in.layout},
            {"name", name},
            {"vocab", c.vocab},
            {"block_size", c.seq_len},
            {"n_embd", c.n_embd},
            {"n_head", c.n_head},
            {"n_layer", c.n_layer},
            {"bias", c.bias},
            {"layer", s.shown.layer},
            {"tokens", in.tokens},
            {"labels", labels(s)},
            {"text", in.text},
            {"kernel", to_string(s.kernel)},
            {"scale", num(s.run.trace.scale)},
            {"p", s.p},
            {"strength", num(s.strength)},
            {"replace_token", s.shown.replace_token},
            {"applied_p", s.run.applied_p},
            {"applied_strength", num(s.run.applied_strength)},
            {"applied_replace_token", s.model_run.applied_replace_token},
            {"causality_p", s.model_run.causality.p},
            {"causality_token", s.model_run.causality.new_token},
            {"ranges", ranges(s.run.ranges)},
            {"dy_summary", summary(s.run.dy_summary)},
            {"sharpness", sharpness(s.run.sharpness)},
            {"dy_out_summary", summary(s.model_run.dy_out_summary)},
            {"resid_summary", summary(s.model_run.resid_summary)},
            {"predict_pos", s.model_view.predict_pos},
            {"predictions", predictions},
            {"detection", detection(s.model_view.detection)},
            {"ablation",
             {{"heads", heads},
              {"mode", to_string(s.ablation.applied.mode)},
              {"clean", run_summary(n.clean)},
              {"ablated", run_summary(n.ablated)},
              {"pos", n.pos},
              {"token", n.token}}},
            {follow_protocol::gpt_grid, grid_sent(s)},
            {follow_protocol::gpt_generate, gpt_generate_header(s)}};
    out[follow_protocol::gpt_probes] = probes_json(s); // the lens cells and the patching tables shown (follow_gpt_probes.h)
    return out;
}

std::string gpt_part_key(const AppState& s, GptPart p) {
    // The objects and edits each part is made of: a new run (model, tokens, kernel, ablation)
    // is a new model_base, a new layer or perturbation a new trace.
    std::string heads;
    for (const HeadRef& h : s.ablation.applied.heads) heads += to_string(h) + ",";
    const std::string run = std::to_string(reinterpret_cast<uintptr_t>(shown_model(s).get())) + " " + to_string(s.kernel) +
                            " " + to_string(s.ablation.applied.mode) + " " + heads;
    switch (p) {
    case GptPart::layer:
        return run + " L" + std::to_string(s.shown.layer) + " p" + std::to_string(s.run.applied_p) + " s" +
               std::to_string(s.run.applied_strength) + " t" + std::to_string(s.model_run.applied_replace_token);
    case GptPart::weights: return std::to_string(reinterpret_cast<uintptr_t>(shown_model(s).get())) + " L" + std::to_string(s.shown.layer);
    case GptPart::grid: return grid_sent(s) ? run : "";
    }
    return "";
}

bool gpt_part_bytes(const AppState& s, GptPart p, std::string& out, std::string& error) {
    std::vector<TensorOut> t;
    std::deque<Packed> keep; // TensorOut points into them
    std::vector<float> resid;
    if (p == GptPart::layer) {
        add_trace("trace.", s.run.trace, t, keep);
        if (s.run.applied_p >= 0 && s.run.has_base) add_trace("base.", s.run.base, t, keep); // else the same as trace
        t.push_back({"base_y", shape(s.run.base_y), s.run.base_y.data()});
        t.push_back({"dy", {uint64_t(s.run.dy.size())}, s.run.dy.data()});
        t.push_back({"dy_out", {uint64_t(s.model_run.dy_out.size())}, s.model_run.dy_out.data()});
        const GptCausality& c = s.model_run.causality;
        if (!c.resid_max_abs.empty()) {
            for (const auto& row : c.resid_max_abs) resid.insert(resid.end(), row.begin(), row.end());
            t.push_back({"causality.resid", {uint64_t(c.resid_max_abs.size()), uint64_t(c.resid_max_abs[0].size())}, resid.data()});
            t.push_back({"causality.logits", {uint64_t(c.logits_max_abs.size())}, c.logits_max_abs.data()});
        }
    } else if (p == GptPart::weights) {
        const Weights& w = s.run.experiment.weights;
        for (const auto& [name, l] : {std::pair<std::string, const Linear*>{"c_attn", &w.c_attn}, {"c_proj", &w.c_proj}}) {
            t.push_back({name + ".weight", shape(l->weight), l->weight.data()});
            if (l->bias.size() > 0) t.push_back({name + ".bias", {uint64_t(l->bias.size())}, l->bias.data()});
        }
    } else {
        if (!grid_sent(s)) {
            error = s.model_run.model_base.compact ? "the window keeps no grid of every layer's softmax weights at T = " +
                                               std::to_string(s.config.applied.seq_len) + " (a compact trace)"
                                         : "the grid of every layer's softmax weights is over " +
                                               std::to_string(gpt_grid_cap >> 20) + " MiB at T = " +
                                               std::to_string(s.config.applied.seq_len);
            return false;
        }
        for (size_t l = 0; l < s.model_run.model_base.layers.size(); ++l) {
            keep.push_back(pack(s.model_run.model_base.layers[l].att));
            t.push_back({"att." + std::to_string(l), keep.back().shape, keep.back().data.data()});
        }
    }
    return safetensors_bytes(t, {{"attnviz", std::string("follow-gpt-") + to_string(p)}}, out, error);
}

} // namespace attnviz
