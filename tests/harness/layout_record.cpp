// layout_record.cpp: see layout_record.h.
#include "layout_record.h"
#include "text_util.h"
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace attnviz {

bool write_layout_json(const std::string& path, const AppState& s, int width, int height, std::string& error) {
    nlohmann::json j;
    j["width"] = width;
    j["height"] = height;
    j["view"] = to_string(s.screen.view);
    j["step"] = s.screen.step;
    j["config"] = {{"n_embd", s.config.applied.n_embd}, {"n_head", s.config.applied.n_head}, {"seq_len", s.config.applied.seq_len},
                   {"seed", s.config.applied.seed},     {"mask", to_string(s.config.applied.mask)},
                   {"scale", to_string(s.config.applied.scale)}, {"kernel", to_string(s.kernel)}};
    j["perturb"] = {{"p", s.run.applied_p}, {"strength", s.run.applied_strength}};
    // A trained model in the views: which one, the block shown and its positions' letters.
    if (shown_model(s))
        j["trained"] = {{"task", std::holds_alternative<GptModel>(s.shown.source) ? "gpt" : to_string(shown_model(s)->model->config.task)},
                        {"n_layer", shown_model(s)->model->config.n_layer},
                        {"layer", s.shown.layer},
                        {"tokens", s.shown.words},
                        {"toward", s.model_run.applied_replace_token}};
    // A GPT model's token change at p: max |Δ resid_post| per layer and position, max |Δ logits|.
    if (shown_model(s) && !s.model_run.causality.resid_max_abs.empty())
        j["causality"] = {{"p", s.model_run.causality.p},
                          {"new_token", s.model_run.causality.new_token},
                          {"resid_post", s.model_run.causality.resid_max_abs},
                          {"logits", s.model_run.causality.logits_max_abs}};
    nlohmann::json items = nlohmann::json::array();
    for (const LayoutItem& it : s.screen.layout) {
        nlohmann::json o = {{"kind", it.kind}, {"name", it.name}, {"head", it.head}, {"x", it.x}, {"y", it.y},
                            {"w", it.w},       {"h", it.h}};
        if (it.kind == "heatmap" || it.kind == "table") // a table: the causality view's layer x position numbers
            o.update({{"rows", it.rows}, {"cols", it.cols}, {"row0", it.row0}, {"col0", it.col0},
                      {"nrows", it.nrows}, {"ncols", it.ncols}});
        // The Model view: a head's pattern and its table row (layer, and the detector's role
        // and score), and a next-token prediction's bar (the position and its probability).
        if (it.kind == "grid_head" || it.kind == "detector_row") o.update({{"layer", it.position}, {"score", it.value}});
        if (it.kind == "grid_head") o.update({{"rows", it.rows}, {"cols", it.cols}});
        if (it.kind == "prediction") o.update({{"position", it.position}, {"value", it.value}});
        // The head ablation: a head's mark and table box (1 when ablated), its DLA, and the
        // Ablation box's numbers and top 5 (position: the rank).
        const bool ablation_head = it.kind == "ablate_mark" || it.kind == "ablate_check" || it.kind == "dla_cell";
        if (ablation_head) o["layer"] = it.position;
        if (it.kind == "ablation_top") o["position"] = it.position;
        if (ablation_head || it.kind == "ablation_number" || it.kind == "ablation_top") {
            if (std::isnan(it.value)) o["value"] = "NaN";
            else o["value"] = it.value;
        }
        if (it.kind == "bar" || it.kind.rfind("check_", 0) == 0) {
            o["position"] = it.position;
            // JSON has no NaN: a NaN bar says so in words.
            if (std::isnan(it.value)) o["value"] = "NaN";
            else o["value"] = it.value;
        }
        // The Generate view: the picture's and the cache's positions (rows), a bar's token and
        // probability, the text's position count and tokens written, the earlier rows' max |Δ|.
        if (it.kind.rfind("generate_", 0) == 0) {
            o.update({{"position", it.position}, {"rows", it.rows}, {"cols", it.cols}});
            if (std::isnan(it.value)) o["value"] = "NaN";
            else o["value"] = it.value;
        }
        items.push_back(o);
    }
    j["items"] = items;
    std::ofstream out(path);
    if (!out) {
        error = "could not write the layout to " + quote_path(path) + "; check that its folder exists and is writable";
        return false;
    }
    out << j.dump(1) << "\n";
    return bool(out);
}

} // namespace attnviz
