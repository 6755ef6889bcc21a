// model_json.cpp: see model_json.h.
#include "model_json.h"
#include "patch_json.h"
#include "ablation_json.h"
#include "bpe_tokenizer.h"
#include "gpt_causality.h"
#include "gpt_model.h"
#include "tensor_table.h"
#include <cmath>
#include <nlohmann/json.hpp>

namespace attnviz {

void write_gpt_model_info(JsonWriter& w, const Model& m, const GptFileInfo& info, const std::string& path) {
    const ModelConfig& c = m.config;
    w.key("model");
    w.begin_object();
    w.key("path"); w.value_string(path);
    if (!info.hub_id.empty()) {
        w.key("hub_id"); w.value_string(info.hub_id);
    }
    w.key("file"); w.value_string(info.file);
    w.key("layout"); w.value_string(info.layout);
    w.key("description"); w.value_string(m.source);
    w.key("n_layer"); w.value_int(c.n_layer);
    w.key("n_head"); w.value_int(c.n_head);
    w.key("n_head_from"); w.value_string(info.n_head_from);
    w.key("n_embd"); w.value_int(c.n_embd);
    w.key("vocab_size"); w.value_int(c.vocab);
    w.key("block_size"); w.value_int(c.seq_len);
    w.key("gelu"); w.value_string(to_string(c.gelu));
    w.key("bias"); w.value_bool(c.bias);
    w.key("transposed"); w.value_bool(info.conv1d);
    w.end_object();
}

// One tensor of a layer's trace with B = 1 in front, as intermediates_for_x writes it.
static void write_batched(JsonWriter& w, const TensorView& t) {
    Mat scratch;
    w.begin_array();
    if (t.per_head) {
        w.begin_array();
        for (int h = 0; h < t.blocks; ++h) w.array(t.block(h, scratch), {t.rows, t.cols});
        w.end_array();
    } else {
        w.array(t.block(0, scratch), {t.rows, t.cols});
    }
    w.end_array();
}

static void write_mat(JsonWriter& w, const char* key, const Mat& m) {
    w.key(key);
    w.array(m.data(), {1, m.rows(), m.cols()});
}

void write_gpt_layer(JsonWriter& w, const Model& m, const ModelTrace& tr, int l, KernelKind kernel,
                     const Ablation* ab) {
    Trace one;
    gpt_layer_trace(m, tr, l, kernel, one, ab);
    const BlockTrace& b = tr.blocks[size_t(l)];
    w.begin_object();
    w.key("layer"); w.value_int(l);
    // The lesson's intermediates_for_x keys, then x (ln_1), y (attention output), resid_mid,
    // mlp, resid_post.
    for (const TraceTensor& t : trace_tensors()) {
        if (t.id == TensorName::x || t.id == TensorName::y) continue;
        w.key(t.reference_key);
        write_batched(w, tensor_by_name(one, t.id));
    }
    write_mat(w, "x", one.x);
    write_mat(w, "y", one.y);
    write_mat(w, "resid_mid", gpt_resid_mid(tr, one, l));
    write_mat(w, "resid_post", b.resid_post);
    w.end_object();
}

GptRunSummary summarize_gpt_run(const ModelTrace& tr) {
    GptRunSummary s;
    s.loss = next_token_loss(tr);
    const int64_t T = tr.logits.rows(), V = tr.logits.cols();
    s.top = top_k(softmax_logits(tr.logits.data() + (T - 1) * V, int(V)), gpt_summary_top_k);
    return s;
}

void write_gpt_run_summary(JsonWriter& w, const GptRunSummary& s, const BpeTokenizer* tok) {
    w.begin_object();
    w.key("loss");
    if (std::isfinite(s.loss)) w.value(float(s.loss));
    else w.value_null(); // one token: nothing to predict
    w.key("top5");
    w.begin_array();
    for (const TokenProb& t : s.top) {
        w.begin_object();
        w.key("token"); w.value_int(t.token);
        w.key("prob"); w.value(t.prob);
        if (tok) { w.key("text"); w.value_string(tok->token_bytes(t.token)); }
        w.end_object();
    }
    w.end_array();
    w.end_object();
}

void write_gpt_trace_json(std::ostream& out, const Model& m, const GptFileInfo& info, const GptTraceRequest& r) {
    const Ablation* ablated = r.ablation && !r.ablation->empty() ? r.ablation : nullptr;
    const bool with_dla = ablated || r.dla_pos;
    const int T = int(r.tokens.size());
    const int dla_pos = r.dla_pos.value_or(T - 1);

    // The clean run, then (with an ablation) the ablated one: the clean trace rerun from the
    // first ablated layer, as the window does. The traced tensors are the ablated run's.
    ModelTrace tr;
    gpt_forward(m, r.tokens, r.kernel, true, tr);
    GptRunSummary before, after;
    int dla_token = 0;
    if (with_dla) {
        before = summarize_gpt_run(tr);
        const int64_t V = tr.logits.cols();
        dla_token = top_k(softmax_logits(tr.logits.data() + int64_t(dla_pos) * V, int(V)), 1)[0].token;
    }
    if (ablated) {
        gpt_rerun_from(m, ablated->first_layer(), r.kernel, ablated, tr);
        after = summarize_gpt_run(tr);
    }
    JsonWriter w(out);
    w.begin_object();
    write_gpt_model_info(w, m, info, r.path);
    w.key("kernel"); w.value_string(to_string(r.kernel));
    w.key("T"); w.value_int(T);
    w.key("tokens");
    w.begin_array();
    for (int t : r.tokens) w.value_int(t);
    w.end_array();
    if (r.intermediates) {
        w.key("layers");
        w.begin_array();
        for (int l = 0; l < m.config.n_layer; ++l)
            if (!r.layer || *r.layer == l) write_gpt_layer(w, m, tr, l, r.kernel, ablated);
        w.end_array();
    }
    w.key("logits"); w.array(tr.logits.data(), {1, tr.logits.rows(), tr.logits.cols()});
    if (r.perturb) {
        // Token p replaced, and only rows p.. recomputed: causality says rows before p stay.
        const int p = *r.perturb, id = r.replacement;
        ModelTrace changed = tr;
        gpt_update(m, p, id, r.kernel, changed, ablated);
        w.key("perturbed_position"); w.value_int(p);
        w.key("replacement"); w.value_int(id);
        const GptCausality d = gpt_causality(tr, changed, p, id);
        w.key("max_abs_diff_per_position");
        w.array(d.logits_max_abs.data(), {int64_t(d.logits_max_abs.size())});
        w.key("max_abs_diff_per_layer");
        w.begin_array();
        for (const std::vector<float>& row : d.resid_max_abs) w.array(row.data(), {int64_t(row.size())});
        w.end_array();
    }
    if (ablated) {
        w.key("ablation");
        w.begin_object();
        write_ablation_heads(w, *ablated);
        w.key("before"); write_gpt_run_summary(w, before, r.tokenizer);
        w.key("after"); write_gpt_run_summary(w, after, r.tokenizer);
        w.key("delta");
        w.begin_object();
        w.key("loss");
        if (std::isfinite(after.loss - before.loss)) w.value(float(after.loss - before.loss));
        else w.value_null();
        w.end_object();
        w.end_object();
    }
    if (with_dla) {
        w.key("dla");
        write_dla(w, logit_attribution(m, tr, dla_pos, dla_token, ablated), r.tokenizer);
    }
    if (r.logit_lens) {
        w.key("logit_lens");
        write_logit_lens(w, logit_lens(m, tr, r.kernel), r.tokenizer);
    }
    w.end_object();
    w.flush();
}

void write_tokens_json(std::ostream& out, const BpeTokenizer& tok, const std::vector<int>& ids) {
    nlohmann::json j = nlohmann::json::object();
    j["ids"] = ids;
    nlohmann::json& tokens = j["tokens"] = nlohmann::json::array();
    for (int id : ids) tokens.push_back(tok.display(id));
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace attnviz
