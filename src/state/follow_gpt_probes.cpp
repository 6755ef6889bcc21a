// follow_gpt_probes.cpp: the lens cells and the patching tables in follow_gpt's header; see
// follow_gpt_probes.h.
#include "follow_gpt_probes.h"
#include "follow_gpt_json.h"
#include <algorithm>

namespace attnviz {

using json = nlohmann::json;
using namespace follow_gpt_detail;

namespace {

json table(const std::vector<std::vector<float>>& t) {
    json out = json::array();
    for (const auto& row : t) {
        json r = json::array();
        for (float v : row) r.push_back(num(v));
        out.push_back(r);
    }
    return out;
}

// Rows of equal length, each at most `cols` long; anything else reads as no table.
std::vector<std::vector<float>> get_table(const json& j, size_t rows, size_t cols) {
    std::vector<std::vector<float>> out;
    if (!j.is_array() || j.size() != rows) return {};
    for (const json& r : j) {
        if (!r.is_array() || r.size() != cols) return {};
        std::vector<float> row;
        for (const json& v : r) row.push_back(float(get_num(v)));
        out.push_back(std::move(row));
    }
    return out;
}

json lens_json(const LensTable& t) {
    json top = json::array(), next = json::array();
    for (int r = 0; r < t.lens.rows(); ++r) {
        json row = json::array(), nrow = json::array();
        for (int i = 0; i < t.count(); ++i) {
            row.push_back(tops(t.lens.top[size_t(r)][size_t(i)]));
            nrow.push_back(num(t.lens.next_prob[size_t(r)][size_t(i)]));
        }
        top.push_back(row);
        next.push_back(nrow);
    }
    return {{"p0", t.p0}, {"top", top}, {"next_prob", next}};
}

void get_lens(const json& j, int rows, int T, LensTable& t) {
    t.lens = LogitLens{};
    t.p0 = std::clamp(get_int(j, "p0", 0), 0, T);
    const json top = j.value("top", json()), next = j.value("next_prob", json());
    if (!top.is_array() || !next.is_array() || int(top.size()) != rows || next.size() != top.size()) return;
    const size_t n = top[0].is_array() ? top[0].size() : 0;
    if (t.p0 + int(n) > T) return;
    LogitLens l;
    for (int r = 0; r < rows; ++r) {
        if (!top[size_t(r)].is_array() || top[size_t(r)].size() != n || !next[size_t(r)].is_array() || next[size_t(r)].size() != n)
            return;
        std::vector<std::vector<TokenProb>> row;
        std::vector<float> nrow;
        for (size_t i = 0; i < n; ++i) {
            row.push_back(get_tops(top[size_t(r)][i]));
            nrow.push_back(float(get_num(next[size_t(r)][i])));
        }
        l.top.push_back(std::move(row));
        l.next_prob.push_back(std::move(nrow));
    }
    t.lens = std::move(l);
    t.first = t.p0;
}

bool patch_shown(const AppState& s) {
    return !s.patch.result.empty() && shown_model(s) && s.patch.result.model == shown_model(s)->model;
}

} // namespace

json probes_json(const AppState& s) {
    json out = {{"panel", int(s.model_view.panel)}, {"lens", lens_json(s.model_view.lens)}};
    if (!patch_shown(s)) return out;
    const PatchResult& r = s.patch.result;
    out["patch"] = {{"clean", r.clean},
                    {"corrupt", r.corrupt},
                    {"answer", r.answer},
                    {"wrong", r.wrong},
                    {"answer_text", r.answer_text},
                    {"wrong_text", r.wrong_text},
                    {"clean_ld", num(r.clean_ld)},
                    {"corrupt_ld", num(r.corrupt_ld)},
                    {"resid", table(r.tables.resid)},
                    {"heads", table(r.tables.heads)}};
    return out;
}

void add_probe_ids(const AppState& s, std::set<int>& ids) {
    const LensTable& t = s.model_view.lens;
    for (const auto& row : t.lens.top)
        for (const auto& cell : row)
            for (const TokenProb& tp : cell) ids.insert(tp.token);
    if (!patch_shown(s)) return;
    ids.insert(s.patch.result.corrupt.begin(), s.patch.result.corrupt.end());
}

void show_received_probes(AppState& s, const json& j, const std::shared_ptr<const TrainedInput>& in) {
    const ModelConfig& c = in->model->config;
    const int T = int(in->tokens.size());
    if (!j.is_object()) return;
    s.model_view.panel = ModelPanel(std::clamp(get_int(j, "panel", 0), 0, 2));
    get_lens(j.value("lens", json()), c.n_layer + 1, T, s.model_view.lens);
    s.patch.result = PatchResult{};
    const json p = j.value("patch", json());
    if (!p.is_object()) return;
    PatchResult r;
    auto ids = [&](const char* key) {
        std::vector<int> v;
        const json a = p.value(key, json());
        if (a.is_array())
            for (const json& x : a) v.push_back(x.is_number_integer() ? x.get<int>() : -1);
        return v;
    };
    r.clean = ids("clean");
    r.corrupt = ids("corrupt");
    if (int(r.clean.size()) != T || r.corrupt.size() != r.clean.size()) return;
    r.answer = get_int(p, "answer", -1), r.wrong = get_int(p, "wrong", -1);
    r.answer_text = p.value("answer_text", std::string());
    r.wrong_text = p.value("wrong_text", std::string());
    r.clean_ld = float(get_num(p.value("clean_ld", json())));
    r.corrupt_ld = float(get_num(p.value("corrupt_ld", json())));
    r.tables.resid = get_table(p.value("resid", json()), size_t(c.n_layer), size_t(T));
    r.tables.heads = get_table(p.value("heads", json()), size_t(c.n_layer), size_t(c.n_head));
    if (r.tables.resid.empty() || r.tables.heads.empty()) return;
    r.model = in->model;
    s.patch.result = std::move(r);
}

} // namespace attnviz
